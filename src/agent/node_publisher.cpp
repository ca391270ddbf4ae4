#include "agent/node_publisher.h"

#include "agent/label_patch.h"
#include "json/json_reader.h"
#include "kube/api_status.h"
#include "kube/resource_path.h"
#include "model/node_info.h"

namespace gte::agent {

namespace {

Error jsonError(const json::JsonReader& reader) {
  return invalidArgument("node annotations: " + reader.error());
}

// Reads the object at `reader` into `out` (string values; others skipped).
bool readStringMap(json::JsonReader& reader, StringMap& out) {
  if (reader.readNull()) {
    return true;
  }
  if (!reader.beginObject()) {
    return false;
  }
  std::string key;
  while (reader.nextKey(key)) {
    if (reader.peek() == json::Kind::kString) {
      std::string value;
      if (!reader.readString(value)) return false;
      out.insert_or_assign(key, std::move(value));
    } else if (!reader.skipValue()) {
      return false;
    }
  }
  return reader.ok();
}

}  // namespace

Result<StringMap> nodeAnnotations(std::string_view text) {
  json::JsonReader reader(text);
  StringMap out;
  if (!reader.beginObject()) {
    return jsonError(reader);
  }
  std::string key;
  while (reader.nextKey(key)) {
    if (key != "metadata") {
      if (!reader.skipValue()) return jsonError(reader);
      continue;
    }
    if (!reader.beginObject()) return jsonError(reader);
    std::string field;
    while (reader.nextKey(field)) {
      const bool ok = field == "annotations" ? readStringMap(reader, out) : reader.skipValue();
      if (!ok) return jsonError(reader);
    }
    if (!reader.ok()) return jsonError(reader);
  }
  if (!reader.ok()) {
    return jsonError(reader);
  }
  return out;
}

Result<std::string> NodePublisher::getNode() {
  auto response = api_.send("GET", kube::objectPath(kube::kNodes, "", node_));
  if (!response.ok()) {
    return response.error();
  }
  if (!response->success()) {
    return kube::statusError("GET node " + node_, *response);
  }
  return std::move(response->body);
}

Result<StringMap> NodePublisher::currentLabels() {
  auto view = read();
  if (!view.ok()) {
    return view.error();
  }
  return std::move(view->labels);
}

Result<NodeView> NodePublisher::read() {
  auto body = getNode();
  if (!body.ok()) {
    return body.error();
  }
  auto node = parseNodeJson(*body);
  if (!node.ok()) {
    return node.error();
  }
  auto annotations = nodeAnnotations(*body);
  if (!annotations.ok()) {
    return annotations.error();
  }
  return NodeView{std::move(node->labels), std::move(annotations).value()};
}

Result<bool> NodePublisher::patch(const std::string& body) {
  auto response = api_.send("PATCH", kube::objectPath(kube::kNodes, "", node_), body,
                            "application/merge-patch+json");
  if (!response.ok()) {
    return response.error();
  }
  if (!response->success()) {
    return kube::statusError("PATCH node " + node_, *response);
  }
  return true;
}

Result<bool> NodePublisher::publish(const StringMap& desired) {
  auto current = currentLabels();
  if (!current.ok()) {
    return current.error();
  }
  return publish(desired, *current);
}

Result<bool> NodePublisher::publish(const StringMap& desired, const StringMap& currentLabels) {
  const auto body = labelPatch(currentLabels, desired, prefix_);
  if (!body) {
    return false;
  }
  return patch(*body);
}

Result<bool> NodePublisher::cleanup() {
  auto current = currentLabels();
  if (!current.ok()) {
    return current.error();
  }
  const auto body = cleanupPatch(*current, prefix_);
  if (!body) {
    return false;
  }
  return patch(*body);
}

}  // namespace gte::agent
