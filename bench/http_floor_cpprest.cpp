// The second floor for bench_http: the server the extender's first listener amounted to with no
// logic, cpprestsdk's http_listener reading each request body whole and parsing it with nlohmann
// (as that listener's handlers did), then answering a fixed filter result. The 5,000-node target is
// stated against this floor measured in the same run (docs/performance.md).
//
//   build/bin/http_floor_cpprest PORT
#include <cpprest/http_listener.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using web::http::http_request;
using web::http::methods;
using web::http::status_codes;

constexpr const char* kAnswer =
    R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: http_floor_cpprest PORT\n");
    return 2;
  }
  web::http::experimental::listener::http_listener listener("http://127.0.0.1:" +
                                                            std::string(argv[1]));
  listener.support(methods::GET, [](http_request request) {
    request.reply(status_codes::OK, "ok\n", "text/plain");
  });
  listener.support(methods::POST, [](http_request request) {
    const std::string body =
        request.extract_utf8string(true).get();  // read whole, as a server must
    request.reply(status_codes::OK, body.empty() ? "" : kAnswer, "application/json");
  });
  listener.open().wait();
  for (;;)
    std::this_thread::sleep_for(std::chrono::hours(1));
}
