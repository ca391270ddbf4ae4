#pragma once
// What a verb answers: an HTTP status and a JSON body. The transport adds nothing but headers.
#include <string>

namespace gte {

struct ServiceReply {
  int status = 200;
  std::string body;  // JSON
};

}  // namespace gte
