#include "server/http_server.h"

#include <cpprest/http_listener.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <charconv>
#include <future>
#include <thread>

#include "log/logger.h"
#include "server/router.h"

namespace gte::server {
namespace {

using web::http::http_request;
using web::http::http_response;
using web::http::experimental::listener::http_listener;
using web::http::experimental::listener::http_listener_config;

constexpr std::size_t kReadChunk = 256 * 1024;

// Reads the body in chunks and stops as soon as it passes `limit`, so an oversized chunked body
// is refused as it arrives instead of being buffered whole.
// `total` counts the bytes read: the container buffer may grow its string past what was written,
// so its size is not the body's.
pplx::task<bool> readLimited(concurrency::streams::istream body,
                             concurrency::streams::container_buffer<std::string> target,
                             std::shared_ptr<std::size_t> total, std::size_t limit) {
  return body.read(target, kReadChunk).then([=](std::size_t n) -> pplx::task<bool> {
    if (n == 0) {
      return pplx::task_from_result(true);
    }
    *total += n;
    if (*total > limit) {
      return pplx::task_from_result(false);
    }
    return readLimited(body, target, total, limit);
  });
}

void send(http_request& request, Reply reply) {
  http_response response(static_cast<web::http::status_code>(reply.status));
  for (auto& [name, value] : reply.headers)
    response.headers().add(name, value);
  response.set_body(std::move(reply.body), reply.contentType);
  request.reply(response).then([](pplx::task<void> t) {
    try {
      t.get();
    } catch (const std::exception& e) {
      log::debug("reply not delivered", {{"error", e.what()}});  // client went away
    }
  });
}

bool parseContentLength(const web::http::http_headers& headers, std::size_t& out) {
  auto it = headers.find(web::http::header_names::content_length);
  if (it == headers.end()) return false;
  const auto& v = it->second;
  const auto res = std::from_chars(v.data(), v.data() + v.size(), out);
  return res.ec == std::errc{} && res.ptr == v.data() + v.size();
}

}  // namespace

void initializeThreadPool(std::size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

struct HttpServer::Impl {
  ServerOptions options;
  const Router& router;
  std::unique_ptr<http_listener> listener;

  Impl(ServerOptions o, const Router& r) : options(std::move(o)), router(r) {}

  void handle(http_request request) {
    const std::string method = request.method();
    const std::string path = request.relative_uri().path();
    try {
      if (!router.acceptsBody(method, path)) {
        router.dispatch(method, path, {},
                        [request](Reply reply) mutable { send(request, std::move(reply)); });
        return;
      }
      std::size_t declared = 0;
      if (parseContentLength(request.headers(), declared) && declared > options.maxBodyBytes) {
        send(request, router.tooLarge(path, options.maxBodyBytes));
        return;
      }
      concurrency::streams::container_buffer<std::string> target;
      target.collection().reserve(declared);
      const std::size_t limit = options.maxBodyBytes;
      // A continuation, never .get()/.wait(): the body is read by the same pool this runs on.
      auto total = std::make_shared<std::size_t>(0);
      readLimited(request.body(), target, total, limit)
          .then([this, request, method, path, target, total, limit](pplx::task<bool> t) mutable {
            bool complete = false;
            try {
              complete = t.get();
            } catch (const std::exception& e) {
              send(request,
                   router.badRequest(path, std::string("could not read body: ") + e.what()));
              return;
            }
            if (!complete) {
              send(request, router.tooLarge(path, limit));
              return;
            }
            std::string& bodyText = target.collection();
            bodyText.resize(std::min(*total, bodyText.size()));
            router.dispatch(method, path, bodyText,
                            [request](Reply reply) mutable { send(request, std::move(reply)); });
          });
    } catch (const std::exception& e) {
      log::error("request handler failed", {{"path", path}, {"error", e.what()}});
      Reply reply;
      reply.status = 500;
      reply.body = R"({"Error":"internal error"})";
      send(request, std::move(reply));
    }
  }
};

HttpServer::HttpServer(ServerOptions options, const Router& router)
    : impl_(std::make_unique<Impl>(std::move(options), router)) {}

HttpServer::~HttpServer() {
  stop(std::chrono::seconds(5));
}

Status HttpServer::start() {
  const auto& o = impl_->options;
  const bool tls = !o.tlsCertFile.empty();
  const std::string host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  const std::string url = (tls ? "https://" : "http://") + host + ":" + std::to_string(o.port);
  http_listener_config config;
  config.set_timeout(o.idleTimeout);
  if (tls) {
    // cpprest loads the certificate only when the first client connects; load it once now so a
    // wrong path or a bad PEM stops the start with a message instead of failing every handshake.
    try {
      boost::asio::ssl::context probe(boost::asio::ssl::context::tls_server);
      probe.use_certificate_chain_file(o.tlsCertFile);
      probe.use_private_key_file(o.tlsKeyFile, boost::asio::ssl::context::pem);
    } catch (const std::exception& e) {
      return Error{ErrorCode::kInvalidArgument, "cannot load --tls-cert " + o.tlsCertFile +
                                                    " / --tls-key " + o.tlsKeyFile + ": " +
                                                    e.what()};
    }
    const std::string cert = o.tlsCertFile;
    const std::string key = o.tlsKeyFile;
    config.set_ssl_context_callback([cert, key](boost::asio::ssl::context& ctx) {
      ctx.set_options(boost::asio::ssl::context::default_workarounds |
                      boost::asio::ssl::context::no_sslv2 | boost::asio::ssl::context::no_sslv3 |
                      boost::asio::ssl::context::no_tlsv1 | boost::asio::ssl::context::no_tlsv1_1 |
                      boost::asio::ssl::context::single_dh_use);
      ctx.use_certificate_chain_file(cert);
      ctx.use_private_key_file(key, boost::asio::ssl::context::pem);
    });
  }
  try {
    impl_->listener = std::make_unique<http_listener>(web::uri(url), config);
    impl_->listener->support([impl = impl_.get()](http_request request) { impl->handle(request); });
    impl_->listener->open().wait();
  } catch (const std::exception& e) {
    impl_->listener.reset();
    return Error{ErrorCode::kUnavailable, "cannot listen on " + url + ": " + e.what()};
  }
  log::info("listening", {{"url", url}, {"max_body_bytes", std::to_string(o.maxBodyBytes)}});
  return Ok{};
}

void HttpServer::stop(std::chrono::milliseconds deadline) {
  if (!impl_ || !impl_->listener) return;
  auto listener = std::move(impl_->listener);
  // close() can hang if a handler misbehaved; never let shutdown hang with it.
  auto done = std::async(std::launch::async, [l = listener.get()] {
    try {
      l->close().wait();
    } catch (const std::exception& e) {
      log::warn("listener close failed", {{"error", e.what()}});
    }
  });
  if (done.wait_for(deadline) != std::future_status::ready) {
    log::warn("listener did not close in time; exiting anyway");
    (void)listener.release();  // leaked on purpose: destroying it would block
    std::thread([d = std::move(done)]() mutable { d.wait(); }).detach();
  }
}

}  // namespace gte::server
