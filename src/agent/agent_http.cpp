#include "agent/agent_http.h"

#include <cpprest/http_listener.h>

#include <exception>

namespace gte::agent {
namespace {

using web::http::http_request;
using web::http::experimental::listener::http_listener;

std::string listenUrl(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  const std::string host =
      colon == 0 || colon == std::string::npos ? "0.0.0.0" : listen.substr(0, colon);
  const std::string port = colon == std::string::npos ? listen : listen.substr(colon + 1);
  return "http://" + host + ":" + port;
}

std::int64_t nowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct AgentHttp::Impl {
  std::string listen;
  const AgentMetrics& metrics;
  std::chrono::seconds staleAfter;
  std::unique_ptr<http_listener> listener;

  void handle(http_request request) const {
    const std::string path = request.relative_uri().path();
    if (request.method() != web::http::methods::GET) {
      request.reply(405, "GET only\n");
      return;
    }
    if (path == "/metrics") {
      request.reply(200, metrics.render(), "text/plain; version=0.0.4");
    } else if (path == "/healthz") {
      if (metrics.healthy(nowUnix(), staleAfter.count())) {
        request.reply(200, "ok\n", "text/plain");
      } else {
        const std::string error = metrics.lastError();
        request.reply(503,
                      "not healthy: " + (error.empty() ? "no successful pass yet" : error) + "\n",
                      "text/plain");
      }
    } else {
      request.reply(404, "not found\n", "text/plain");
    }
  }
};

AgentHttp::AgentHttp(std::string listen, const AgentMetrics& metrics,
                     std::chrono::seconds staleAfter)
    : impl_(std::make_unique<Impl>(Impl{std::move(listen), metrics, staleAfter, nullptr})) {}

AgentHttp::~AgentHttp() {
  stop();
}

Status AgentHttp::start() {
  try {
    impl_->listener = std::make_unique<http_listener>(web::uri(listenUrl(impl_->listen)));
    impl_->listener->support([impl = impl_.get()](http_request request) { impl->handle(request); });
    impl_->listener->open().wait();
    return Ok{};
  } catch (const std::exception& e) {
    impl_->listener.reset();
    return Error{ErrorCode::kUnavailable, "listen on " + impl_->listen + ": " + e.what()};
  }
}

void AgentHttp::stop() {
  if (impl_ && impl_->listener) {
    try {
      impl_->listener->close().wait();
    } catch (const std::exception&) {
      // closing during shutdown: nothing left to serve
    }
    impl_->listener.reset();
  }
}

}  // namespace gte::agent
