#include "wire/extender_results.h"

#include "json/json_writer.h"

namespace gte::wire {
namespace {

void writeFailedMap(json::JsonWriter& w, const std::vector<FailedNode>& failed) {
  w.beginObject();
  for (const auto& f : failed)
    w.key(f.name).string(f.reason);
  w.endObject();
}

}  // namespace

std::string writeFilterResult(const FilterResult& result) {
  std::string out;
  std::size_t rawBytes = 0;
  for (auto raw : result.keptNodes)
    rawBytes += raw.size() + 1;
  out.reserve(rawBytes + 64 * (result.keptNames.size() + result.failed.size() +
                               result.failedUnresolvable.size() + 2));
  json::JsonWriter w(out);
  w.beginObject();
  // Exactly one of Nodes / NodeNames is non-null: a null pair would reject every node.
  w.key("Nodes");
  if (result.nodesMode) {
    w.beginObject().key("metadata").beginObject().endObject().key("items").beginArray();
    for (auto raw : result.keptNodes)
      w.element().rawValue(raw);
    w.endArray().endObject();
  } else {
    w.null();
  }
  w.key("NodeNames");
  if (result.nodesMode) {
    w.null();
  } else {
    w.beginArray();
    for (const auto& name : result.keptNames)
      w.element().string(name);
    w.endArray();
  }
  w.key("FailedNodes");
  writeFailedMap(w, result.failed);
  w.key("FailedAndUnresolvableNodes");
  writeFailedMap(w, result.failedUnresolvable);
  w.key("Error").string(result.error);
  w.endObject();
  return out;
}

std::string writeFilterError(std::string_view message) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject()
      .key("Nodes")
      .null()
      .key("NodeNames")
      .null()
      .key("FailedNodes")
      .null()
      .key("FailedAndUnresolvableNodes")
      .null()
      .key("Error")
      .string(message)
      .endObject();
  return out;
}

std::string writeHostPriorityList(const std::vector<HostPriority>& list) {
  std::string out;
  out.reserve(list.size() * 48 + 2);
  json::JsonWriter w(out);
  w.beginArray();
  for (const auto& hp : list) {
    w.element()
        .beginObject()
        .key("Host")
        .string(hp.host)
        .key("Score")
        .integer(hp.score)
        .endObject();
  }
  w.endArray();
  return out;
}

std::string writeBindingResult(std::string_view error) {
  std::string out;
  json::JsonWriter(out).beginObject().key("Error").string(error).endObject();
  return out;
}

std::string writePreemptionResult(const std::vector<MetaVictims>& nodes) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("NodeNameToMetaVictims").beginObject();
  for (const auto& mv : nodes) {
    w.key(mv.node).beginObject().key("Pods").beginArray();
    for (const auto& uid : mv.podUids)
      w.element().beginObject().key("UID").string(uid).endObject();
    w.endArray().key("NumPDBViolations").integer(mv.numPdbViolations).endObject();
  }
  w.endObject().endObject();
  return out;
}

std::string writeErrorBody(std::string_view message) {
  std::string out;
  json::JsonWriter(out).beginObject().key("Error").string(message).endObject();
  return out;
}

}  // namespace gte::wire
