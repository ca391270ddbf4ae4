#include "kube/api_discovery.h"
#include "kube/api_status.h"

#include <algorithm>

#include "json/json_reader.h"

namespace gte::kube {
namespace {

Error unreadable(const json::JsonReader& reader, std::string_view what) {
  return Error{ErrorCode::kInvalidArgument,
               "APIResourceList: " + std::string(what) + ": " +
                   (reader.ok() ? std::string("unexpected value") : reader.error()) + " at byte " +
                   std::to_string(reader.offset())};
}

// One element of `resources`: its `name`.
Result<std::string> readResourceName(json::JsonReader& r, std::size_t index) {
  const std::string where = "resources[" + std::to_string(index) + "]";
  if (!r.beginObject()) return unreadable(r, where);
  std::string key;
  std::string name;
  while (r.nextKey(key)) {
    if (key == "name") {
      if (!r.readString(name)) return unreadable(r, where + ".name");
    } else if (!r.skipValue()) {
      return unreadable(r, where + "." + key);
    }
  }
  if (!r.ok()) return unreadable(r, where);
  return name;
}

}  // namespace

Result<std::vector<std::string>> parseApiResourceNames(std::string_view text) {
  json::JsonReader r(text);
  std::vector<std::string> names;
  if (!r.beginObject()) return unreadable(r, "the document");
  std::string key;
  bool listed = false;
  while (r.nextKey(key)) {
    if (key != "resources") {
      if (!r.skipValue()) return unreadable(r, key);
      continue;
    }
    listed = true;
    if (r.readNull()) continue;
    if (!r.beginArray()) return unreadable(r, "resources");
    for (std::size_t i = 0; r.nextElement(); ++i) {
      auto name = readResourceName(r, i);
      if (!name) return std::move(name).error();
      if (!name->empty()) names.push_back(std::move(*name));
    }
    if (!r.ok()) return unreadable(r, "resources");
  }
  if (!r.ok() || !r.finish()) return unreadable(r, "the document");
  if (!listed) return Error{ErrorCode::kInvalidArgument, "APIResourceList: no resources"};
  return names;
}

std::string groupVersionPath(const ResourceType& type) {
  if (type.group.empty()) return "/api/" + std::string(type.version);
  return "/apis/" + std::string(type.group) + "/" + std::string(type.version);
}

Result<bool> servesResource(ApiTransport& transport, const ResourceType& type) {
  const std::string path = groupVersionPath(type);
  auto response = transport.send("GET", path);
  if (!response) return std::move(response).error();
  if (response->status == 404) return false;
  if (!response->success()) return statusError("GET " + path, *response);
  auto names = parseApiResourceNames(response->body);
  if (!names)
    return Error{ErrorCode::kInvalidArgument, "GET " + path + ": " + names.error().message};
  return std::find(names->begin(), names->end(), type.resource) != names->end();
}

}  // namespace gte::kube
