// Pods without GPU, MIG or DRA demand in NodeNames mode (with the chart's extender.dra
// kube-scheduler sends every pod, docs/dra.md "Install"): filter keeps every named node, one the
// cache does not know included, and prioritize scores every node 0, answered from the names alone.
// A GPU pod on the same names still gets the general path (the unknown node is unresolvable).
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

struct Fixture {
  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{
          {gte::testing::makeDgx1Volta(FixtureState().withName("dgx")),
           gte::testing::make4xPcieL40s(FixtureState().withName("l40s"))},
          {},
          {}},
      policy,
      {}};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};

  static std::string namesBody(const gte::PodInfo& pod) {
    return gte::testing::namesArgsJson(pod, {"dgx", "not-cached", "l40s"});
  }
};

}  // namespace

TEST_CASE("A pod without GPU demand fits every named node with score 0") {
  Fixture f;
  const std::string cpu = Fixture::namesBody(gte::testing::makeGpuPod("web", 0));
  const json kept = json::parse(f.service.filter(cpu).body);
  CHECK(kept["NodeNames"] == json({"dgx", "not-cached", "l40s"}));
  CHECK(kept["FailedNodes"].empty());
  CHECK(kept["FailedAndUnresolvableNodes"].empty());
  const json scores = json::parse(f.service.prioritize(cpu).body);
  REQUIRE(scores.size() == 3);
  for (const json& host : scores)
    CHECK(host["Score"] == 0);
  CHECK(scores[1]["Host"] == "not-cached");

  const std::string gpu = Fixture::namesBody(gte::testing::makeGpuPod("train", 2));
  const json general = json::parse(f.service.filter(gpu).body);
  CHECK(general["NodeNames"] == json({"dgx", "l40s"}));
  CHECK(general["FailedAndUnresolvableNodes"].contains("not-cached"));
}
