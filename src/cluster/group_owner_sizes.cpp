#include "cluster/group_owner_sizes.h"

#include <algorithm>
#include <utility>

#include "json/json_reader.h"
#include "model/resource_list_json.h"

namespace gte::cluster {
namespace {

using json::JsonReader;

// Calls visit(key) for every key of the object at the reader; visit consumes the value and
// returns a Status. A null object reads as empty.
template <class Visit>
Status eachKey(JsonReader& r, const std::string& where, Visit&& visit) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, where);
  std::string key;
  while (r.nextKey(key)) {
    if (auto s = visit(key); !s) return s;
  }
  if (!r.ok()) return readerError(r, where);
  return Ok{};
}

Status skip(JsonReader& r, const std::string& where) {
  return r.skipValue() ? Status(Ok{}) : Status(readerError(r, where));
}

Status readCount(JsonReader& r, const std::string& where, std::optional<std::int64_t>& out) {
  if (r.readNull()) return Ok{};
  std::int64_t value = 0;
  if (!r.readInt64(value)) return readerError(r, where);
  if (value < 0) return invalidArgument(where + ": must not be negative");
  out = value;
  return Ok{};
}

Status readMetadata(JsonReader& r, GroupOwnerSize& out) {
  return eachKey(r, "metadata", [&](const std::string& key) -> Status {
    std::string* field = key == "name"              ? &out.name
                         : key == "namespace"       ? &out.ns
                         : key == "resourceVersion" ? &out.resourceVersion
                                                    : nullptr;
    if (field == nullptr) return skip(r, "metadata." + key);
    if (r.readNull()) return Ok{};
    return r.readString(*field) ? Status(Ok{}) : Status(readerError(r, "metadata." + key));
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
  return eachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "parallelism") return readCount(r, where + ".parallelism", out.parallelism);
    if (key == "completions") return readCount(r, where + ".completions", out.completions);
    if (key == "completionMode") {
      if (r.readNull()) return Ok{};
      return r.readString(out.completionMode) ? Status(Ok{})
                                              : Status(readerError(r, where + ".completionMode"));
    }
    return skip(r, where + "." + key);
  });
}

Status readPodGroupSpec(JsonReader& r, GroupOwnerSize& out) {
  return eachKey(r, "spec", [&](const std::string& key) -> Status {
    if (key != "schedulingPolicy") return skip(r, "spec." + key);
    return eachKey(r, "spec.schedulingPolicy", [&](const std::string& policy) -> Status {
      if (policy != "gang") return skip(r, "spec.schedulingPolicy." + policy);
      return eachKey(r, "spec.schedulingPolicy.gang", [&](const std::string& field) -> Status {
        if (field != "minCount") return skip(r, "spec.schedulingPolicy.gang." + field);
        return readCount(r, "spec.schedulingPolicy.gang.minCount", out.size);
      });
    });
  });
}

// status.conditions: whether PodGroupInitiallyScheduled is False with reason Unschedulable.
Status readPodGroupStatus(JsonReader& r, GroupOwnerSize& out) {
  return eachKey(r, "status", [&](const std::string& key) -> Status {
    if (key != "conditions") return skip(r, "status." + key);
    if (r.readNull()) return Ok{};
    if (!r.beginArray()) return readerError(r, "status.conditions");
    for (std::size_t i = 0; r.nextElement(); ++i) {
      const std::string where = "status.conditions[" + std::to_string(i) + "]";
      std::string type;
      std::string status;
      std::string reason;
      auto s = eachKey(r, where, [&](const std::string& field) -> Status {
        std::string* text = field == "type"     ? &type
                            : field == "status" ? &status
                            : field == "reason" ? &reason
                                                : nullptr;
        if (text == nullptr) return skip(r, where + "." + field);
        if (r.readNull()) return Ok{};
        return r.readString(*text) ? Status(Ok{}) : Status(readerError(r, where + "." + field));
      });
      if (!s) return s;
      if (type == "PodGroupInitiallyScheduled") {
        out.unschedulable = status == "False" && reason == "Unschedulable";
      }
    }
    if (!r.ok()) return readerError(r, "status.conditions");
    return Ok{};
  });
}

Status readReplicatedJob(JsonReader& r, const std::string& where, std::int64_t& pods) {
  std::optional<std::int64_t> replicas;
  JobShape shape;
  auto s = eachKey(r, where, [&](const std::string& key) -> Status {
    if (key == "replicas") return readCount(r, where + ".replicas", replicas);
    if (key != "template") return skip(r, where + "." + key);
    return eachKey(r, where + ".template", [&](const std::string& part) -> Status {
      if (part != "spec") return skip(r, where + ".template." + part);
      return readJobSpec(r, where + ".template.spec", shape);
    });
  });
  if (!s) return s;
  pods = replicas.value_or(1) * shape.pods();
  return Ok{};
}

Status readJobSetSpec(JsonReader& r, GroupOwnerSize& out) {
  return eachKey(r, "spec", [&](const std::string& key) -> Status {
    if (key != "replicatedJobs") return skip(r, "spec." + key);
    if (r.readNull()) return Ok{};
    if (!r.beginArray()) return readerError(r, "spec.replicatedJobs");
    std::int64_t total = 0;
    for (std::size_t i = 0; r.nextElement(); ++i) {
      std::int64_t pods = 0;
      const std::string where = "spec.replicatedJobs[" + std::to_string(i) + "]";
      if (auto s = readReplicatedJob(r, where, pods); !s) return s;
      total = std::min<std::int64_t>(total + pods, kMaxGroupSize + 1);
    }
    if (!r.ok()) return readerError(r, "spec.replicatedJobs");
    out.size = total;
    return Ok{};
  });
}

}  // namespace

Result<GroupOwnerSize> parseGroupOwner(std::string_view text, GroupOwnerKind kind) {
  JsonReader r(text);
  auto out = readGroupOwner(r, kind);
  if (!out) return out;
  if (!r.finish()) return readerError(r, std::string(groupOwnerKindName(kind)));
  return out;
}

Result<GroupOwnerSize> readGroupOwner(JsonReader& r, GroupOwnerKind kind) {
  GroupOwnerSize out;
  out.kind = kind;
  JobShape job;
  auto s = eachKey(r, std::string(groupOwnerKindName(kind)), [&](const std::string& key) -> Status {
    if (key == "metadata") return readMetadata(r, out);
    if (key == "status" && kind == GroupOwnerKind::kPodGroup) return readPodGroupStatus(r, out);
    if (key != "spec") return skip(r, key);
    switch (kind) {
      case GroupOwnerKind::kPodGroup:
        return readPodGroupSpec(r, out);
      case GroupOwnerKind::kJob:
        return readJobSpec(r, "spec", job);
      case GroupOwnerKind::kJobSet:
        return readJobSetSpec(r, out);
    }
    return skip(r, key);
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
  std::lock_guard lock(mutex_);
  sizes_[Key{owner.kind, owner.ns, owner.name}] = keptSize(owner);
}

void GroupOwnerSizes::replaceKind(GroupOwnerKind kind, const std::vector<GroupOwnerSize>& owners) {
  std::lock_guard lock(mutex_);
  std::erase_if(sizes_, [kind](const auto& entry) { return std::get<0>(entry.first) == kind; });
  for (const GroupOwnerSize& owner : owners)
    sizes_[Key{kind, owner.ns, owner.name}] = keptSize(owner);
}

void GroupOwnerSizes::erase(GroupOwnerKind kind, std::string_view ns, std::string_view name) {
  std::lock_guard lock(mutex_);
  sizes_.erase(Key{kind, std::string(ns), std::string(name)});
}

std::optional<std::int64_t> GroupOwnerSizes::groupSize(GroupOwnerKind kind, std::string_view ns,
                                                       std::string_view name) const {
  std::lock_guard lock(mutex_);
  const auto it = sizes_.find(Key{kind, std::string(ns), std::string(name)});
  return it == sizes_.end() ? std::nullopt : it->second;
}

std::size_t GroupOwnerSizes::size() const {
  std::lock_guard lock(mutex_);
  return sizes_.size();
}

}  // namespace gte::cluster
