#include "model/pod_info.h"

#include <vector>

#include "json/json_reader.h"
#include "model/resource_list_json.h"

namespace gte {
namespace {

using json::JsonReader;
using json::Kind;

struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  bool restartable = false;  // an init container with restartPolicy Always (a sidecar)

  // The API server defaults a missing request to the limit (SetDefaults_Pod); inputs that never
  // went through it (cluster files, tests) get the same rule here.
  ResourceList effectiveRequests() const {
    ResourceList out = requests;
    for (const auto& [name, q] : limits.entries()) {
      if (!out.find(name)) out.set(name, q);
    }
    return out;
  }
};

bool readOptionalString(JsonReader& r, std::string& out) {
  if (r.readNull()) return true;
  return r.readString(out);
}

Status readResources(JsonReader& r, ContainerResources& c, const std::string& where) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, where + ".resources");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "requests") {
      s = readResourceList(r, where + ".resources.requests", c.requests);
    } else if (key == "limits") {
      s = readResourceList(r, where + ".resources.limits", c.limits);
    } else if (!r.skipValue()) {
      return readerError(r, where);
    }
    if (!s) return s;
  }
  if (!r.ok()) return readerError(r, where);
  return Ok{};
}

Status readContainers(JsonReader& r, std::vector<ContainerResources>& out, const char* field) {
  if (r.readNull()) return Ok{};
  if (!r.beginArray()) return readerError(r, std::string("spec.") + field);
  std::string key;
  std::string policy;
  while (r.nextElement()) {
    const std::string where = std::string("spec.") + field + "[" + std::to_string(out.size()) + "]";
    ContainerResources c;
    if (!r.beginObject()) return readerError(r, where);
    while (r.nextKey(key)) {
      if (key == "resources") {
        if (auto s = readResources(r, c, where); !s) return s;
      } else if (key == "restartPolicy") {
        if (!readOptionalString(r, policy)) return readerError(r, where + ".restartPolicy");
        c.restartable = policy == "Always";
      } else if (!r.skipValue()) {
        return readerError(r, where);
      }
    }
    if (!r.ok()) return readerError(r, where);
    out.push_back(std::move(c));
  }
  if (!r.ok()) return readerError(r, std::string("spec.") + field);
  return Ok{};
}

void maxInto(ResourceList& target, const ResourceList& other) {
  for (const auto& [name, q] : other.entries()) {
    const Quantity* cur = target.find(name);
    if (!cur || *cur < q) target.set(name, q);
  }
}

void addInto(ResourceList& target, const ResourceList& other) {
  for (const auto& [name, q] : other.entries())
    target.add(name, q);
}

// k8s.io/component-helpers/resource PodRequests, without pod-level resources (which cover only
// cpu and memory, never the extended resources this extender manages).
ResourceList effectivePodRequests(const std::vector<ContainerResources>& containers,
                                  const std::vector<ContainerResources>& initContainers,
                                  const ResourceList& overhead) {
  ResourceList reqs;
  for (const auto& c : containers)
    addInto(reqs, c.effectiveRequests());
  ResourceList sidecars;
  ResourceList initMax;
  for (const auto& c : initContainers) {
    const ResourceList own = c.effectiveRequests();
    if (c.restartable) {
      addInto(reqs, own);
      addInto(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      ResourceList during = own;
      addInto(during, sidecars);
      maxInto(initMax, during);
    }
  }
  maxInto(reqs, initMax);
  addInto(reqs, overhead);
  return reqs;
}

struct PodSpecParts {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> initContainers;
  ResourceList overhead;
};

Status readMetadata(JsonReader& r, PodInfo& pod) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, "pod metadata");
  std::string key;
  while (r.nextKey(key)) {
    bool good = true;
    if (key == "name") {
      good = readOptionalString(r, pod.name);
    } else if (key == "namespace") {
      good = readOptionalString(r, pod.ns);
    } else if (key == "uid") {
      good = readOptionalString(r, pod.uid);
    } else if (key == "resourceVersion") {
      good = readOptionalString(r, pod.resourceVersion);
    } else if (key == "deletionTimestamp") {
      pod.deleting = r.peek() != Kind::kNull;
      good = r.skipValue();
    } else if (key == "annotations") {
      if (auto s = readStringMap(r, "metadata.annotations", pod.annotations); !s) return s;
    } else if (key == "labels") {
      if (auto s = readStringMap(r, "metadata.labels", pod.labels); !s) return s;
    } else {
      good = r.skipValue();
    }
    if (!good) return readerError(r, "pod metadata." + key);
  }
  if (!r.ok()) return readerError(r, "pod metadata");
  return Ok{};
}

// spec.schedulingGroup: a one-of union whose only member today is podGroupName.
Status readSchedulingGroup(JsonReader& r, PodInfo& pod) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, "pod spec.schedulingGroup");
  std::string key;
  while (r.nextKey(key)) {
    const bool good =
        key == "podGroupName" ? readOptionalString(r, pod.podGroupName) : r.skipValue();
    if (!good) return readerError(r, "pod spec.schedulingGroup." + key);
  }
  if (!r.ok()) return readerError(r, "pod spec.schedulingGroup");
  return Ok{};
}

Status readSpec(JsonReader& r, PodInfo& pod, PodSpecParts& parts) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, "pod spec");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    bool good = true;
    if (key == "containers") {
      s = readContainers(r, parts.containers, "containers");
    } else if (key == "initContainers") {
      s = readContainers(r, parts.initContainers, "initContainers");
    } else if (key == "overhead") {
      s = readResourceList(r, "spec.overhead", parts.overhead);
    } else if (key == "nodeName") {
      good = readOptionalString(r, pod.nodeName);
    } else if (key == "priority") {
      good = r.readNull() || r.readInt64(pod.priority);
    } else if (key == "schedulingGroup") {
      s = readSchedulingGroup(r, pod);
    } else {
      good = r.skipValue();
    }
    if (!s) return s;
    if (!good) return readerError(r, "pod spec." + key);
  }
  if (!r.ok()) return readerError(r, "pod spec");
  return Ok{};
}

Status readStatus(JsonReader& r, PodInfo& pod) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, "pod status");
  std::string key;
  while (r.nextKey(key)) {
    bool good = true;
    if (key == "phase") {
      good = readOptionalString(r, pod.phase);
    } else if (key == "nominatedNodeName") {
      good = readOptionalString(r, pod.nominatedNodeName);
    } else {
      good = r.skipValue();
    }
    if (!good) return readerError(r, "pod status." + key);
  }
  if (!r.ok()) return readerError(r, "pod status");
  return Ok{};
}

}  // namespace

Result<PodInfo> parsePodJson(std::string_view text) {
  JsonReader r(text);
  PodInfo pod;
  PodSpecParts parts;
  if (!r.beginObject()) return readerError(r, "pod");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "metadata") {
      s = readMetadata(r, pod);
    } else if (key == "spec") {
      s = readSpec(r, pod, parts);
    } else if (key == "status") {
      s = readStatus(r, pod);
    } else if (!r.skipValue()) {
      return readerError(r, "pod");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.finish()) return readerError(r, "pod");
  pod.requests = effectivePodRequests(parts.containers, parts.initContainers, parts.overhead);
  return pod;
}

}  // namespace gte
