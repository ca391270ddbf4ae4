#pragma once
// What the extender answers one HTTP request with, whoever answers it (a verb, explain, a probe, a
// refusal): a status, a body and its content type, and any extra headers. The transport adds only
// framing headers (Content-Length, Connection).
#include <string>
#include <utility>
#include <vector>

namespace gte {

struct Reply {
  Reply() = default;
  // A JSON answer.
  Reply(int httpStatus, std::string json) : status(httpStatus), body(std::move(json)) {}

  int status = 200;
  std::string body;  // JSON unless contentType says otherwise
  std::string contentType = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  // The transport answers with `Connection: close` and closes the connection afterwards (a
  // standby sending its caller back to the Service, which routes to the leader).
  bool closeConnection = false;
};

}  // namespace gte
