// The timed workload of single pods and pod groups: its mixes, pools, load and seeds.
#include <catch2/catch_test_macros.hpp>
#include <map>
#include <set>

#include "sim/cluster_spec.h"
#include "sim/group_workload.h"
#include "sim/weighted_values.h"

using namespace gte;
using namespace gte::sim;

namespace {

GroupWorkloadSpec specFor(std::span<const SimNodeSpec> nodes, int arrivals) {
  GroupWorkloadSpec spec;
  spec.singleGpus = *parseWeightedValues(kMultigpu50Mix, 0, 8, "gpus");
  spec.groupSizes = *parseWeightedValues(kGroupSizeMix, 2, 64, "members");
  spec.pools = defaultGroupPools(nodes);
  spec.arrivals = arrivals;
  return spec;
}

std::int64_t gpusOf(std::span<const SimNodeSpec> nodes) {
  std::int64_t gpus = 0;
  for (const SimNodeSpec& node : nodes) {
    gpus += node.machine->gpus;
  }
  return gpus;
}

}  // namespace

TEST_CASE("weighted mixes: values in range, a positive total, the mean") {
  const auto sizes = parseWeightedValues("2:1,4:3", 2, 18, "members");
  REQUIRE(sizes.ok());
  CHECK(weightedMean(*sizes) == 3.5);  // (2x1 + 4x3) / 4
  const auto low = parseWeightedValues("1:5", 2, 18, "members");
  REQUIRE_FALSE(low.ok());
  CHECK(low.error().message == "mix item '1:5': want <members 2..18>:<weight>, e.g. 18:50");
  CHECK_FALSE(parseWeightedValues("2:0,3:0", 2, 18, "members").ok());
  CHECK_FALSE(parseWeightedValues("2:1,", 2, 18, "members").ok());
  // The built-in mixes parse: multigpu50's counts, group sizes 2-18.
  const auto openb = parseWeightedValues(kMultigpu50Mix, 0, 8, "gpus");
  REQUIRE(openb.ok());
  CHECK(openb->size() == 5);
  const auto groups = parseWeightedValues(kGroupSizeMix, 2, 18, "members");
  REQUIRE(groups.ok());
  CHECK(groups->size() == 17);
}

TEST_CASE("pools: one per racked GPU product, members of a whole, half or quarter node") {
  const auto nodes = parseClusterSpec("gb200:36,hgx-h100:16,hgx-a100:4");
  REQUIRE(nodes.ok());
  const std::vector<GroupPool> pools = defaultGroupPools(*nodes);
  REQUIRE(pools.size() == 2);  // the unracked HGX A100s take single pods only
  CHECK(pools[0].gpuProduct == "NVIDIA-GB200");
  CHECK(pools[0].gpus == 144);
  CHECK(pools[0].memberGpus == WeightedValues{{4, 80}, {2, 10}, {1, 10}});
  CHECK(pools[1].gpuProduct == "NVIDIA-H100-80GB-HBM3");
  CHECK(pools[1].gpus == 128);
  CHECK(pools[1].memberGpus == WeightedValues{{8, 80}, {4, 10}, {2, 10}});
}

TEST_CASE("any-model groups: one pool of every node, members from the given mix") {
  const auto nodes = parseClusterSpec("hgx-h100:4,dgx1v:4,pcie4:2");
  REQUIRE(nodes.ok());
  const GroupPool pool = anyModelGroupPool({{8, 60}, {2, 40}}, *nodes);
  CHECK(pool.gpuProduct.empty());
  CHECK(pool.gpus == 72);
  GroupWorkloadSpec spec = specFor(*nodes, 4000);
  spec.pools = {pool};
  spec.groupShare = 0.5;
  std::set<int> memberGpus;
  for (const TimedArrival& a : groupWorkload(spec, gpusOf(*nodes), 42)) {
    if (a.members > 0) {
      CHECK(a.pod.gpuProduct.empty());  // no nodeSelector: any model
      memberGpus.insert(a.pod.gpus);
    }
  }
  CHECK(memberGpus == std::set<int>{2, 8});
}

TEST_CASE("group workload: arrivals in time order, groups of 2-18 with a pool, the offered load") {
  const auto nodes = parseClusterSpec("gb200:72,hgx-h100:32");
  REQUIRE(nodes.ok());
  GroupWorkloadSpec spec = specFor(*nodes, 20000);
  spec.groupShare = 0.1;
  spec.load = 0.8;
  const std::vector<TimedArrival> arrivals = groupWorkload(spec, gpusOf(*nodes), 42);
  REQUIRE(arrivals.size() == 20000);
  double gpuTime = 0;
  int groups = 0;
  std::map<std::string, int> byPool;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const TimedArrival& a = arrivals[i];
    CHECK(a.duration > 0);
    if (i > 0) {
      CHECK(a.at >= arrivals[i - 1].at);
    }
    if (a.members > 0) {
      ++groups;
      CHECK(a.members >= 2);
      CHECK(a.members <= 18);
      CHECK(a.group == a.pod.name);
      CHECK_FALSE(a.pod.gpuProduct.empty());
      ++byPool[a.pod.gpuProduct];
      gpuTime += a.members * a.pod.gpus * a.duration;
    } else {
      CHECK(a.group.empty());
      CHECK(a.pod.gpuProduct.empty());  // single pods go anywhere
      gpuTime += a.pod.gpus * a.duration;
    }
  }
  // About 10% groups (2,000 expected; 3 standard deviations are 127), split by pool GPUs
  // (288 : 256).
  CHECK(groups > 1873);
  CHECK(groups < 2127);
  CHECK(byPool["NVIDIA-GB200"] > byPool["NVIDIA-H100-80GB-HBM3"]);
  // Offered GPU load = GPU-time asked / (time x GPUs), about 0.8 over this many arrivals.
  const double offered = gpuTime / (arrivals.back().at * static_cast<double>(gpusOf(*nodes)));
  CHECK(offered > 0.7);
  CHECK(offered < 0.9);
}

TEST_CASE("group workload: a seed fixes the sequence, another seed changes it") {
  const auto nodes = parseClusterSpec("gb200:36");
  REQUIRE(nodes.ok());
  const GroupWorkloadSpec spec = specFor(*nodes, 500);
  const auto first = groupWorkload(spec, 144, 7);
  const auto again = groupWorkload(spec, 144, 7);
  const auto other = groupWorkload(spec, 144, 8);
  REQUIRE(first.size() == again.size());
  bool differs = false;
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].at == again[i].at);
    CHECK(first[i].members == again[i].members);
    CHECK(first[i].pod.gpus == again[i].pod.gpus);
    differs = differs || first[i].at != other[i].at || first[i].pod.gpus != other[i].pod.gpus;
  }
  CHECK(differs);
}

TEST_CASE("group workload: no pools, no groups; single pods may come from a trace") {
  const auto nodes = parseClusterSpec("hgx-a100:4");  // not racked: no pool
  REQUIRE(nodes.ok());
  GroupWorkloadSpec spec = specFor(*nodes, 300);
  const std::vector<SimPod> trace = {{"t0", 1000, 1024, 2}, {"t1", 2000, 2048, 8}};
  spec.singleTrace = trace;
  for (const TimedArrival& a : groupWorkload(spec, 32, 1)) {
    CHECK(a.members == 0);
    CHECK((a.pod.name == "t0" || a.pod.name == "t1"));
    CHECK(a.pod.cpuMilli == (a.pod.gpus == 2 ? 1000 : 2000));
  }
}
