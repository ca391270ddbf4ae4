#include "model/node_info.h"

#include "json/json_reader.h"
#include "model/resource_list_json.h"

namespace gte {
namespace {

using json::JsonReader;

// Reads a string field, tolerating null (Go encodes nothing else for these fields).
Status readMetadata(JsonReader& r, NodeInfo& node) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "node metadata");
  std::string key;
  while (r.nextKey(key)) {
    bool good = true;
    if (key == "name") {
      good = r.readStringOrNull(node.name);
    } else if (key == "uid") {
      good = r.readStringOrNull(node.uid);
    } else if (key == "resourceVersion") {
      good = r.readStringOrNull(node.resourceVersion);
    } else if (key == "labels") {
      if (auto s = readStringMap(r, "metadata.labels", node.labels); !s)
        return std::move(s).error();
    } else {
      good = r.skipValue();
    }
    if (!good) return json::readerError(r, "node metadata." + key);
  }
  if (!r.ok()) return json::readerError(r, "node metadata");
  return Ok{};
}

Status readStatus(JsonReader& r, NodeInfo& node) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "node status");
  std::string key;
  while (r.nextKey(key)) {
    if (key == "allocatable") {
      if (auto s = readResourceList(r, "status.allocatable", node.allocatable); !s) {
        return std::move(s).error();
      }
    } else if (key == "declaredFeatures" && r.peek() == json::Kind::kArray) {
      r.beginArray();
      std::string feature;
      while (r.nextElement()) {
        if (r.peek() != json::Kind::kString) {
          if (!r.skipValue()) break;
          continue;
        }
        if (!r.readString(feature)) break;
        node.declaresDraOptionalNodeOperations =
            node.declaresDraOptionalNodeOperations || feature == "DRAOptionalNodeOperations";
      }
    } else if (!r.skipValue()) {
      return json::readerError(r, "node status." + key);
    }
  }
  if (!r.ok()) return json::readerError(r, "node status");
  return Ok{};
}

}  // namespace

Result<NodeInfo> parseNodeJson(std::string_view text) {
  JsonReader r(text);
  auto node = readNodeJson(r);
  if (node && !r.finish()) return json::readerError(r, "node");
  return node;
}

Result<NodeInfo> readNodeJson(JsonReader& r) {
  NodeInfo node;
  if (!r.beginObject()) return json::readerError(r, "node");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "metadata") {
      s = readMetadata(r, node);
    } else if (key == "status") {
      s = readStatus(r, node);
    } else if (!r.skipValue()) {
      return json::readerError(r, "node");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.ok()) return json::readerError(r, "node");
  if (node.name.empty()) return invalidArgument("node without metadata.name");
  return node;
}

}  // namespace gte
