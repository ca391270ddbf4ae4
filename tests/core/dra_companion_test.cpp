// NVLink islands through companion devices (docs/dra.md, "NVLink islands"), from the extender's
// side: a DGX-1V whose NVIDIA slice lists its GPUs 0 5 6 1 2 7 3 4 (first-fit of two plain GPUs
// takes 0 and 5, no NVLink) and the companion slice the node agent builds for it
// (agent/companion_slice.h, from the same discovery facts). The `claim-template --nvlink-island`
// claim is predicted exactly: the first GPU in device order whose island can hold the claim, then
// the next GPUs of that island in device order; companion devices are never GPUs; the search
// stays within its step budget for 8 GPUs; a node that does not declare DRAOptionalNodeOperations
// offers no companion device.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>
#include <vector>

#include "agent/companion_slice.h"
#include "core/dra_decision.h"
#include "core/node_decider.h"
#include "core/pod_demand.h"
#include "dra/claim_shaping.h"
#include "dra/class_catalog.h"
#include "dra/first_fit.h"
#include "dra/node_devices.h"
#include "dra_placement/dra_node_state.h"
#include "policy/default_policy.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "topology/pair_table.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

using testing::FixtureState;

const std::vector<int> kListed = {0, 5, 6, 1, 2, 7, 3, 4};

NodeInfo dgx1v(const std::string& name, bool declares = true) {
  NodeInfo node =
      testing::makeDgx1Volta(FixtureState().withName(name).withIdentities().withoutDevicePlugin());
  node.declaresDraOptionalNodeOperations = declares;
  return node;
}

NodeInfo h100(const std::string& name) {
  NodeInfo node =
      testing::makeDgxH100(FixtureState().withName(name).withIdentities().withoutDevicePlugin());
  node.declaresDraOptionalNodeOperations = true;
  return node;
}

GpuTopology topologyOf(const NodeInfo& node) {
  auto topology = readTopology(node, defaultPolicy());
  REQUIRE(topology.ok());
  return *topology;
}

// The NVIDIA slice: whole GPUs named gpu-<index>, listed in `order`, with the bus ids of the
// node's labels.
std::string nvidiaSlice(const NodeInfo& node, const std::vector<int>& order) {
  const GpuTopology topology = topologyOf(node);
  std::string devices = "[";
  for (const int gpu : order) {
    if (devices.size() > 1) devices += ",";
    devices += R"({"name":"gpu-)" + std::to_string(gpu) +
               R"(","attributes":{"type":{"string":"gpu"},"resource.kubernetes.io/pciBusID":)" +
               R"({"string":")" +
               pciBusIdText(topology.pciAddresses[static_cast<std::size_t>(gpu)]) + R"("}}})";
  }
  devices += "]";
  return testing::draSliceJson(node.name + "-gpu.nvidia.com", node.name, node.name, devices);
}

// The companion slice exactly as the agent writes it for this node.
std::string companionSlice(const NodeInfo& node) {
  agent::Discovery discovery;
  discovery.topology = topologyOf(node);
  for (const PciAddress address : discovery.topology.pciAddresses) {
    discovery.busIds.push_back(pciBusIdText(address));
  }
  auto devices = agent::companionDevices(discovery);
  REQUIRE(devices.ok());
  agent::CompanionSlice slice;
  slice.name = node.name + "-topology.gputopo.dev";
  slice.node = node.name;
  slice.nodeUid = "uid";
  slice.driver = "topology.gputopo.dev";
  slice.labelPrefix = "gputopo.dev/";
  slice.devices = *devices;
  return agent::companionSliceJson(slice);
}

struct Cluster {
  testing::DraCluster dra;

  Cluster() {
    auto classes = testing::draClasses("nvidia-device-classes.json");
    auto companion =
        dra::parseDeviceClassJson(testing::draFixtureText("companion-device-class.json"));
    REQUIRE(companion.ok());
    classes.push_back(*companion);
    dra.classes = std::make_shared<const dra::ClassCatalog>(classes);
    dra.objects = std::make_shared<dra::DraObjectMaps>(dra.classes);
  }

  void addNode(const NodeInfo& node, const std::vector<int>& order) {
    dra.addSliceJson(nvidiaSlice(node, order));
    dra.addSliceJson(companionSlice(node));
  }

  void addClaim(const std::string& name, const dra::ClaimSpec& spec) {
    auto claim = std::make_shared<dra::ResourceClaim>();
    claim->name = name;
    claim->ns = "ml";
    claim->spec = spec;
    dra.addClaim(claim);
  }

  PodDemand demand(const std::string& claim) const {
    auto demand = parsePodDemand(testing::makeClaimPod("p", "ml", {{"gpus", claim}}),
                                 defaultPolicy(), dra.objects.get());
    REQUIRE(demand.ok());
    return std::move(demand).value();
  }
};

dra::ClaimSpec islandSpec(int gpus) {
  dra::ShapedClaimOptions options;
  options.gpus = gpus;
  options.nvlinkIsland = true;
  auto spec = dra::shapedClaimSpec(options);
  REQUIRE(spec.ok());
  return *spec;
}

GpuMask mask(std::initializer_list<int> gpus) {
  GpuMask out = 0;
  for (const int gpu : gpus)
    out |= bitOf(gpu);
  return out;
}

DraPlacement place(const Cluster& cluster, const NodeInfo& node, const std::string& claim) {
  const auto state = cluster.dra.nodeState(node, defaultPolicy());
  REQUIRE(state->dra);
  const PodDemand demand = cluster.demand(claim);
  REQUIRE(demand.dra);
  REQUIRE_FALSE(demand.dra->passedThrough());
  DraDecider decider(*demand.dra);
  return decider.place(*state);
}

ScoreTerms terms(const Cluster& cluster, const NodeInfo& node, const std::string& claim) {
  const auto state = cluster.dra.nodeState(node, defaultPolicy());
  const PodDemand demand = cluster.demand(claim);
  const Policy policy = defaultPolicy();
  NodeDecider decider(demand, policy);
  NodeCandidate candidate;
  candidate.name = node.name;
  candidate.state = state.get();
  REQUIRE(decider.decide(candidate, DecisionPart::kVerdict).fit.fits());
  return decider.decide(candidate, DecisionPart::kScore).terms;
}

// The replica's run on the node's devices, for its step count.
dra::FirstFitResult firstFit(const Cluster& cluster, const NodeInfo& node,
                             const dra::ClaimSpec& spec) {
  const dra::NodeDevices devices = dra::gatherNodeDevices(
      node.name, node.labels, cluster.dra.slices, cluster.dra.allocated, true);
  const dra::ClassMatches matches = dra::matchClasses(devices, *cluster.dra.classes);
  const auto program = dra::compileClaim(spec, "ml/c", *cluster.dra.classes);
  REQUIRE(program.ok());
  dra::FirstFit fit({&*program});
  return fit.run(devices, matches);
}

TEST_CASE("the island claim is predicted exactly, and scored by its NVLink set",
          "[core][dra][companion]") {
  Cluster cluster;
  const NodeInfo node = dgx1v("dgx1v-a");
  cluster.addNode(node, kListed);
  cluster.dra.addClaim(testing::draClaim("claim-2-gpus.json"));  // ml/train-0-gpus: 2 plain GPUs
  cluster.addClaim("island-2", islandSpec(2));
  cluster.addClaim("island-4", islandSpec(4));
  cluster.addClaim("island-8", islandSpec(8));

  // Companion devices are not GPUs: the node's DRA GPUs are the eight NVIDIA devices.
  const auto state = cluster.dra.nodeState(node, defaultPolicy());
  REQUIRE(state->dra);
  CHECK(state->dra->plainOrder == kListed);
  CHECK(state->usableCount == 8);

  // Plain: the first two devices, GPUs 0 and 5: across the sockets (SYS).
  const DraPlacement plain = place(cluster, node, "train-0-gpus");
  REQUIRE(plain.outcome == DraOutcome::kPlaced);
  CHECK(plain.pick.gpus == mask({0, 5}));
  CHECK(plain.pick.weakest == LinkClass::kSys);
  // Island of 2: gpu-0 takes GPU 0 (island 0); gpu-1 tries GPU 5 and 6 (island 4: the
  // companions' nvlinkIsland differ) and takes GPU 1: the first island pair in device order.
  const DraPlacement two = place(cluster, node, "island-2");
  REQUIRE(two.outcome == DraOutcome::kPlaced);
  CHECK(two.pick.gpus == mask({0, 1}));
  CHECK(two.pick.weakest == LinkClass::kNvlink);
  // The devices: NVIDIA's and the agent's, interleaved as the requests are.
  CHECK(two.result.devices.size() == 4);
  CHECK(two.wholeGpus == 2);
  // Island of 4: 0, then 1, 2, 3 in device order.
  CHECK(place(cluster, node, "island-4").pick.gpus == mask({0, 1, 2, 3}));
  // Island of 8: the cube-mesh has no such island: no allocation (not a partial island).
  CHECK(place(cluster, node, "island-8").outcome == DraOutcome::kNoFit);

  // Scored by the island pair: NVLink, where the plain claim scores a SYS pair.
  const ScoreTerms island = terms(cluster, node, "island-2");
  const ScoreTerms across = terms(cluster, node, "train-0-gpus");
  CHECK(island.linkQuality > across.linkQuality);

  // GPU 0 held by another claim: the island claim takes 5 and 6 (island 4's first two).
  cluster.dra.allocated.addExclusive("gpu.nvidia.com", "dgx1v-a", "gpu-0");
  CHECK(place(cluster, node, "island-2").pick.gpus == mask({5, 6}));
}

TEST_CASE("the island search stays within the step budget for 8 GPUs on 8-GPU nodes",
          "[core][dra][companion]") {
  Cluster cluster;
  const NodeInfo mesh = dgx1v("dgx1v-a");
  const NodeInfo nvswitch = h100("hgx-h100-a");
  cluster.addNode(mesh, kListed);
  cluster.addNode(nvswitch, {5, 2, 7, 0, 3, 6, 1, 4});
  // DGX-1V: every GPU starts an island of 4, the search exhausts each before failing.
  const dra::FirstFitResult meshEight = firstFit(cluster, mesh, islandSpec(8));
  CHECK(meshEight.status == dra::FirstFitStatus::kNoFit);
  CHECK(meshEight.steps < dra::kFirstFitStepBudget);
  // NVSwitch: one island; the first eight GPUs in order, no backtracking.
  const dra::FirstFitResult all = firstFit(cluster, nvswitch, islandSpec(8));
  CHECK(all.status == dra::FirstFitStatus::kAllocated);
  CHECK(all.devices.size() == 16);
  CHECK(all.steps < 100);
}

TEST_CASE("a node that does not declare DRAOptionalNodeOperations offers no companion device",
          "[core][dra][companion]") {
  Cluster cluster;
  const NodeInfo node = dgx1v("dgx1v-a", false);
  cluster.addNode(node, kListed);
  cluster.addClaim("island-2", islandSpec(2));
  // The scheduler's experimental allocator skips devices of slices with skipNodeOperations there.
  CHECK(place(cluster, node, "island-2").outcome == DraOutcome::kNoFit);
  // The NVIDIA devices are still there.
  const auto state = cluster.dra.nodeState(node, defaultPolicy());
  CHECK(state->usableCount == 8);
}

}  // namespace
}  // namespace gte
