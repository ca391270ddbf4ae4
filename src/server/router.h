#pragma once
// Maps (method, path, body) to a reply: the extender verbs under the path prefix, plus health,
// readiness, metrics and version. Pure: the cpprest transport in http_server.cpp calls it, and the
// routing tests call it directly.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gte {
class ExtenderService;
namespace metrics {
class Metrics;
}

namespace server {

struct Reply {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

class Router {
 public:
  // `prefix` like "/scheduler" (trailing slashes are stripped; "" or "/" serve verbs at the root).
  Router(std::string prefix, const ExtenderService& service, metrics::Metrics* metrics,
         std::string versionJson);

  Reply route(std::string_view method, std::string_view path, std::string_view body) const;
  // Replies used by the transport before a body is read.
  Reply tooLarge(std::string_view path, std::size_t limit) const;
  Reply badRequest(std::string_view path, std::string_view why) const;

  // True for paths whose POST bodies should be read at all (anything else is answered at once).
  bool acceptsBody(std::string_view method, std::string_view path) const;

 private:
  std::string prefix_;
  const ExtenderService& service_;
  metrics::Metrics* metrics_;
  std::string versionJson_;
};

}  // namespace server
}  // namespace gte
