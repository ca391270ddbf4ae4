#pragma once
// List+watch of the objects that state the size of pod groups whose pods do not carry it
// (docs/groups.md#what-a-group-is): scheduling.k8s.io/v1beta1 PodGroups, batch/v1 Jobs (indexed
// ones are kept) and jobset.x-k8s.io/v1alpha2 JobSets, into one GroupOwnerSizes table the
// requests read. PodGroups need kube-apiserver's GenericWorkload gate and runtime-config, JobSets
// the JobSet CRD: each kind is watched only once the API server's discovery lists it, so a
// cluster without them runs as before, and one that gains them later (a CRD installed) is picked
// up at the next discover().
//
//   GroupOwnerWatches owners(transport, state, optionsFor, onListed);
//   owners.discover();          // housekeeping: at start, then every so often
//   cluster->groupSizes() == owners.sizes();
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "cluster/cluster_state.h"
#include "cluster/group_owner_sizes.h"
#include "kube/api_transport.h"
#include "kube/reflector.h"
#include "kube/resource_path.h"

namespace gte::cluster {

inline constexpr kube::ResourceType kPodGroups{"scheduling.k8s.io", "v1beta1", "podgroups"};
inline constexpr kube::ResourceType kJobs{"batch", "v1", "jobs"};
inline constexpr kube::ResourceType kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets"};

// The watched totals of one kind (zeros while it is not watched).
struct OwnerWatchCounts {
  bool watched = false;
  // Whether the API server serves the kind; empty until discovery answered for it.
  std::optional<bool> served;
  std::uint64_t lists = 0;
  std::uint64_t failures = 0;
  std::uint64_t skipped = 0;
};

class GroupOwnerWatches {
 public:
  // The reflector options of a watch of `resource` ("podgroups") at collection `path`.
  using OptionsFor = std::function<kube::ReflectorOptions(std::string resource, std::string path)>;

  // onListed runs after each completed full list of any kind, and after a discover() that
  // completed.
  GroupOwnerWatches(std::shared_ptr<kube::ApiTransport> transport,
                    std::shared_ptr<ClusterState> state, OptionsFor optionsFor,
                    std::function<void()> onListed);
  ~GroupOwnerWatches();  // stop()
  GroupOwnerWatches(const GroupOwnerWatches&) = delete;
  GroupOwnerWatches& operator=(const GroupOwnerWatches&) = delete;

  // Asks discovery about each kind not watched yet and starts a watch of each served one.
  // Returns false when some kind could not be asked (no answer, HTTP 5xx): call again soon. Any
  // other answer counts as "not served" (logged). Blocks on the API server: housekeeping thread.
  bool discover();
  // discover() has completed once.
  bool discovered() const;
  // Discovery completed and every watch started has delivered its first full list.
  bool synced() const;
  // False (with the reason) while a started watch is failing past its grace (a CRD removed, a
  // grant missing), as the Node and Pod watches.
  bool healthy(std::string* why) const;
  void stop(std::chrono::milliseconds deadline = std::chrono::seconds(5));

  const GroupSizeLookup* sizes() const { return sizes_.get(); }
  OwnerWatchCounts counts(GroupOwnerKind kind) const;

 private:
  static constexpr std::size_t kKinds = 3;

  std::shared_ptr<kube::ApiTransport> transport_;
  std::shared_ptr<ClusterState> state_;
  OptionsFor optionsFor_;
  std::function<void()> onListed_;
  std::shared_ptr<GroupOwnerSizes> sizes_;
  // Per kind: its watch has delivered a full list (set by the sink, before the Reflector's own
  // synced flag; shared with the watch threads, which may outlive this object).
  std::shared_ptr<std::array<std::atomic<bool>, kKinds>> listed_;
  mutable Mutex mutex_;
  std::array<std::unique_ptr<kube::Reflector>, kKinds> watches_ GTE_GUARDED_BY(mutex_);
  bool discovered_ GTE_GUARDED_BY(mutex_) = false;
  // Per kind: discovery answered that the API server does not serve it (logged once).
  std::array<bool, kKinds> notServed_ GTE_GUARDED_BY(mutex_){};
  bool stopped_ GTE_GUARDED_BY(mutex_) = false;
};

}  // namespace gte::cluster
