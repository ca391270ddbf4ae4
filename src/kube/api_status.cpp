#include "kube/api_status.h"

#include "json/json_reader.h"

namespace gte::kube {

std::string statusMessage(std::string_view body) {
  json::JsonReader reader(body);
  std::string key;
  std::string message;
  if (reader.beginObject()) {
    while (reader.nextKey(key)) {
      const bool good = key == "message" && reader.peek() == json::Kind::kString
                            ? reader.readString(message)
                            : reader.skipValue();
      if (!good) break;
    }
  }
  return message.empty() ? std::string(body) : message;
}

Error statusError(const std::string& what, const HttpResponse& response) {
  const ErrorCode code = response.status == 404   ? ErrorCode::kNotFound
                         : response.status >= 500 ? ErrorCode::kUnavailable
                                                  : ErrorCode::kFailedPrecondition;
  constexpr std::size_t kMaxMessage = 600;
  return Error{code, what + ": HTTP " + std::to_string(response.status) + ": " +
                         statusMessage(response.body).substr(0, kMaxMessage)};
}

}  // namespace gte::kube
