#include "kube/api_client.h"

#include <cpprest/http_client.h>
#include <pplx/threadpool.h>

#include <boost/asio/ssl.hpp>
#include <exception>
#include <vector>

#include "kube/bearer_token.h"

namespace gte::kube {
namespace {

namespace http = web::http;
constexpr int kStaleConnectionRetries = 2;
// A pooled connection the server closed fails on first use, at once. An asynchronous request that
// failed later than this was not refused by a stale connection, and is not repeated: it may have
// reached the server, and its caller (a bind kube-scheduler waits for) may have given up.
constexpr auto kStaleFailureWithin = std::chrono::seconds(1);
using http::client::http_client;
using http::client::http_client_config;

// Loads the CA bundle and client certificate into a TLS context. Used for every connection cpprest
// opens, and once in create() so bad PEM fails at startup rather than on the first request.
void configureTls(boost::asio::ssl::context& context, const KubeConfig& config) {
  if (!config.caPem.empty()) {
    context.add_certificate_authority(boost::asio::buffer(config.caPem));
  }
  if (!config.clientCertPem.empty()) {
    context.use_certificate_chain(boost::asio::buffer(config.clientCertPem));
    context.use_private_key(boost::asio::buffer(config.clientKeyPem),
                            boost::asio::ssl::context::pem);
  }
}

http_client_config clientConfig(const KubeConfig& config, std::chrono::seconds timeout) {
  http_client_config out;
  out.set_timeout(timeout);
  out.set_validate_certificates(!config.insecureSkipTlsVerify);
  out.set_ssl_context_callback(
      [config](boost::asio::ssl::context& context) { configureTls(context, config); });
  return out;
}

Error transportError(const std::string& what, const std::exception& e) {
  return Error{ErrorCode::kUnavailable, what + ": " + e.what()};
}

std::string bodyText(const std::vector<unsigned char>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

struct ApiClient::Impl {
  Impl(const KubeConfig& c, const ApiClientOptions& o)
      : config(c),
        options(o),
        token(c.token, c.tokenFile),
        unary(c.server, clientConfig(c, o.requestTimeout)),
        streaming(c.server, clientConfig(c, o.streamIdleTimeout)) {}

  http::http_request makeRequest(std::string_view method, const std::string& path) {
    http::http_request request{http::method(std::string(method))};
    request.set_request_uri(path);
    request.headers().add("Accept", "application/json");
    request.headers().add("User-Agent", options.userAgent);
    if (const std::string bearer = token.current(); !bearer.empty()) {
      request.headers().add("Authorization", "Bearer " + bearer);
    }
    return request;
  }

  // The request and its whole body, without waiting: completes on a cpprest pool thread.
  pplx::task<HttpResponse> requestTask(std::string_view method, const std::string& path,
                                       const std::string& body, std::string_view contentType) {
    http::http_request request = makeRequest(method, path);
    if (!body.empty()) request.set_body(body, std::string(contentType));
    return unary.request(request).then([](http::http_response response) {
      const auto status = response.status_code();
      // extract_vector: extract_string would silently return "" for some content types.
      return response.extract_vector().then([status](const std::vector<unsigned char>& bytes) {
        return HttpResponse{status, bodyText(bytes)};
      });
    });
  }

  Result<HttpResponse> sendOnce(std::string_view method, const std::string& path,
                                const std::string& body, std::string_view contentType) {
    try {
      return requestTask(method, path, body, contentType).get();
    } catch (const std::exception& e) {
      return transportError(std::string(method) + " " + path, e);
    }
  }

  // One asynchronous request and the retries send() makes, as continuations instead of waits.
  struct AsyncCall {
    std::string method;
    std::string path;
    std::string body;
    std::string contentType;
    ResponseCallback done;
    int staleRetries = 0;
    bool tokenRetried = false;
    std::chrono::steady_clock::time_point started;
  };

  static void attempt(const std::shared_ptr<Impl>& self, const std::shared_ptr<AsyncCall>& call) {
    call->started = std::chrono::steady_clock::now();
    pplx::task<HttpResponse> task;
    try {
      task = self->requestTask(call->method, call->path, call->body, call->contentType);
    } catch (const std::exception& e) {
      settle(self, call, transportError(call->method + " " + call->path, e));
      return;
    }
    task.then([self, call](const pplx::task<HttpResponse>& finished) {
      Result<HttpResponse> result = Error{ErrorCode::kInternal, "no answer"};
      try {
        result = finished.get();
      } catch (const std::exception& e) {
        result = transportError(call->method + " " + call->path, e);
      }
      settle(self, call, std::move(result));
    });
  }

  static void settle(const std::shared_ptr<Impl>& self, const std::shared_ptr<AsyncCall>& call,
                     Result<HttpResponse> result) {
    if (!result && result.error().code == ErrorCode::kUnavailable &&
        call->staleRetries < kStaleConnectionRetries &&
        std::chrono::steady_clock::now() - call->started < kStaleFailureWithin) {
      ++call->staleRetries;
      attempt(self, call);
      return;
    }
    if (result && result->status == 401 && !self->config.tokenFile.empty() && !call->tokenRetried) {
      call->tokenRetried = true;
      self->token.invalidate();
      attempt(self, call);
      return;
    }
    call->done(std::move(result));
  }

  KubeConfig config;
  ApiClientOptions options;
  BearerToken token;
  http_client unary;
  http_client streaming;
};

Result<std::unique_ptr<ApiClient>> ApiClient::create(const KubeConfig& config,
                                                     ApiClientOptions options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return invalidArgument("API server URL must start with https:// or http://: \"" +
                           config.server + "\"");
  }
  try {
    boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23);
    configureTls(probe, config);
    return std::unique_ptr<ApiClient>(new ApiClient(std::make_shared<Impl>(config, options)));
  } catch (const std::exception& e) {
    return invalidArgument("API client for " + config.server + ": " + e.what());
  }
}

ApiClient::ApiClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiClient::~ApiClient() = default;

const std::string& ApiClient::server() const {
  return impl_->config.server;
}

Result<HttpResponse> ApiClient::send(std::string_view method, const std::string& path,
                                     const std::string& body, std::string_view contentType) {
  auto response = impl_->sendOnce(method, path, body, contentType);
  // cpprest reuses pooled keep-alive connections; one the server closed (an API server restart)
  // fails on first use and is dropped from the pool. The pool can hold more than one (a connection
  // returns to it asynchronously), hence a couple of immediate retries. Every request here is safe
  // to repeat: GET and merge PATCH are idempotent, and a repeated Binding POST answers 409, which
  // the binder resolves by reading the pod.
  for (int retry = 0; retry < kStaleConnectionRetries && !response &&
                      response.error().code == ErrorCode::kUnavailable;
       ++retry) {
    response = impl_->sendOnce(method, path, body, contentType);
  }
  // A rotated token file: re-read it and retry once.
  if (response && response->status == 401 && !impl_->config.tokenFile.empty()) {
    impl_->token.invalidate();
    response = impl_->sendOnce(method, path, body, contentType);
  }
  return response;
}

void ApiClient::sendAsync(std::string method, std::string path, std::string body,
                          std::string contentType, ResponseCallback done) {
  // The call holds the client's state: an answer arriving after the client is destroyed still
  // finds its token and configuration.
  auto call = std::make_shared<Impl::AsyncCall>();
  call->method = std::move(method);
  call->path = std::move(path);
  call->body = std::move(body);
  call->contentType = std::move(contentType);
  call->done = std::move(done);
  Impl::attempt(impl_, call);
}

Result<HttpResponse> ApiClient::stream(const std::string& path,
                                       const std::function<bool(std::string_view)>& onChunk,
                                       Cancellation& cancel) {
  pplx::cancellation_token_source source;
  CancellationRegistration registration(cancel, [source]() mutable { source.cancel(); });
  try {
    http::http_response response =
        impl_->streaming.request(impl_->makeRequest("GET", path), source.get_token()).get();
    if (response.status_code() == 401) impl_->token.invalidate();
    if (response.status_code() < 200 || response.status_code() >= 300) {
      const auto bytes = response.extract_vector().get();
      return HttpResponse{response.status_code(), bodyText(bytes)};
    }
    // The response task completes once the headers are in; the body keeps arriving in this
    // buffer. bumpc() waits for one byte, then whatever else already arrived is taken without
    // waiting (getn would wait for its full count).
    auto buffer = response.body().streambuf();
    std::vector<char> chunk(64 * 1024);
    using Traits = concurrency::streams::char_traits<std::uint8_t>;
    for (;;) {
      const auto first = buffer.bumpc().get();
      if (first == Traits::eof()) break;
      chunk[0] = static_cast<char>(first);
      std::size_t size = 1;
      const std::size_t available = std::min(buffer.in_avail(), chunk.size() - 1);
      if (available > 0) {
        size += buffer.getn(reinterpret_cast<std::uint8_t*>(chunk.data() + 1), available).get();
      }
      if (!onChunk(std::string_view(chunk.data(), size))) {
        source.cancel();  // the caller is done: drop the connection rather than drain it
        break;
      }
    }
    return HttpResponse{response.status_code(), {}};
  } catch (const std::exception& e) {
    if (cancel.cancelled()) return Error{ErrorCode::kUnavailable, "watch cancelled"};
    return transportError("GET " + path, e);
  }
}

void initializeClientThreadPool(std::size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

}  // namespace gte::kube
