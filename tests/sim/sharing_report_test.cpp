// A fill of a cluster with a time-sliced pool (docs/placement-quality.md#shared-gpus): the
// extender keeps exclusive jobs off shared GPUs and fills the pool's replicas with the shared
// services; kube-scheduler alone, counting nvidia.com/gpu only, sends exclusive jobs there.
#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/sharing_report.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace gte::sim {
namespace {

// Four exclusive 2-GPU jobs, then `services` shared 1-GPU services.
std::vector<SimPod> jobsThenServices(int services) {
  std::vector<SimPod> pods;
  for (int i = 0; i < 4; ++i) {
    SimPod job = podWithGpus("job-" + std::to_string(i), 2);
    job.exclusive = true;
    pods.push_back(job);
  }
  for (int i = 0; i < services; ++i)
    pods.push_back(podWithGpus("svc-" + std::to_string(i), 1));
  return pods;
}

SharingFigures fill(Chooser chooser, const std::vector<SimPod>& pods) {
  const std::vector<SimNodeSpec> nodes = *parseClusterSpec("hgx-h100:1,hgx-h100-ts4:1");
  SimOptions options;
  options.chooser = chooser;
  return measureSharing(simulate(nodes, pods, defaultPolicy(), options), pods);
}

TEST_CASE("the extender keeps exclusive jobs off shared GPUs and fills the pool's replicas",
          "[sim]") {
  const std::vector<SimPod> pods = jobsThenServices(36);
  const SharingFigures extender = fill(Chooser::kExtender, pods);
  CHECK(extender.exclusivePods == 4);
  CHECK(extender.exclusivePlaced == 4);
  CHECK(extender.exclusiveOnShared == 0);
  CHECK(extender.multiGpuExclusiveMisses == 0);
  // The time-sliced board advertises 8 x 4 replicas: the services hold every one, and the four
  // left over find the whole board full of jobs.
  CHECK(extender.replicasAdvertised == 32);
  CHECK(extender.replicasHeld == 32);
  CHECK(extender.sharedPlaced == 32);
  CHECK(extender.sharedOnWhole == 0);
  CHECK(extender.tenantsP95 == 4);
  // kube-scheduler alone spreads by allocation: the second job goes to the emptier sliced board.
  const SharingFigures alone = fill(Chooser::kLeastAllocated, pods);
  CHECK(alone.exclusiveOnShared > 0);
}

TEST_CASE("spread keeps tenants per shared GPU low while the pool has room", "[sim]") {
  // Eight services on an empty time-sliced board: one per GPU under the extender's spread.
  std::vector<SimPod> pods;
  for (int i = 0; i < 8; ++i)
    pods.push_back(podWithGpus("svc-" + std::to_string(i), 1));
  const std::vector<SimNodeSpec> nodes = *parseClusterSpec("hgx-h100-ts4:1");
  const SharingFigures f =
      measureSharing(simulate(nodes, pods, defaultPolicy(), SimOptions{}), pods);
  CHECK(f.tenantsMax == 1);
  CHECK(f.replicasHeld == 8);
}

}  // namespace
}  // namespace gte::sim
