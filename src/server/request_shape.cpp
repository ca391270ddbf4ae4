#include "server/request_shape.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "json/json_reader.h"

namespace gte::server {
namespace {

// Go's decoder matches keys case-insensitively; so does the skim.
bool keyIs(const std::string& key, std::string_view want) {
  return key.size() == want.size() &&
         std::equal(key.begin(), key.end(), want.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// Counts the elements of the array at the reader, up to `limit + 1`.
bool countArray(json::JsonReader& reader, std::size_t limit, std::size_t& count) {
  if (!reader.beginArray()) return false;
  while (reader.nextElement()) {
    if (!reader.skipValue()) return false;
    if (++count > limit) return true;
  }
  return reader.ok();
}

// Counts the keys of the object at the reader, up to `limit + 1`.
bool countKeys(json::JsonReader& reader, std::size_t limit, std::size_t& count) {
  if (!reader.beginObject()) return false;
  std::string key;
  while (reader.nextKey(key)) {
    if (!reader.skipValue()) return false;
    if (++count > limit) return true;
  }
  return reader.ok();
}

// ExtenderArgs.Nodes: a NodeList whose `items` are counted.
bool countNodeList(json::JsonReader& reader, std::size_t limit, std::size_t& count) {
  if (!reader.beginObject()) return false;
  std::string key;
  while (reader.nextKey(key)) {
    const bool ok = keyIs(key, "items") && reader.peek() == json::Kind::kArray
                        ? countArray(reader, limit, count)
                        : reader.skipValue();
    if (!ok) return false;
    if (count > limit) return true;
  }
  return reader.ok();
}

}  // namespace

std::optional<RequestShape> scanRequestShape(std::string_view body, std::size_t countLimit) {
  json::JsonReader reader(body);
  if (reader.peek() != json::Kind::kObject || !reader.beginObject()) return std::nullopt;
  RequestShape shape;
  std::string key;
  while (reader.nextKey(key)) {
    std::size_t count = 0;
    bool ok = true;
    if (reader.peek() == json::Kind::kNull) {
      ok = reader.readNull();
    } else if (keyIs(key, "nodes")) {
      shape.fullNodes = true;
      ok = countNodeList(reader, countLimit, count);
    } else if (keyIs(key, "nodenames")) {
      ok = countArray(reader, countLimit, count);
    } else if (keyIs(key, "nodenametovictims") || keyIs(key, "nodenametometavictims")) {
      ok = countKeys(reader, countLimit, count);
    } else {
      ok = reader.skipValue();
    }
    if (!ok) return std::nullopt;
    shape.nodes = std::max(shape.nodes, count);
    if (shape.nodes > countLimit) return shape;
  }
  if (!reader.ok()) return std::nullopt;
  return shape;
}

}  // namespace gte::server
