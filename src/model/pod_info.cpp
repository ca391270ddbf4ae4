#include "model/pod_info.h"

#include <algorithm>
#include <vector>

#include "json/json_fields.h"
#include "json/json_reader.h"
#include "model/gpu_request.h"
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
  // One resource of effectiveRequests(), without building the list.
  const Quantity* effectiveRequest(std::string_view name) const noexcept {
    const Quantity* requested = requests.find(name);
    return requested != nullptr ? requested : limits.find(name);
  }
};

Status readResources(JsonReader& r, ContainerResources& c, const std::string& where) {
  const std::string resources = json::dotted(where, "resources");
  return json::forEachKey(r, resources, [&](const std::string& key) -> Status {
    if (key == "requests") return readResourceList(r, resources + ".requests", c.requests);
    if (key == "limits") return readResourceList(r, resources + ".limits", c.limits);
    return json::skipField(r, resources, key);
  });
}

// A container's resources and restart policy; `where` names it in errors ("spec.containers[0]").
Status readContainer(JsonReader& r, const std::string& where, ContainerResources& c) {
  if (r.peek() != Kind::kObject) {
    r.beginObject();  // records the reader's error: "expected an object"
    return json::readerError(r, where);
  }
  std::string policy;
  return json::forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "resources") return readResources(r, c, where);
    if (key == "restartPolicy") {
      if (Status s = json::readStringField(r, where, key, policy); !s) return s;
      c.restartable = policy == "Always";
      return Ok{};
    }
    return json::skipField(r, where, key);
  });
}

Status readContainers(JsonReader& r, std::vector<ContainerResources>& out, const char* field) {
  const std::string where = json::dotted("spec", field);
  return json::forEachElement(r, where, [&](std::size_t i) -> Status {
    ContainerResources c;
    if (Status s = readContainer(r, json::indexed(where, i), c); !s) return s;
    out.push_back(std::move(c));
    return Ok{};
  });
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

// The most GPUs (nvidia.com/gpu, or its shared replicas nvidia.com/gpu.shared) one container asks.
std::int64_t largestContainerGpus(const std::vector<ContainerResources>& containers,
                                  const std::vector<ContainerResources>& initContainers) {
  std::int64_t largest = 0;
  for (const auto* list : {&containers, &initContainers}) {
    for (const auto& c : *list) {
      for (const std::string_view name : {kGpuResource, kSharedGpuResource}) {
        const Quantity* q = c.effectiveRequest(name);
        if (q != nullptr) largest = std::max(largest, q->wholeUnits().value_or(0));
      }
    }
  }
  return largest;
}

// An array of objects with string fields (spec.resourceClaims, status.resourceClaimStatuses):
// `field(item, key)` names the member a key fills, or nullptr to skip it.
template <typename Item, typename Field>
Status readStringObjects(JsonReader& r, std::string_view where, std::vector<Item>& out,
                         Field field) {
  return json::forEachElement(r, where, [&](std::size_t i) -> Status {
    const std::string at = json::indexed(where, i);
    if (r.peek() != Kind::kObject) {
      r.beginObject();  // records the reader's error: "expected an object"
      return json::readerError(r, at);
    }
    Item item;
    Status read = json::forEachKey(r, at, [&](const std::string& key) -> Status {
      std::string* target = field(item, key);
      return target != nullptr ? json::readStringField(r, at, key, *target)
                               : json::skipField(r, at, key);
    });
    if (!read) return read;
    out.push_back(std::move(item));
    return Ok{};
  });
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

constexpr std::string_view kMetadata = "pod metadata";
constexpr std::string_view kSpec = "pod spec";
constexpr std::string_view kStatus = "pod status";

// A field read leniently (bind times, deletionTimestamp): `good` false is the reader's own
// error (the body is malformed there), which names the field.
Status leniently(JsonReader& r, std::string_view where, std::string_view field, bool good) {
  if (!good) return json::readerError(r, json::dotted(where, field));
  return Ok{};
}

Status readMetadata(JsonReader& r, PodInfo& pod, BindTimes& times) {
  return json::forEachKey(r, kMetadata, [&](const std::string& key) -> Status {
    if (key == "name") return json::readStringField(r, kMetadata, key, pod.name);
    if (key == "namespace") return json::readStringField(r, kMetadata, key, pod.ns);
    if (key == "uid") return json::readStringField(r, kMetadata, key, pod.uid);
    if (key == "resourceVersion") {
      return json::readStringField(r, kMetadata, key, pod.resourceVersion);
    }
    if (key == "deletionTimestamp") {
      pod.deleting = r.peek() != Kind::kNull;
      return json::skipField(r, kMetadata, key);
    }
    if (key == "creationTimestamp") {
      return leniently(r, kMetadata, key, readTime(r, times.created, times));
    }
    if (key == "annotations") return readStringMap(r, "metadata.annotations", pod.annotations);
    if (key == "labels") return readStringMap(r, "metadata.labels", pod.labels);
    return json::skipField(r, kMetadata, key);
  });
}

// spec.schedulingGroup: a one-of union whose only member today is podGroupName.
Status readSchedulingGroup(JsonReader& r, PodInfo& pod) {
  constexpr std::string_view where = "pod spec.schedulingGroup";
  return json::forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "podGroupName") return json::readStringField(r, where, key, pod.podGroupName);
    return json::skipField(r, where, key);
  });
}

Status readSpec(JsonReader& r, PodInfo& pod, PodSpecParts& parts) {
  return json::forEachKey(r, kSpec, [&](const std::string& key) -> Status {
    if (key == "containers") return readContainers(r, parts.containers, "containers");
    if (key == "initContainers") return readContainers(r, parts.initContainers, "initContainers");
    if (key == "overhead") return readResourceList(r, "spec.overhead", parts.overhead);
    if (key == "nodeName") return json::readStringField(r, kSpec, key, pod.nodeName);
    if (key == "priority") return json::readIntField(r, kSpec, key, pod.priority);
    if (key == "schedulingGroup") return readSchedulingGroup(r, pod);
    if (key == "resourceClaims") {
      return readStringObjects(r, "spec.resourceClaims", pod.resourceClaims,
                               [](PodResourceClaim& c, const std::string& field) -> std::string* {
                                 if (field == "name") return &c.name;
                                 if (field == "resourceClaimName") return &c.resourceClaimName;
                                 if (field == "resourceClaimTemplateName") {
                                   return &c.resourceClaimTemplateName;
                                 }
                                 return nullptr;
                               });
    }
    return json::skipField(r, kSpec, key);
  });
}

Status readExtendedResourceClaim(JsonReader& r, PodInfo& pod) {
  constexpr std::string_view where = "pod status.extendedResourceClaimStatus";
  return json::forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "resourceClaimName") {
      return json::readStringField(r, where, key, pod.extendedResourceClaimName);
    }
    return json::skipField(r, where, key);
  });
}

Status readStatus(JsonReader& r, PodInfo& pod, BindTimes& times) {
  return json::forEachKey(r, kStatus, [&](const std::string& key) -> Status {
    if (key == "phase") return json::readStringField(r, kStatus, key, pod.phase);
    if (key == "nominatedNodeName") {
      return json::readStringField(r, kStatus, key, pod.nominatedNodeName);
    }
    if (key == "resourceClaimStatuses") {
      return readStringObjects(
          r, "status.resourceClaimStatuses", pod.resourceClaimStatuses,
          [](PodResourceClaimStatus& c, const std::string& field) -> std::string* {
            if (field == "name") return &c.name;
            if (field == "resourceClaimName") return &c.resourceClaimName;
            return nullptr;
          });
    }
    if (key == "extendedResourceClaimStatus") return readExtendedResourceClaim(r, pod);
    if (key == "conditions") return leniently(r, kStatus, key, readConditions(r, times));
    return json::skipField(r, kStatus, key);
  });
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
  if (r.peek() != Kind::kObject) {
    r.beginObject();  // records the reader's error: "expected an object"
    return json::readerError(r, "pod");
  }
  Status read = json::forEachKey(r, "pod", [&](const std::string& key) -> Status {
    if (key == "metadata") return readMetadata(r, pod, times);
    if (key == "spec") return readSpec(r, pod, parts);
    if (key == "status") return readStatus(r, pod, times);
    if (!r.skipValue()) return json::readerError(r, "pod");
    return Ok{};
  });
  if (!read) return std::move(read).error();
  pod.requests = effectivePodRequests(parts.containers, parts.initContainers, parts.overhead);
  pod.largestContainerGpus = largestContainerGpus(parts.containers, parts.initContainers);
  pod.boundAt = times.boundAt();
  return pod;
}

}  // namespace gte
