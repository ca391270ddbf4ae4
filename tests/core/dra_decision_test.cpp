// DRA nodes in the decision core: the node state a DRA node gets (the allocator's device order
// as its picks, claims as its usage, never the same GPU twice), and the decision for claim pods
// (the first-fit set, judged by the same fit rules and score terms), on the NVIDIA-shaped fixtures:
// an HGX H100 whose slice lists GPUs 5 2 7 0 3 6 1 4, and the same 8x A100 PCIe box (NVLink
// bridges on 0-2, 1-3, 4-5, 6-7) published with GPUs 0, 2 first on one node and 0, 1 first on the
// other.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "core/dra_decision.h"
#include "core/node_charges.h"
#include "core/node_decider.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"
#include "dra_placement/dra_node_state.h"
#include "policy/default_policy.h"
#include "support/charge_fixtures.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;
using testing::FixtureState;

NodeInfo draNode(NodeInfo (*make)(const FixtureState&), const std::string& name) {
  return make(FixtureState().withName(name).withIdentities().withoutDevicePlugin());
}

GpuMask mask(std::initializer_list<int> gpus) {
  GpuMask out = 0;
  for (const int gpu : gpus)
    out |= bitOf(gpu);
  return out;
}

struct Decided {
  FitOutcome fit;
  ScoreTerms terms;
  int score = 0;
};

// `plain`: the node's precomputed answers, as a snapshot's candidate carries them (null: none).
Decided decide(const PodDemand& demand, const NodeState& state, const Policy& policy,
               const PlainAnswers* plain = nullptr) {
  NodeDecider decider(demand, policy);
  NodeCandidate candidate;
  candidate.name = state.name;
  candidate.state = &state;
  candidate.plain = plain;
  const NodeDecision decided =
      decider.decide(candidate, DecisionPart::kVerdict | DecisionPart::kScore);
  Decided out;
  out.fit = decided.fit;
  out.terms = decided.terms;
  out.score = decided.score;
  return out;
}

TEST_CASE("a DRA node's picks are the allocator's first free GPUs in device order", "[core][dra]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("hgx-h100-slice.json");
  const auto state = cluster.nodeState(draNode(testing::makeDgxH100, "hgx-h100-a"), policy);
  REQUIRE(state->dra);
  CHECK(state->allocator == GpuAllocator::kDra);
  CHECK(state->dra->plainOrder == std::vector<int>{5, 2, 7, 0, 3, 6, 1, 4});
  CHECK(state->dra->mapping.weakest == dra::MappingBasis::kBusId);
  CHECK(state->usableCount == 8);
  CHECK(state->freeCount == 8);
  // nvidia.com/gpu: 2 gets the first two devices, GPUs 5 and 2: NVLink (NVSwitch), two NUMA nodes.
  CHECK(state->devicePluginPicks[2].gpus == mask({5, 2}));
  CHECK(state->devicePluginPicks[2].weakest == LinkClass::kNvlink);
  CHECK_FALSE(state->devicePluginPicks[2].singleNuma);
  // No Topology Manager on the DRA path: a single-NUMA pod of 2 finds no aligned pick.
  CHECK(state->whole[2].numaAligned.gpus == 0);
  // Four: 5 2 7 0, NUMA 1 0 1 0.
  CHECK(state->whole[4].devicePlugin.gpus == mask({5, 2, 7, 0}));
}

TEST_CASE("allocated claims are used GPUs, released ones free, none counted twice", "[core][dra]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node = draNode(testing::makeDgxH100, "hgx-h100-a");
  testing::DraCluster cluster;
  cluster.addSlice("hgx-h100-slice.json");
  // claim-allocated.json holds gpu-1, GPU 5 by its bus id.
  cluster.addClaim(testing::draClaim("claim-allocated.json"));
  const auto held = cluster.nodeState(node, policy);
  CHECK(held->freeCount == 7);
  CHECK((held->freeMask & bitOf(5)) == 0);
  // The first two free devices are now GPUs 2 and 7.
  CHECK(held->devicePluginPicks[2].gpus == mask({2, 7}));
  // The pod's charge names the same GPU: still 7 free, not 6. A charge with no claim behind it
  // adds nothing on a DRA node either: the claims are the usage there.
  CHECK(cluster.nodeState(node, policy, testing::podHolding({5}))->freeCount == 7);
  CHECK(cluster.nodeState(node, policy, testing::podHolding({3}))->freeCount == 7);
  // The claim released (the cache drops its allocation): all 8 free again.
  testing::DraCluster released;
  released.addSlice("hgx-h100-slice.json");
  CHECK(released.nodeState(node, policy)->freeCount == 8);
}

TEST_CASE("preempt's what-if frees the devices of the victims' claims", "[core][dra][preempt]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("hgx-h100-slice.json");
  cluster.addClaim(testing::draClaim("claim-allocated.json"));
  const auto state = cluster.nodeState(draNode(testing::makeDgxH100, "hgx-h100-a"), policy);
  REQUIRE(state->freeCount == 7);
  // The claim is reserved for pod-uid-infer-0.
  CHECK(nodeStateWithout(*state, {"pod-uid-infer-0"}, policy)->freeCount == 8);
  CHECK(nodeStateWithout(*state, {"someone-else"}, policy)->freeCount == 7);
}

TEST_CASE("the NVLink pair or the PCIe pair: the extended-resource pod scores by DRA's pick",
          "[core][dra]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("a100-nvlink-first-slice.json");
  cluster.addSlice("a100-pcie-first-slice.json");
  const auto nvlink =
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-nvlink-first"), policy);
  const auto pcie =
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-pcie-first"), policy);
  auto demand = parsePodDemand(testing::makeGpuPod("train", 2), policy, cluster.objects.get());
  REQUIRE(demand.ok());
  REQUIRE(demand->dra);  // a class backs nvidia.com/gpu
  CHECK_FALSE(demand->draClaims());
  const Decided onNvlink = decide(*demand, *nvlink, policy);
  const Decided onPcie = decide(*demand, *pcie, policy);
  CHECK(onNvlink.fit.fits());
  CHECK(onPcie.fit.fits());
  // GPUs 0 and 2 are NVLink-bridged (tier 6 of 6); 0 and 1 meet at NODE (tier 2: 400).
  CHECK(onNvlink.terms.linkQuality == 1200);
  CHECK(onPcie.terms.linkQuality == 400);
  CHECK(onNvlink.score > onPcie.score);
  // With min-link nvlink the PCIe node is refused, and would be on the emptied node too: DRA's
  // first two devices there are always 0 and 1.
  auto strict =
      parsePodDemand(testing::makeGpuPod("strict", 2, {{"gputopo.dev/min-link", "nvlink"}}), policy,
                     cluster.objects.get());
  REQUIRE(strict.ok());
  CHECK(decide(*strict, *nvlink, policy).fit.fits());
  const FitOutcome refused = decide(*strict, *pcie, policy).fit;
  CHECK(refused.verdict == Verdict::kUnresolvable);
  CHECK(refused.reason == FitReason::kLinkTooWeak);
}

TEST_CASE("claim pods are decided by the set DRA's first-fit gives them", "[core][dra]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("a100-nvlink-first-slice.json");
  cluster.addSlice("a100-pcie-first-slice.json");
  cluster.addSlice("hgx-h100-slice.json");
  cluster.addClaim(testing::draClaim("claim-2-gpus.json"));
  cluster.addClaim(testing::draClaim("claim-first-available.json"));
  cluster.objects->add(testing::draTemplate("template-4-gpus.json"));
  const auto nvlink =
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-nvlink-first"), policy);
  const auto pcie =
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-pcie-first"), policy);
  const auto h100 = cluster.nodeState(draNode(testing::makeDgxH100, "hgx-h100-a"), policy);
  const auto devicePluginNode =
      cluster.nodeState(testing::makeDgxH100(FixtureState().withName("dp")), policy);

  const auto demandOf = [&](const PodInfo& pod) {
    auto demand = parsePodDemand(pod, policy, cluster.objects.get());
    REQUIRE(demand.ok());
    return std::move(demand).value();
  };

  SECTION("a named claim: the NVLink node outscores the PCIe node") {
    const PodDemand demand = demandOf(testing::makeClaimPod("p", "ml", {{"gpus", "train-0-gpus"}}));
    REQUIRE(demand.draClaims());
    CHECK(demand.gpus == 0);
    const Decided onNvlink = decide(demand, *nvlink, policy);
    const Decided onPcie = decide(demand, *pcie, policy);
    CHECK(onNvlink.fit.fits());
    CHECK(onNvlink.terms.linkQuality == 1200);
    CHECK(onPcie.terms.linkQuality == 400);
    CHECK(onNvlink.score > onPcie.score);
    // A node no slice serves cannot allocate the claim, emptied or not.
    const FitOutcome none = decide(demand, *devicePluginNode, policy).fit;
    CHECK(none.verdict == Verdict::kUnresolvable);
    CHECK(none.reason == FitReason::kDraNoAllocation);
    CHECK(fitReasonText(none, demand) ==
          "the pod's DRA claims cannot be allocated from the node's free devices");
  }
  SECTION("firstAvailable: the tier the allocator takes is the one scored") {
    const PodDemand demand = demandOf(testing::makeClaimPod("p", "ml", {{"gpus", "train-1-gpus"}}));
    // H100: no two GPUs share a root, so same-numa: GPUs 5 and 7 (positions 0 and 2, NUMA 1).
    DraDecider decider(*demand.dra);
    const DraPlacement placed = decider.place(*h100);
    REQUIRE(placed.outcome == DraOutcome::kPlaced);
    CHECK(placed.pick.gpus == mask({5, 7}));
    CHECK(placed.pick.singleNuma);
    CHECK(decide(demand, *h100, policy).terms.numaLocality == 1200);
  }
  SECTION("a template before its claim exists: its spec, matchAttribute numaNode") {
    const PodDemand demand =
        demandOf(testing::makeClaimPod("p", "ml", {}, {{"gpus", "four-gpus"}}));
    DraDecider decider(*demand.dra);
    const DraPlacement placed = decider.place(*h100);
    REQUIRE(placed.outcome == DraOutcome::kPlaced);
    // Positions 0, 2, 5, 7 (NUMA 1): GPUs 5, 7, 6, 4.
    CHECK(placed.pick.gpus == mask({4, 5, 6, 7}));
    CHECK(placed.pick.singleNuma);
  }
  SECTION("a template whose claim exists: the claim") {
    const PodDemand demand = demandOf(
        testing::makeClaimPod("p", "ml", {}, {{"gpus", "four-gpus"}}, {{"gpus", "train-0-gpus"}}));
    REQUIRE(demand.draClaims());
    CHECK(demand.dra->claims[0].id == "ml/train-0-gpus");
  }
  SECTION("an allocated claim holds its devices: nothing left to place") {
    cluster.addClaim(testing::draClaim("claim-allocated.json"));
    const PodDemand demand = demandOf(testing::makeClaimPod("p", "ml", {{"gpu", "infer-0-gpu"}}));
    CHECK(demand.dra->allocatedClaims == 1);
    CHECK(demand.empty());
  }
  SECTION("claims the extender cannot interpret are passed through, never scored") {
    const PodDemand missing = demandOf(testing::makeClaimPod("p", "ml", {{"gpus", "not-there"}}));
    REQUIRE(missing.dra->passedThrough());
    CHECK_THAT(missing.dra->passThrough,
               ContainsSubstring("claim ml/not-there is not in the cache"));
    for (const auto* state : {nvlink.get(), pcie.get(), devicePluginNode.get()}) {
      const Decided d = decide(missing, *state, policy);
      CHECK(d.fit.fits());
      CHECK(d.score == 0);
      CHECK_FALSE(d.terms.fits());
    }
    auto odd = std::make_shared<dra::ResourceClaim>();
    odd->name = "odd";
    odd->ns = "ml";
    dra::DeviceRequest request;
    request.name = "g";
    dra::DeviceRequestShape shape;
    shape.name = "g";
    shape.deviceClassName = "gpu.nvidia.com";
    shape.selectors = {"device.attributes['gpu.nvidia.com'].productName.matches('A100.*')"};
    request.alternatives.push_back(shape);
    odd->spec.requests.push_back(request);
    cluster.addClaim(odd);
    const PodDemand outside = demandOf(testing::makeClaimPod("p", "ml", {{"g", "odd"}}));
    CHECK_THAT(outside.dra->passThrough, ContainsSubstring("outside the CEL subset"));
    CHECK(decide(outside, *pcie, policy).fit.fits());
  }
}

TEST_CASE("mapping mismatches: the node's DRA GPUs are topology-unknown", "[core][dra]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("hgx-h100-slice.json");
  // The device plugin advertises the same GPUs the slice publishes.
  const auto both = cluster.nodeState(
      testing::makeDgxH100(FixtureState().withName("hgx-h100-a").withIdentities()), policy);
  REQUIRE(both->dra);
  CHECK_THAT(both->dra->mapping.error, ContainsSubstring("node hgx-h100-a: DRA GPU mapping"));
  CHECK(both->allocator == GpuAllocator::kDevicePlugin);  // allocatable wins nvidia.com/gpu
  // No labels-v1 at all on a DRA node: the DRA GPUs count, their links are unknown.
  NodeInfo bare;
  bare.name = "hgx-h100-a";
  const auto unknown = cluster.nodeState(bare, policy);
  CHECK(unknown->allocator == GpuAllocator::kDra);
  CHECK(unknown->usableCount == 8);
  CHECK_FALSE(unknown->linksKnown());
  // Named gpu-1, gpu-6, ...: beyond the labels' 0 GPUs, so the mapping fails and the devices
  // count in their order.
  CHECK_THAT(unknown->dra->mapping.error, ContainsSubstring("beyond the 0 GPUs"));
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

// 4x L40S published with GPU 1 tainted NoSchedule and GPU 3 allocated.
std::string taintedL40sSlice() {
  std::string devices = "[";
  const char* bus[4] = {"38", "3a", "3c", "3e"};
  for (const int gpu : {2, 1, 3, 0}) {
    if (devices.size() > 1) devices += ",";
    devices +=
        R"({"name":"gpu-)" + std::to_string(gpu) +
        R"(","attributes":{"type":{"string":"gpu"},"resource.kubernetes.io/pciBusID":{"string":"0000:)" +
        bus[gpu] + R"(:00.0"}})";
    if (gpu == 1) devices += R"(,"taints":[{"key":"example.com/xid","effect":"NoSchedule"}])";
    devices += "}";
  }
  return testing::draSliceJson("l40s-slice", "l40s", "l40s", devices + "]");
}

TEST_CASE("a device taint of effect None marks its GPU degraded: sets holding it score lower",
          "[core][dra][health]") {
  const Policy policy = defaultPolicy();
  // DRA's first two devices on this node are GPUs 0 and 2, NVLink-bridged; gpu-2 warned.
  std::string json = testing::draFixtureText("a100-nvlink-first-slice.json");
  const std::string gpu2 = R"("name": "gpu-2",)";
  const auto at = json.find(gpu2);
  REQUIRE(at != std::string::npos);
  json.insert(at + gpu2.size(),
              R"("taints": [{"key": "example.com/nvlink-replays", "effect": "None"}],)");
  testing::DraCluster warned;
  warned.addSliceJson(json);
  testing::DraCluster clean;
  clean.addSlice("a100-nvlink-first-slice.json");
  const auto node = draNode(testing::makeA100PcieBridged, "a100-nvlink-first");
  const auto degraded = warned.nodeState(node, policy);
  const auto healthy = clean.nodeState(node, policy);
  REQUIRE(degraded->dra);
  CHECK(degraded->dra->degradedGpus == mask({2}));
  CHECK(degraded->avoided.holds(mask({0, 2})));
  // Not blocked: the allocator still hands gpu-2 out, first.
  CHECK(degraded->freeMask == healthy->freeMask);
  auto demand = parsePodDemand(testing::makeGpuPod("train", 2), policy, warned.objects.get());
  REQUIRE(demand.ok());
  const Decided onDegraded = decide(*demand, *degraded, policy);
  CHECK(onDegraded.fit.fits());
  CHECK(onDegraded.terms.linkQuality < 1200);  // the bridge scored as its PCIe path
  auto single = parsePodDemand(testing::makeGpuPod("one", 1), policy, warned.objects.get());
  REQUIRE(single.ok());
  CHECK(decide(*single, *degraded, policy).terms.linkQuality == 1200);
}

TEST_CASE("claims of N GPUs decide from the precomputed picks exactly as the first-fit does",
          "[core][dra]") {
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSlice("hgx-h100-slice.json");
  cluster.addSlice("a100-nvlink-first-slice.json");
  cluster.addSlice("a100-pcie-first-slice.json");
  cluster.addSliceJson(taintedL40sSlice());
  cluster.allocated.addExclusive("gpu.nvidia.com", "l40s", "gpu-3");
  cluster.allocated.addExclusive("gpu.nvidia.com", "hgx-h100-a", "gpu-6");
  cluster.allocated.addExclusive("gpu.nvidia.com", "hgx-h100-a", "gpu-0");
  std::vector<NodeStateConstSharedPtr> states = {
      cluster.nodeState(draNode(testing::makeDgxH100, "hgx-h100-a"), policy),
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-nvlink-first"), policy),
      cluster.nodeState(draNode(testing::makeA100PcieBridged, "a100-pcie-first"), policy),
      cluster.nodeState(draNode(testing::make4xPcieL40s, "l40s"), policy),
      // No slice serves it: a device-plugin node, where no claim reads as GPUs.
      cluster.nodeState(testing::makeDgxH100(testing::FixtureState().withName("plugin")), policy)};
  for (int k = 1; k <= 9; ++k) {
    cluster.objects->add(testing::draGpuClaim("claim-" + std::to_string(k), k));
  }
  for (int k = 1; k <= 9; ++k) {
    for (const auto& annotations : std::vector<std::vector<std::pair<std::string, std::string>>>{
             {}, {{"gputopo.dev/min-link", "nvlink"}}, {{"gputopo.dev/numa", "single"}}}) {
      PodInfo pod = testing::makeClaimPod("p", "ml", {{"gpus", "claim-" + std::to_string(k)}});
      for (const auto& [key, value] : annotations)
        pod.annotations[key] = value;
      const auto demand = parsePodDemand(pod, policy, cluster.objects.get());
      REQUIRE(demand.ok());
      REQUIRE(demand->dra->plainGpus == k);
      for (const auto& state : states) {
        INFO("k " << k << " node " << state->name << " annotations " << annotations.size());
        const Decided shortcut = decide(*demand, *state, policy);
        DraDecider replica(*demand->dra);
        CHECK(shortcut.fit.verdict == replica.fit(*demand, *state, policy).verdict);
        const ScoreTerms terms = replica.terms(*demand, *state);
        CHECK(shortcut.terms.linkQuality == terms.linkQuality);
        CHECK(shortcut.terms.numaLocality == terms.numaLocality);
        CHECK(shortcut.terms.packing == terms.packing);
        // A snapshot's candidate carries the node's precomputed answers: whether the claims read
        // as GPUs there comes from them (one line per node), with the same decision.
        const PlainAnswers answers = precomputePlainAnswers(*state, policy);
        const Decided fromAnswers = decide(*demand, *state, policy, &answers);
        CHECK(fromAnswers.fit.verdict == shortcut.fit.verdict);
        CHECK(fromAnswers.fit.reason == shortcut.fit.reason);
        CHECK(fromAnswers.terms.linkQuality == shortcut.terms.linkQuality);
        CHECK(fromAnswers.terms.numaLocality == shortcut.terms.numaLocality);
        CHECK(fromAnswers.terms.packing == shortcut.terms.packing);
      }
    }
  }
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

TEST_CASE("a shared DRA device: its GPU is held, further shares fit while its capacity lasts",
          "[core][dra][capacity]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node = draNode(testing::makeDgxH100, "hgx-h100-a");
  testing::DraCluster cluster;
  cluster.addSliceJson(testing::draSharedH100SliceJson());
  cluster.addClaim(testing::draMemoryClaim("held", "50000Mi", "infer-0"));
  cluster.addClaim(testing::draMemoryClaim("small", "30000Mi"));
  cluster.addClaim(testing::draMemoryClaim("large", "40000Mi"));
  const auto state = cluster.nodeState(node, policy);
  REQUIRE(state->dra);
  // GPU 5 has a tenant: not a free whole GPU, and nvidia.com/gpu (the whole capacity) skips it.
  CHECK(state->freeCount == 7);
  CHECK(state->devicePluginPicks[1].gpus == mask({2}));
  CHECK_FALSE(state->dra->plainUninterpretable);
  // With a default of 10Gi, two nvidia.com/gpu requests could share GPU 5: the precomputed order
  // cannot say how many GPUs N requests take, so such pods get no verdict here.
  std::string withDefault = testing::draSharedH100SliceJson();
  const std::string value = "\"value\": \"81559Mi\"";
  withDefault.insert(withDefault.find(value) + value.size(),
                     ", \"requestPolicy\": {\"default\": \"10Gi\"}");
  testing::DraCluster defaulted;
  defaulted.addSliceJson(withDefault);
  CHECK(defaulted.nodeState(node, policy)->dra->plainUninterpretable);

  const auto placed = [&](const std::string& claim, const NodeState& on) {
    auto demand = parsePodDemand(testing::makeClaimPod("p", "ml", {{"gpu", claim}}), policy,
                                 cluster.objects.get());
    REQUIRE(demand.ok());
    REQUIRE(demand->dra);
    DraDecider decider(*demand->dra);
    return decider.place(on);
  };
  // 50000Mi + 30000Mi fit in 81559Mi: the pod shares GPU 5.
  const DraPlacement small = placed("small", *state);
  REQUIRE(small.outcome == DraOutcome::kPlaced);
  CHECK(small.pick.gpus == mask({5}));
  REQUIRE(small.result.devices.size() == 1);
  CHECK(small.result.devices[0].share == 0);
  // 40000Mi more would not: the next device, GPU 2, is taken whole.
  const DraPlacement large = placed("large", *state);
  REQUIRE(large.outcome == DraOutcome::kPlaced);
  CHECK(large.pick.gpus == mask({2}));
  CHECK(large.result.devices[0].share == -1);

  // Preempting the share's pod frees GPU 5 whole again.
  const auto without = nodeStateWithout(*state, {"uid-infer-0"}, policy);
  CHECK(without->freeCount == 8);
  CHECK(placed("large", *without).pick.gpus == mask({5}));

  // Two tenants: preempting one gives back its share only; GPU 5 stays held by the other.
  testing::DraCluster two;
  two.addSliceJson(testing::draSharedH100SliceJson());
  two.addClaim(testing::draMemoryClaim("a", "30000Mi", "pod-a"));
  two.addClaim(testing::draMemoryClaim("b", "40000Mi", "pod-b"));
  two.addClaim(testing::draMemoryClaim("large", "40000Mi"));
  const auto shared = two.nodeState(node, policy);
  const auto largeOn = [&](const NodeState& on) {
    auto demand = parsePodDemand(testing::makeClaimPod("p", "ml", {{"gpu", "large"}}), policy,
                                 two.objects.get());
    REQUIRE(demand.ok());
    DraDecider decider(*demand->dra);
    return decider.place(on).pick.gpus;
  };
  CHECK(largeOn(*shared) == mask({2}));  // 70000Mi held: 40000Mi more does not fit
  const auto withoutA = nodeStateWithout(*shared, {"uid-pod-a"}, policy);
  CHECK(withoutA->freeCount == 7);
  CHECK(largeOn(*withoutA) == mask({5}));  // 40000Mi + 40000Mi fit in 81559Mi
  CHECK(nodeStateWithout(*shared, {"uid-pod-a", "uid-pod-b"}, policy)->freeCount == 8);
}

}  // namespace
}  // namespace gte
