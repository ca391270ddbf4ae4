// The second floor for bench_http: the server the extender's first listener amounted to with no
// logic. cpprestsdk's http_listener reads each request body whole, nlohmann parses it (as that
// listener's handlers did), and the answer is what an extender that decides nothing would send,
// built and serialised with nlohmann: filter passes every node it was given, prioritize gives
// every node score 0. The 5,000-node target is stated against this floor measured in the same run
// (docs/performance.md).
//
//   build/bin/http_floor_cpprest PORT
#include <cpprest/http_listener.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using nlohmann::json;
using web::http::http_request;
using web::http::methods;
using web::http::status_codes;

// The node names of an ExtenderArgs body, from NodeNames (names mode) or Nodes.items.
json namesOf(const json& args) {
  json names = json::array();
  if (const auto it = args.find("NodeNames"); it != args.end() && it->is_array()) return *it;
  if (const auto nodes = args.find("Nodes"); nodes != args.end() && nodes->is_object()) {
    for (const json& node : nodes->value("items", json::array()))
      names.push_back(node.at("metadata").at("name"));
  }
  return names;
}

std::string answer(const std::string& path, const json& args) {
  const json names = namesOf(args);
  if (path.find("prioritize") != std::string::npos) {
    json list = json::array();
    for (const json& name : names)
      list.push_back({{"Host", name}, {"Score", 0}});
    return list.dump();
  }
  return json{{"Nodes", nullptr},
              {"NodeNames", names},
              {"FailedNodes", json::object()},
              {"FailedAndUnresolvableNodes", json::object()},
              {"Error", ""}}
      .dump();
}

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
    const json args = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (args.is_discarded()) {
      request.reply(status_codes::BadRequest, "malformed JSON\n", "text/plain");
      return;
    }
    request.reply(status_codes::OK, answer(request.relative_uri().path(), args),
                  "application/json");
  });
  listener.open().wait();
  for (;;)
    std::this_thread::sleep_for(std::chrono::hours(1));
}
