// Shared GPUs through the verbs (docs/sharing.md): a pod asking for exclusive GPUs is kept off a
// node whose device plugin time-slices its GPUs, with a reason naming how they are shared; filter
// (on the snapshot's precomputed answers), explain and what-if agree; a pod that accepts shared
// GPUs is placed there as before.
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/static_cluster_backend.h"
#include "core/gpu_sharing.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

gte::NodeInfo timeSliced() {
  gte::NodeInfo node = gte::testing::makeDgxH100(FixtureState().withName("sliced"));
  const std::string strategy(gte::kSharingStrategyLabel);
  const std::string replicas(gte::kSharingReplicasLabel);
  node.labels.insert_or_assign(strategy, std::string("time-slicing"));
  node.labels.insert_or_assign(replicas, std::string("4"));
  return node;
}

struct Fixture {
  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {timeSliced(), gte::testing::makeDgx1Volta(FixtureState().withName("whole"))}, {}, {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};

  static std::string namesBody(const gte::PodInfo& pod) {
    return gte::testing::namesArgsJson(pod, {"sliced", "whole"});
  }
};

constexpr const char* kRefusal =
    "gpu-topology: GPUs shared by time-slicing, 4 replicas per GPU; the pod asks for exclusive "
    "GPUs";

}  // namespace

TEST_CASE("filter and explain keep a pod asking for exclusive GPUs off time-sliced GPUs") {
  Fixture f;
  const gte::PodInfo exclusive =
      gte::testing::makeGpuPod("infer", 1, {{"gputopo.dev/isolation", "exclusive"}});
  const json kept = json::parse(f.service.filter(Fixture::namesBody(exclusive)).body);
  CHECK(kept["NodeNames"] == json({"whole"}));
  REQUIRE(kept["FailedAndUnresolvableNodes"].contains("sliced"));
  CHECK(kept["FailedAndUnresolvableNodes"]["sliced"] == kRefusal);

  const gte::Reply explained = f.service.explain(Fixture::namesBody(exclusive));
  REQUIRE(explained.status == 200);
  const json nodes = json::parse(explained.body)["nodes"];
  bool seen = false;
  for (const json& node : nodes) {
    if (node["name"] != "sliced") continue;
    seen = true;
    CHECK(node["verdict"] == "unresolvable");
    CHECK(node["reason"] == kRefusal);
    CHECK(node["sharing"]["strategy"] == "time-slicing");
    CHECK(node["sharing"]["replicas"] == 4);
  }
  CHECK(seen);

  // A pod that accepts shared GPUs (the default) may land on either.
  const json any =
      json::parse(f.service.filter(Fixture::namesBody(gte::testing::makeGpuPod("web", 1))).body);
  CHECK(any["NodeNames"] == json({"sliced", "whole"}));
}

TEST_CASE("the node listing says how a node's GPUs are shared and counts no set there") {
  Fixture f;
  gte::NodesQuery query;
  query.node = "sliced";
  const gte::Reply reply = f.service.nodes(query);
  REQUIRE(reply.status == 200);
  const json node = json::parse(reply.body)["nodes"][0];
  CHECK(node["sharing"] == json({{"strategy", "time-slicing"},
                                 {"replicas", 4},
                                 {"oneReplicaPerContainer", false},
                                 {"unreadable", nullptr},
                                 {"tenants", json::array()}}));
  CHECK(node["freeSets"] == json({{"1", 8}, {"2", 0}, {"4", 0}, {"8", 0}}));
  query.node = "whole";
  CHECK(json::parse(f.service.nodes(query).body)["nodes"][0]["sharing"].is_null());
}

TEST_CASE("a what-if fills a time-sliced node by its replicas, naming no whole GPU") {
  // The sliced H100 advertises 32 replicas and the agent reports 3 held: a replay of one-GPU
  // pods places 29 there (bind reserves no whole GPU on it either) and 8 on the whole DGX-1V.
  gte::NodeInfo sliced = timeSliced();
  sliced.allocatable.set("nvidia.com/gpu", gte::Quantity::fromUnits(32));
  sliced.labels.insert_or_assign("gputopo.dev/tenants", std::string("03000000"));
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {sliced, gte::testing::makeDgx1Volta(FixtureState().withName("whole"))}, {}, {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
  const std::string body =
      R"({"pod":)" + gte::testing::podJson(gte::testing::makeGpuPod("web", 1)) + R"(,"count":40})";
  const gte::Reply reply = service.whatif(body);
  REQUIRE(reply.status == 200);
  const json run = json::parse(reply.body)["policies"][0];
  CHECK(run["placed"] == 37);
  int onSliced = 0;
  for (const json& placement : run["placements"]) {
    if (placement["node"] != "sliced") continue;
    ++onSliced;
    CHECK(placement["gpus"].empty());
    CHECK(placement["weakestLink"].is_null());
  }
  CHECK(onSliced == 29);
}

TEST_CASE("binds through the extender never give the last replica of a shared node twice") {
  // The agent reports 31 of the sliced node's 32 replicas held: one bind takes the last one, the
  // next is refused with the fit check's reason, and explain counts the bound pod as a tenant.
  gte::NodeInfo sliced = timeSliced();
  sliced.labels.insert_or_assign("gputopo.dev/tenants", std::string("44444443"));
  const gte::PodInfo first = gte::testing::makeGpuPod("first", 1);
  const gte::PodInfo second = gte::testing::makeGpuPod("second", 1);
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {sliced}, {{first, std::nullopt}, {second, std::nullopt}}, {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
  const auto bind = [&service](const std::string& name) {
    std::string answer;
    service.bind(R"({"PodName":")" + name + R"(","PodNamespace":"default","PodUID":"uid-)" + name +
                     R"(","Node":"sliced"})",
                 [&answer](gte::Reply r) { answer = r.body; });
    return json::parse(answer);
  };
  CHECK(bind("first")["Error"] == "");
  const json refused = bind("second");
  CHECK(refused["Error"].get<std::string>().find("no free replica of the node's shared GPUs") !=
        std::string::npos);
  const json explained =
      json::parse(service.explain(gte::testing::namesArgsJson(second, {"sliced"})).body);
  const json& node = explained["nodes"][0];
  CHECK(node["sharing"]["tenants"] == json::array({4, 4, 4, 4, 4, 4, 4, 4}));
}

TEST_CASE("explain says which GPUs a pod's replicas land on, and where the device plugin decides") {
  // Tenants 3,3,3,3,2,2,0,0: three replicas take GPUs 6 and 7 (the least held) and then one of
  // them again (both at 1 then): which one the plugin's sort decides.
  gte::NodeInfo sliced = timeSliced();
  sliced.labels.insert_or_assign("gputopo.dev/tenants", std::string("33332200"));
  gte::NodeInfo quiet = timeSliced();
  quiet.name = "quiet";
  quiet.labels.insert_or_assign("gputopo.dev/tenants", std::string("33332210"));
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{{sliced, quiet}, {}, {}}, policy, {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
  const auto landing = [&service](int replicas, const std::string& node) {
    const json explained = json::parse(
        service
            .explain(gte::testing::namesArgsJson(gte::testing::makeGpuPod("svc", replicas), {node}))
            .body);
    return explained["nodes"][0]["replicaGpus"];
  };
  CHECK(landing(3, "sliced") == json::parse(R"({"count":3,"on":[{"gpu":6,"replicas":1},
        {"gpu":7,"replicas":1}],"undecided":1,"tied":[6,7]})"));
  // One replica on the node whose GPU 7 alone has none: known.
  CHECK(landing(1, "quiet") ==
        json::parse(R"({"count":1,"on":[{"gpu":7,"replicas":1}],"undecided":0,"tied":[]})"));
  // A pod of 40 replicas does not fit (32 advertised): no landing.
  CHECK(landing(40, "quiet").is_null());
}

TEST_CASE("filter sends nvidia.com/gpu.shared pods to the nodes that advertise it, and only them") {
  // The device plugin's renameByDefault: the sliced node advertises nvidia.com/gpu.shared.
  gte::NodeInfo renamed = timeSliced();
  renamed.allocatable = gte::ResourceList{};
  renamed.allocatable.set("nvidia.com/gpu.shared", gte::Quantity::fromUnits(32));
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {renamed, gte::testing::makeDgx1Volta(FixtureState().withName("whole"))}, {}, {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
  gte::PodInfo svc = gte::testing::makeGpuPod("svc", 0);
  svc.requests.set("nvidia.com/gpu.shared", gte::Quantity::fromUnits(1));
  const json shared =
      json::parse(service.filter(gte::testing::namesArgsJson(svc, {"sliced", "whole"})).body);
  CHECK(shared["NodeNames"] == json({"sliced"}));
  CHECK(shared["FailedAndUnresolvableNodes"]["whole"] ==
        "gpu-topology: node does not advertise nvidia.com/gpu.shared");
  const json plain = json::parse(service
                                     .filter(gte::testing::namesArgsJson(
                                         gte::testing::makeGpuPod("job", 1), {"sliced", "whole"}))
                                     .body);
  CHECK(plain["NodeNames"] == json({"whole"}));
}

TEST_CASE("a shared MIG profile: the node listing names it and filter keeps exclusive pods off") {
  // A DGX A100 with MIG on GPUs 0 and 1, its 1g.10gb devices time-sliced 2 ways (GFD's labels
  // under the mixed MIG strategy), beside a whole DGX-1V.
  gte::NodeInfo mig = gte::testing::makeDgxA100(FixtureState()
                                                    .withName("mig")
                                                    .withUsed("mm010000")
                                                    .withMig("11000000")
                                                    .withMigTokens(0, "10u02f03u24f")
                                                    .withMigTokens(1, "00f01f02u03f04f05u06f"));
  mig.labels.insert_or_assign("nvidia.com/mig-1g.10gb.sharing-strategy",
                              std::string("time-slicing"));
  mig.labels.insert_or_assign("nvidia.com/mig-1g.10gb.replicas", std::string("2"));
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {mig, gte::testing::makeDgx1Volta(FixtureState().withName("whole"))}, {}, {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
  gte::NodesQuery query;
  query.node = "mig";
  const json node = json::parse(service.nodes(query).body)["nodes"][0];
  // Free replicas: GPU0's free 1g device (2) and GPU1's five (10).
  CHECK(node["mig"]["shared"] ==
        json({{"1g.10gb", {{"strategy", "time-slicing"}, {"replicas", 2}, {"freeReplicas", 12}}}}));
  CHECK(node["sharing"].is_null());  // its whole GPUs are not shared

  gte::PodInfo exclusive = gte::testing::makeMigPod("m", {{"1g.10gb", 1}});
  exclusive.annotations["gputopo.dev/isolation"] = "exclusive";
  const json kept =
      json::parse(service.filter(gte::testing::namesArgsJson(exclusive, {"mig", "whole"})).body);
  CHECK(kept["NodeNames"].empty());
  REQUIRE(kept["FailedAndUnresolvableNodes"].contains("mig"));
  CHECK(kept["FailedAndUnresolvableNodes"]["mig"] ==
        "gpu-topology: MIG 1g.10gb devices shared by time-slicing, 2 replicas each; the pod asks "
        "for exclusive GPUs");
  const json shared =
      json::parse(service
                      .filter(gte::testing::namesArgsJson(
                          gte::testing::makeMigPod("m", {{"1g.10gb", 1}}), {"mig", "whole"}))
                      .body);
  CHECK(shared["NodeNames"] == json({"mig"}));
}
