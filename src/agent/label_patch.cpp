#include "agent/label_patch.h"

#include "json/json_writer.h"

namespace gte::agent {
namespace {

bool underPrefix(std::string_view key, std::string_view prefix) {
  return key.substr(0, prefix.size()) == prefix;
}

std::string patchBody(const StringMap& set, const StringMap& remove) {
  std::string body;
  json::JsonWriter w(body);
  w.beginObject().key("metadata").beginObject().key("labels").beginObject();
  for (const auto& [key, value] : set) {
    w.key(key).string(value);
  }
  for (const auto& [key, value] : remove) {
    w.key(key).null();
  }
  w.endObject().endObject().endObject();
  return body;
}

}  // namespace

std::optional<std::string> labelPatch(const StringMap& current, const StringMap& desired,
                                      std::string_view prefix) {
  const std::string gen = std::string(prefix) + "gen";
  StringMap set;
  StringMap remove;
  bool factChanged = false;
  for (const auto& [key, value] : desired) {
    const auto it = current.find(key);
    if (it == current.end() || it->second != value) {
      set.emplace(key, value);
      factChanged = factChanged || key != gen;
    }
  }
  for (const auto& [key, value] : current) {
    if (underPrefix(key, prefix) && desired.find(key) == desired.end()) {
      remove.emplace(key, value);
      factChanged = true;
    }
  }
  if (!factChanged) {
    return std::nullopt;
  }
  return patchBody(set, remove);
}

std::optional<std::string> cleanupPatch(const StringMap& current, std::string_view prefix) {
  StringMap remove;
  for (const auto& [key, value] : current) {
    if (underPrefix(key, prefix)) {
      remove.emplace(key, value);
    }
  }
  if (remove.empty()) {
    return std::nullopt;
  }
  return patchBody({}, remove);
}

}  // namespace gte::agent
