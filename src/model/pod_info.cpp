#include "model/pod_info.h"

#include <vector>

#include "json/json_reader.h"
#include "model/resource_list_json.h"
#include "model/rfc3339.h"

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

Status readResources(JsonReader& r, ContainerResources& c, const std::string& where) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, where + ".resources");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "requests") {
      s = readResourceList(r, where + ".resources.requests", c.requests);
    } else if (key == "limits") {
      s = readResourceList(r, where + ".resources.limits", c.limits);
    } else if (!r.skipValue()) {
      return json::readerError(r, where);
    }
    if (!s) return s;
  }
  if (!r.ok()) return json::readerError(r, where);
  return Ok{};
}

Status readContainers(JsonReader& r, std::vector<ContainerResources>& out, const char* field) {
  if (r.readNull()) return Ok{};
  if (!r.beginArray()) return json::readerError(r, std::string("spec.") + field);
  std::string key;
  std::string policy;
  while (r.nextElement()) {
    const std::string where = std::string("spec.") + field + "[" + std::to_string(out.size()) + "]";
    ContainerResources c;
    if (!r.beginObject()) return json::readerError(r, where);
    while (r.nextKey(key)) {
      if (key == "resources") {
        if (auto s = readResources(r, c, where); !s) return s;
      } else if (key == "restartPolicy") {
        if (!r.readStringOrNull(policy)) return json::readerError(r, where + ".restartPolicy");
        c.restartable = policy == "Always";
      } else if (!r.skipValue()) {
        return json::readerError(r, where);
      }
    }
    if (!r.ok()) return json::readerError(r, where);
    out.push_back(std::move(c));
  }
  if (!r.ok()) return json::readerError(r, std::string("spec.") + field);
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

// An array of objects with string fields (spec.resourceClaims, status.resourceClaimStatuses):
// `field(item, key)` names the member a key fills, or nullptr to skip it.
template <typename Item, typename Field>
Status readStringObjects(JsonReader& r, const std::string& where, std::vector<Item>& out,
                         Field field) {
  if (r.readNull()) return Ok{};
  if (!r.beginArray()) return json::readerError(r, where);
  std::string key;
  while (r.nextElement()) {
    const std::string at = where + "[" + std::to_string(out.size()) + "]";
    Item item;
    if (!r.beginObject()) return json::readerError(r, at);
    while (r.nextKey(key)) {
      std::string* target = field(item, key);
      const bool good = target != nullptr ? r.readStringOrNull(*target) : r.skipValue();
      if (!good) return json::readerError(r, at + "." + key);
    }
    if (!r.ok()) return json::readerError(r, at);
    out.push_back(std::move(item));
  }
  if (!r.ok()) return json::readerError(r, where);
  return Ok{};
}

struct PodSpecParts {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> initContainers;
  ResourceList overhead;
};

// The times PodInfo::boundAt is chosen from, read in the same pass as the rest of the pod. A field
// of an unexpected JSON type makes the bind time unknown; it never makes the pod unreadable.
struct BindTimes {
  std::optional<std::int64_t> created;    // metadata.creationTimestamp
  std::optional<std::int64_t> scheduled;  // status.conditions[PodScheduled=True].lastTransitionTime
  bool unknown = false;

  std::optional<std::int64_t> boundAt() const {
    if (unknown) return std::nullopt;
    return scheduled ? scheduled : created;
  }
};

// A time field: null leaves `out` as it is, a string sets it (nullopt when it is no time).
bool readTime(JsonReader& r, std::optional<std::int64_t>& out, BindTimes& times) {
  if (r.readNull()) return true;
  if (r.peek() != Kind::kString) {
    times.unknown = true;
    return r.skipValue();
  }
  std::string text;
  if (!r.readString(text)) return false;
  out = parseRfc3339(text);
  return true;
}

// One element of status.conditions: a PodScheduled condition that is True sets `scheduled`.
bool readCondition(JsonReader& r, BindTimes& times) {
  if (r.readNull()) return true;
  if (r.peek() != Kind::kObject) {
    times.unknown = true;
    return r.skipValue();
  }
  if (!r.beginObject()) return false;
  std::string key;
  std::string type;
  std::string status;
  std::optional<std::int64_t> transition;
  while (r.nextKey(key)) {
    bool good = true;
    if ((key == "type" || key == "status") && r.peek() == Kind::kString) {
      good = r.readString(key == "type" ? type : status);
    } else if (key == "lastTransitionTime") {
      good = readTime(r, transition, times);
    } else {
      good = r.skipValue();
    }
    if (!good) return false;
  }
  if (type == "PodScheduled" && status == "True" && transition) times.scheduled = transition;
  return r.ok();
}

bool readConditions(JsonReader& r, BindTimes& times) {
  if (r.readNull()) return true;
  if (r.peek() != Kind::kArray) {
    times.unknown = true;
    return r.skipValue();
  }
  if (!r.beginArray()) return false;
  while (r.nextElement()) {
    if (!readCondition(r, times)) return false;
  }
  return r.ok();
}

Status readMetadata(JsonReader& r, PodInfo& pod, BindTimes& times) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "pod metadata");
  std::string key;
  while (r.nextKey(key)) {
    bool good = true;
    if (key == "name") {
      good = r.readStringOrNull(pod.name);
    } else if (key == "namespace") {
      good = r.readStringOrNull(pod.ns);
    } else if (key == "uid") {
      good = r.readStringOrNull(pod.uid);
    } else if (key == "resourceVersion") {
      good = r.readStringOrNull(pod.resourceVersion);
    } else if (key == "deletionTimestamp") {
      pod.deleting = r.peek() != Kind::kNull;
      good = r.skipValue();
    } else if (key == "creationTimestamp") {
      good = readTime(r, times.created, times);
    } else if (key == "annotations") {
      if (auto s = readStringMap(r, "metadata.annotations", pod.annotations); !s) return s;
    } else if (key == "labels") {
      if (auto s = readStringMap(r, "metadata.labels", pod.labels); !s) return s;
    } else {
      good = r.skipValue();
    }
    if (!good) return json::readerError(r, "pod metadata." + key);
  }
  if (!r.ok()) return json::readerError(r, "pod metadata");
  return Ok{};
}

// spec.schedulingGroup: a one-of union whose only member today is podGroupName.
Status readSchedulingGroup(JsonReader& r, PodInfo& pod) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "pod spec.schedulingGroup");
  std::string key;
  while (r.nextKey(key)) {
    const bool good = key == "podGroupName" ? r.readStringOrNull(pod.podGroupName) : r.skipValue();
    if (!good) return json::readerError(r, "pod spec.schedulingGroup." + key);
  }
  if (!r.ok()) return json::readerError(r, "pod spec.schedulingGroup");
  return Ok{};
}

Status readSpec(JsonReader& r, PodInfo& pod, PodSpecParts& parts) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "pod spec");
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
      good = r.readStringOrNull(pod.nodeName);
    } else if (key == "priority") {
      good = r.readNull() || r.readInt64(pod.priority);
    } else if (key == "schedulingGroup") {
      s = readSchedulingGroup(r, pod);
    } else if (key == "resourceClaims") {
      s = readStringObjects(r, "spec.resourceClaims", pod.resourceClaims,
                            [](PodResourceClaim& c, const std::string& field) -> std::string* {
                              if (field == "name") return &c.name;
                              if (field == "resourceClaimName") return &c.resourceClaimName;
                              if (field == "resourceClaimTemplateName") {
                                return &c.resourceClaimTemplateName;
                              }
                              return nullptr;
                            });
    } else {
      good = r.skipValue();
    }
    if (!s) return s;
    if (!good) return json::readerError(r, "pod spec." + key);
  }
  if (!r.ok()) return json::readerError(r, "pod spec");
  return Ok{};
}

bool readExtendedResourceClaim(JsonReader& r, PodInfo& pod) {
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  std::string key;
  while (r.nextKey(key)) {
    const bool good = key == "resourceClaimName" ? r.readStringOrNull(pod.extendedResourceClaimName)
                                                 : r.skipValue();
    if (!good) return false;
  }
  return r.ok();
}

Status readStatus(JsonReader& r, PodInfo& pod, BindTimes& times) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return json::readerError(r, "pod status");
  std::string key;
  while (r.nextKey(key)) {
    bool good = true;
    if (key == "phase") {
      good = r.readStringOrNull(pod.phase);
    } else if (key == "nominatedNodeName") {
      good = r.readStringOrNull(pod.nominatedNodeName);
    } else if (key == "resourceClaimStatuses") {
      Status s = readStringObjects(
          r, "status.resourceClaimStatuses", pod.resourceClaimStatuses,
          [](PodResourceClaimStatus& c, const std::string& field) -> std::string* {
            if (field == "name") return &c.name;
            if (field == "resourceClaimName") return &c.resourceClaimName;
            return nullptr;
          });
      if (!s) return s;
    } else if (key == "extendedResourceClaimStatus") {
      good = readExtendedResourceClaim(r, pod);
    } else if (key == "conditions") {
      good = readConditions(r, times);
    } else {
      good = r.skipValue();
    }
    if (!good) return json::readerError(r, "pod status." + key);
  }
  if (!r.ok()) return json::readerError(r, "pod status");
  return Ok{};
}

}  // namespace

Result<PodInfo> parsePodJson(std::string_view text) {
  JsonReader r(text);
  auto pod = readPodJson(r);
  if (pod && !r.finish()) return json::readerError(r, "pod");
  return pod;
}

Result<PodInfo> readPodJson(JsonReader& r) {
  PodInfo pod;
  PodSpecParts parts;
  BindTimes times;
  if (!r.beginObject()) return json::readerError(r, "pod");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "metadata") {
      s = readMetadata(r, pod, times);
    } else if (key == "spec") {
      s = readSpec(r, pod, parts);
    } else if (key == "status") {
      s = readStatus(r, pod, times);
    } else if (!r.skipValue()) {
      return json::readerError(r, "pod");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.ok()) return json::readerError(r, "pod");
  pod.requests = effectivePodRequests(parts.containers, parts.initContainers, parts.overhead);
  pod.boundAt = times.boundAt();
  return pod;
}

}  // namespace gte
