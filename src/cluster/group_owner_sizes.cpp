#include "cluster/group_owner_sizes.h"

#include <algorithm>
#include <utility>

#include "json/json_fields.h"
#include "json/json_reader.h"
#include "model/resource_list_json.h"

namespace gte::cluster {
namespace {

using json::JsonReader;

Status readCount(JsonReader& r, const std::string& where, std::optional<std::int64_t>& out) {
  if (r.readNull()) return Ok{};
  std::int64_t value = 0;
  if (!r.readInt64(value)) return json::readerError(r, where);
  if (value < 0) return invalidArgument(where + ": must not be negative");
  out = value;
  return Ok{};
}

Status readMetadata(JsonReader& r, GroupOwnerSize& out) {
  return json::forEachKey(r, "metadata", [&](const std::string& key) -> Status {
    std::string* field = key == "name"              ? &out.name
                         : key == "namespace"       ? &out.ns
                         : key == "resourceVersion" ? &out.resourceVersion
                                                    : nullptr;
    if (field == nullptr) return json::skipField(r, "metadata." + key);
    if (r.readNull()) return Ok{};
    return r.readString(*field) ? Status(Ok{}) : Status(json::readerError(r, "metadata." + key));
  });
}

// A Job spec's pods at once: parallelism (default 1), at most completions when set.
struct JobShape {
  std::optional<std::int64_t> parallelism;
  std::optional<std::int64_t> completions;
  std::string completionMode;
  std::int64_t pods() const {
    const std::int64_t p = parallelism.value_or(1);
    return completions ? std::min(p, *completions) : p;
  }
};

Status readJobSpec(JsonReader& r, const std::string& where, JobShape& out) {
  return json::forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "parallelism") return readCount(r, where + ".parallelism", out.parallelism);
    if (key == "completions") return readCount(r, where + ".completions", out.completions);
    if (key == "completionMode") {
      if (r.readNull()) return Ok{};
      return r.readString(out.completionMode)
                 ? Status(Ok{})
                 : Status(json::readerError(r, where + ".completionMode"));
    }
    return json::skipField(r, where + "." + key);
  });
}

Status readPodGroupSpec(JsonReader& r, GroupOwnerSize& out) {
  return json::forEachKey(r, "spec", [&](const std::string& key) -> Status {
    if (key != "schedulingPolicy") return json::skipField(r, "spec." + key);
    return json::forEachKey(r, "spec.schedulingPolicy", [&](const std::string& policy) -> Status {
      if (policy != "gang") return json::skipField(r, "spec.schedulingPolicy." + policy);
      return json::forEachKey(
          r, "spec.schedulingPolicy.gang", [&](const std::string& field) -> Status {
            if (field != "minCount")
              return json::skipField(r, "spec.schedulingPolicy.gang." + field);
            return readCount(r, "spec.schedulingPolicy.gang.minCount", out.size);
          });
    });
  });
}

// status.conditions: whether PodGroupInitiallyScheduled is False with reason Unschedulable.
Status readPodGroupStatus(JsonReader& r, GroupOwnerSize& out) {
  return json::forEachKey(r, "status", [&](const std::string& key) -> Status {
    if (key != "conditions") return json::skipField(r, "status." + key);
    if (r.readNull()) return Ok{};
    if (!r.beginArray()) return json::readerError(r, "status.conditions");
    for (std::size_t i = 0; r.nextElement(); ++i) {
      const std::string where = "status.conditions[" + std::to_string(i) + "]";
      std::string type;
      std::string status;
      std::string reason;
      auto s = json::forEachKey(r, where, [&](const std::string& field) -> Status {
        std::string* text = field == "type"     ? &type
                            : field == "status" ? &status
                            : field == "reason" ? &reason
                                                : nullptr;
        if (text == nullptr) return json::skipField(r, where + "." + field);
        if (r.readNull()) return Ok{};
        return r.readString(*text) ? Status(Ok{})
                                   : Status(json::readerError(r, where + "." + field));
      });
      if (!s) return s;
      if (type == "PodGroupInitiallyScheduled") {
        out.unschedulable = status == "False" && reason == "Unschedulable";
      }
    }
    if (!r.ok()) return json::readerError(r, "status.conditions");
    return Ok{};
  });
}

Status readReplicatedJob(JsonReader& r, const std::string& where, std::int64_t& pods) {
  std::optional<std::int64_t> replicas;
  JobShape shape;
  auto s = json::forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "replicas") return readCount(r, where + ".replicas", replicas);
    if (key != "template") return json::skipField(r, where + "." + key);
    return json::forEachKey(r, where + ".template", [&](const std::string& part) -> Status {
      if (part != "spec") return json::skipField(r, where + ".template." + part);
      return readJobSpec(r, where + ".template.spec", shape);
    });
  });
  if (!s) return s;
  pods = replicas.value_or(1) * shape.pods();
  return Ok{};
}

Status readJobSetSpec(JsonReader& r, GroupOwnerSize& out) {
  return json::forEachKey(r, "spec", [&](const std::string& key) -> Status {
    if (key != "replicatedJobs") return json::skipField(r, "spec." + key);
    if (r.readNull()) return Ok{};
    if (!r.beginArray()) return json::readerError(r, "spec.replicatedJobs");
    std::int64_t total = 0;
    for (std::size_t i = 0; r.nextElement(); ++i) {
      std::int64_t pods = 0;
      const std::string where = "spec.replicatedJobs[" + std::to_string(i) + "]";
      if (auto s = readReplicatedJob(r, where, pods); !s) return s;
      total = std::min<std::int64_t>(total + pods, kMaxGroupSize + 1);
    }
    if (!r.ok()) return json::readerError(r, "spec.replicatedJobs");
    out.size = total;
    return Ok{};
  });
}

}  // namespace

Result<GroupOwnerSize> parseGroupOwner(std::string_view text, GroupOwnerKind kind) {
  JsonReader r(text);
  auto out = readGroupOwner(r, kind);
  if (!out) return out;
  if (!r.finish()) return json::readerError(r, std::string(groupOwnerKindName(kind)));
  return out;
}

Result<GroupOwnerSize> readGroupOwner(JsonReader& r, GroupOwnerKind kind) {
  GroupOwnerSize out;
  out.kind = kind;
  JobShape job;
  auto s = json::forEachKey(r, std::string(groupOwnerKindName(kind)),
                            [&](const std::string& key) -> Status {
                              if (key == "metadata") return readMetadata(r, out);
                              if (key == "status" && kind == GroupOwnerKind::kPodGroup)
                                return readPodGroupStatus(r, out);
                              if (key != "spec") return json::skipField(r, key);
                              switch (kind) {
                                case GroupOwnerKind::kPodGroup:
                                  return readPodGroupSpec(r, out);
                                case GroupOwnerKind::kJob:
                                  return readJobSpec(r, "spec", job);
                                case GroupOwnerKind::kJobSet:
                                  return readJobSetSpec(r, out);
                              }
                              return json::skipField(r, key);
                            });
  if (!s) return std::move(s).error();
  if (out.name.empty()) return invalidArgument("metadata.name is missing");
  if (out.ns.empty()) out.ns = "default";
  if (kind == GroupOwnerKind::kJob) {
    out.size = job.pods();
    out.indexed = job.completionMode == "Indexed";
  }
  return out;
}

namespace {

std::optional<std::int64_t> keptSize(const GroupOwnerSize& owner) {
  std::optional<std::int64_t> size = owner.size;
  if (size && (*size < 1 || *size > kMaxGroupSize)) size.reset();
  return size;
}

}  // namespace

void GroupOwnerSizes::put(const GroupOwnerSize& owner) {
  MutexLock lock(mutex_);
  sizes_[Key{owner.kind, owner.ns, owner.name}] = keptSize(owner);
}

void GroupOwnerSizes::replaceKind(GroupOwnerKind kind, const std::vector<GroupOwnerSize>& owners) {
  MutexLock lock(mutex_);
  std::erase_if(sizes_, [kind](const auto& entry) { return std::get<0>(entry.first) == kind; });
  for (const GroupOwnerSize& owner : owners)
    sizes_[Key{kind, owner.ns, owner.name}] = keptSize(owner);
}

void GroupOwnerSizes::erase(GroupOwnerKind kind, std::string_view ns, std::string_view name) {
  MutexLock lock(mutex_);
  sizes_.erase(Key{kind, std::string(ns), std::string(name)});
}

std::optional<std::int64_t> GroupOwnerSizes::groupSize(GroupOwnerKind kind, std::string_view ns,
                                                       std::string_view name) const {
  MutexLock lock(mutex_);
  const auto it = sizes_.find(Key{kind, std::string(ns), std::string(name)});
  return it == sizes_.end() ? std::nullopt : it->second;
}

std::size_t GroupOwnerSizes::size() const {
  MutexLock lock(mutex_);
  return sizes_.size();
}

}  // namespace gte::cluster
