// MIG in the simulator: instances placed by the extender's own fit check and MIG plan on A100
// templates with MIG on, MIG-naive baselines that count slices, and the "slice counts merely add
// up" trap, on situations worked out by hand and on a short synthetic run's invariants.
#include <catch2/catch_test_macros.hpp>
#include <sstream>
#include <vector>

#include "core/fit.h"
#include "core/node_state.h"
#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/mig_slices.h"
#include "sim/placement_metrics.h"
#include "sim/run_report.h"
#include "sim/simulator.h"
#include "sim/workload.h"

using namespace gte;
using namespace gte::sim;

namespace {

Policy dynamicMigPolicy() {
  Policy policy = defaultPolicy();
  policy.dynamicMig = true;  // the MIG templates have no instances: the scheduler places them
  return policy;
}

const MigProduct& a100() {
  static const Policy policy = defaultPolicy();
  return *findMigProduct(policy.migProducts, "NVIDIA-A100-SXM4-80GB");
}

SimPod migPod(const char* name, const char* profile) {
  return SimPod{name, 1000, 2048, 0, profile, a100().findByName(profile)->slices};
}

SimRun runOn(const char* cluster, const std::vector<SimPod>& pods, Chooser chooser,
             std::uint64_t seed = 1) {
  const auto nodes = parseClusterSpec(cluster);
  REQUIRE(nodes.ok());
  SimOptions options;
  options.chooser = chooser;
  options.seed = seed;
  options.fragmentationAt = {};
  return simulate(*nodes, pods, dynamicMigPolicy(), options);
}

}  // namespace

TEST_CASE("MIG templates publish MIG-enabled GPUs the label reader takes as MIG slices") {
  const Policy policy = dynamicMigPolicy();
  const NodeTemplate& mig4 = *findNodeTemplate("hgx-a100-mig4");
  CHECK(mig4.migGpus() == 4);
  CHECK(mig4.wholeGpus() == 4);
  const auto state = buildNodeState(makeTemplateNode(mig4, "m", policy.labelPrefix), {}, policy);
  CHECK(state->status == TopologyStatus::kKnown);
  CHECK(state->usableCount == 4);  // GPUs 4-7 cannot be handed out whole
  CHECK(state->usableMask == 0x0f);
  CHECK(state->migSlicesTotal == 32);
  CHECK(freeMigSlices(*state) == 32);
}

TEST_CASE("free slice counts that cover a profile without a legal start: the pod is rejected") {
  // The labels-v1 worked example: 1g instances at slices 0 and 5 leave six free memory slices and
  // five free compute slices, but a 3g (4 memory slices) may start only at 0 or 4.
  const Policy policy = dynamicMigPolicy();
  NodeUsage usage;
  usage.mig = {{0, "1g.10gb", 0}, {0, "1g.10gb", 5}};
  const auto state = buildNodeState(
      makeTemplateNode(*findNodeTemplate("a100-pcie-mig"), "a", policy.labelPrefix), usage, policy);
  const MigProfile& threeG = *a100().findByName("3g.40gb");
  CHECK(freeMigSlices(*state) == 6);
  CHECK(sliceCountsFit(*state, threeG));
  PodDemand demand;
  demand.mig = {{"3g.40gb", 1}};
  const FitOutcome outcome = checkFit(demand, *state, policy);
  CHECK_FALSE(outcome.fits());
  CHECK(outcome.reason == FitReason::kMigNoPlacement);
  // A 2g still has a legal start (slices 2-3).
  demand.mig = {{"2g.20gb", 1}};
  CHECK(checkFit(demand, *state, policy).fits());
  // A 7g needs 7 compute slices: the counts do not add up, so no trap is counted for it.
  CHECK_FALSE(sliceCountsFit(*state, *a100().findByName("7g.80gb")));
}

TEST_CASE("two 2g instances fill slices 2-5: a later 3g fails on counts that add up") {
  // One A100 with MIG on. The plan puts the first 2g at 4 (keeps the most placements) and the
  // second at 2; slices 0, 1, 6, 7 stay free (4 memory, 3 compute slices), no 3g start is free.
  const std::vector<SimPod> pods = {migPod("a", "2g.20gb"), migPod("b", "2g.20gb"),
                                    migPod("c", "3g.40gb")};
  const SimRun extender = runOn("a100-pcie-mig:1", pods, Chooser::kExtender);
  REQUIRE(extender.placements.size() == 3);
  CHECK(extender.placements[0].migStart == 4);
  CHECK(extender.placements[1].migStart == 2);
  const PodPlacement& threeG = extender.placements[2];
  CHECK(threeG.node == -1);
  CHECK(threeG.feasibleNodes == 0);
  CHECK(threeG.migCountsFit);
  CHECK_FALSE(threeG.migLegal);
  CHECK_FALSE(threeG.migInvalid);
  const MigMetrics m = summarise(extender, pods).mig;
  CHECK(m.pods == 3);
  CHECK(m.placed == 2);
  CHECK(m.countsTrap == 1);
  CHECK(m.invalid == 0);
  CHECK(m.lost == 0);
  CHECK(m.sliceUtilisation == 50.0);
  // A slice-counting BestFit takes the node for the 3g: an instance that cannot be created.
  const SimRun bestFit = runOn("a100-pcie-mig:1", pods, Chooser::kBestFit);
  CHECK(bestFit.placements[2].feasibleNodes == 1);
  CHECK(bestFit.placements[2].node == -1);
  CHECK(bestFit.placements[2].migInvalid);
  const MigMetrics naive = summarise(bestFit, pods).mig;
  CHECK(naive.invalid == 1);
  CHECK(naive.countsTrap == 1);
  CHECK(naive.sliceUtilisation == 50.0);  // the invalid pod took nothing
}

TEST_CASE("a MIG-naive chooser loses a pod the extender places on another node") {
  // Node 0 holds two 2g (slices 2-5) after the first pods; node 1 is empty. The extender packs
  // the 2g pods on one node and sends the 3g to a node where it has a legal start; BestFit by
  // slice count prefers the fuller node and sends the 3g there, where it cannot be created.
  const std::vector<SimPod> pods = {migPod("a", "2g.20gb"), migPod("b", "2g.20gb"),
                                    migPod("c", "3g.40gb")};
  for (const std::uint64_t seed : {1, 2, 3, 4}) {
    INFO("seed " << seed);
    const SimRun extender = runOn("a100-pcie-mig:2", pods, Chooser::kExtender, seed);
    CHECK(extender.placements[2].node >= 0);
    const SimRun bestFit = runOn("a100-pcie-mig:2", pods, Chooser::kBestFit, seed);
    REQUIRE(bestFit.placements[0].node == bestFit.placements[1].node);
    CHECK(bestFit.placements[2].migInvalid);
    CHECK(bestFit.placements[2].migLegal);  // the empty node had a legal start
    CHECK(summarise(bestFit, pods).mig.lost == 1);
  }
}

TEST_CASE("the synthetic MIG mix: its share of pods, its profiles, and no change without it") {
  const auto plain = parseSyntheticMix("1:1,2:1");
  REQUIRE(plain.ok());
  auto withMig = *plain;
  REQUIRE(addMigMix(withMig, 1.0, "3g.40gb:1,1g.10gb:0", a100()).ok());
  for (const SimPod& pod : syntheticPods(withMig, 20, 5)) {
    CHECK(pod.gpus == 0);
    CHECK(pod.migProfile == "3g.40gb");
    CHECK(pod.migSlices == 4);
    CHECK(pod.demandSlices() == 4);
  }
  auto none = *plain;
  REQUIRE(addMigMix(none, 0.0, "3g.40gb:1", a100()).ok());
  const auto a = syntheticPods(*plain, 50, 9);
  const auto b = syntheticPods(none, 50, 9);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].gpus == b[i].gpus);
    CHECK(b[i].migProfile.empty());
  }
  auto half = *plain;
  REQUIRE(addMigMix(half, 0.5, "1g.10gb:1", a100()).ok());
  int mig = 0;
  for (const SimPod& pod : syntheticPods(half, 1000, 3)) {
    mig += pod.migProfile.empty() ? 0 : 1;
  }
  CHECK(mig > 400);
  CHECK(mig < 600);
  auto bad = *plain;
  CHECK_FALSE(addMigMix(bad, 0.3, "5g.50gb:1", a100()).ok());
  CHECK_FALSE(addMigMix(bad, 1.5, "1g.10gb:1", a100()).ok());
  CHECK_FALSE(addMigMix(bad, 0.3, "1g.10gb:0", a100()).ok());
}

TEST_CASE("the arrival sequence weighs a MIG pod by its memory slices") {
  // Capacity 1 GPU = 8 slices; 130% is 10.4 slices: three 4-slice pods reach it, not two.
  const std::vector<SimPod> trace = {migPod("a", "3g.40gb"), migPod("b", "3g.40gb"),
                                     migPod("c", "3g.40gb"), migPod("d", "3g.40gb")};
  CHECK(arrivalSequence(trace, 1, 130, 1).size() == 3);
}

TEST_CASE("report: MIG metrics and the MIG table only for runs with MIG pods") {
  const std::vector<SimPod> pods = {migPod("a", "7g.80gb"), migPod("b", "7g.80gb")};
  LabelledRun mig{"a100-pcie-mig:1",
                  "extender",
                  42,
                  summarise(runOn("a100-pcie-mig:1", pods, Chooser::kExtender), pods),
                  {}};
  std::ostringstream csv;
  writeMetricsCsv(csv, std::span<const LabelledRun>(&mig, 1));
  CHECK(csv.str().find("extender,42,mig.failed,1.0000\n") != std::string::npos);
  CHECK(csv.str().find("extender,42,mig.7g.80gb.pods,2.0000\n") != std::string::npos);
  CHECK(csv.str().find("extender,42,mig.slice_util,100.0000\n") != std::string::npos);
  std::ostringstream table;
  writeTable(table, std::span<const LabelledRun>(&mig, 1));
  CHECK(table.str().find("(MIG)") != std::string::npos);
  const std::vector<SimPod> whole = {{"w", 1000, 1024, 1}};
  LabelledRun plain{
      "pcie1:1", "extender", 42, summarise(runOn("pcie1:1", whole, Chooser::kExtender), whole), {}};
  std::ostringstream plainCsv;
  writeMetricsCsv(plainCsv, std::span<const LabelledRun>(&plain, 1));
  CHECK(plainCsv.str().find(",mig.") == std::string::npos);
  std::ostringstream plainTable;
  writeTable(plainTable, std::span<const LabelledRun>(&plain, 1));
  CHECK(plainTable.str().find("(MIG)") == std::string::npos);
}

TEST_CASE("slice counts include compute: seven 1g instances leave slice 7 free but no 1g room") {
  CHECK(computeSlices(*a100().findByName("1g.10gb")) == 1);
  CHECK(computeSlices(*a100().findByName("1g.20gb")) == 1);
  CHECK(computeSlices(*a100().findByName("3g.40gb")) == 3);
  CHECK(computeSlices(*a100().findByName("7g.80gb")) == 7);
  const Policy policy = dynamicMigPolicy();
  NodeUsage usage;
  for (int start = 0; start < 7; ++start) {
    usage.mig.push_back({0, "1g.10gb", start});
  }
  const auto state = buildNodeState(
      makeTemplateNode(*findNodeTemplate("a100-pcie-mig"), "a", policy.labelPrefix), usage, policy);
  CHECK(freeMigSlices(*state) == 1);
  // One free memory slice, no free compute slice: the counts do not add up, so a failed 1g here
  // is a full GPU, not the trap.
  CHECK_FALSE(sliceCountsFit(*state, *a100().findByName("1g.10gb")));
}

TEST_CASE("a static all-balanced layout: pods take its free instances, other profiles never fit") {
  const Policy policy = dynamicMigPolicy();
  const NodeTemplate& balanced = *findNodeTemplate("hgx-a100-mig-balanced");
  const auto state =
      buildNodeState(makeTemplateNode(balanced, "b", policy.labelPrefix), {}, policy);
  REQUIRE(state->status == TopologyStatus::kKnown);
  CHECK(state->migFreeInstances[0].size() == 4);
  CHECK(freeMigSlices(*state) == 64);  // every slice in a free instance, none unpartitioned
  const MigProfile& fourG = *a100().findByName("4g.40gb");
  CHECK_FALSE(sliceCountsFit(*state, fourG));
  CHECK_FALSE(freeInstanceExists(*state, fourG));
  CHECK(freeInstanceExists(*state, *a100().findByName("3g.40gb")));
  // A 3g and a 1g take instances of the layout; a 4g fits none, whoever chooses.
  const std::vector<SimPod> pods = {migPod("a", "3g.40gb"), migPod("b", "1g.10gb"),
                                    migPod("c", "4g.40gb")};
  for (const Chooser chooser : {Chooser::kExtender, Chooser::kBestFit, Chooser::kRandom}) {
    INFO("chooser " << chooserName(chooser));
    const SimRun run = runOn("hgx-a100-mig-balanced:1", pods, chooser);
    CHECK(run.placements[0].migStart == 4);  // the 3g instance
    CHECK(run.placements[1].migStart <= 1);  // a 1g instance
    CHECK(run.placements[2].node == -1);
    CHECK(run.placements[2].feasibleNodes == 0);  // the baselines see instance counts: exact
    const MigMetrics m = summarise(run, pods).mig;
    CHECK(m.invalid == 0);
    CHECK(m.countsTrap == 0);
    CHECK(m.failed == 1);
  }
}
