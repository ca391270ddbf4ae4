// The accounting rules of ClusterState: labels + bound pods the labels do not show yet +
// reservations. Times are unix seconds; every node's agent last wrote at `gen` = 1000 unless a
// case says otherwise.
#include <catch2/catch_test_macros.hpp>

#include "cluster/cluster_state.h"
#include "cluster_test_support.h"
#include "core/node_charges.h"

using gte::cluster::ClusterState;
using gte::cluster::ClusterStateOptions;
using gte::cluster::labelsCoverPod;
using gte::cluster::ObservedPod;
using namespace gte::testing;

TEST_CASE("labelsCoverPod: only a write strictly after the bind covers the pod") {
  CHECK(labelsCoverPod(1001, 1000, 0));
  CHECK_FALSE(labelsCoverPod(1000, 1000, 0));  // same second: the containers were not up yet
  CHECK_FALSE(labelsCoverPod(999, 1000, 0));
  CHECK_FALSE(labelsCoverPod(0, 0, 0));        // no labels-v1 gen: nothing is covered
  CHECK(labelsCoverPod(1000, 0, 0));           // bind time unknown (cluster file): labels win
  CHECK_FALSE(labelsCoverPod(1004, 1000, 5));  // skew margin: 1004 is not past 1000 + 5
  CHECK(labelsCoverPod(1006, 1000, 5));
}

TEST_CASE("A bound pod the labels do not show yet takes its predicted GPUs") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  REQUIRE(freeGpus(state, "a") == 8);

  state.upsertPod(bound("p1", 2, "a", 2000));  // bound after gen 1000
  CHECK(freeGpus(state, "a") == 6);
  REQUIRE(state.podsOnNode("a").size() == 1);
  CHECK(state.podByUid("p1")->nodeName == "a");
}

TEST_CASE("A pod bound before the labels' gen is already in `used` and not counted twice") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a", 1000, "11000000")});
  state.upsertPod(bound("p1", 2, "a", 900));
  CHECK(freeGpus(state, "a") == 6);  // 8 - 2 used by the labels; the pod adds nothing
}

TEST_CASE("A pod first seen bound without a bind time counts from the moment it is seen") {
  ManualClock clock(5000);
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a", 1000)});
  state.upsertPod(ObservedPod{gpuPod("p1", 1, "a"), std::nullopt});
  CHECK(freeGpus(state, "a") == 7);
  // The agent writes at 5001 (after the pod was seen at 5000): it covers the pod now.
  state.upsertNode(h100("a", 5001, "10000000"));
  CHECK(freeGpus(state, "a") == 7);
}

TEST_CASE("Deleting a pod frees its GPUs") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  state.upsertPod(bound("p1", 4, "a", 2000));
  REQUIRE(freeGpus(state, "a") == 4);
  state.removePod("p1");
  CHECK(freeGpus(state, "a") == 8);
  CHECK_FALSE(state.podByUid("p1").has_value());
  CHECK(state.podsOnNode("a").empty());
}

TEST_CASE("A pod that turns Succeeded or Failed frees its GPUs") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  state.upsertPod(bound("p1", 4, "a", 2000));
  auto done = bound("p1", 4, "a", 2000);
  done.pod.phase = "Succeeded";
  state.upsertPod(done);
  CHECK(freeGpus(state, "a") == 8);
  CHECK(state.podCount() == 0);
}

TEST_CASE("Labels with a newer gen take over from the prediction") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a", 1000)});
  state.upsertPod(bound("p1", 2, "a", 2000));
  REQUIRE(freeGpus(state, "a") == 6);

  SECTION("an older or same-second write leaves the pod counted") {
    state.upsertNode(h100("a", 2000, "00000011"));
    CHECK(freeGpus(state, "a") == 4);  // 2 in the labels (another pod) + 2 predicted
  }
  SECTION("a later write shows where the device plugin really put it") {
    // The device plugin chose 6 and 7, whatever was predicted: only the labels count now.
    state.upsertNode(h100("a", 2001, "00000011"));
    CHECK(freeGpus(state, "a") == 6);
    CHECK_FALSE(gpuFree(state, "a", 6));
    CHECK_FALSE(gpuFree(state, "a", 7));
  }
}

TEST_CASE("Nodes without labels-v1 count every bound pod, however old") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({makeGfdNode("gfd", 4, "NVIDIA-L40S")});
  REQUIRE(freeGpus(state, "gfd") == 4);
  state.upsertPod(bound("old", 1, "gfd", 1));
  state.upsertPod(bound("new", 2, "gfd", 9000));
  CHECK(freeGpus(state, "gfd") == 1);
}

TEST_CASE("A recorded gpus annotation names the pod's GPUs instead of a prediction") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  auto pod = bound("p1", 2, "a", 2000);
  pod.pod.annotations["gputopo.dev/gpus"] = "4,5";
  pod.pod.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{...}";
  state.upsertPod(pod);
  CHECK_FALSE(gpuFree(state, "a", 4));
  CHECK_FALSE(gpuFree(state, "a", 5));
  CHECK(freeGpus(state, "a") == 6);
  // Foreign annotations are not kept in the cache (memory); the extender's own are.
  const auto cached = state.podByUid("p1");
  REQUIRE(cached.has_value());
  CHECK(cached->annotations.count("gputopo.dev/gpus") == 1);
  CHECK(cached->annotations.count("kubectl.kubernetes.io/last-applied-configuration") == 0);
}

TEST_CASE("Nominated pods are kept for preemption but take no GPUs; pending ones are dropped") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  gte::PodInfo nominated = gpuPod("n1", 4);
  nominated.nominatedNodeName = std::string("a");
  state.upsertPod(ObservedPod{nominated, std::nullopt});
  state.upsertPod(ObservedPod{gpuPod("pending", 4), std::nullopt});
  CHECK(state.podByUid("n1").has_value());
  CHECK_FALSE(state.podByUid("pending").has_value());
  CHECK(freeGpus(state, "a") == 8);
}

TEST_CASE("A pod moving between nodes in a re-list is accounted on the new node only") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  state.replacePods({bound("p1", 4, "a", 2000)});
  REQUIRE(freeGpus(state, "a") == 4);
  // The pod was deleted and a new one with the same UID can't exist; but a re-list after a
  // missed delete drops pods that are gone.
  state.replacePods({bound("p2", 2, "b", 2000)});
  CHECK(freeGpus(state, "a") == 8);
  CHECK(freeGpus(state, "b") == 6);
  CHECK(state.podCount() == 1);
}

TEST_CASE("Removing a node drops it from the snapshot; its pods count again if it returns") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  state.upsertPod(bound("p1", 3, "a", 2000));
  state.removeNode("a");
  CHECK(state.snapshot()->find("a") == nullptr);
  state.upsertNode(h100("a"));
  CHECK(freeGpus(state, "a") == 5);
  state.replaceNodes({h100("b")});
  CHECK(state.snapshot()->find("a") == nullptr);
  CHECK(state.nodeCount() == 1);
}

TEST_CASE("A pod change re-derives only its node; the others are shared with the last snapshot") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});
  const auto before = state.snapshot();
  state.upsertPod(bound("p1", 1, "a", 2000));
  const auto after = state.snapshot();
  CHECK(after->generation > before->generation);
  REQUIRE(before->nodes.get("b") != nullptr);
  CHECK(after->nodes.get("b") == before->nodes.get("b"));
  CHECK(after->nodes.get("a") != before->nodes.get("a"));
}

TEST_CASE("A pod status update that changes nothing publishes no new snapshot") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  state.upsertPod(bound("p1", 1, "a", 2000));
  const auto before = state.snapshot();
  auto again = bound("p1", 1, "a", 2000);
  again.pod.resourceVersion = "77";
  state.upsertPod(again);
  CHECK(state.snapshot() == before);
}

TEST_CASE("synced and the policy travel in the snapshot; a policy change re-derives every node") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  CHECK_FALSE(state.snapshot()->synced);
  state.setSynced(true);
  CHECK(state.snapshot()->synced);

  gte::Policy other = gte::defaultPolicy();
  other.labelPrefix = "example.com/";  // the fixtures' gputopo.dev/ labels no longer apply
  state.setPolicy(std::make_shared<const gte::Policy>(other));
  const auto snapshot = state.snapshot();
  CHECK(snapshot->policy->labelPrefix == "example.com/");
  CHECK(snapshot->find("a")->status != gte::TopologyStatus::kKnown);
}

TEST_CASE("The published state carries the charges preempt's what-if frees") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  // GPUs 0-3 used per the labels: 0,1 by `old` (annotated), 2,3 by `mystery` (no annotation).
  state.replaceNodes({h100("a", 1000, "11110000")});
  auto old = bound("old", 2, "a", 500);
  old.pod.annotations["gputopo.dev/gpus"] = "0,1";
  state.upsertPod(old);
  state.upsertPod(bound("mystery", 2, "a", 500));
  state.upsertPod(bound("recent", 2, "a", 2000));  // counted on top of the labels
  REQUIRE(freeGpus(state, "a") == 2);

  const auto snapshot = state.snapshot();
  const gte::NodeState& a = *snapshot->find("a");
  const auto freeWithout = [&](const std::vector<std::string>& gone) {
    return gte::nodeStateWithout(a, gone, *snapshot->policy)->freeCount;
  };
  CHECK(freeWithout({"recent"}) == 4);
  CHECK(freeWithout({"old"}) == 4);
  CHECK(freeWithout({"old", "recent"}) == 6);
  // Which GPUs `mystery` holds is unknown: evicting it is not promised to free anything.
  CHECK(freeWithout({"mystery"}) == 2);
  CHECK(freeGpus(state, "a") == 2);  // the what-if changed nothing
}
