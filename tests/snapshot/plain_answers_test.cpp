// The answers the snapshot precomputes for plain demands (k whole GPUs, nothing else) must be
// exactly what filter and prioritize decide without them: every node kind, usage, policy and
// demand below is decided twice, once through the answers and once through checkFit and
// scoreTerms, and the two must agree node by node. Demands the answers do not cover (MIG,
// min-link, NUMA, more than 8 GPUs) must not use them.
#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "filter/filter_nodes.h"
#include "policy/default_policy.h"
#include "prioritize/prioritize_nodes.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/charge_fixtures.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

// Every kind of node the answers must get right: each machine empty, partly used (labels and
// charges), with an unhealthy GPU, in MIG mode; a node without labels-v1; a node with
// malformed labels; a 16-GPU node.
ClusterSnapshotConstSharedPtr varietySnapshot(const PolicyConstSharedPtr& policy) {
  ClusterSnapshotBuilder builder(policy);
  using Make = NodeInfo (*)(const FixtureState&);
  const Make machines[] = {testing::makeDgxH100,    testing::makeDgxA100,
                           testing::makeDgx1Volta,  testing::makeDgx1Pascal,
                           testing::make4xPcieL40s, testing::makeA100PcieBridged,
                           testing::makeDgx2,       testing::makePatternless16};
  int n = 0;
  for (const Make make : machines) {
    const auto name = [&n] {
      std::string out = std::to_string(n++);
      out.insert(out.begin(), 'n');
      return out;
    };
    builder.upsertNode(make(FixtureState().withName(name())));
    builder.upsertNode(make(FixtureState().withName(name()).withUsed("10000000")));
    builder.upsertNode(make(FixtureState().withName(name()).withUsed("01101001")));
    builder.upsertNode(make(FixtureState().withName(name()).withUsed("11111110")));
    builder.upsertNode(make(FixtureState().withName(name()).withHealth("11011111")));
    builder.upsertNode(make(FixtureState().withName(name())), testing::podHolding({2, 3}));
    builder.upsertNode(make(FixtureState().withName(name()).withUsed("00010000")),
                       testing::podHolding({0, 5}));
  }
  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("mig").withMig("11000000")));
  builder.upsertNode(testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"));
  testing::MachineLabels broken{8, "NVIDIA-H100-80GB-HBM3", "nvsw4", "iii", "NNN", "0000", 'n'};
  builder.upsertNode(testing::makeLabelsV1Node(broken, FixtureState().withName("malformed")));
  builder.setSynced(true);
  return builder.build();
}

std::vector<NodeCandidate> candidatesOf(const ClusterSnapshot& snapshot,
                                        const std::vector<std::string>& names) {
  std::vector<NodeStateShard::Found> found(names.size());
  snapshot.nodes.findAll(names, [&found](std::size_t i, NodeStateShard::Found f) { found[i] = f; });
  std::vector<NodeCandidate> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    REQUIRE(found[i].state != nullptr);
    REQUIRE(found[i].plain != nullptr);
    out.push_back({names[i], found[i].state, {}, found[i].plain});
  }
  return out;
}

std::vector<PodDemand> demands() {
  std::vector<PodDemand> out;
  for (const Strategy strategy : {Strategy::kBinpack, Strategy::kSpread}) {
    for (std::int64_t k = 0; k <= 10; ++k) {
      PodDemand d;
      d.gpus = k;
      d.strategy = strategy;
      out.push_back(d);
      d.singleNuma = true;
      out.push_back(d);
      d.singleNuma = false;
      d.minLink = LinkClass::kNvlink;
      out.push_back(d);
      d.minLink = LinkClass::kPxb;
      out.push_back(d);
    }
    PodDemand mig;
    mig.mig.push_back(MigRequest{"3g.40gb", 1});
    mig.strategy = strategy;
    out.push_back(mig);
    mig.gpus = 2;
    out.push_back(mig);
  }
  return out;
}

void checkSameDecisions(const PolicyConstSharedPtr& policy) {
  const auto snapshot = varietySnapshot(policy);
  std::vector<std::string> names;
  snapshot->nodes.forEach(
      [&names](const std::string& name, const auto&) { names.push_back(name); });
  const std::vector<NodeCandidate> fast = candidatesOf(*snapshot, names);
  std::vector<NodeCandidate> slow = fast;
  for (NodeCandidate& c : slow)
    c.plain = nullptr;

  std::size_t plainDemands = 0;
  for (const PodDemand& demand : demands()) {
    INFO("gpus " << demand.gpus << " strategy " << strategyName(demand.strategy) << " singleNuma "
                 << demand.singleNuma << " minLink " << demand.minLink.has_value() << " mig "
                 << demand.mig.size());
    plainDemands += PlainAnswers::gpusOf(demand) > 0 ? 1 : 0;
    const Result<PodDemand> parsed = demand;
    const FilterResult a = filterNodes(parsed, fast, *policy);
    const FilterResult b = filterNodes(parsed, slow, *policy);
    REQUIRE(a.nodes.size() == b.nodes.size());
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
      INFO("node " << names[i]);
      CHECK(a.nodes[i].verdict == b.nodes[i].verdict);
      if (a.nodes[i].verdict != Verdict::kFit) {
        CHECK(a.reasons[a.nodes[i].reason] == b.reasons[b.nodes[i].reason]);
      }
    }
    PlacementOffer fastOffer;
    PlacementOffer slowOffer;
    const HostScores x = prioritizeNodes(&demand, fast, *policy, &fastOffer);
    const HostScores y = prioritizeNodes(&demand, slow, *policy, &slowOffer);
    // Placement regret's view of the request, too: the sets come from the answers or the picks.
    CHECK(fastOffer.feasibleBest == slowOffer.feasibleBest);
    CHECK(fastOffer.topWorst == slowOffer.topWorst);
    CHECK(fastOffer.bestNode == slowOffer.bestNode);
    CHECK(fastOffer.topNode == slowOffer.topNode);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("node " << names[i]);
      CHECK(x[i].score == y[i].score);
      CHECK(x[i].wire == y[i].wire);
      CHECK(x[i].terms.linkQuality == y[i].terms.linkQuality);
      CHECK(x[i].terms.numaLocality == y[i].terms.numaLocality);
      CHECK(x[i].terms.packing == y[i].terms.packing);
      CHECK(x[i].terms.migFit == y[i].terms.migFit);
    }
  }
  CHECK(plainDemands == 16);  // k = 1..8 under both strategies went through the answers
}

TEST_CASE("precomputed answers decide exactly as checkFit and scoreTerms", "[snapshot][plain]") {
  SECTION("default policy") {
    checkSameDecisions(std::make_shared<const Policy>(defaultPolicy()));
  }
  SECTION("multi-GPU pods kept off unknown topology, other weights, no link-first ranking") {
    Policy policy = defaultPolicy();
    policy.allowMultiGpuOnUnknownTopology = false;
    policy.weights.packing *= 3;
    policy.linkFirst = false;
    checkSameDecisions(std::make_shared<const Policy>(policy));
  }
}

TEST_CASE("a node's answers follow its usage and the policy", "[snapshot][plain]") {
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()));
  builder.upsertNode(testing::makeDgxH100(FixtureState().withName("a")));
  builder.setSynced(true);
  const std::vector<std::string> names{"a"};
  const auto answerFor = [&](std::int64_t k) {
    const auto snapshot = builder.build();
    std::vector<NodeStateShard::Found> found(1);
    snapshot->nodes.findAll(names,
                            [&found](std::size_t i, NodeStateShard::Found f) { found[i] = f; });
    REQUIRE(found[0].plain != nullptr);
    return found[0].plain->forGpus(k);
  };
  CHECK(answerFor(8).verdict == Verdict::kFit);
  builder.setCharges("a", testing::podHolding({0}));
  CHECK(answerFor(8).verdict == Verdict::kUnschedulable);
  CHECK(answerFor(8).reason == FitReason::kInsufficientFreeGpus);
  CHECK(answerFor(7).verdict == Verdict::kFit);

  ClusterSnapshotBuilder unknown(std::make_shared<const Policy>(defaultPolicy()));
  unknown.upsertNode(testing::makeGfdNode("a", 8, "NVIDIA-A100-SXM4-80GB"));
  unknown.setSynced(true);
  const auto allowed = [&] {
    const auto snapshot = unknown.build();
    std::vector<NodeStateShard::Found> found(1);
    snapshot->nodes.findAll(names,
                            [&found](std::size_t i, NodeStateShard::Found f) { found[i] = f; });
    return found[0].plain->forGpus(2).verdict == Verdict::kFit;
  };
  CHECK(allowed());
  Policy strict = defaultPolicy();
  strict.allowMultiGpuOnUnknownTopology = false;
  unknown.setPolicy(std::make_shared<const Policy>(strict));
  CHECK_FALSE(allowed());
}

}  // namespace
}  // namespace gte
