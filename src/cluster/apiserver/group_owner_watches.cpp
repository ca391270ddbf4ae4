#include "cluster/apiserver/group_owner_watches.h"

#include "cluster/apiserver/group_owner_sink.h"
#include "kube/api_discovery.h"
#include "kube/object_sink.h"
#include "log/logger.h"

namespace gte::cluster {
namespace {

// Index i of the watches: kind and resource.
struct OwnerResource {
  GroupOwnerKind kind;
  kube::ResourceType type;
};
constexpr std::array<OwnerResource, 3> kOwnerResources{{
    {GroupOwnerKind::kPodGroup, kPodGroups},
    {GroupOwnerKind::kJob, kJobs},
    {GroupOwnerKind::kJobSet, kJobSets},
}};

std::size_t indexOf(GroupOwnerKind kind) {
  for (std::size_t i = 0; i < kOwnerResources.size(); ++i) {
    if (kOwnerResources[i].kind == kind) return i;
  }
  return 0;
}

std::string qualified(const kube::ResourceType& type) {
  return std::string(type.resource) + "." + std::string(type.group) + "/" +
         std::string(type.version);
}

}  // namespace

GroupOwnerWatches::GroupOwnerWatches(std::shared_ptr<kube::ApiTransport> transport,
                                     std::shared_ptr<ClusterState> state, OptionsFor optionsFor,
                                     std::function<void()> onListed)
    : transport_(std::move(transport)),
      state_(std::move(state)),
      optionsFor_(std::move(optionsFor)),
      onListed_(std::move(onListed)),
      sizes_(std::make_shared<GroupOwnerSizes>()),
      listed_(std::make_shared<std::array<std::atomic<bool>, kKinds>>()) {}

GroupOwnerWatches::~GroupOwnerWatches() {
  stop();
}

bool GroupOwnerWatches::discover() {
  bool complete = true;
  for (std::size_t i = 0; i < kOwnerResources.size(); ++i) {
    {
      MutexLock lock(mutex_);
      if (stopped_) return false;
      if (watches_[i]) continue;
    }
    const OwnerResource& owner = kOwnerResources[i];
    const Result<bool> served = kube::servesResource(*transport_, owner.type);
    if (!served) {
      if (served.error().code == ErrorCode::kUnavailable) complete = false;
      log::warn(
          "discovery: cannot tell whether the API server serves a group-size owner; not "
          "watching it",
          {{"resource", qualified(owner.type)}, {"error", served.error().message}});
      continue;
    }
    if (!*served) {
      MutexLock lock(mutex_);
      if (!notServed_[i]) {
        // Once per kind: an older API server (or a cluster without JobSet) is a steady state.
        notServed_[i] = true;
        log::info(
            "discovery: the API server does not serve this resource; running without it until it "
            "does (group sizes from it)",
            {{"resource", qualified(owner.type)}});
      }
      continue;
    }
    auto sink = std::make_shared<GroupOwnerSink>(owner.kind, sizes_, state_,
                                                 [listed = listed_, i, onListed = onListed_] {
                                                   (*listed)[i] = true;
                                                   onListed();
                                                 });
    const GroupOwnerKind kind = owner.kind;
    kube::ObjectReader<GroupOwnerSize> read = [kind](json::JsonReader& reader) {
      return readGroupOwner(reader, kind);
    };
    auto watch = std::make_unique<kube::Reflector>(
        transport_, kube::reflectorSink<GroupOwnerSize>(std::move(read), std::move(sink)),
        optionsFor_(std::string(owner.type.resource), kube::collectionPath(owner.type)));
    MutexLock lock(mutex_);
    if (stopped_) return false;
    notServed_[i] = false;
    log::info("watching group-size owners", {{"resource", qualified(owner.type)}});
    watch->start();
    watches_[i] = std::move(watch);
  }
  if (complete) {
    {
      MutexLock lock(mutex_);
      discovered_ = true;
    }
    onListed_();
  }
  return complete;
}

bool GroupOwnerWatches::discovered() const {
  MutexLock lock(mutex_);
  return discovered_;
}

bool GroupOwnerWatches::synced() const {
  MutexLock lock(mutex_);
  if (!discovered_) return false;
  for (std::size_t i = 0; i < kKinds; ++i) {
    if (watches_[i] && !(*listed_)[i]) return false;
  }
  return true;
}

bool GroupOwnerWatches::healthy(std::string* why) const {
  MutexLock lock(mutex_);
  for (const auto& watch : watches_) {
    if (watch && !watch->healthy(why)) return false;
  }
  return true;
}

void GroupOwnerWatches::stop(std::chrono::milliseconds deadline) {
  std::array<std::unique_ptr<kube::Reflector>, kKinds> watches;
  {
    MutexLock lock(mutex_);
    stopped_ = true;
    watches.swap(watches_);
  }
  for (auto& watch : watches) {
    if (watch) watch->stop(deadline);
  }
  // Keep the stopped watches' counts readable: put them back.
  MutexLock lock(mutex_);
  watches_.swap(watches);
}

OwnerWatchCounts GroupOwnerWatches::counts(GroupOwnerKind kind) const {
  MutexLock lock(mutex_);
  const std::size_t i = indexOf(kind);
  const auto& watch = watches_[i];
  if (!watch) {
    OwnerWatchCounts counts;
    if (notServed_[i]) counts.served = false;
    return counts;
  }
  return OwnerWatchCounts{true, true, watch->lists(), watch->failures(), watch->skipped()};
}

}  // namespace gte::cluster
