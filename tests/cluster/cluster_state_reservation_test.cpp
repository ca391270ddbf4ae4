// Reservations made at bind: atomic check-and-reserve, idempotence, release, TTL, hand-over to the
// bound pod, and that concurrent or back-to-back binds never share a GPU.
#include <catch2/catch_test_macros.hpp>

#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster_test_support.h"
#include "core/fit.h"
#include "core/pod_demand.h"

using gte::Allocation;
using gte::ErrorCode;
using gte::cluster::ClusterState;
using gte::cluster::ClusterStateOptions;
using gte::cluster::ObservedPod;
using namespace gte::testing;

TEST_CASE("A reservation takes the predicted GPUs until released") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  auto allocation = state.reserve(gpuPod("p1", 2), "a");
  REQUIRE(allocation.ok());
  CHECK(allocation->complete);
  CHECK(allocation->gpus.size() == 2);
  CHECK(freeGpus(state, "a") == 6);
  for (int gpu : allocation->gpus)
    CHECK_FALSE(gpuFree(state, "a", gpu));
  REQUIRE(state.podsOnNode("a").size() == 1);
  CHECK(state.podsOnNode("a")[0].nodeName == "a");

  state.release("p1");
  CHECK(freeGpus(state, "a") == 8);
  CHECK(state.reservationCount() == 0);
}

TEST_CASE("reserve is idempotent and refuses what does not fit") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b")});

  auto first = state.reserve(gpuPod("p1", 4), "a");
  auto again = state.reserve(gpuPod("p1", 4), "a");
  REQUIRE(first.ok());
  REQUIRE(again.ok());
  CHECK(*first == *again);
  CHECK(state.reservationCount() == 1);
  CHECK(freeGpus(state, "a") == 4);

  auto tooBig = state.reserve(gpuPod("p2", 5), "a");
  REQUIRE_FALSE(tooBig.ok());
  CHECK(tooBig.error().code == ErrorCode::kFailedPrecondition);

  auto unknownNode = state.reserve(gpuPod("p3", 1), "zzz");
  REQUIRE_FALSE(unknownNode.ok());
  CHECK(unknownNode.error().code == ErrorCode::kNotFound);

  SECTION("a bind elsewhere while the first one holds its GPUs is refused; after release it goes") {
    // The first Binding may have landed: its GPUs stay reserved until it is seen or fails.
    auto elsewhere = state.reserve(gpuPod("p1", 4), "b");
    REQUIRE_FALSE(elsewhere.ok());
    CHECK(elsewhere.error().code == ErrorCode::kFailedPrecondition);
    CHECK(elsewhere.error().message.find("being bound to node a") != std::string::npos);
    CHECK(freeGpus(state, "a") == 4);
    CHECK(freeGpus(state, "b") == 8);
    CHECK(state.reserve(gpuPod("p1", 4), "zzz").error().code == ErrorCode::kFailedPrecondition);
    CHECK(freeGpus(state, "a") == 4);
    state.release("p1");  // the first bind failed
    REQUIRE(state.reserve(gpuPod("p1", 4), "b").ok());
    CHECK(freeGpus(state, "a") == 8);
    CHECK(freeGpus(state, "b") == 4);
    CHECK(state.reservationCount() == 1);
  }
  SECTION("a pod already bound elsewhere is refused") {
    state.upsertPod(bound("p9", 1, "b", 2000));
    auto moved = state.reserve(gpuPod("p9", 1), "a");
    REQUIRE_FALSE(moved.ok());
    CHECK(moved.error().code == ErrorCode::kFailedPrecondition);
    CHECK(state.reserve(gpuPod("p9", 1), "b").ok());  // same node: idempotent success
  }
}

TEST_CASE("A reservation expires after its TTL unless the pod is seen bound") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  REQUIRE(state.reserve(gpuPod("p1", 2), "a").ok());
  clock.advance(std::chrono::seconds(59));
  CHECK(state.expireReservations() == 0);
  CHECK(freeGpus(state, "a") == 6);
  clock.advance(std::chrono::seconds(1));
  CHECK(state.expireReservations() == 1);
  CHECK(freeGpus(state, "a") == 8);
}

TEST_CASE("When the watch shows the pod bound, the reservation becomes the bound pod's GPUs") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  auto reserved = state.reserve(gpuPod("p1", 2), "a");
  REQUIRE(reserved.ok());
  state.upsertPod(ObservedPod{gpuPod("p1", 2, "a"), std::nullopt});
  CHECK(state.reservationCount() == 0);
  CHECK(freeGpus(state, "a") == 6);
  for (int gpu : reserved->gpus)
    CHECK_FALSE(gpuFree(state, "a", gpu));
  // The TTL no longer applies.
  clock.advance(std::chrono::minutes(10));
  CHECK(state.expireReservations() == 0);
  CHECK(freeGpus(state, "a") == 6);
  // Deleted while still reserved or bound: freed either way.
  state.removePod("p1");
  CHECK(freeGpus(state, "a") == 8);
}

TEST_CASE("A pending pod deleted while its bind is in flight frees the reservation") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a")});
  REQUIRE(state.reserve(gpuPod("p1", 2), "a").ok());
  state.upsertPod(ObservedPod{gpuPod("p1", 2), std::nullopt});  // still pending: kept
  CHECK(state.reservationCount() == 1);
  state.removePod("p1");
  CHECK(state.reservationCount() == 0);
  CHECK(freeGpus(state, "a") == 8);
}

TEST_CASE("Concurrent reservations from many threads never share a GPU") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  const std::vector<std::string> nodes = {"a", "b", "c", "d"};  // 32 GPUs
  std::vector<gte::NodeInfo> infos;
  for (const auto& name : nodes)
    infos.push_back(h100(name));
  state.replaceNodes(infos);

  constexpr int kThreads = 8;
  constexpr int kPodsPerThread = 10;  // 80 one- and two-GPU pods for 32 GPUs
  std::mutex resultsMutex;
  std::vector<std::pair<std::string, Allocation>> granted;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPodsPerThread; ++i) {
        const std::string uid = numbered(numbered("t", t) + "-", i);
        const int gpus = 1 + (i % 2);
        // Like kube-scheduler binding in parallel: each picks a node and tries it.
        for (std::size_t n = 0; n < nodes.size(); ++n) {
          const std::string& node = nodes[(static_cast<std::size_t>(t) + n) % nodes.size()];
          auto allocation = state.reserve(gpuPod(uid, gpus), node);
          if (!allocation.ok()) continue;
          std::lock_guard lock(resultsMutex);
          granted.emplace_back(node, *allocation);
          break;
        }
      }
    });
  }
  for (auto& thread : threads)
    thread.join();

  std::set<std::pair<std::string, int>> taken;
  int grantedGpus = 0;
  for (const auto& [node, allocation] : granted) {
    for (int gpu : allocation.gpus) {
      CHECK(taken.emplace(node, gpu).second);  // no GPU handed out twice
      ++grantedGpus;
    }
  }
  CHECK(grantedGpus <= 32);
  CHECK(grantedGpus >= 31);  // demand exceeds supply: at most one GPU left over (odd sizes)
  int freeTotal = 0;
  for (const auto& name : nodes)
    freeTotal += freeGpus(state, name);
  CHECK(freeTotal == 32 - grantedGpus);
}

TEST_CASE("100 pods bound back to back on a small cluster never share a GPU") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({h100("a"), h100("b"), h100("c", 1000, "11000000")});  // 22 free GPUs
  std::set<std::pair<std::string, int>> taken = {{"c", 0}, {"c", 1}};
  int boundPods = 0;
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string uid = numbered("p", i);
    const int gpus = i % 3 == 0 ? 1 : 2;
    bool placed = false;
    for (const char* node : {"a", "b", "c"}) {
      auto allocation = state.reserve(gpuPod(uid, gpus), node);
      if (!allocation.ok()) continue;
      state.markBound(uid);  // cluster-file mode: bound at once
      for (int gpu : allocation->gpus)
        CHECK(taken.emplace(node, gpu).second);
      placed = true;
      ++boundPods;
      break;
    }
    if (!placed) ++refused;
    // Every pod that was placed some time ago is deleted again now and then, so GPUs recycle.
    if (i % 10 == 9) {
      const std::string victim = numbered("p", i - 9);
      if (state.podByUid(victim)) {
        state.removePod(victim);
        // Forget the victim's GPUs in the ledger: the ones that became free.
        for (auto it = taken.begin(); it != taken.end();) {
          it = gpuFree(state, it->first, it->second) ? taken.erase(it) : std::next(it);
        }
      }
    }
  }
  CHECK(boundPods + refused == 100);
  CHECK(refused > 0);  // the cluster filled up
  int used = 0;
  for (const char* node : {"a", "b", "c"})
    used += 8 - freeGpus(state, node);
  CHECK(used == static_cast<int>(taken.size()));
}

TEST_CASE(
    "Bind re-checks filter's fit: a min-link pod whose NVLink pair was taken since filter "
    "is refused with filter's reason") {
  // A100 PCIe, NVLink bridges on (0,2) (1,3) (4,5) (6,7); GPUs 3, 5, 6, 7 used: {0,2} is the only
  // free NVLink pair, and {1,4} (SYS) is what is left once it is taken.
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({makeA100PcieBridged(FixtureState().withName("a100").withUsed("00010111"))});
  gte::PodInfo linked = gpuPod("b", 2);
  linked.annotations["gputopo.dev/min-link"] = "nvlink";
  const gte::PodInfo small = gpuPod("a", 2);

  const auto before = state.snapshot();
  const auto demand = gte::parsePodDemand(linked, *before->policy);
  REQUIRE(demand.ok());
  REQUIRE(gte::checkFit(*demand, *before->find("a100"), *before->policy).fits());

  const auto taken = state.reserve(small, "a100");
  REQUIRE(taken.ok());
  CHECK(taken->gpus == std::vector<int>{0, 2});

  const auto refused = state.reserve(linked, "a100");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kFailedPrecondition);
  CHECK(refused.error().message == "no 2 NVLink-connected free GPUs");
  // Word for word what filter now says about the node, and preemption may still help.
  const auto after = state.snapshot();
  const gte::FitOutcome now = gte::checkFit(*demand, *after->find("a100"), *after->policy);
  CHECK(now.verdict == gte::Verdict::kUnschedulable);
  CHECK(refused.error().message == gte::fitReasonText(now, *demand));
  CHECK(state.reservationCount() == 1);
  CHECK(freeGpus(state, "a100") == 2);
}

TEST_CASE("Pending GPU pods are kept for bind to read, charging nothing, until bound or gone") {
  ClusterState state(testPolicy());
  state.replaceNodes({h100("a")});
  gte::PodInfo pending = gpuPod("p", 2);
  pending.annotations["gputopo.dev/min-link"] = "nvlink";
  pending.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{...}";
  state.upsertPod(ObservedPod{pending, std::nullopt});
  CHECK(state.pendingCount() == 1);
  CHECK(state.podCount() == 0);
  CHECK(freeGpus(state, "a") == 8);
  CHECK_FALSE(state.podByUid("p").has_value());  // not a preemption victim
  auto toBind = state.podToBind("p");
  REQUIRE(toBind.has_value());
  CHECK(toBind->annotations.count("gputopo.dev/min-link") == 1);
  CHECK(toBind->annotations.count("kubectl.kubernetes.io/last-applied-configuration") == 0);

  state.upsertPod(bound("p", 2, "a", 10'000));
  CHECK(state.pendingCount() == 0);
  REQUIRE(state.podToBind("p").has_value());
  CHECK(state.podToBind("p")->nodeName == "a");

  state.upsertPod(ObservedPod{gpuPod("q", 1), std::nullopt});
  state.replacePods({});  // a re-list without them
  CHECK(state.pendingCount() == 0);
  CHECK_FALSE(state.podToBind("q").has_value());
  state.upsertPod(ObservedPod{gpuPod("r", 1), std::nullopt});
  state.removePod("r");
  CHECK_FALSE(state.podToBind("r").has_value());
  state.upsertPod(ObservedPod{gpuPod("cpu-only", 0), std::nullopt});
  CHECK(state.pendingCount() == 0);  // holds no device: not kept
}
