// Every door asks the same question once (docs/architecture.md, "One compiled pod, one decision
// per node"): the pod is compiled once per request against one snapshot, and filter, prioritize,
// explain, what-if, preempt and bind's re-check judge it alike. Each case here failed before the
// doors shared compilePod and the per-node decision.
#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/static_cluster_backend.h"
#include "dra_pair_cluster.h"
#include "policy/default_policy.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/snapshot_backend.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";

std::string podWith(int gpus, const std::string& annotations) {
  return R"({"metadata":{"name":"probe","namespace":"ml","uid":"probe-uid","annotations":)" +
         annotations +
         R"(},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]}})";
}

std::string argsBody(const std::string& pod) {
  return R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":["a100","dgx1","gfd","pcie4"]})";
}

json parsed(const gte::Reply& reply) {
  INFO(reply.body);
  return json::parse(reply.body);
}

}  // namespace

// docs/groups.md's table of invalid group annotations: filter refuses the pod on every node with
// the annotation's message, and explain and what-if say the same. Before, a group-size of -1 was
// placed by what-if (HTTP 200), and a group-size without any group was accepted by all three.
TEST_CASE("filter, explain and what-if agree on every invalid group annotation") {
  auto loaded = gte::cluster::StaticClusterBackend::fromFile(
      kClusterFile, std::make_shared<const gte::Policy>(gte::defaultPolicy()));
  REQUIRE(loaded.ok());
  auto policy = (*loaded)->snapshot()->policy;
  gte::ExtenderService service([policy] { return policy; }, loaded->get(), nullptr);
  struct Case {
    const char* annotations;
    const char* message;
  };
  const Case cases[] = {
      {R"({"gputopo.dev/group":"g1","gputopo.dev/group-size":"-1"})",
       "annotation gputopo.dev/group-size: want an integer from 1 to 10000"},
      {R"({"gputopo.dev/group-size":"2"})",
       "annotation gputopo.dev/group-size: set, but the pod belongs to no group"},
      {R"({"gputopo.dev/group-levels":"rack=required"})",
       "annotation gputopo.dev/group-levels: set, but the pod belongs to no group"},
      {R"({"gputopo.dev/group":"g1"})",
       "annotation gputopo.dev/group-size: required with gputopo.dev/group"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.annotations);
    const std::string pod = podWith(2, c.annotations);
    const json filtered = parsed(service.filter(argsBody(pod)));
    CHECK(filtered["NodeNames"].empty());
    REQUIRE(filtered["FailedAndUnresolvableNodes"].size() == 4);
    for (const auto& [node, reason] : filtered["FailedAndUnresolvableNodes"].items()) {
      CHECK(reason.get<std::string>().find(c.message) != std::string::npos);
    }
    const json explained = parsed(service.explain(argsBody(pod)));
    CHECK(explained["pod"]["error"].get<std::string>().find(c.message) != std::string::npos);
    for (const json& node : explained["nodes"])
      CHECK(node["verdict"] == "unresolvable");
    const gte::Reply whatif = service.whatif(R"({"pod":)" + pod + "}");
    CHECK(whatif.status == 400);
    CHECK(whatif.body.find(c.message) != std::string::npos);
    // Prioritize scores such a pod 0 everywhere, as any pod filter rejected.
    for (const json& host : parsed(service.prioritize(argsBody(pod))))
      CHECK(host["Score"] == 0);
  }
}

// One request, one snapshot: the pod is compiled and its nodes resolved in the same one. Before,
// a NodeNames filter loaded it three times (the group check, the no-demand path, resolution).
TEST_CASE("filter, prioritize and explain load the snapshot once per request") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::ClusterState state(policy);
  state.replaceNodes({gte::testing::makeDgxH100(FixtureState().withName("a100")),
                      gte::testing::makeDgxH100(FixtureState().withName("dgx1"))});
  state.setSynced(true);
  auto backend = gte::testing::SnapshotBackend::of(state);
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  for (const std::string& pod :
       {podWith(2, "{}"), podWith(0, "{}"), podWith(4, R"({"gputopo.dev/min-link":"nvlink"})"),
        podWith(2, R"({"gputopo.dev/group":"g","gputopo.dev/group-size":"2"})")}) {
    CAPTURE(pod);
    const std::string body = argsBody(pod);
    backend.loads = 0;
    REQUIRE(service.prioritize(body).status == 200);
    CHECK(backend.loads == 1);
    backend.loads = 0;
    REQUIRE(service.explain(body).status == 200);
    CHECK(backend.loads == 1);
    backend.loads = 0;
    REQUIRE(service.filter(body).status == 200);
    CHECK(backend.loads == 1);
  }
}

// Bind a pending 2-GPU pod onto the node whose only free GPUs it takes, then explain it by name:
// before, its own node was "insufficient free GPUs" and nothing said where the pod was.
TEST_CASE("explain of a bound pod says where it is bound and judges its node without it") {
  auto loaded = gte::cluster::StaticClusterBackend::fromFile(
      kClusterFile, std::make_shared<const gte::Policy>(gte::defaultPolicy()));
  REQUIRE(loaded.ok());
  gte::cluster::StaticClusterBackend& backend = **loaded;
  auto policy = backend.snapshot()->policy;
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  const json before = parsed(service.explainPod("ml/train"));
  CHECK(before["pod"]["boundTo"].is_null());

  REQUIRE(backend.bind(gte::BindRequest{"train", "ml", "train-uid", "gfd"}).ok());
  // Another 2-GPU pod finds no room on gfd now.
  const json other = parsed(service.explain(argsBody(podWith(2, "{}"))));
  for (const json& node : other["nodes"]) {
    if (node["name"] == "gfd") CHECK(node["verdict"] == "unschedulable");
  }
  const json after = parsed(service.explainPod("ml/train"));
  const json& bound = after["pod"]["boundTo"];
  REQUIRE(bound.is_object());
  CHECK(bound["node"] == "gfd");
  CHECK(bound["gpus"] == json({0, 1}));
  bool sawGfd = false;
  for (const json& node : after["nodes"]) {
    if (node["name"] != "gfd") continue;
    sawGfd = true;
    CHECK(node["verdict"] == "fit");
    CHECK(node["gpus"] == json({0, 1}));
  }
  CHECK(sawGfd);
}

namespace {

gte::PodInfo claimPod() {
  gte::PodInfo pod = gte::testing::makeClaimPod("train-0", "ml", {{"gpus", "train-0-gpus"}});
  pod.uid = "uid-train-0";
  return pod;
}

}  // namespace

// Bind's re-check runs the decision filter ran: for a claim pod, the DRA allocator's first-fit.
// Before, it ran the device-plugin fit check, which a pod asking for no nvidia.com/gpu passes on
// any node, so a claim pod was reserved where no device can serve its claim.
TEST_CASE("bind's re-check of a claim pod is filter's first-fit") {
  gte::testing::DraPairCluster cluster;
  const auto refused = cluster.state.reserve(claimPod(), "device-plugin");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("DRA") != std::string::npos);
  CHECK(cluster.state.reserve(claimPod(), "hgx-h100-a").ok());
}

// Preempt judges a claim pod by the first-fit over the devices the victims would free. Before, the
// device-plugin fit check passed a claim pod everywhere, so preempt never vetoed a node for it.
TEST_CASE("preempt vetoes a node where no device can serve the pod's claims") {
  gte::testing::DraPairCluster cluster;
  auto backend = gte::testing::SnapshotBackend::of(cluster.state);
  gte::ExtenderService service([p = cluster.policy] { return p; }, &backend, nullptr);
  json pod = json::parse(gte::testing::podJson(claimPod()));
  pod["spec"]["resourceClaims"] =
      json::array({{{"name", "gpus"}, {"resourceClaimName", "train-0-gpus"}}});
  json victim = json::parse(gte::testing::podJson(gte::testing::makeGpuPod("victim", 1)));
  victim["metadata"]["uid"] = "victim-uid";
  json body;
  body["Pod"] = pod;
  body["NodeNameToVictims"] = nullptr;
  body["NodeNameToMetaVictims"] = {
      {"device-plugin",
       {{"Pods", json::array({{{"UID", "victim-uid"}}})}, {"NumPDBViolations", 0}}},
      {"hgx-h100-a", {{"Pods", json::array({{{"UID", "victim-uid"}}})}, {"NumPDBViolations", 0}}}};
  const gte::Reply reply = service.preempt(body.dump());
  REQUIRE(reply.status == 200);
  const json answer = parsed(reply);
  const json& kept = answer["NodeNameToMetaVictims"];
  CHECK_FALSE(kept.contains("device-plugin"));
  CHECK(kept.contains("hgx-h100-a"));
}

namespace {

// The cluster state's group store, counting the commits and pins that reach it.
class CountingStore final : public gte::GroupPlanStore {
 public:
  explicit CountingStore(gte::cluster::ClusterState& state) : state_(state) {}
  gte::Result<gte::CommittedGroupPlanConstSharedPtr> commitGroupPlan(
      gte::CommittedGroupPlan plan) override {
    ++commits;
    return state_.commitGroupPlan(std::move(plan));
  }
  gte::CommittedGroupPlanConstSharedPtr pinGroupMember(std::string_view key, std::uint64_t sequence,
                                                       std::size_t slot,
                                                       const std::string& uid) override {
    ++pins;
    return state_.pinGroupMember(key, sequence, slot, uid);
  }
  int commits = 0;
  int pins = 0;

 private:
  gte::cluster::ClusterState& state_;
};

gte::PodInfo groupMember(const std::string& name, const std::string& minLink = "nvlink") {
  gte::PodInfo pod = gte::testing::makeGpuPod(name, 4,
                                              {{"gputopo.dev/group", "job"},
                                               {"gputopo.dev/group-size", "3"},
                                               {"gputopo.dev/min-link", minLink}});
  pod.uid = name + "-uid";
  return pod;
}

}  // namespace

// The waiting members of a group live in the snapshot with their demands parsed when they changed:
// a member's request reads them from the snapshot it loaded, parses no other pod, and reaches the
// cache's store only to commit the plan at the first member and to pin each member at its filter.
// Before, every member's request took the cache's writer lock to copy the waiting pods and parsed
// each of them again.
TEST_CASE("a group's waiting members are published with their demands; only the first commits") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::ClusterState state(policy);
  state.replaceNodes({gte::testing::makeDgxH100(FixtureState().withName("a100")),
                      gte::testing::makeDgxH100(FixtureState().withName("dgx1"))});
  for (const char* name : {"m0", "m1", "m2"})
    state.upsertPod(gte::cluster::ObservedPod{groupMember(name), std::nullopt});
  state.setSynced(true);

  const gte::GroupMemberView* members = state.snapshot()->members("default/annotation/job");
  REQUIRE(members != nullptr);
  REQUIRE(members->waiting.size() == 3);
  for (const gte::WaitingMember& member : members->waiting) {
    REQUIRE(member.demand);
    CHECK(member.demand->gpus == 4);
  }

  auto backend = gte::testing::SnapshotBackend::of(state);
  CountingStore store(state);
  backend.setGroupPlans(&store);
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  const auto body = [](const gte::PodInfo& pod) {
    return R"({"Pod":)" + gte::testing::podJson(pod) +
           R"(,"Nodes":null,"NodeNames":["a100","dgx1"]})";
  };
  for (const char* name : {"m0", "m1", "m2"}) {
    CAPTURE(name);
    const json filtered = parsed(service.filter(body(groupMember(name))));
    CHECK(filtered["NodeNames"].size() >= 1);
    REQUIRE(service.prioritize(body(groupMember(name))).status == 200);
  }
  CHECK(store.commits == 1);
  CHECK(store.pins == 3);  // one per member's filter; prioritize writes nothing

  // A member whose annotation turns invalid is published without a demand: it holds no slot.
  gte::PodInfo broken = groupMember("m2", "fast");
  state.upsertPod(gte::cluster::ObservedPod{broken, std::nullopt});
  members = state.snapshot()->members("default/annotation/job");
  REQUIRE(members != nullptr);
  std::size_t parsedDemands = 0;
  for (const gte::WaitingMember& member : members->waiting)
    parsedDemands += member.demand ? 1 : 0;
  CHECK(members->waiting.size() == 3);
  CHECK(parsedDemands == 2);
}
