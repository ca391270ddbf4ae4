#include "app/extender_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>

namespace gte::app {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;

// A what-if may run up to its deadline on the extender (--whatif-deadline, seconds); this covers
// that with room to spare.
constexpr auto kTimeout = std::chrono::seconds(60);

struct Answer {
  int status = 0;
  std::string body;
};

Result<Answer> ask(const ExtenderTarget& target, std::string_view method, const std::string& path,
                   const std::string& body) {
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
  http::request<http::string_body> request(method == "POST" ? http::verb::post : http::verb::get,
                                           path, 11);
  request.set(http::field::host, target.host);
  request.set(http::field::accept, "application/json");
  request.set(http::field::connection, "close");
  if (method == "POST") {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
    request.prepare_payload();
  }
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

Result<ExtenderTarget> parseExtenderUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return invalidArgument("--url: expected http://HOST:PORT (plain HTTP), got \"" + url + "\"");
  }
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  ExtenderTarget t;
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

int printExtenderAnswer(std::string_view command, const std::string& url, std::string_view method,
                        const std::string& pathAndQuery, const std::string& body,
                        OutputFormat output,
                        const std::function<Result<std::string>(std::string_view)>& table) {
  const std::string who = "gpu-topology-extender " + std::string(command);
  auto target = parseExtenderUrl(url);
  if (!target) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), target.error().message.c_str());
    return 2;
  }
  auto answer = ask(*target, method, target->basePath + pathAndQuery, body);
  if (!answer) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), answer.error().message.c_str());
    return 1;
  }
  if (answer->status != 200) {
    std::fprintf(stderr, "%s: HTTP %d from %s: %s\n", who.c_str(), answer->status, url.c_str(),
                 answer->body.c_str());
    return 1;
  }
  if (output == OutputFormat::kJson) {
    std::fwrite(answer->body.data(), 1, answer->body.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  auto text = table(answer->body);
  if (!text) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), text.error().message.c_str());
    return 1;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace gte::app
