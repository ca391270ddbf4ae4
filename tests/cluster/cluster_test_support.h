#pragma once
// Builders shared by the cluster-state tests: a policy, labelled nodes with a chosen `gen`, GPU
// pods, and a settable clock.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "cluster/cluster_state.h"
#include "model/gpu_request.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"

namespace gte::testing {

inline PolicyConstSharedPtr testPolicy() {
  return std::make_shared<const Policy>(defaultPolicy());
}

// A DGX H100 named `name` whose agent last wrote at unix second `gen` with `used` as given.
inline NodeInfo h100(const std::string& name, std::int64_t gen = 1000,
                     const std::string& used = "00000000") {
  NodeInfo node = makeDgxH100(FixtureState().withName(name).withUsed(used));
  node.labels["gputopo.dev/gen"] = std::to_string(gen);
  return node;
}

inline PodInfo gpuPod(const std::string& uid, std::int64_t gpus, const std::string& node = "") {
  PodInfo pod;
  pod.name = "pod-";  // appended, not "pod-" + uid: GCC 12 -O3 false -Wrestrict (PR 105329)
  pod.name += uid;
  pod.ns = "ml";
  pod.uid = uid;
  pod.nodeName = node;
  pod.phase = node.empty() ? "Pending" : "Running";
  if (gpus > 0) pod.requests.set(std::string(kGpuResource), Quantity::fromUnits(gpus));
  return pod;
}

// prefix + number, spelled so GCC 12 -O3 raises no false -Wrestrict (PR 105329).
inline std::string numbered(std::string prefix, int number) {
  prefix += std::to_string(number);
  return prefix;
}

inline cluster::ObservedPod bound(const std::string& uid, std::int64_t gpus,
                                  const std::string& node, std::int64_t boundAt) {
  return cluster::ObservedPod{gpuPod(uid, gpus, node), boundAt};
}

// A wall clock tests move by hand (unix seconds).
class ManualClock {
 public:
  explicit ManualClock(std::int64_t start = 10'000) : seconds_(start) {}
  void advance(std::chrono::seconds by) { seconds_ += by.count(); }
  std::int64_t seconds() const { return seconds_; }
  cluster::WallClock asWallClock() {
    return [this] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(seconds_.load()));
    };
  }

 private:
  std::atomic<std::int64_t> seconds_;
};

// State options on a hand-moved clock, with a 60 s reservation TTL.
inline cluster::ClusterStateOptions clockedOptions(ManualClock& clock) {
  cluster::ClusterStateOptions options;
  options.now = clock.asWallClock();
  options.reservationTtl = std::chrono::seconds(60);
  return options;
}

inline int freeGpus(const cluster::ClusterState& state, const std::string& node) {
  const auto snapshot = state.snapshot();  // keeps the NodeState alive while it is read
  const NodeState* found = snapshot->find(node);
  return found == nullptr ? -1 : found->freeCount;
}

inline bool gpuFree(const cluster::ClusterState& state, const std::string& node, int gpu) {
  const auto snapshot = state.snapshot();
  const NodeState* found = snapshot->find(node);
  return found != nullptr && (found->freeMask & (GpuMask{1} << gpu)) != 0;
}

}  // namespace gte::testing
