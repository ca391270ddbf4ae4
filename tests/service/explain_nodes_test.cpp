// Explain by pod name against the cluster cache, and the details explain adds to the verdicts:
// the GPUs the pod would get, their weakest link and NUMA span, the best set, MIG placements.
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

using nlohmann::json;

namespace {

using gte::testing::FixtureState;

struct Fixture {
  std::shared_ptr<const gte::Policy> policy =
      std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::vector<gte::NodeInfo> nodes = {
      gte::testing::makeDgxH100(FixtureState().withName("h100")),
      gte::testing::makeDgx1Volta(FixtureState().withName("v100").withUsed("00100100")),
      gte::testing::make4xPcieL40s(FixtureState().withName("l40s")),
      gte::testing::makeDgxA100(FixtureState()
                                    .withName("a100-mig")
                                    .withUsed("mm010000")
                                    .withMig("11000000")
                                    .withMigTokens(0, "10u02f03u24f")
                                    .withMigTokens(1, "00f01f02u03f04f05u06f")),
  };
  std::vector<gte::cluster::FilePod> filePods() const {
    return {
        {gte::testing::makeGpuPod("four", 4), std::nullopt},
        {gte::testing::makeGpuPod("eight", 8), std::nullopt},
        {gte::testing::makeGpuPod("pair", 2, {{"gputopo.dev/min-link", "nvlink"}}), std::nullopt},
        {gte::testing::makeMigPod("mig", {{"3g.40gb", 1}}), std::nullopt}};
  }
  gte::cluster::StaticClusterBackend cluster{
      gte::cluster::ClusterFileContents{nodes, filePods(), {}}, policy};
  gte::ExtenderService service{[p = policy] { return p; }, &cluster, nullptr};
};

const json& nodeNamed(const json& doc, const std::string& name) {
  for (const json& node : doc["nodes"]) {
    if (node["name"] == name) return node;
  }
  FAIL("no node " << name << " in " << doc.dump());
  return doc;
}

}  // namespace

TEST_CASE("Explain by pod name covers every cached node, sorted, with the pod's own demand") {
  Fixture f;
  const auto reply = f.service.explainPod("default/four");
  REQUIRE(reply.status == 200);
  const json doc = json::parse(reply.body);
  CHECK(doc["mode"] == "cluster");
  CHECK(doc["pod"]["namespace"] == "default");
  CHECK(doc["pod"]["name"] == "four");
  CHECK(doc["pod"]["demand"]["gpus"] == 4);
  CHECK(doc["pod"]["demand"]["minLink"].is_null());
  std::vector<std::string> names;
  for (const json& node : doc["nodes"])
    names.push_back(node["name"]);
  CHECK(names == std::vector<std::string>{"a100-mig", "h100", "l40s", "v100"});

  // The same numbers as a POST of the pod with every node's name (which is what filter sees).
  const std::string body =
      R"({"Pod":{"metadata":{"name":"four","namespace":"default","uid":"uid-four"},"spec":)"
      R"({"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}},)"
      R"("NodeNames":["a100-mig","h100","l40s","v100"]})";
  const json posted = json::parse(f.service.explain(body).body);
  CHECK(posted["nodes"] == doc["nodes"]);
}

TEST_CASE("Explain shows the GPUs, weakest link, NUMA span and best set the pod would get") {
  Fixture f;
  const json four = json::parse(f.service.explainPod("default/four").body);
  const json& h100 = nodeNamed(four, "h100");
  CHECK(h100["verdict"] == "fit");
  CHECK(h100["gpus"] == json::array({0, 1, 2, 3}));  // one NUMA node's worth on an empty DGX H100
  CHECK(h100["weakestLink"] == "nvlink");
  CHECK(h100["numaSpan"] == 1);
  CHECK(h100["best"]["weakestLink"] == "nvlink");
  CHECK(h100["terms"].contains("linkQuality"));
  CHECK(h100["terms"]["linkQuality"]["value"] == 1200);
  CHECK_FALSE(h100["terms"].contains("migFit"));  // a whole-GPU pod has no MIG term
  CHECK(h100["freeGpus"] == 8);

  const json eight = json::parse(f.service.explainPod("default/eight").body);
  CHECK(nodeNamed(eight, "h100")["numaSpan"] == 2);
  const json& v100 = nodeNamed(eight, "v100");  // two of its GPUs are in use
  CHECK(v100["verdict"] == "unschedulable");
  CHECK(v100["reason"] == "gpu-topology: insufficient free GPUs");
  CHECK(v100["gpus"].empty());
  CHECK(v100["best"].is_null());
  CHECK(nodeNamed(eight, "l40s")["verdict"] == "unresolvable");

  const json pair = json::parse(f.service.explainPod("default/pair").body);
  const json& l40s = nodeNamed(pair, "l40s");  // PCIe only: no NVLink pair at all
  CHECK(l40s["verdict"] == "unresolvable");
  CHECK(l40s["weakestLink"] == "node");  // what the device plugin would have handed out
  CHECK(pair["pod"]["demand"]["minLink"] == "nvlink");

  const json mig = json::parse(f.service.explainPod("default/mig").body);
  const json& a100 = nodeNamed(mig, "a100-mig");
  CHECK(a100["verdict"] == "fit");
  REQUIRE(a100["mig"].size() == 1);
  CHECK(a100["mig"][0]["profile"] == "3g.40gb");
  CHECK(a100["terms"].contains("migFit"));
  CHECK(nodeNamed(mig, "h100")["verdict"] != "fit");
}

TEST_CASE("Explain names the free NVLink set a pod would break and what it costs the score") {
  Fixture f;
  // The empty DGX H100 holds the cluster's only free 8-GPU NVLink set; a 4-GPU pod there breaks
  // it. The v100 (two GPUs used) holds no set bigger than four, so it breaks none.
  const json four = json::parse(f.service.explainPod("default/four").body);
  const json& h100 = nodeNamed(four, "h100");
  REQUIRE(h100["terms"].contains("scarceSets"));
  CHECK(h100["terms"]["scarceSets"] ==
        json::parse(R"({"points": 8, "broken": [{"gpus": 8, "nodesHolding": 1}]})"));
  CHECK_FALSE(nodeNamed(four, "v100")["terms"].contains("scarceSets"));
  // The score shown is the one prioritize ranks by: the weighted terms less those points.
  const json& terms = h100["terms"];
  const double weighted = (terms["linkQuality"]["value"].get<double>() * 60 +
                           terms["numaLocality"]["value"].get<double>() * 10 +
                           terms["packing"]["value"].get<double>() * 30) /
                          1200.0;
  CHECK(h100["score"] == static_cast<int>(weighted + 0.5) - 8);
  // An 8-GPU pod needs the set: it breaks nothing bigger than itself.
  const json eight = json::parse(f.service.explainPod("default/eight").body);
  CHECK_FALSE(nodeNamed(eight, "h100")["terms"].contains("scarceSets"));
}

TEST_CASE("Explain by pod name: unknown pods, bad references and no cluster are clear errors") {
  Fixture f;
  const auto missing = f.service.explainPod("default/nope");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("default/nope") != std::string::npos);
  CHECK(f.service.explainPod("no-slash").status == 400);
  CHECK(f.service.explainPod("/x").status == 400);

  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::ExtenderService noCluster([policy] { return policy; }, nullptr, nullptr);
  const auto reply = noCluster.explainPod("default/four");
  CHECK(reply.status == 400);
  CHECK(reply.body.find("cluster cache") != std::string::npos);
}
