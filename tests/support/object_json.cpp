#include "support/object_json.h"

#include "json/json_writer.h"

namespace gte::testing {
namespace {

void writeQuantities(json::JsonWriter& w, const ResourceList& list) {
  w.beginObject();
  for (const auto& [name, quantity] : list.entries()) {
    w.key(name).string(std::to_string(quantity.wholeUnits().value_or(0)));
  }
  w.endObject();
}

}  // namespace

std::string nodeJson(const NodeInfo& node) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("kind").string("Node").key("metadata").beginObject();
  w.key("name").string(node.name).key("labels").beginObject();
  for (const auto& [k, v] : node.labels)
    w.key(k).string(v);
  w.endObject().endObject().key("status").beginObject().key("allocatable");
  writeQuantities(w, node.allocatable);
  w.endObject().endObject();
  return out;
}

std::string podJson(const PodInfo& pod) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("kind").string("Pod").key("metadata").beginObject();
  w.key("name").string(pod.name).key("namespace").string(pod.ns).key("uid").string(pod.uid);
  w.key("annotations").beginObject();
  for (const auto& [k, v] : pod.annotations)
    w.key(k).string(v);
  w.endObject().endObject();
  w.key("spec").beginObject().key("containers").beginArray().element().beginObject();
  w.key("name").string("main").key("resources").beginObject().key("requests");
  writeQuantities(w, pod.requests);
  w.key("limits");
  writeQuantities(w, pod.requests);
  w.endObject().endObject().endArray().endObject();
  w.key("status").beginObject().key("phase").string(pod.phase.empty() ? "Pending" : pod.phase);
  w.endObject().endObject();
  return out;
}

std::string namesArgsJson(const PodInfo& pod, const std::vector<std::string>& names) {
  std::string out = R"({"Pod":)" + podJson(pod) + R"(,"Nodes":null,"NodeNames":[)";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.push_back(',');
    json::appendQuoted(out, names[i]);
  }
  out += "]}";
  return out;
}

std::string clusterListJson(const std::vector<NodeInfo>& nodes, const std::vector<PodInfo>& pods) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  bool first = true;
  for (const NodeInfo& node : nodes) {
    if (!first) out.push_back(',');
    first = false;
    out += nodeJson(node);
  }
  for (const PodInfo& pod : pods) {
    if (!first) out.push_back(',');
    first = false;
    out += podJson(pod);
  }
  out += "]}";
  return out;
}

}  // namespace gte::testing
