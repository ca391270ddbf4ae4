// Shared GPUs (core/gpu_sharing.h, docs/sharing.md): how a node's sharing is read from GPU Feature
// Discovery's labels or, without them, from its allocatable; and the fit rule it feeds: a pod
// asking for exclusive GPUs is refused on a shared node, by checkFit and by the per-node decision
// on the precomputed answers alike, with a reason naming the strategy and replicas.
#include <catch2/catch_test_macros.hpp>
#include <string>

#include "core/fit.h"
#include "core/gpu_sharing.h"
#include "core/node_decider.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"
#include "core/predict_allocation.h"
#include "core/score_node.h"
#include "model/gpu_request.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

NodeInfo withLabels(NodeInfo node, const std::string& strategy, const std::string& replicas) {
  if (!strategy.empty()) node.labels[std::string(kSharingStrategyLabel)] = strategy;
  if (!replicas.empty()) node.labels[std::string(kSharingReplicasLabel)] = replicas;
  return node;
}

NodeInfo withAllocatable(NodeInfo node, std::int64_t gpus) {
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(gpus));
  return node;
}

// A DGX H100 time-sliced 4 ways, and the same board with whole GPUs.
NodeStateConstSharedPtr slicedH100(const Policy& policy) {
  return buildNodeState(
      withLabels(testing::makeDgxH100(FixtureState().withName("sliced")), "time-slicing", "4"), {},
      policy);
}
NodeStateConstSharedPtr wholeH100(const Policy& policy) {
  return buildNodeState(testing::makeDgxH100(FixtureState().withName("whole")), {}, policy);
}

GpuSharing sharingOf(const NodeInfo& node) {
  return buildNodeState(node, {}, defaultPolicy())->sharing;
}

TEST_CASE("a node's sharing is read from GFD's labels, else from its allocatable", "[core]") {
  const NodeInfo h100 = testing::makeDgxH100(FixtureState().withName("h100"));
  SECTION("no sharing labels, one nvidia.com/gpu per GPU: not shared") {
    CHECK_FALSE(sharingOf(withAllocatable(h100, 8)).shared());
    CHECK_FALSE(sharingOf(h100).shared());
  }
  SECTION("GFD's labels name the strategy and replicas") {
    const GpuSharing sliced = sharingOf(withLabels(h100, "time-slicing", "4"));
    CHECK(sliced.strategy == SharingStrategy::kTimeSlicing);
    CHECK(sliced.replicas == 4);
    CHECK(sharingOf(withLabels(h100, "mps", "2")).strategy == SharingStrategy::kMps);
    // What GFD writes for a resource nobody replicates (1) or with sharing off (0).
    CHECK_FALSE(sharingOf(withLabels(h100, "none", "1")).shared());
    CHECK_FALSE(sharingOf(withLabels(h100, "none", "0")).shared());
  }
  SECTION("releases before the strategy label wrote the replicas alone") {
    const GpuSharing old = sharingOf(withLabels(h100, "", "4"));
    CHECK(old.strategy == SharingStrategy::kUnknown);
    CHECK(old.replicas == 4);
    CHECK_FALSE(sharingOf(withLabels(h100, "", "1")).shared());
  }
  SECTION("labels that do not read are shared, never exclusive") {
    for (const auto& [strategy, replicas] :
         {std::pair<std::string, std::string>{"round-robin", "4"},
          {"time-slicing", "four"},
          {"time-slicing", "-1"},
          {"none", "4"},
          {"mps", "99999999"}}) {
      const GpuSharing read = sharingOf(withLabels(h100, strategy, replicas));
      CHECK(read.shared());
      CHECK(read.strategy == SharingStrategy::kUnknown);
      CHECK_FALSE(read.unreadable.empty());
    }
  }
  SECTION("without GFD, more nvidia.com/gpu than GPUs is replication") {
    const GpuSharing replicated = sharingOf(withAllocatable(h100, 32));
    CHECK(replicated.strategy == SharingStrategy::kUnknown);
    CHECK(replicated.replicas == 4);
    CHECK(sharingOf(withAllocatable(h100, 30)).replicas == 0);  // not a whole multiple
  }
  SECTION("MIG-mode GPUs without GFD labels: nvidia.com/gpu may count MIG devices") {
    const NodeInfo a100 = testing::makeDgxA100(FixtureState().withName("a100").withMig("11000000"));
    CHECK_FALSE(sharingOf(withAllocatable(a100, 20)).shared());
  }
}

TEST_CASE("a pod asking for exclusive GPUs is refused on a shared node", "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr shared = slicedH100(policy);
  const NodeStateConstSharedPtr whole = wholeH100(policy);
  const PlainAnswers sharedAnswers = precomputePlainAnswers(*shared, policy);

  const Result<PodDemand> exclusive =
      parsePodDemand(testing::makeGpuPod("p", 2, {{"gputopo.dev/isolation", "exclusive"}}), policy);
  const Result<PodDemand> any = parsePodDemand(testing::makeGpuPod("p", 2), policy);
  REQUIRE(exclusive);
  REQUIRE(any);
  CHECK(exclusive->isolation == Isolation::kExclusive);
  CHECK(any->isolation == Isolation::kShared);  // the policy's default

  const FitOutcome refused = checkFit(*exclusive, *shared, policy);
  CHECK(refused.verdict == Verdict::kUnresolvable);
  CHECK(refused.reason == FitReason::kGpusShared);
  CHECK(fitReasonText(refused, *exclusive) ==
        "GPUs shared by time-slicing, 4 replicas per GPU; the pod asks for exclusive GPUs");
  CHECK(scoreTerms(*exclusive, *shared).packing == -1);
  CHECK(checkFit(*exclusive, *whole, policy).fits());
  CHECK(checkFit(*any, *shared, policy).fits());

  // The decision on the node's precomputed answers (which are every isolation's) agrees.
  const NodeCandidate candidate{"sliced", shared.get(), {}, &sharedAnswers};
  const NodeDecision decided = NodeDecider(*exclusive, policy).decide(candidate);
  CHECK(decided.fit.reason == FitReason::kGpusShared);
  CHECK(decided.fit.replicas == 4);
  CHECK(decided.score == 0);
  CHECK(NodeDecider(*any, policy).decide(candidate).fit.fits());

  // The policy's default applies to pods without the annotation; the annotation wins.
  Policy strict = defaultPolicy();
  strict.sharing.defaultIsolation = Isolation::kExclusive;
  CHECK(parsePodDemand(testing::makeGpuPod("p", 2), strict)->isolation == Isolation::kExclusive);
  CHECK(parsePodDemand(testing::makeGpuPod("p", 2, {{"gputopo.dev/isolation", "shared"}}), strict)
            ->isolation == Isolation::kShared);
  const Result<PodDemand> bad =
      parsePodDemand(testing::makeGpuPod("p", 2, {{"gputopo.dev/isolation", "private"}}), policy);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "annotation gputopo.dev/isolation: want exclusive or shared; got 'private'");
}

TEST_CASE("on shared GPUs no set is promised: min-link and NUMA pods refused, links unscored",
          "[core]") {
  const Policy policy = defaultPolicy();
  // An NVSwitch board: every pair of its GPUs is NVLink, were they whole.
  const NodeStateConstSharedPtr shared = slicedH100(policy);
  const NodeStateConstSharedPtr whole = wholeH100(policy);

  const Result<PodDemand> nvlink =
      parsePodDemand(testing::makeGpuPod("p", 4, {{"gputopo.dev/min-link", "nvlink"}}), policy);
  const Result<PodDemand> numa =
      parsePodDemand(testing::makeGpuPod("p", 1, {{"gputopo.dev/numa", "single"}}), policy);
  const Result<PodDemand> four = parsePodDemand(testing::makeGpuPod("p", 4), policy);
  const Result<PodDemand> one =
      parsePodDemand(testing::makeGpuPod("p", 1, {{"gputopo.dev/min-link", "nvlink"}}), policy);
  REQUIRE((nvlink && numa && four && one));

  const FitOutcome refused = checkFit(*nvlink, *shared, policy);
  CHECK(refused.verdict == Verdict::kUnresolvable);
  CHECK(refused.reason == FitReason::kGpusSharedSetUnknown);
  CHECK(fitReasonText(refused, *nvlink) ==
        "GPUs shared by time-slicing, 4 replicas per GPU: the device plugin places replicas "
        "without regard to links or NUMA; the pod requires min-link");
  CHECK(fitReasonText(checkFit(*numa, *shared, policy), *numa).ends_with("a single NUMA node"));
  CHECK(checkFit(*nvlink, *whole, policy).fits());
  CHECK(checkFit(*one, *shared, policy).fits());  // a link class between one GPU: none asked

  // A 4-GPU pod that accepts shared GPUs still fits, but its link class is not promised: the
  // whole NVLink board ranks first, and placement regret sees no known set there.
  CHECK(checkFit(*four, *shared, policy).fits());
  const ScoreTerms onShared = scoreTerms(*four, *shared);
  const ScoreTerms onWhole = scoreTerms(*four, *whole);
  CHECK(onShared.linkQuality == 0);
  CHECK(onWhole.linkQuality == 1200);  // NVLink, the best tier
  CHECK(weightedScore(onWhole, policy) > weightedScore(onShared, policy));
  CHECK_FALSE(setQualityOf(*four, *shared).known());
  // The precomputed answers say the same.
  const PlainAnswers answers = precomputePlainAnswers(*shared, policy);
  CHECK(answers.forGpus(4).linkQuality == 0);
  CHECK_FALSE(answers.forGpus(4).set().known());
}

TEST_CASE("shared pods go where their replicas join the fewest tenants, or pack by policy",
          "[core]") {
  Policy policy = defaultPolicy();
  const auto sliced = [&](const std::string& name, const std::string& tenants) {
    NodeInfo node =
        withLabels(testing::makeDgxH100(FixtureState().withName(name)), "time-slicing", "4");
    node.labels.insert_or_assign("gputopo.dev/tenants", tenants);
    return buildNodeState(node, {}, policy);
  };
  // Every GPU holds 2 tenants on the busy node; the quiet one has two GPUs without any.
  const NodeStateConstSharedPtr busy = sliced("busy", "22222222");
  const NodeStateConstSharedPtr quiet = sliced("quiet", "33332200");
  Result<PodDemand> one = parsePodDemand(testing::makeGpuPod("p", 1), policy);
  REQUIRE(one);
  CHECK(one->sharedPlacement == SharedPlacement::kSpread);
  // spread: 1 replica joins 0 tenants on quiet (term 1200), 2 of 3 possible on busy (400).
  CHECK(scoreTerms(*one, *quiet).packing == 1200);
  CHECK(scoreTerms(*one, *busy).packing == 400);
  // Three replicas on quiet, one by one from the least-used GPU (the device plugin's
  // distributed allocation): 0, 0, then 1 on a GPU it just used. 1 of 3 x 3 possible.
  Result<PodDemand> three = parsePodDemand(testing::makeGpuPod("p", 3), policy);
  REQUIRE(three);
  CHECK(scoreTerms(*three, *quiet).packing == 1200 - 1200 * 1 / 9);
  // pack: the fuller, the higher; the precomputed answers follow the policy.
  policy.sharing.placement = SharedPlacement::kPack;
  one = parsePodDemand(testing::makeGpuPod("p", 1), policy);
  REQUIRE(one);
  CHECK(scoreTerms(*one, *busy).packing > scoreTerms(*one, *quiet).packing);
  const NodeStateConstSharedPtr packedBusy = sliced("busy", "22222222");
  CHECK(precomputePlainAnswers(*packedBusy, policy).forGpus(1).packingBinpack ==
        scoreTerms(*one, *packedBusy).packing);
}

TEST_CASE("replicas-on: distinct only where ties cannot double up, same only on one GPU",
          "[core]") {
  const Policy policy = defaultPolicy();
  const auto sliced = [&](const NodeInfo& machine, const std::string& tenants) {
    NodeInfo node = withLabels(machine, "time-slicing", "4");
    node.labels.insert_or_assign("gputopo.dev/tenants", tenants);
    return buildNodeState(node, {}, policy);
  };
  const auto demand = [&](int k, const char* on) {
    auto parsed =
        parsePodDemand(testing::makeGpuPod("p", k, {{"gputopo.dev/replicas-on", on}}), policy);
    REQUIRE(parsed);
    return *parsed;
  };
  const NodeInfo h100 = testing::makeDgxH100(FixtureState().withName("h100"));
  // Two GPUs without tenants: two replicas land on them. A third has a tie to break: the two just
  // used and GPUs 2..7 all hold one tenant then, so it may join a GPU the pod already has.
  const NodeStateConstSharedPtr twoQuiet = sliced(h100, "00111111");
  CHECK(checkFit(demand(2, "distinct"), *twoQuiet, policy).fits());
  const FitOutcome three = checkFit(demand(3, "distinct"), *twoQuiet, policy);
  CHECK(three.reason == FitReason::kReplicasNotDistinct);
  CHECK(three.verdict == Verdict::kUnschedulable);  // emptied, 8 NVLink-connected GPUs
  CHECK(fitReasonText(three, demand(3, "distinct")) ==
        "GPUs shared by time-slicing, 4 replicas per GPU: the device plugin may put two of the "
        "pod's 3 replicas on one GPU, or on GPUs without NVLink between them; the pod asks for "
        "distinct NVLink-connected GPUs");
  // On a DGX-1V the quiet GPUs 0 and 5 are not NVLink-connected.
  const NodeStateConstSharedPtr mesh =
      sliced(testing::makeDgx1Volta(FixtureState().withName("v100")), "01111011");
  CHECK(checkFit(demand(2, "distinct"), *mesh, policy).reason == FitReason::kReplicasNotDistinct);
  // same: only where one GPU alone has free replicas, enough of them.
  CHECK(checkFit(demand(2, "same"), *twoQuiet, policy).reason == FitReason::kReplicasNotSame);
  CHECK(checkFit(demand(2, "same"),
                 *sliced(h100,
                         "4444444"
                         "2"),
                 policy)
            .fits());
  CHECK(checkFit(demand(3, "same"),
                 *sliced(h100,
                         "4444444"
                         "2"),
                 policy)
            .reason == FitReason::kReplicasNotSame);
  CHECK(checkFit(demand(1, "same"), *twoQuiet, policy).fits());
  // Whole GPUs: distinct always holds, same never for more than one.
  const NodeStateConstSharedPtr whole = buildNodeState(h100, {}, policy);
  CHECK(checkFit(demand(4, "distinct"), *whole, policy).fits());
  const FitOutcome same = checkFit(demand(2, "same"), *whole, policy);
  CHECK(same.verdict == Verdict::kUnresolvable);
  CHECK(fitReasonText(same, demand(2, "same")) ==
        "whole GPUs: the pod's 2 replicas would not all land on one GPU; the pod asks for one GPU");
  // A refused node offers no score; a bad value is the pod's own error.
  CHECK(scoreTerms(demand(3, "distinct"), *twoQuiet).packing == -1);
  const Result<PodDemand> bad =
      parsePodDemand(testing::makeGpuPod("p", 2, {{"gputopo.dev/replicas-on", "near"}}), policy);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "annotation gputopo.dev/replicas-on: want distinct or same; got 'near'");
}

NodeInfo withAgentSharing(NodeInfo node, const std::string& value) {
  node.labels["gputopo.dev/" + std::string(kAgentSharingKey)] = value;
  return node;
}

TEST_CASE("the agent's sharing label: strategy, replicas and failRequestsGreaterThanOne",
          "[core]") {
  SECTION("its grammar, read and written back") {
    for (const char* value : {"none", "time-slicing.4", "time-slicing.4.f", "mps.2.f", "mps.16"}) {
      const auto read = parseAgentSharing(value);
      REQUIRE(read);
      CHECK(formatAgentSharing(*read) == value);
    }
    const auto strict = parseAgentSharing("time-slicing.8.f");
    REQUIRE(strict);
    CHECK(strict->strategy == SharingStrategy::kTimeSlicing);
    CHECK(strict->replicas == 8);
    CHECK(strict->failRequestsGreaterThanOne == true);
    CHECK(strict->oneReplicaPerContainer());
    CHECK_FALSE(parseAgentSharing("time-slicing.8")->oneReplicaPerContainer());
    CHECK(parseAgentSharing("mps.2")->oneReplicaPerContainer());  // MPS: always
    for (const char* bad : {"", "time-slicing", "time-slicing.", "time-slicing.1",
                            "time-slicing.04", "time-slicing.4.g", "time-slicing.4.f.f", "mps.-2",
                            "none.4", "unknown.4", "mps.99999", "time-slicing.4f", ".4"}) {
      INFO(bad);
      CHECK_FALSE(parseAgentSharing(bad));
    }
  }
  const NodeInfo h100 = testing::makeDgxH100(FixtureState().withName("h100"));
  SECTION("without GFD's labels the agent's reading stands") {
    const GpuSharing read = sharingOf(withAgentSharing(h100, "time-slicing.4.f"));
    CHECK(read.strategy == SharingStrategy::kTimeSlicing);
    CHECK(read.replicas == 4);
    CHECK(read.failRequestsGreaterThanOne == true);
  }
  SECTION("beside GFD's labels it adds the flag where the strategies agree") {
    const GpuSharing agree =
        sharingOf(withAgentSharing(withLabels(h100, "time-slicing", "4"), "time-slicing.4.f"));
    CHECK(agree.failRequestsGreaterThanOne == true);
    CHECK(agree.replicas == 4);
    // GFD reads the configuration the plugin runs with: a stale reading by the agent adds nothing.
    const GpuSharing disagree =
        sharingOf(withAgentSharing(withLabels(h100, "mps", "2"), "time-slicing.4.f"));
    CHECK(disagree.strategy == SharingStrategy::kMps);
    CHECK(disagree.replicas == 2);
    CHECK_FALSE(disagree.failRequestsGreaterThanOne.has_value());
  }
  SECTION("`none` from the agent does not hide replicated allocatable; a bad value reads shared") {
    CHECK_FALSE(sharingOf(withAgentSharing(withAllocatable(h100, 8), "none")).shared());
    const GpuSharing replicated = sharingOf(withAgentSharing(withAllocatable(h100, 32), "none"));
    CHECK(replicated.strategy == SharingStrategy::kUnknown);
    CHECK(replicated.replicas == 4);
    const GpuSharing bad = sharingOf(withAgentSharing(h100, "time-slicing.x"));
    CHECK(bad.strategy == SharingStrategy::kUnknown);
    CHECK(bad.unreadable == "gputopo.dev/sharing=time-slicing.x");
  }
}

TEST_CASE("one replica per container under MPS or failRequestsGreaterThanOne", "[core]") {
  // The device plugin's Allocate fails a container of more than one replica under MPS, and under
  // time-slicing with failRequestsGreaterThanOne (the pod would fail admission on the node): the
  // extender keeps such pods off, precomputed answers included. It judges each container: a pod of
  // two one-replica containers is admitted.
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr mps = buildNodeState(
      withLabels(testing::makeDgxH100(FixtureState().withName("mps")), "mps", "2"), {}, policy);
  const NodeStateConstSharedPtr strict = buildNodeState(
      withAgentSharing(testing::makeDgxH100(FixtureState().withName("strict")), "time-slicing.4.f"),
      {}, policy);
  const NodeStateConstSharedPtr lenient = buildNodeState(
      withAgentSharing(testing::makeDgxH100(FixtureState().withName("ts")), "time-slicing.4"), {},
      policy);
  PodInfo twoContainers = testing::makeGpuPod("p", 2);
  twoContainers.largestContainerGpus = 1;
  const Result<PodDemand> two = parsePodDemand(testing::makeGpuPod("p", 2), policy);
  const Result<PodDemand> one = parsePodDemand(testing::makeGpuPod("p", 1), policy);
  const Result<PodDemand> split = parsePodDemand(twoContainers, policy);
  REQUIRE((two && one && split));
  CHECK(PlainAnswers::gpusOf(*split) == 0);  // decided on the node state, not the answers

  const FitOutcome refused = checkFit(*two, *mps, policy);
  CHECK(refused.verdict == Verdict::kUnresolvable);
  CHECK(fitReasonText(refused, *two) ==
        "GPUs shared by mps, 2 replicas per GPU: the device plugin admits one replica per "
        "container under MPS; a container of the pod asks for 2");
  const FitOutcome refusedStrict = checkFit(*two, *strict, policy);
  CHECK(refusedStrict.verdict == Verdict::kUnresolvable);
  CHECK(fitReasonText(refusedStrict, *two) ==
        "GPUs shared by time-slicing, 4 replicas per GPU: the device plugin admits one replica per "
        "container (failRequestsGreaterThanOne); a container of the pod asks for 2");
  CHECK(checkFit(*two, *lenient, policy).fits());
  for (const NodeStateConstSharedPtr& node : {mps, strict, lenient}) {
    INFO(node->name);
    CHECK(checkFit(*one, *node, policy).fits());
    CHECK(checkFit(*split, *node, policy).fits());
    const NodeCandidate candidate{node->name, node.get(), {}, nullptr};
    CHECK(NodeDecider(*split, policy).decide(candidate, DecisionPart::kVerdict).fit.fits());
    const PlainAnswers answers = precomputePlainAnswers(*node, policy);
    CHECK(answers.forGpus(2).reason == checkFit(*two, *node, policy).reason);
    CHECK(answers.forGpus(1).fit().fits());
  }
}

TEST_CASE("shared MIG profiles are read from GFD's per-resource labels", "[core]") {
  const Policy policy = defaultPolicy();
  const auto sharedOf = [&](const NodeInfo& node) {
    const auto shared = buildNodeState(node, {}, policy)->sharedMig;
    return shared ? *shared : std::vector<SharedMigProfile>{};
  };
  const auto sliced = sharedOf(testing::slicedMigA100("time-slicing", "2"));
  REQUIRE(sliced.size() == 1);  // 3g.40gb: `none`, not shared
  CHECK(sliced[0].profile == "1g.10gb");
  CHECK(sliced[0].sharing.strategy == SharingStrategy::kTimeSlicing);
  CHECK(sliced[0].sharing.replicas == 2);
  CHECK(sharedOf(testing::slicedMigA100("", "")).empty());
  CHECK(sharedOf(testing::slicedMigA100("", "3"))[0].sharing.strategy == SharingStrategy::kUnknown);
  const auto odd = sharedOf(testing::slicedMigA100("round-robin", "2"));
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].sharing.strategy == SharingStrategy::kUnknown);
  CHECK(odd[0].sharing.unreadable == "nvidia.com/mig-1g.10gb.sharing-strategy=round-robin");
}

TEST_CASE("a pod asking for exclusive GPUs is refused a shared MIG profile", "[core]") {
  // Time-sliced MIG devices share their memory and faults among tenants: an exclusive pod must not
  // get one. Other profiles on the node, and pods that accept shared GPUs, are unaffected.
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr node =
      buildNodeState(testing::slicedMigA100("time-slicing", "2"), {}, policy);
  const auto demandOf = [&](const PodInfo& pod) {
    auto demand = parsePodDemand(pod, policy);
    REQUIRE(demand);
    return *demand;
  };
  const auto exclusiveMig = [](const std::string& profile) {
    PodInfo pod = testing::makeMigPod("m", {{profile, 1}});
    pod.annotations["gputopo.dev/isolation"] = "exclusive";
    return pod;
  };
  const PodDemand exclusive = demandOf(exclusiveMig("1g.10gb"));
  const FitOutcome refused = checkFit(exclusive, *node, policy);
  CHECK(refused.verdict == Verdict::kUnresolvable);
  CHECK(fitReasonText(refused, exclusive) ==
        "MIG 1g.10gb devices shared by time-slicing, 2 replicas each; the pod asks for exclusive "
        "GPUs");
  const NodeCandidate candidate{node->name, node.get(), {}, nullptr};
  CHECK(NodeDecider(exclusive, policy).decide(candidate, DecisionPart::kVerdict).fit.reason ==
        FitReason::kMigShared);
  CHECK(scoreTerms(exclusive, *node).linkQuality < 0);  // no score where it cannot go

  const PodDemand exclusiveWhole = demandOf(exclusiveMig("3g.40gb"));
  CHECK(checkFit(exclusiveWhole, *node, policy).reason != FitReason::kMigShared);
  const PodDemand shared = demandOf(testing::makeMigPod("m", {{"1g.10gb", 1}}));
  CHECK(checkFit(shared, *node, policy).fits());
  CHECK(NodeDecider(shared, policy).decide(candidate, DecisionPart::kVerdict).fit.fits());
}

TEST_CASE("a shared MIG profile offers each device's free replicas, one per pod replica",
          "[core][mig]") {
  // 1g.10gb devices time-sliced 4 ways. GPU0: 1g at slice 2 free (4 replicas), at 3 used (all
  // held). GPU1: 1g at slice 0 with 3 of 4 held (1 free), at 1 free (4), at 2 all held.
  const Policy policy = defaultPolicy();
  NodeInfo node = testing::slicedMigA100("time-slicing", "4", "00301f02u");
  const auto replicasPod = [&](std::int64_t k) {
    auto demand = parsePodDemand(testing::makeMigPod("m", {{"1g.10gb", k}}), policy);
    REQUIRE(demand);
    return *demand;
  };
  const NodeStateConstSharedPtr state = buildNodeState(node, {}, policy);
  // 4 + 1 + 4 replicas free: a pod asking 9 fits, 10 does not.
  CHECK(checkFit(replicasPod(9), *state, policy).fits());
  CHECK_FALSE(checkFit(replicasPod(10), *state, policy).fits());
  // A replica goes to the device with the most free (the device plugin spreads them): GPU0's.
  const MigProfileFit* fit = state->migFit("1g.10gb");
  REQUIRE(fit != nullptr);
  CHECK(fit->gpu == 0);
  CHECK(fit->start == 2);
  // Slices in use: 2g@0 and 1g@3 on GPU0, the tenanted 1g@0 and 1g@2 on GPU1.
  CHECK(state->migSlicesInUse == 5);
  // Four pods' replicas on GPU0's device: it is full, the next goes to GPU1's 1g@1, and 5 are
  // left. Its slices count once.
  NodeUsage usage;
  for (int pod = 0; pod < 4; ++pod)
    usage.mig.push_back(MigInstanceRef{0, "1g.10gb", 2});
  const NodeStateConstSharedPtr taken = buildNodeState(node, usage, policy);
  CHECK(taken->migFit("1g.10gb")->gpu == 1);
  CHECK(taken->migFit("1g.10gb")->start == 1);
  CHECK(checkFit(replicasPod(5), *taken, policy).fits());
  CHECK_FALSE(checkFit(replicasPod(6), *taken, policy).fits());
  CHECK(taken->migSlicesInUse == 6);
  // A pod of GPU1's all-held device leaves (preempt's what-if): one replica there is free again.
  NodeUsage released;
  released.mig.push_back(MigInstanceRef{1, "1g.10gb", 2});
  const NodeStateConstSharedPtr freed = rebuildNodeState(*taken, usage, policy, released, nullptr);
  CHECK(checkFit(replicasPod(6), *freed, policy).fits());
  CHECK_FALSE(checkFit(replicasPod(7), *freed, policy).fits());
  // Without GFD's replicas count each untouched device offers one, the tenanted one none.
  node.labels.erase("nvidia.com/mig-1g.10gb.replicas");
  const NodeStateConstSharedPtr unknown = buildNodeState(node, {}, policy);
  CHECK(checkFit(replicasPod(2), *unknown, policy).fits());
  CHECK_FALSE(checkFit(replicasPod(3), *unknown, policy).fits());
}

TEST_CASE("an unreadable sharing label refuses exclusive pods with what was read", "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr state = buildNodeState(
      withLabels(testing::makeDgxH100(FixtureState().withName("odd")), "round-robin", "4"), {},
      policy);
  const Result<PodDemand> exclusive =
      parsePodDemand(testing::makeGpuPod("p", 1, {{"gputopo.dev/isolation", "exclusive"}}), policy);
  REQUIRE(exclusive);
  const FitOutcome refused = checkFit(*exclusive, *state, policy);
  CHECK(refused.reason == FitReason::kGpusShared);
  CHECK(fitReasonText(refused, *exclusive) ==
        "GPUs shared (sharing unreadable or unnamed); the pod asks for exclusive GPUs");
}

}  // namespace
}  // namespace gte
