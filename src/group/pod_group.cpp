#include "group/pod_group.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace gte {
namespace {

// Other projects' keys (docs/groups.md#what-a-group-is).
constexpr std::string_view kLwsGroupKey = "leaderworkerset.sigs.k8s.io/group-key";
constexpr std::string_view kLwsName = "leaderworkerset.sigs.k8s.io/name";
constexpr std::string_view kLwsGroupIndex = "leaderworkerset.sigs.k8s.io/group-index";
constexpr std::string_view kLwsSize = "leaderworkerset.sigs.k8s.io/size";
constexpr std::string_view kKueueGroupName = "kueue.x-k8s.io/pod-group-name";
constexpr std::string_view kKueueTotalCount = "kueue.x-k8s.io/pod-group-total-count";
constexpr std::string_view kJobSetName = "jobset.sigs.k8s.io/jobset-name";
constexpr std::string_view kJobName = "batch.kubernetes.io/job-name";
constexpr std::string_view kJobCompletionIndex = "batch.kubernetes.io/job-completion-index";

constexpr std::array<std::string_view, 6> kGroupLabels = {
    kLwsGroupKey, kLwsName, kLwsGroupIndex, kKueueGroupName, kJobSetName, kJobName};
constexpr std::array<std::string_view, 3> kGroupAnnotations = {kLwsSize, kKueueTotalCount,
                                                               kJobCompletionIndex};

const std::string* ownAnnotation(const PodInfo& pod, const Policy& policy, std::string_view key) {
  return findValue(pod.annotations, policy.labelPrefix + std::string(key));
}

std::string ownName(const Policy& policy, std::string_view key) {
  return policy.labelPrefix + std::string(key);
}

Error bad(std::string_view annotation, std::string_view want, std::string_view got) {
  return invalidArgument("annotation " + std::string(annotation) + ": want " + std::string(want) +
                         "; got '" + std::string(got) + "'");
}

// 1..kMaxGroupSize, or nullopt.
std::optional<std::int64_t> parseSize(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || value < 1 || value > kMaxGroupSize) {
    return std::nullopt;
  }
  return value;
}

Result<std::int64_t> sizeAnnotation(std::string_view annotation, const std::string& value) {
  if (auto size = parseSize(value)) return *size;
  return bad(annotation, "an integer from 1 to " + std::to_string(kMaxGroupSize), value);
}

// A group name of our own annotation: what a label value may hold, up to 253 characters.
bool validGroupName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

// How one source names the pod's group and knows its size.
struct SourceMatch {
  GroupSource source = GroupSource::kAnnotation;
  std::string name;
  // A size the pod itself carries (LWS, Kueue): the annotation and its text.
  std::string_view carriedFrom;
  const std::string* carried = nullptr;
  // An owner object that knows the size (PodGroup, JobSet, Job).
  std::optional<GroupOwnerKind> owner;
};

// The first of sources 2-6 the pod matches.
std::optional<SourceMatch> matchForeign(const PodInfo& pod) {
  if (!pod.podGroupName.empty()) {
    return SourceMatch{
        GroupSource::kPodGroup, pod.podGroupName, {}, nullptr, GroupOwnerKind::kPodGroup};
  }
  if (const std::string* key = findValue(pod.labels, kLwsGroupKey)) {
    return SourceMatch{GroupSource::kLeaderWorkerSet, *key, kLwsSize,
                       findValue(pod.annotations, kLwsSize), std::nullopt};
  }
  const std::string* lwsName = findValue(pod.labels, kLwsName);
  const std::string* lwsIndex = findValue(pod.labels, kLwsGroupIndex);
  if (lwsName != nullptr && lwsIndex != nullptr) {
    return SourceMatch{GroupSource::kLeaderWorkerSet, *lwsName + "-" + *lwsIndex, kLwsSize,
                       findValue(pod.annotations, kLwsSize), std::nullopt};
  }
  if (const std::string* name = findValue(pod.labels, kKueueGroupName)) {
    return SourceMatch{GroupSource::kKueue, *name, kKueueTotalCount,
                       findValue(pod.annotations, kKueueTotalCount), std::nullopt};
  }
  if (const std::string* name = findValue(pod.labels, kJobSetName)) {
    return SourceMatch{GroupSource::kJobSet, *name, {}, nullptr, GroupOwnerKind::kJobSet};
  }
  const std::string* job = findValue(pod.labels, kJobName);
  const bool indexed = findValue(pod.labels, kJobCompletionIndex) != nullptr ||
                       findValue(pod.annotations, kJobCompletionIndex) != nullptr;
  if (job != nullptr && indexed) {
    return SourceMatch{GroupSource::kIndexedJob, *job, {}, nullptr, GroupOwnerKind::kJob};
  }
  return std::nullopt;
}

std::string namespaceOf(const PodInfo& pod) {
  return pod.ns.empty() ? "default" : pod.ns;
}

std::string keyOf(const std::string& ns, GroupSource source, const std::string& name) {
  return ns + "/" + std::string(groupSourceName(source)) + "/" + name;
}

// The size a matched source knows: carried on the pod or reported for its owner. An invalid
// carried size is an error naming its annotation.
struct KnownSize {
  std::optional<std::int64_t> size;
  std::string from;
};

Result<KnownSize> knownSize(const SourceMatch& match, const std::string& ns,
                            const GroupSizeLookup* sizes) {
  if (match.carried != nullptr) {
    auto size = sizeAnnotation(match.carriedFrom, *match.carried);
    if (!size) return std::move(size).error();
    return KnownSize{*size, "annotation " + std::string(match.carriedFrom)};
  }
  if (match.owner) {
    const std::string owner =
        std::string(groupOwnerKindName(*match.owner)) + " " + ns + "/" + match.name;
    if (sizes != nullptr) {
      if (auto size = sizes->groupSize(*match.owner, ns, match.name)) {
        return KnownSize{*size, owner};
      }
    }
    return KnownSize{std::nullopt, owner + " not known"};
  }
  return KnownSize{std::nullopt, {}};
}

// The policy's levels with the annotation's modes, and its `<prefix>model` entry (one GPU model:
// preferred or ignore) in `sameModel`.
Result<std::vector<GroupLevel>> levelsFor(const std::string& value, const Policy& policy,
                                          std::optional<GroupLevelMode>& sameModel) {
  const std::string annotation = ownName(policy, kGroupLevelsAnnotation);
  const std::string modelKey = ownName(policy, kGroupModelKey);
  std::string known;
  for (const GroupLevel& level : policy.groups.levels) {
    known += (known.empty() ? "" : ", ") + level.label;
  }
  const std::string want =
      "comma-separated LABEL=required|preferred|ignore with LABEL one of the policy's levels (" +
      (known.empty() ? std::string("none") : known) + "), or " + modelKey + "=preferred|ignore";
  std::vector<GroupLevel> levels = policy.groups.levels;
  std::vector<bool> seen(levels.size(), false);
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    std::string_view item(value.data() + start, comma - start);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(annotation, want, value);
    const std::string_view label = item.substr(0, eq);
    const auto mode = groupLevelModeFromName(item.substr(eq + 1));
    if (label == modelKey) {
      if (!mode || *mode == GroupLevelMode::kRequired) return bad(annotation, want, value);
      if (sameModel) {
        return invalidArgument("annotation " + annotation + ": " + modelKey + " is named twice");
      }
      sameModel = *mode;
      start = comma + 1;
      continue;
    }
    const auto at = std::find_if(levels.begin(), levels.end(),
                                 [label](const GroupLevel& l) { return l.label == label; });
    if (!mode || at == levels.end()) return bad(annotation, want, value);
    const auto index = static_cast<std::size_t>(at - levels.begin());
    if (seen[index]) {
      return invalidArgument("annotation " + annotation + ": level " + std::string(label) +
                             " is named twice");
    }
    seen[index] = true;
    at->mode = *mode;
    start = comma + 1;
  }
  return levels;
}

}  // namespace

std::string_view groupSourceName(GroupSource source) noexcept {
  switch (source) {
    case GroupSource::kAnnotation:
      return "annotation";
    case GroupSource::kPodGroup:
      return "podgroup";
    case GroupSource::kLeaderWorkerSet:
      return "leaderworkerset";
    case GroupSource::kKueue:
      return "kueue";
    case GroupSource::kJobSet:
      return "jobset";
    case GroupSource::kIndexedJob:
      return "job";
  }
  return "annotation";
}

std::string_view groupOwnerKindName(GroupOwnerKind kind) noexcept {
  switch (kind) {
    case GroupOwnerKind::kPodGroup:
      return "PodGroup";
    case GroupOwnerKind::kJobSet:
      return "JobSet";
    case GroupOwnerKind::kJob:
      return "Job";
  }
  return "PodGroup";
}

bool isGroupLabel(std::string_view key) noexcept {
  return std::find(kGroupLabels.begin(), kGroupLabels.end(), key) != kGroupLabels.end() ||
         key == kJobCompletionIndex;
}

bool isGroupAnnotation(std::string_view key) noexcept {
  return std::find(kGroupAnnotations.begin(), kGroupAnnotations.end(), key) !=
         kGroupAnnotations.end();
}

std::optional<std::string> podGroupKey(const PodInfo& pod, const Policy& policy) {
  if (const std::string* name = ownAnnotation(pod, policy, kGroupAnnotation)) {
    return keyOf(namespaceOf(pod), GroupSource::kAnnotation, *name);
  }
  if (auto match = matchForeign(pod)) return keyOf(namespaceOf(pod), match->source, match->name);
  return std::nullopt;
}

Result<std::optional<PodGroupRef>> parsePodGroup(const PodInfo& pod, const Policy& policy,
                                                 const GroupSizeLookup* sizes) {
  const std::string* named = ownAnnotation(pod, policy, kGroupAnnotation);
  const std::string* stated = ownAnnotation(pod, policy, kGroupSizeAnnotation);
  const std::string* levels = ownAnnotation(pod, policy, kGroupLevelsAnnotation);
  const std::optional<SourceMatch> foreign = matchForeign(pod);
  if (named == nullptr && !foreign) {
    for (const auto& [key, text] :
         {std::pair{kGroupSizeAnnotation, stated}, std::pair{kGroupLevelsAnnotation, levels}}) {
      if (text != nullptr) {
        return invalidArgument(
            "annotation " + ownName(policy, key) + ": set, but the pod belongs " +
            "to no group (no " + ownName(policy, kGroupAnnotation) +
            " annotation, PodGroup, LeaderWorkerSet, Kueue pod group, JobSet " + "or indexed Job)");
      }
    }
    return std::optional<PodGroupRef>{};
  }
  if (named != nullptr && !validGroupName(*named)) {
    return bad(ownName(policy, kGroupAnnotation), "a name of up to 253 of [A-Za-z0-9-_.]", *named);
  }
  std::optional<std::int64_t> statedSize;
  if (stated != nullptr) {
    auto size = sizeAnnotation(ownName(policy, kGroupSizeAnnotation), *stated);
    if (!size) return std::move(size).error();
    statedSize = *size;
  }

  PodGroupRef ref;
  ref.ns = namespaceOf(pod);
  KnownSize known;
  if (foreign) {
    auto size = knownSize(*foreign, ref.ns, sizes);
    if (!size) return std::move(size).error();
    known = std::move(*size);
  }
  if (named != nullptr) {
    ref.source = GroupSource::kAnnotation;
    ref.name = *named;
  } else {
    ref.source = foreign->source;
    ref.name = foreign->name;
  }
  ref.key = keyOf(ref.ns, ref.source, ref.name);

  if (statedSize && known.size && *statedSize != *known.size && named == nullptr) {
    return invalidArgument("annotation " + ownName(policy, kGroupSizeAnnotation) + ": says " +
                           std::to_string(*statedSize) + ", but " + known.from + " says " +
                           std::to_string(*known.size));
  }
  if (statedSize) {
    ref.size = statedSize;
    ref.sizeFrom = "annotation " + ownName(policy, kGroupSizeAnnotation);
  } else if (known.size) {
    ref.size = known.size;
    ref.sizeFrom = known.from;
  } else if (named != nullptr) {
    return invalidArgument("annotation " + ownName(policy, kGroupSizeAnnotation) +
                           ": required with " + ownName(policy, kGroupAnnotation) +
                           " (nothing else on the pod states the group's size)");
  } else {
    ref.sizeFrom = known.from.empty() ? "no size on the pod" : known.from;
  }

  if (levels != nullptr) {
    auto parsed = levelsFor(*levels, policy, ref.sameModel);
    if (!parsed) return std::move(parsed).error();
    ref.levels = std::move(*parsed);
    ref.levelsOverridden = true;
  } else {
    ref.levels = policy.groups.levels;
  }
  return std::optional<PodGroupRef>{std::move(ref)};
}

}  // namespace gte
