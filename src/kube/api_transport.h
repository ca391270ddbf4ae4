#pragma once
// The HTTP operations the cluster cache needs from the API server, as an interface so the watch
// loop and the binder are tested against a scripted fake (no network), and only api_client.cpp sees
// cpprest. Every HTTP status is a value; only transport failures (connect, TLS, timeout, cancel)
// are errors.
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "kube/cancellation.h"

namespace gte::kube {

struct HttpResponse {
  int status = 0;
  std::string body;
  bool success() const noexcept { return status >= 200 && status < 300; }
};

class ApiTransport {
 public:
  virtual ~ApiTransport() = default;

  // `path` includes the query ("/api/v1/pods?limit=500"). Blocks the calling thread until the whole
  // response is in: never call it on a cpprest pool thread.
  virtual Result<HttpResponse> send(std::string_view method, const std::string& path,
                                    const std::string& body = "",
                                    std::string_view contentType = "application/json") = 0;

  using ResponseCallback = std::function<void(Result<HttpResponse>)>;
  // send() without holding the calling thread: `done` runs once, on whichever thread completes the
  // request, and must not block (it may be one of the few threads that complete the API client's
  // I/O). The default sends synchronously and calls `done` before returning (scripted fakes).
  virtual void sendAsync(std::string method, std::string path, std::string body,
                         std::string contentType, ResponseCallback done) {
    done(send(method, path, body, contentType));
  }

  // GETs `path` and hands the body to onChunk piece by piece as it arrives, until the server ends
  // the response, onChunk returns false, or `cancel` fires (then an kUnavailable error). A non-2xx
  // answer is returned whole, with onChunk never called. Blocks the calling thread.
  virtual Result<HttpResponse> stream(const std::string& path,
                                      const std::function<bool(std::string_view)>& onChunk,
                                      Cancellation& cancel) = 0;
};

}  // namespace gte::kube
