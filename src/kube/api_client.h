#pragma once
// ApiTransport over cpprestsdk's http_client, with TLS verified against the configured CA, client
// certificates, and a rotating bearer token. cpprest headers stay in api_client.cpp (compile
// firewall).
#include <chrono>
#include <cstddef>
#include <memory>

#include "base/result.h"
#include "kube/api_transport.h"
#include "kube/kube_config.h"

namespace gte::kube {

struct ApiClientOptions {
  // Whole-request limit for list/get/bind/patch.
  std::chrono::seconds requestTimeout{30};
  // Inactivity limit on a watch stream: cpprest restarts its timer on every received chunk, and
  // the API server sends a bookmark about once a minute, so a silent connection past this is dead.
  std::chrono::seconds streamIdleTimeout{150};
  std::string userAgent = "gpu-topology-extender";
};

class ApiClient final : public ApiTransport {
 public:
  // Fails when the server URL is not http(s) or the PEM material cannot be loaded.
  static Result<std::unique_ptr<ApiClient>> create(const KubeConfig& config,
                                                   ApiClientOptions options = {});
  ~ApiClient() override;
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // Retries at once on a transport failure (stale pooled connections), and once after a 401
  // when the token comes from a file (it may have rotated).
  Result<HttpResponse> send(std::string_view method, const std::string& path,
                            const std::string& body = "",
                            std::string_view contentType = "application/json") override;
  // The same retries as send(), chained as continuations on cpprest's pool: nothing waits.
  void sendAsync(std::string method, std::string path, std::string body, std::string contentType,
                 ResponseCallback done) override;
  Result<HttpResponse> stream(const std::string& path,
                              const std::function<bool(std::string_view)>& onChunk,
                              Cancellation& cancel) override;

  const std::string& server() const;

 private:
  struct Impl;
  explicit ApiClient(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;  // shared with asynchronous calls still in flight
};

// Sizes cpprest's shared thread pool, which completes the API client's I/O; must run first thing
// in main(), before any cpprest use (its default of 40 threads costs memory on small machines).
void initializeClientThreadPool(std::size_t threads);

}  // namespace gte::kube
