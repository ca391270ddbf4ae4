#include "model/node_info.h"

#include "json/json_fields.h"
#include "json/json_reader.h"
#include "model/resource_list_json.h"

namespace gte {
namespace {

using json::JsonReader;

constexpr std::string_view kMetadata = "node metadata";
constexpr std::string_view kStatus = "node status";

// String fields tolerate null (Go encodes nothing else for these fields).
Status readMetadata(JsonReader& r, NodeInfo& node) {
  return json::forEachKey(r, kMetadata, [&](const std::string& key) -> Status {
    if (key == "name") return json::readStringField(r, kMetadata, key, node.name);
    if (key == "uid") return json::readStringField(r, kMetadata, key, node.uid);
    if (key == "resourceVersion") {
      return json::readStringField(r, kMetadata, key, node.resourceVersion);
    }
    if (key == "labels") return readStringMap(r, "metadata.labels", node.labels);
    return json::skipField(r, kMetadata, key);
  });
}

// status.declaredFeatures: whether the node declares DRAOptionalNodeOperations. An element that
// is not a string names no feature and is skipped (a newer kubelet may publish objects).
Status readDeclaredFeatures(JsonReader& r, NodeInfo& node) {
  if (r.peek() != json::Kind::kArray) return json::skipField(r, kStatus, "declaredFeatures");
  std::string feature;
  return json::forEachElement(r, "node status.declaredFeatures", [&](std::size_t) -> Status {
    if (r.peek() != json::Kind::kString) return json::skipField(r, kStatus, "declaredFeatures");
    if (Status s = json::readStringField(r, kStatus, "declaredFeatures", feature); !s) return s;
    node.declaresDraOptionalNodeOperations =
        node.declaresDraOptionalNodeOperations || feature == "DRAOptionalNodeOperations";
    return Ok{};
  });
}

Status readStatus(JsonReader& r, NodeInfo& node) {
  return json::forEachKey(r, kStatus, [&](const std::string& key) -> Status {
    if (key == "allocatable") {
      return readResourceList(r, "status.allocatable", node.allocatable);
    }
    if (key == "declaredFeatures") return readDeclaredFeatures(r, node);
    return json::skipField(r, kStatus, key);
  });
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
  if (r.peek() != json::Kind::kObject) {
    r.beginObject();  // records the reader's error: "expected an object"
    return json::readerError(r, "node");
  }
  Status read = json::forEachKey(r, "node", [&](const std::string& key) -> Status {
    if (key == "metadata") return readMetadata(r, node);
    if (key == "status") return readStatus(r, node);
    if (!r.skipValue()) return json::readerError(r, "node");
    return Ok{};
  });
  if (!read) return std::move(read).error();
  if (node.name.empty()) return invalidArgument("node without metadata.name");
  return node;
}

}  // namespace gte
