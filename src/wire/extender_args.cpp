#include "wire/extender_args.h"

#include "json/json_reader.h"
#include "model/resource_list_json.h"
#include "wire/wire_keys.h"

namespace gte::wire {

// Reads only metadata.name, for a node whose object is otherwise unreadable.
Result<std::string> parseNodeNameOnly(json::JsonReader& r);

namespace {

using json::JsonReader;
using json::Kind;

// The whole object value under the current key, parsed by `parse` from its exact span.
template <typename T, typename Parse>
Result<T> readSpan(JsonReader& r, std::string_view what, Parse parse) {
  std::string_view span;
  if (!r.skipValue(&span)) return json::readerError(r, what);
  return parse(span);
}

Result<std::optional<PodInfo>> readPod(JsonReader& r) {
  if (r.readNull()) return std::optional<PodInfo>{};
  const Kind kind = r.peek();
  if (kind == Kind::kEnd || kind == Kind::kInvalid) {
    r.skipValue();  // records where the body breaks off
    return json::readerError(r, "request body");
  }
  if (kind != Kind::kObject) return invalidArgument("Pod: expected an object");
  auto pod = readSpan<PodInfo>(r, "Pod", parsePodJson);
  if (!pod) return invalidArgument("Pod: " + pod.error().message);
  return std::optional<PodInfo>(std::move(*pod));
}

Status readNodeItems(JsonReader& r, std::size_t maxNodes, std::vector<NodeItem>& out) {
  if (r.readNull()) return Ok{};
  if (!r.beginArray()) return json::readerError(r, "Nodes.items");
  while (r.nextElement()) {
    if (out.size() == maxNodes) return tooManyNodes(maxNodes);
    NodeItem item;
    if (r.peek() != Kind::kObject) return invalidArgument("Nodes.items: expected node objects");
    // One pass: the node is read by a nested reader, whose extent is then the node's exact span.
    // A node that does not read is skipped by the outer reader (which fails the body only if the
    // node is not even JSON) and kept by name with its error.
    const std::string_view rest = r.rest();
    JsonReader nodeReader(rest, r.depthLeft());
    item.info = readNodeJson(nodeReader);
    if (item.info) {
      item.raw = rest.substr(0, nodeReader.offset());
      r.consumed(nodeReader.offset());
      item.name = item.info->name;
    } else {
      if (!r.skipValue(&item.raw)) return json::readerError(r, "Nodes.items");
      item.info = parseNodeJson(item.raw);  // the error as the node's own text places it
      // Still answerable if the name can be read: the node alone is rejected.
      JsonReader nameReader(item.raw);
      auto named = parseNodeNameOnly(nameReader);
      if (!named)
        return invalidArgument("Nodes.items[" + std::to_string(out.size()) +
                               "]: " + item.info.error().message);
      item.name = std::move(*named);
    }
    out.push_back(std::move(item));
  }
  if (!r.ok()) return json::readerError(r, "Nodes.items");
  return Ok{};
}

Result<std::optional<std::vector<NodeItem>>> readNodeList(JsonReader& r, const ArgsLimits& limits) {
  if (r.readNull()) return std::optional<std::vector<NodeItem>>{};
  if (limits.nodeObjectsRefused) {
    return nodeObjectsRefused();
  }
  if (!r.beginObject()) return json::readerError(r, "Nodes");
  std::vector<NodeItem> items;
  std::string key;
  while (r.nextKey(key)) {
    if (keyIs(key, "items")) {
      if (auto s = readNodeItems(r, limits.maxNodes, items); !s) return std::move(s).error();
    } else if (!r.skipValue()) {
      return json::readerError(r, "Nodes");
    }
  }
  if (!r.ok()) return json::readerError(r, "Nodes");
  return std::optional<std::vector<NodeItem>>(std::move(items));
}

Result<std::optional<std::vector<std::string>>> readStringList(JsonReader& r, std::string_view what,
                                                               std::size_t maxNodes) {
  if (r.readNull()) return std::optional<std::vector<std::string>>{};
  if (!r.beginArray()) return json::readerError(r, what);
  std::vector<std::string> names;
  std::string name;
  while (r.nextElement()) {
    if (names.size() == maxNodes) return tooManyNodes(maxNodes);
    if (r.peek() != Kind::kString) return invalidArgument(std::string(what) + ": expected strings");
    if (!r.readString(name)) break;
    names.push_back(name);
  }
  if (!r.ok()) return json::readerError(r, what);
  return std::optional<std::vector<std::string>>(std::move(names));
}

// A string field of kube-scheduler's request: a wrong type is named by its JSON kind ("Node:
// expected a string, got number"), the wording of the extender protocol's answers
// (tests/golden/cases/*-malformed), where json::readStringField names the reader's offset.
Status readProtocolString(JsonReader& r, std::string_view what, std::string& out) {
  if (r.readNull()) return Ok{};
  if (r.peek() != Kind::kString) {
    return invalidArgument(std::string(what) + ": expected a string, got " +
                           json::kindName(r.peek()));
  }
  if (!r.readString(out)) return json::readerError(r, what);
  return Ok{};
}

}  // namespace

Error nodeObjectsRefused() {
  return Error{ErrorCode::kFailedPrecondition,
               "full Node objects refused: this extender reads nodes from its cluster cache; "
               "configure kube-scheduler with nodeCacheCapable: true"};
}

Error tooManyNodes(std::size_t limit) {
  return Error{ErrorCode::kTooLarge, "request names more than " + std::to_string(limit) +
                                         " nodes (--max-nodes-per-request)"};
}

Result<std::string> parseNodeNameOnly(JsonReader& r) {
  if (!r.beginObject()) return json::readerError(r, "node");
  std::string key;
  std::string name;
  while (r.nextKey(key)) {
    if (key != "metadata") {
      if (!r.skipValue()) break;
      continue;
    }
    if (r.readNull() || !r.beginObject()) break;
    while (r.nextKey(key)) {
      if (key == "name" && r.peek() == Kind::kString) {
        if (!r.readString(name)) break;
      } else if (!r.skipValue()) {
        break;
      }
    }
  }
  if (name.empty()) return invalidArgument("node without a readable metadata.name");
  return name;
}

Result<ExtenderArgs> parseExtenderArgs(std::string_view body, const ArgsLimits& limits) {
  JsonReader r(body);
  if (r.peek() != Kind::kObject) return invalidArgument("request body: expected a JSON object");
  if (!r.beginObject()) return json::readerError(r, "request body");
  ExtenderArgs args;
  bool havePod = false;
  std::string key;
  while (r.nextKey(key)) {
    if (keyIs(key, "Pod")) {
      auto pod = readPod(r);
      if (!pod) return std::move(pod).error();
      havePod = pod->has_value();
      if (havePod) args.pod = std::move(**pod);
    } else if (keyIs(key, "Nodes")) {
      auto nodes = readNodeList(r, limits);
      if (!nodes) return std::move(nodes).error();
      args.nodes = std::move(*nodes);
    } else if (keyIs(key, "NodeNames")) {
      auto names = readStringList(r, "NodeNames", limits.maxNodes);
      if (!names) return std::move(names).error();
      args.nodeNames = std::move(*names);
    } else if (!r.skipValue()) {
      return json::readerError(r, "request body");
    }
  }
  if (!r.finish()) return json::readerError(r, "request body");
  if (!havePod) return invalidArgument("request has no Pod");
  if (args.nodes && args.nodeNames) {
    return invalidArgument("request has both Nodes and NodeNames; exactly one is expected");
  }
  if (!args.nodes && !args.nodeNames) {
    return invalidArgument("request has neither Nodes nor NodeNames");
  }
  return args;
}

Result<BindingArgs> parseBindingArgs(std::string_view body) {
  JsonReader r(body);
  if (r.peek() != Kind::kObject) return invalidArgument("request body: expected a JSON object");
  if (!r.beginObject()) return json::readerError(r, "request body");
  BindingArgs args;
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (keyIs(key, "PodName")) {
      s = readProtocolString(r, "PodName", args.podName);
    } else if (keyIs(key, "PodNamespace")) {
      s = readProtocolString(r, "PodNamespace", args.podNamespace);
    } else if (keyIs(key, "PodUID")) {
      s = readProtocolString(r, "PodUID", args.podUid);
    } else if (keyIs(key, "Node")) {
      s = readProtocolString(r, "Node", args.node);
    } else if (!r.skipValue()) {
      return json::readerError(r, "request body");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.finish()) return json::readerError(r, "request body");
  if (args.podName.empty() || args.podNamespace.empty() || args.node.empty()) {
    return invalidArgument("binding needs PodName, PodNamespace and Node");
  }
  return args;
}

namespace {

// {"Pods":[...],"NumPDBViolations":n}; `full` = Victims (full pods) rather than MetaVictims (UIDs).
Status readVictims(JsonReader& r, bool full, NodeVictims& out) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "victims of " + out.node);
  std::string key;
  while (r.nextKey(key)) {
    if (keyIs(key, "NumPDBViolations")) {
      if (!r.readNull() && !r.readInt64(out.numPdbViolations)) {
        return json::readerError(r, "NumPDBViolations of " + out.node);
      }
    } else if (keyIs(key, "Pods")) {
      if (r.readNull()) continue;
      if (!r.beginArray()) return json::readerError(r, "Pods of " + out.node);
      while (r.nextElement()) {
        Victim v;
        if (full) {
          auto pod = readSpan<PodInfo>(r, "victim pod", parsePodJson);
          if (!pod) return invalidArgument("victim of " + out.node + ": " + pod.error().message);
          v.uid = pod->uid;
          v.pod = std::move(*pod);
        } else {
          if (!r.beginObject()) return json::readerError(r, "MetaPod of " + out.node);
          std::string k;
          while (r.nextKey(k)) {
            if (keyIs(k, "UID")) {
              if (auto s = readProtocolString(r, "UID", v.uid); !s) return s;
            } else if (!r.skipValue()) {
              return json::readerError(r, "MetaPod");
            }
          }
        }
        if (v.uid.empty()) return invalidArgument("victim on " + out.node + " has no UID");
        out.pods.push_back(std::move(v));
      }
    } else if (!r.skipValue()) {
      return json::readerError(r, "victims of " + out.node);
    }
  }
  if (!r.ok()) return json::readerError(r, "victims of " + out.node);
  return Ok{};
}

Status readVictimMap(JsonReader& r, bool full, std::vector<NodeVictims>& out) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject())
    return json::readerError(r, full ? "NodeNameToVictims" : "NodeNameToMetaVictims");
  std::string node;
  while (r.nextKey(node)) {
    NodeVictims nv;
    nv.node = node;
    if (auto s = readVictims(r, full, nv); !s) return s;
    out.push_back(std::move(nv));
  }
  if (!r.ok()) return json::readerError(r, "victim map");
  return Ok{};
}

}  // namespace

Result<PreemptionArgs> parsePreemptionArgs(std::string_view body) {
  JsonReader r(body);
  if (r.peek() != Kind::kObject) return invalidArgument("request body: expected a JSON object");
  if (!r.beginObject()) return json::readerError(r, "request body");
  PreemptionArgs args;
  bool havePod = false;
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (keyIs(key, "Pod")) {
      auto pod = readPod(r);
      if (!pod) return std::move(pod).error();
      havePod = pod->has_value();
      if (havePod) args.pod = std::move(**pod);
    } else if (keyIs(key, "NodeNameToVictims")) {
      s = readVictimMap(r, true, args.candidates);
    } else if (keyIs(key, "NodeNameToMetaVictims")) {
      s = readVictimMap(r, false, args.candidates);
    } else if (!r.skipValue()) {
      return json::readerError(r, "request body");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.finish()) return json::readerError(r, "request body");
  if (!havePod) return invalidArgument("request has no Pod");
  return args;
}

}  // namespace gte::wire
