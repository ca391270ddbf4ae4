// The floor for bench_http: a bare Boost.Beast HTTP/1.1 server with no logic. It reads each
// request body whole and answers a fixed filter result on the same keep-alive connection, one
// thread per connection. What the extender costs over HTTP is its latency minus this one's.
//
//   build/bin/http_floor_server PORT
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

constexpr const char* kAnswer =
    R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";

void serve(tcp::socket socket) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    http::read(socket, buffer, parser, ec);
    if (ec) return;
    http::response<http::string_body> res{http::status::ok, 11};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(parser.get().keep_alive());
    res.body() = parser.get().target() == "/healthz" ? "ok\n" : kAnswer;
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !res.keep_alive()) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: http_floor_server PORT\n");
    return 2;
  }
  boost::asio::io_context ioc;
  tcp::acceptor acceptor(ioc, {boost::asio::ip::make_address("127.0.0.1"),
                               static_cast<unsigned short>(std::atoi(argv[1]))});
  for (;;) {
    tcp::socket socket(ioc);
    acceptor.accept(socket);
    socket.set_option(tcp::no_delay(true));
    std::thread(serve, std::move(socket)).detach();
  }
}
