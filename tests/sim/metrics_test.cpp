// Placement metrics on hand-made situations whose answers can be worked out by hand.
#include <catch2/catch_test_macros.hpp>
#include <sstream>

#include "core/node_state.h"
#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/fragmentation.h"
#include "sim/placement_metrics.h"
#include "sim/run_report.h"
#include "sim/simulator.h"

using namespace gte;
using namespace gte::sim;

namespace {

RunMetrics runOn(const char* cluster, const std::vector<SimPod>& pods, Chooser chooser) {
  const auto nodes = parseClusterSpec(cluster);
  REQUIRE(nodes.ok());
  SimOptions options;
  options.chooser = chooser;
  options.fragmentationAt = {};
  return summarise(simulate(*nodes, pods, defaultPolicy(), options), pods);
}

}  // namespace

TEST_CASE("a 2-GPU pod put on a PCIe pair while an NVSwitch node is free counts as missed") {
  const std::vector<SimPod> pods = {{"p", 4000, 8192, 2}};
  // BestFit fills the 2-GPU node (no GPU left) over the HGX (6 left).
  const RunMetrics bestFit = runOn("pcie2:1,hgx-a100:1", pods, Chooser::kBestFit);
  REQUIRE(bestFit.bySize.size() == 1);
  CHECK(bestFit.bySize[0].placed == 1);
  CHECK(bestFit.bySize[0].missed == 1);
  CHECK(bestFit.bySize[0].fullyNvlink == 0);
  // With only NVSwitch nodes there is nothing better to miss.
  const RunMetrics hgx = runOn("hgx-a100:2", pods, Chooser::kBestFit);
  CHECK(hgx.bySize[0].missed == 0);
  CHECK(hgx.bySize[0].fullyNvlink == 1);
}

TEST_CASE("allocation ratio and first failure are read against arrived demand") {
  // Capacity 2 GPUs: 1 arrives (50%), 2 arrive (150%, fails), then 1 (200%).
  const std::vector<SimPod> pods = {
      {"a", 1000, 1024, 1}, {"b", 1000, 1024, 2}, {"c", 1000, 1024, 1}};
  const RunMetrics m = runOn("pcie2:1", pods, Chooser::kBestFit);
  CHECK(m.firstFailurePercent == 150.0);
  CHECK(m.allocationAt100 == 50.0);  // after pod b, the first to reach 100% arrived
  CHECK(m.allocationAt130 == 50.0);
  REQUIRE(m.bySize.size() == 2);
  CHECK(m.bySize[1].gpus == 2);
  CHECK(m.bySize[1].failed == 1);
  CHECK(m.bySize[0].firstFailurePercent == -1);
  CHECK(allocationAt(simulate(*parseClusterSpec("pcie2:1"), pods, defaultPolicy(), SimOptions{}),
                     200) == 100.0);
}

TEST_CASE("fragmentation: free GPUs too few for the sizes seen, or not as well linked as empty") {
  const Policy policy = defaultPolicy();
  const auto hgx =
      buildNodeState(makeTemplateNode(*findNodeTemplate("hgx-a100"), "a", policy.labelPrefix),
                     NodeUsage{{0, 1, 2, 3, 4}, 0, {}, {}}, policy);
  SizeShares fourOnly{};
  fourOnly[4] = 1;
  const std::vector<NodeStateConstSharedPtr> nodes = {hgx};
  const Fragmentation threeFree = measureFragmentation(nodes, fourOnly);
  CHECK(threeFree.freeGpus == 3);
  CHECK(threeFree.fgdRate == 1.0);
  // DGX-1V with GPUs 0, 1, 4, 5 taken: 4 free ({2,3,6,7}: 2-6 and 3-7 are NV1, 2-3 and 6-7 NV2,
  // but 2-7 and 3-6 have no NVLink): a 4-GPU pod fits by count, not as an all-NVLink quad.
  const auto dgx =
      buildNodeState(makeTemplateNode(*findNodeTemplate("dgx1v"), "b", policy.labelPrefix),
                     NodeUsage{{0, 1, 4, 5}, 0, {}, {}}, policy);
  const std::vector<NodeStateConstSharedPtr> mesh = {dgx};
  const Fragmentation scattered = measureFragmentation(mesh, fourOnly);
  CHECK(scattered.fgdRate == 0.0);
  CHECK(scattered.topologyRate == 1.0);
}

TEST_CASE("report CSV quotes scenario names that hold commas") {
  const std::vector<SimPod> pods = {{"p", 1000, 1024, 1}};
  LabelledRun run{"pcie2:1,pcie1:1",
                  "best-fit",
                  42,
                  runOn("pcie2:1,pcie1:1", pods, Chooser::kBestFit),
                  {{0, 0.0}}};
  std::ostringstream out;
  writeMetricsCsv(out, std::span<const LabelledRun>(&run, 1));
  CHECK(out.str().find("\n\"pcie2:1,pcie1:1\",best-fit,42,ar100,") != std::string::npos);
}
