// Placement regret through the verbs (docs/topology-health.md): prioritize records what it saw
// for a pod, the cluster cache reports the pod bound, and explain by name then says what the pod
// got and what was best. The cluster: a DGX-1V with a free NV2 pair, and two 4x L40S boxes (PCIe
// NODE pairs). kube-scheduler, as a node selector would make it, sends only the L40S boxes.
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "service/placement_recorder.h"
#include "support/cluster_events_fixture.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

// The recorder comes first: the cluster's callbacks reach it, so it must outlive the cluster.
struct Fixture {
  gte::PlacementRecorder placements{nullptr};
  gte::PodInfo pod = gte::testing::makeGpuPod("pair", 2);
  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {gte::testing::makeDgx1Volta(FixtureState().withName("dgx").withUsed("00100100")),
           gte::testing::make4xPcieL40s(FixtureState().withName("l40s-a")),
           gte::testing::make4xPcieL40s(FixtureState().withName("l40s-b").withUsed("1000"))},
          {{pod, std::nullopt}},
          {}},
      policy, stateOptions()};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr, {}, &placements};

  gte::cluster::ClusterStateOptions stateOptions() {
    gte::cluster::ClusterStateOptions options;
    auto events = gte::testing::functionEvents();
    events->onPodPlaced = [this](const gte::PodPlacement& p) { placements.placed(p); };
    events->onPodGone = [this](const std::string& uid) { placements.forget(uid); };
    options.events = events;
    return options;
  }

  std::string namesBody(const std::vector<std::string>& names) const {
    return gte::testing::namesArgsJson(pod, names);
  }
};

TEST_CASE("A pod kept off the better node shows its regret and why in explain") {
  Fixture f;
  REQUIRE(f.service.prioritize(f.namesBody({"l40s-a", "l40s-b"})).status == 200);
  // Decided, not bound yet: explain shows the decision, no node.
  json before = json::parse(f.service.explainPod("default/pair").body);
  REQUIRE(before["placement"].is_object());
  CHECK(before["placement"]["node"].is_null());
  CHECK(before["placement"]["regret"].is_null());
  // The best any node offered a 2-GPU pod then: the DGX-1V's pick {6,7}, NV2, 2 x 25 = 50 GB/s.
  CHECK(before["placement"]["best"] ==
        json::parse(R"({"weakestLink":"nvlink","bandwidthGBps":50})"));
  // Among the two candidates: NODE pairs on PCIe Gen4, 32 x 5/8 = 20 GB/s. l40s-b (3 free) packs
  // better and is ranked top.
  CHECK(before["placement"]["bestFeasible"] ==
        json::parse(R"({"weakestLink":"node","bandwidthGBps":20})"));
  CHECK(before["placement"]["topRankedNode"] == "l40s-b");

  std::string answer;
  f.service.bind(
      R"({"PodName":"pair","PodNamespace":"default","PodUID":"uid-pair","Node":"l40s-b"})",
      [&answer](gte::Reply r) { answer = r.body; });
  REQUIRE(answer.find("\"Error\":\"\"") != std::string::npos);

  const json after = json::parse(f.service.explainPod("default/pair").body);
  const json& placement = after["placement"];
  CHECK(placement["node"] == "l40s-b");
  CHECK(placement["requestedGpus"] == 2);
  // GPU 0 is in use; the device plugin's pair among {1,2,3} (all NODE) is the first: {1,2}.
  CHECK(placement["gpus"] == json::array({1, 2}));
  CHECK(placement["got"] == json::parse(R"({"weakestLink":"node","bandwidthGBps":20})"));
  // 1 - 20/50 = 0.6: nothing the pod could use was better.
  CHECK(placement["regret"].get<double>() == 0.6);
  CHECK(placement["reason"] == "no_better_fit");
  CHECK(placement["belowBestClass"] == true);
  CHECK(placement["belowBestClassReason"] == "no_better_fit");
}

TEST_CASE("Explain of a pod nothing was decided for has a null placement") {
  Fixture f;
  const json doc = json::parse(f.service.explainPod("default/pair").body);
  CHECK(doc["placement"].is_null());
}

}  // namespace
