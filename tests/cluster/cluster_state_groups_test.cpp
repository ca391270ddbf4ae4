// Pod groups in the cluster cache: a committed plan holds its slots' GPUs (other pods see them
// taken, its members bind into them), the holds end when members bind, are deleted or the TTL
// passes, a stale plan is refused, members already bound anchor the next plan, a pod bound onto
// held GPUs moves the hold, and under random churn no GPU is ever charged twice and every hold
// ends.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster_test_support.h"
#include "group/group_plan.h"
#include "group/pod_group.h"
#include "group_plan_support.h"
#include "snapshot/cluster_snapshot.h"
#include "support/cluster_events_fixture.h"

using gte::Allocation;
using gte::CommittedGroupPlan;
using gte::ErrorCode;
using gte::GpuMask;
using gte::GroupPlanInput;
using gte::GroupPlanNode;
using gte::GroupPlanStatus;
using gte::NodeGroupFacts;
using gte::PodDemand;
using gte::PodInfo;
using gte::cluster::ClusterState;
using gte::cluster::ClusterStateOptions;
using gte::cluster::HoldRelease;
using gte::cluster::ObservedPod;
using namespace gte::testing;

namespace {

// Cluster-state options on `clock` that count the holds released, by reason, into `released`.
ClusterStateOptions countingReleases(ManualClock& clock,
                                     std::map<HoldRelease, std::size_t>& released) {
  ClusterStateOptions options = clockedOptions(clock);
  auto events = gte::testing::functionEvents();
  events->onHoldsReleased = [&released](HoldRelease reason, std::size_t n) {
    released[reason] += n;
  };
  options.events = events;
  return options;
}

constexpr const char* kKey = "ml/annotation/llm";

PodInfo member(const std::string& uid, std::int64_t gpus, const std::string& node = "") {
  PodInfo pod = gpuPod(uid, gpus, node);
  pod.annotations.emplace("gputopo.dev/group", "llm");
  pod.annotations.emplace("gputopo.dev/group-size", "4");
  return pod;
}

CommittedGroupPlan planNow(const ClusterState& state, int members,
                           const std::vector<std::string>& anchors = {}) {
  return planFourGpuGroup(state, members, kKey, anchors);
}

gte::NodeInfo inClique(gte::NodeInfo node, const std::string& clique) {
  node.labels["nvidia.com/gpu.clique"] = clique;
  return node;
}

GpuMask maskOf(const Allocation& allocation) {
  GpuMask mask = 0;
  for (const int gpu : allocation.gpus)
    mask |= GpuMask{1} << gpu;
  return mask;
}

// No GPU of any node is charged twice in the published snapshot (holds and pods alike), and the
// held slots of the published plans are exactly the hold charges.
void checkNoGpuChargedTwice(const ClusterState& state) {
  const auto snapshot = state.snapshot();
  std::size_t holdCharges = 0;
  snapshot->nodes.forEach([&](const std::string& name, const gte::NodeStateConstSharedPtr& s) {
    if (!s->charges) return;
    GpuMask taken = 0;
    for (const gte::PodCharge& charge : s->charges->pods()) {
      if (!charge.counted) continue;
      const GpuMask gpus = maskOf(charge.allocation);
      INFO(name << " " << charge.uid);
      CHECK((taken & gpus) == 0);
      taken |= gpus;
      if (!gte::heldFor(charge.uid).empty()) ++holdCharges;
    }
  });
  std::size_t held = 0;
  for (const auto& [key, plan] : *snapshot->groupPlans)
    held += plan->heldCount();
  CHECK(held == holdCharges);
  CHECK(held == state.heldSlotCount());
  // Pins: one held slot per pinned member at most, and a member that claimed a slot has no pin.
  for (const auto& [key, plan] : *snapshot->groupPlans) {
    std::set<std::string> pinned;
    for (std::size_t i = 0; i < plan->plan.slots.size(); ++i) {
      const std::string uid(plan->pinnedUid(i));
      if (uid.empty()) continue;
      INFO(key << " slot " << i << " pinned to " << uid);
      CHECK(pinned.insert(uid).second);
      CHECK(std::find(plan->claimedBy.begin(), plan->claimedBy.end(), uid) ==
            plan->claimedBy.end());
    }
  }
}

}  // namespace

TEST_CASE("A committed plan holds its GPUs for the group's members only", "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  auto committed = state.commitGroupPlan(planNow(state, 2));
  REQUIRE(committed.ok());
  REQUIRE(*committed != nullptr);
  // Two 4-GPU slots; both nodes hold two: the tie goes to the name, a.
  CHECK((*committed)->plan.slots.size() == 2);
  CHECK(freeGpus(state, "a") == 0);
  CHECK(freeGpus(state, "b") == 8);
  CHECK(state.heldSlotCount() == 2);
  REQUIRE(state.snapshot()->groupPlan(kKey) != nullptr);

  // A pod of no group is refused the held GPUs, with filter's reason.
  auto other = state.reserve(gpuPod("other", 4), "a");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().code == ErrorCode::kFailedPrecondition);

  // A member binds into its slot: the hold gives way to its reservation, same GPUs.
  auto mine = state.reserve(member("m1", 4), "a");
  REQUIRE(mine.ok());
  CHECK(*mine == (*committed)->plan.slots[0].allocation);
  CHECK(freeGpus(state, "a") == 0);
  CHECK(state.heldSlotCount() == 1);
  checkNoGpuChargedTwice(state);
  // The second member takes the other slot; the plan has done its work.
  REQUIRE(state.reserve(member("m2", 4), "a").ok());
  CHECK(state.heldSlotCount() == 0);
  CHECK(state.snapshot()->groupPlan(kKey) == nullptr);
  checkNoGpuChargedTwice(state);
}

TEST_CASE("A second plan for the same group loses to the first; a stale plan is refused",
          "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  const CommittedGroupPlan early = planNow(state, 2);
  const CommittedGroupPlan late = planNow(state, 2);
  auto first = state.commitGroupPlan(early);
  auto second = state.commitGroupPlan(late);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first == *second);  // the group's one plan
  CHECK(state.heldSlotCount() == 2);

  // A plan made before another pod took its GPUs.
  ClusterState other(testPolicy(), clockedOptions(clock));
  other.replaceNodes({h100("a")});
  const CommittedGroupPlan stale = planNow(other, 2);
  REQUIRE(other.reserve(gpuPod("p", 1), "a").ok());
  auto refused = other.commitGroupPlan(stale);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kUnavailable);
  CHECK(other.heldSlotCount() == 0);
}

TEST_CASE("Holds end when members bind, are deleted, or the TTL passes", "[groups]") {
  ManualClock clock;
  std::map<HoldRelease, std::size_t> released;
  ClusterStateOptions options = countingReleases(clock, released);
  ClusterState state(testPolicy(), options);
  state.replaceNodes({h100("a"), h100("b")});
  // Four members wait; the plan holds four slots on a and b.
  for (const char* uid : {"m1", "m2", "m3", "m4"})
    state.upsertPod(ObservedPod{member(uid, 4), std::nullopt});
  REQUIRE(state.commitGroupPlan(planNow(state, 4)).ok());
  CHECK(state.heldSlotCount() == 4);
  REQUIRE(state.snapshot()->members(kKey) != nullptr);
  CHECK(state.snapshot()->members(kKey)->waiting.size() == 4);

  // kube-scheduler binds m1 itself (no bind verb): the watch sees it bound on a.
  state.upsertPod(ObservedPod{member("m1", 4, "a"), clock.seconds()});
  CHECK(state.heldSlotCount() == 3);
  CHECK(released[HoldRelease::kClaimed] == 1);
  // m4 is deleted while it waits: the group needs one slot fewer.
  state.removePod("m4");
  CHECK(state.heldSlotCount() == 2);
  CHECK(released[HoldRelease::kDeleted] == 1);
  // The TTL runs from the last member bound: 59 s later the holds are still there, 61 s not.
  clock.advance(std::chrono::seconds(59));
  state.expireReservations();
  CHECK(state.heldSlotCount() == 2);
  clock.advance(std::chrono::seconds(2));
  state.expireReservations();
  CHECK(state.heldSlotCount() == 0);
  CHECK(released[HoldRelease::kExpired] == 2);
  CHECK(freeGpus(state, "a") + freeGpus(state, "b") == 16 - 4);  // m1's GPUs only
  checkNoGpuChargedTwice(state);
}

TEST_CASE("A failed bind gives the member's slot back to the group", "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  state.upsertPod(ObservedPod{member("m1", 4), std::nullopt});
  REQUIRE(state.commitGroupPlan(planNow(state, 2)).ok());
  REQUIRE(state.reserve(member("m1", 4), "a").ok());
  CHECK(state.heldSlotCount() == 1);
  state.release("m1");  // the Binding failed
  CHECK(state.heldSlotCount() == 2);
  CHECK(freeGpus(state, "a") == 0);
  checkNoGpuChargedTwice(state);
}

TEST_CASE("Members already bound anchor the group after a restart", "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes(
      {inClique(h100("a"), "x"), inClique(h100("b"), "y"), inClique(h100("c"), "y")});
  // The extender starts with two members bound in clique y (after the labels' last write, so they
  // count) and two waiting (a full list).
  state.replacePods(
      {ObservedPod{member("m1", 4, "b"), 2000}, ObservedPod{member("m2", 4, "b"), 2000},
       ObservedPod{member("m3", 4), std::nullopt}, ObservedPod{member("m4", 4), std::nullopt}});
  REQUIRE(state.snapshot()->members(kKey) != nullptr);
  const gte::GroupMemberView members = *state.snapshot()->members(kKey);
  CHECK(members.placedNodes == std::vector<std::string>{"b", "b"});
  CHECK(members.waiting.size() == 2);
  // Best fit alone would take clique x (one node, two slots, nothing left over); the members
  // bound in y pin the plan there.
  const CommittedGroupPlan plan = planNow(state, 2, members.placedNodes);
  REQUIRE(plan.plan.status == GroupPlanStatus::kPlanned);
  for (const auto& slot : plan.plan.slots)
    CHECK(slot.node == "c");
  REQUIRE(state.commitGroupPlan(plan).ok());
  CHECK(freeGpus(state, "c") == 0);
}

TEST_CASE("A nominated member is published as nominated until it binds or waits again",
          "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  state.upsertPod(ObservedPod{member("m1", 4), std::nullopt});
  REQUIRE(state.snapshot()->members(kKey) != nullptr);
  CHECK(state.snapshot()->members(kKey)->nominated.empty());
  // kube-scheduler's preemption nominated m1 for node a; its victims are still leaving.
  PodInfo nominated = member("m1", 4);
  nominated.nominatedNodeName = "a";
  state.upsertPod(ObservedPod{nominated, std::nullopt});
  gte::GroupMemberView members = *state.snapshot()->members(kKey);
  CHECK(members.nominated == std::vector<std::pair<std::string, std::string>>{{"m1", "a"}});
  CHECK(members.placedNodes.empty());
  CHECK(members.waiting.empty());
  CHECK(freeGpus(state, "a") == 8);  // a nomination charges nothing
  // The nomination cleared (another node was better after all): the member waits again.
  state.upsertPod(ObservedPod{member("m1", 4), std::nullopt});
  members = *state.snapshot()->members(kKey);
  CHECK(members.nominated.empty());
  CHECK(members.waiting.size() == 1);
  // Nominated again, then bound: placed, no longer nominated.
  state.upsertPod(ObservedPod{nominated, std::nullopt});
  state.upsertPod(ObservedPod{member("m1", 4, "a"), clock.seconds()});
  members = *state.snapshot()->members(kKey);
  CHECK(members.nominated.empty());
  CHECK(members.placedNodes == std::vector<std::string>{"a"});
  // Deleted: the group has no member left to publish.
  state.removePod("m1");
  CHECK(state.snapshot()->members(kKey) == nullptr);
}

TEST_CASE("A pod bound onto held GPUs by someone else moves the hold", "[groups]") {
  ManualClock clock;
  std::map<HoldRelease, std::size_t> released;
  ClusterStateOptions options = countingReleases(clock, released);
  ClusterState state(testPolicy(), options);
  state.replaceNodes({h100("a")});
  REQUIRE(state.commitGroupPlan(planNow(state, 1)).ok());  // 4 of a's 8 GPUs held
  // Another scheduler binds a 4-GPU pod on a: the device plugin gives it the first 4-GPU pick,
  // which is the held set; the hold moves to the 4 GPUs left.
  state.upsertPod(bound("intruder", 4, "a", clock.seconds()));
  CHECK(state.heldSlotCount() == 1);
  CHECK(freeGpus(state, "a") == 0);
  checkNoGpuChargedTwice(state);
  // A second one leaves no room: the hold ends, displaced.
  state.upsertPod(bound("intruder2", 4, "a", clock.seconds()));
  CHECK(state.heldSlotCount() == 0);
  CHECK(released[HoldRelease::kDisplaced] == 1);
  checkNoGpuChargedTwice(state);
}

TEST_CASE("A policy whose levels change releases every hold", "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  REQUIRE(state.commitGroupPlan(planNow(state, 1)).ok());
  gte::Policy changed = *testPolicy();
  changed.groups.levels.pop_back();
  state.setPolicy(std::make_shared<const gte::Policy>(changed));
  CHECK(state.heldSlotCount() == 0);
  CHECK(freeGpus(state, "a") == 8);
}

TEST_CASE("A held slot is pinned to one waiting member, who keeps it until it binds or leaves",
          "[groups]") {
  ManualClock clock;
  std::map<HoldRelease, std::size_t> released;
  ClusterState state(testPolicy(), countingReleases(clock, released));
  state.replaceNodes({h100("a"), h100("b"), h100("c")});
  for (const char* uid : {"m1", "m2", "m3", "m4"})
    state.upsertPod(ObservedPod{member(uid, 4), std::nullopt});
  auto committed = state.commitGroupPlan(planNow(state, 4));
  REQUIRE(committed.ok());
  const std::uint64_t sequence = (*committed)->sequence;
  std::map<std::string, int> perNode;
  for (const auto& slot : (*committed)->plan.slots)
    ++perNode[slot.node];
  REQUIRE(perNode == std::map<std::string, int>{{"a", 2}, {"b", 2}});
  const auto pin = [&](std::size_t slot, const std::string& uid) {
    const auto plan = state.pinGroupMember(kKey, sequence, slot, uid);
    REQUIRE(plan != nullptr);
    return std::string(plan->pinnedUid(slot));
  };
  const auto pinOf = [&](const std::string& uid) {
    return state.snapshot()->groupPlan(kKey)->pinOf(uid);
  };

  CHECK(pin(0, "m1") == "m1");
  CHECK(pin(0, "m2") == "m1");  // pinned first to m1: m2 picks again
  CHECK(pin(1, "m1") == "m1");  // m1 moves: its earlier pin ends
  CHECK(pinOf("m1") == std::optional<std::size_t>(1));
  CHECK(state.snapshot()->groupPlan(kKey)->pinnedUid(0).empty());
  CHECK(state.pinGroupMember(kKey, sequence + 1, 0, "m2")->pinnedUid(0).empty());  // not this plan
  CHECK(pin(0, "m2") == "m2");
  CHECK(pin(2, "m3") == "m3");
  CHECK(pin(3, "m4") == "m4");
  checkNoGpuChargedTwice(state);

  // m4 is deleted while it waits: its own slot is released, the others keep theirs.
  state.removePod("m4");
  CHECK(released[HoldRelease::kDeleted] == 1);
  CHECK_FALSE(state.snapshot()->groupPlan(kKey)->held(3));
  CHECK(pinOf("m1") == std::optional<std::size_t>(1));
  CHECK(pinOf("m2") == std::optional<std::size_t>(0));
  CHECK(pinOf("m3") == std::optional<std::size_t>(2));
  // m3 binds outside the plan (on c): the plan needs one slot fewer, m3's own.
  state.upsertPod(ObservedPod{member("m3", 4, "c"), clock.seconds()});
  CHECK(released[HoldRelease::kSurplus] == 1);
  CHECK_FALSE(state.snapshot()->groupPlan(kKey)->held(2));
  CHECK(pinOf("m1") == std::optional<std::size_t>(1));
  CHECK(pinOf("m2") == std::optional<std::size_t>(0));
  // m2's bind on a claims a slot there; whichever it is, m1 keeps one slot on a, pinned.
  REQUIRE(state.reserve(member("m2", 4), "a").ok());
  CHECK_FALSE(pinOf("m2").has_value());
  REQUIRE(pinOf("m1").has_value());
  CHECK(state.snapshot()->groupPlan(kKey)->plan.slots[*pinOf("m1")].node == "a");
  // The Binding fails: m2's slot is held for it again, pinned to it.
  state.release("m2");
  REQUIRE(pinOf("m2").has_value());
  CHECK(state.snapshot()->groupPlan(kKey)->plan.slots[*pinOf("m2")].node == "a");
  CHECK(pinOf("m1") != pinOf("m2"));
  checkNoGpuChargedTwice(state);
}

TEST_CASE("Under random churn no GPU is charged twice and every hold ends", "[groups]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({inClique(h100("a"), "x"), inClique(h100("b"), "x"), inClique(h100("c"), "y"),
                      inClique(h100("d"), "y")});
  std::mt19937 random(7);
  std::vector<std::string> waiting;
  std::vector<std::string> boundPods;
  int next = 0;
  int plans = 0;
  int claims = 0;
  int pins = 0;
  for (int step = 0; step < 400; ++step) {
    CAPTURE(step);
    switch (random() % 8) {
      case 0: {  // a group's first member plans it (when room remains and no plan is active)
        if (state.snapshot()->groupPlan(kKey) != nullptr) break;
        const auto snapshot = state.snapshot();
        int room = 0;
        snapshot->nodes.forEach([&](const std::string&, const gte::NodeStateConstSharedPtr& s) {
          room += s->freeCount / 4;
        });
        if (room < 2) break;
        CommittedGroupPlan plan = planNow(state, 2);
        if (plan.plan.status == GroupPlanStatus::kPlanned) {
          REQUIRE(state.commitGroupPlan(std::move(plan)).ok());
          ++plans;
        }
        break;
      }
      case 1: {  // a member waits
        const std::string uid = numbered("w", next++);
        state.upsertPod(ObservedPod{member(uid, 4), std::nullopt});
        waiting.push_back(uid);
        break;
      }
      case 2: {  // a waiting member binds through the bind verb, somewhere
        if (waiting.empty()) break;
        const std::string uid = waiting.back();
        const std::string node(1, static_cast<char>('a' + random() % 4));
        const std::size_t held = state.heldSlotCount();
        if (state.reserve(member(uid, 4), node).ok()) {
          claims += state.heldSlotCount() < held ? 1 : 0;
          if (random() % 2 == 0) {
            state.upsertPod(ObservedPod{member(uid, 4, node), clock.seconds()});
            boundPods.push_back(uid);
            waiting.pop_back();
          } else {
            state.release(uid);
          }
        }
        break;
      }
      case 3: {  // a pod of no group lands wherever kube-scheduler put it
        const std::string node(1, static_cast<char>('a' + random() % 4));
        const std::string uid = numbered("o", next++);
        if (freeGpus(state, node) >= 2) {
          state.upsertPod(bound(uid, 2, node, clock.seconds()));
          boundPods.push_back(uid);
        }
        break;
      }
      case 4:  // a pod is deleted
        if (!boundPods.empty()) {
          state.removePod(boundPods[random() % boundPods.size()]);
        } else if (!waiting.empty()) {
          state.removePod(waiting.back());
          waiting.pop_back();
        }
        break;
      case 5:
        clock.advance(std::chrono::seconds(random() % 20));
        state.expireReservations();
        break;
      case 6: {  // a waiting member's filter pins it to a held slot
        const auto plan = state.snapshot()->groupPlan(kKey);
        if (plan == nullptr || waiting.empty()) break;
        const std::string& uid = waiting[random() % waiting.size()];
        const std::size_t slot = random() % plan->plan.slots.size();
        const auto after = state.pinGroupMember(kKey, plan->sequence, slot, uid);
        REQUIRE(after != nullptr);
        pins += after->pinnedUid(slot) == uid ? 1 : 0;
        break;
      }
      default:
        break;
    }
    checkNoGpuChargedTwice(state);
  }
  // The run exercised plans and members binding into them.
  CHECK(plans >= 3);
  CHECK(claims >= 5);
  CHECK(pins >= 5);
  clock.advance(std::chrono::seconds(61));
  state.expireReservations();
  CHECK(state.heldSlotCount() == 0);
  CHECK(state.snapshot()->groupPlans->empty());
}

TEST_CASE("kube-scheduler giving up on a PodGroup releases its group's holds", "[groups]") {
  ManualClock clock;
  std::map<HoldRelease, std::size_t> released;
  ClusterStateOptions options = countingReleases(clock, released);
  ClusterState state(testPolicy(), options);
  state.replaceNodes({h100("a"), h100("b")});
  // Waiting members name the group by annotation and the PodGroup by spec.schedulingGroup: the
  // group's key is the annotation's, found through them.
  for (const std::string uid : {"m1", "m2"}) {
    PodInfo pod = member(uid, 4);
    pod.podGroupName = "pg-llm";
    state.upsertPod(ObservedPod{pod, std::nullopt});
  }
  REQUIRE(state.commitGroupPlan(planNow(state, 2)).ok());
  REQUIRE(state.heldSlotCount() == 2);

  // Another PodGroup, or the same name in another namespace: nothing to release.
  CHECK(state.releasePodGroupHolds("ml", "other") == 0);
  CHECK(state.releasePodGroupHolds("prod", "pg-llm") == 0);
  CHECK(state.heldSlotCount() == 2);

  CHECK(state.releasePodGroupHolds("ml", "pg-llm") == 2);
  CHECK(state.heldSlotCount() == 0);
  CHECK(freeGpus(state, "a") == 8);
  CHECK(state.snapshot()->groupPlan(kKey) == nullptr);
  CHECK(released[HoldRelease::kUnschedulable] == 2);
  // The next cycle plans again, on what is free then.
  REQUIRE(state.commitGroupPlan(planNow(state, 2)).ok());
  CHECK(state.heldSlotCount() == 2);
  checkNoGpuChargedTwice(state);
}
