#include "app/explain_command.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "app/explain_table.h"
#include "base/result.h"

namespace gte::app {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;

constexpr auto kTimeout = std::chrono::seconds(30);

struct Target {
  std::string host;
  std::string port = "80";
  std::string basePath;  // without a trailing slash
};

Result<Target> parseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  Target t;
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) t.basePath = std::string(rest.substr(slash));
  while (!t.basePath.empty() && t.basePath.back() == '/')
    t.basePath.pop_back();
  const auto colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    t.port = std::string(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
  }
  if (authority.size() >= 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty() || t.port.empty()) return invalidArgument("--url: no host in " + url);
  t.host = std::string(authority);
  return t;
}

// Percent-encodes everything but unreserved characters, so "ml/train" travels as "ml%2Ftrain".
std::string queryEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

struct Answer {
  int status = 0;
  std::string body;
};

Result<Answer> httpGet(const Target& target, const std::string& path) {
  net::io_context io;
  boost::beast::tcp_stream stream(io);
  boost::system::error_code ec;
  net::ip::tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(target.host, target.port, ec);
  if (ec) return Error{ErrorCode::kUnavailable, "resolve " + target.host + ": " + ec.message()};
  stream.expires_after(kTimeout);
  stream.connect(endpoints, ec);
  if (ec) {
    return Error{ErrorCode::kUnavailable,
                 "connect " + target.host + ":" + target.port + ": " + ec.message()};
  }
  http::request<http::empty_body> request(http::verb::get, path, 11);
  request.set(http::field::host, target.host);
  request.set(http::field::accept, "application/json");
  request.set(http::field::connection, "close");
  http::write(stream, request, ec);
  if (ec) return Error{ErrorCode::kUnavailable, "send: " + ec.message()};
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256U * 1024 * 1024);
  http::read(stream, buffer, parser, ec);
  if (ec) return Error{ErrorCode::kUnavailable, "read the answer: " + ec.message()};
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  return Answer{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

}  // namespace

int runExplainCommand(const ExplainOptions& options) {
  auto target = parseUrl(options.url);
  if (!target) {
    std::fprintf(stderr, "gpu-topology-extender explain: %s\n", target.error().message.c_str());
    return 2;
  }
  const std::string path = target->basePath + "/explain?pod=" + queryEscape(options.pod);
  auto answer = httpGet(*target, path);
  if (!answer) {
    std::fprintf(stderr, "gpu-topology-extender explain: %s\n", answer.error().message.c_str());
    return 1;
  }
  if (answer->status != 200) {
    std::fprintf(stderr, "gpu-topology-extender explain: HTTP %d from %s: %s\n", answer->status,
                 options.url.c_str(), answer->body.c_str());
    return 1;
  }
  if (options.output == OutputFormat::kJson) {
    std::fwrite(answer->body.data(), 1, answer->body.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  auto table = explainTable(answer->body, options.top);
  if (!table) {
    std::fprintf(stderr, "gpu-topology-extender explain: %s\n", table.error().message.c_str());
    return 1;
  }
  std::fputs(table->c_str(), stdout);
  return 0;
}

}  // namespace gte::app
