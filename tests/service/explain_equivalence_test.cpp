// Explain must say what filter and prioritize answer: for the same request, each node's verdict
// and reason equal filter's (kept, FailedNodes, FailedAndUnresolvableNodes with the same text) and
// its wireScore equals the Score prioritize answers for the nodes filter kept (what kube-scheduler
// sends it), in both cache modes, on nodes built from the real `nvidia-smi topo -m` captures in
// tests/data/topologies (with some GPUs in use), the DGX A100 in MIG mode, and nodes whose
// topology is hidden from the extender (GPU Feature Discovery labels only).
#include <catch2/catch_test_macros.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/topo_matrix.h"

using nlohmann::json;

namespace {

using gte::NodeInfo;
using gte::PodInfo;

struct Capture {
  const char* file;
  const char* model;
  const char* used;  // labels-v1 `used`, nullptr: all free
};

// Every complete capture; some with GPUs in use so pods meet fragmented nodes.
constexpr Capture kCaptures[] = {
    {"aws-p4d-a100-nvswitch.topo", "NVIDIA-A100-SXM4-40GB", "11000000"},
    {"dgx1-p100-nvlink-only.topo", "Tesla-P100-SXM2-16GB", nullptr},
    {"dgx1-v100-cubemesh.topo", "Tesla-V100-SXM2-16GB", "00100100"},
    {"g6e-l40sx4-node.topo", "NVIDIA-L40S", "1000"},
    {"gb200-tray-nv18.topo", "NVIDIA-GB200", nullptr},
    {"hgx-a100-nvswitch.topo", "NVIDIA-A100-SXM4-80GB", "10101010"},
    {"hgx-h100-nvswitch.topo", "NVIDIA-H100-80GB-HBM3", nullptr},
    {"k80x2-workstation-pix-phb.topo", "Tesla-K80", nullptr},
    {"pcie8-pix-phb-sys.topo", "NVIDIA-A40", "10000001"},
    {"pcie8-pix-pxb-sys.topo", "Tesla-V100-PCIE-16GB", nullptr},
    {"rtx4090x8-all-sys.topo", "NVIDIA-GeForce-RTX-4090", "11111100"},
};

std::vector<NodeInfo> captureNodes() {
  std::vector<NodeInfo> nodes;
  for (const Capture& c : kCaptures) {
    auto text =
        gte::testing::readTextFile(std::string(GTE_TEST_DATA_DIR) + "/topologies/" + c.file);
    REQUIRE(text.ok());
    gte::testing::TopoNodeOptions options;
    options.name = std::string(c.file).substr(0, std::string(c.file).find('.'));
    options.model = c.model;
    if (c.used) options.used = c.used;
    auto node = gte::testing::nodeFromTopoMatrix(*text, options);
    REQUIRE(node.ok());
    nodes.push_back(*node);
  }
  // MIG: the DGX A100 of the labels-v1 worked example (GPUs 0 and 1 partitioned, 3 in use).
  nodes.push_back(gte::testing::makeDgxA100(gte::testing::FixtureState()
                                                .withName("dgx-a100-mig")
                                                .withUsed("mm010000")
                                                .withMig("11000000")
                                                .withMigTokens(0, "10u02f03u24f")
                                                .withMigTokens(1, "00f01f02u03f04f05u06f")));
  nodes.push_back(gte::testing::makeGfdNode("gfd-only", 4, "NVIDIA-A100-SXM4-40GB"));
  return nodes;
}

std::vector<PodInfo> pods() {
  using gte::testing::makeGpuPod;
  return {
      makeGpuPod("one", 1),
      makeGpuPod("pair-nvlink", 2, {{"gputopo.dev/min-link", "nvlink"}}),
      makeGpuPod("four", 4),
      makeGpuPod("four-numa", 4, {{"gputopo.dev/numa", "single"}}),
      makeGpuPod("eight", 8),
      makeGpuPod("spread-two", 2, {{"gputopo.dev/strategy", "spread"}}),
      gte::testing::makeMigPod("mig", {{"3g.40gb", 1}}),
      gte::testing::makeMigPod("mig-small", {{"1g.10gb", 2}}),
      makeGpuPod("bad-annotation", 2, {{"gputopo.dev/min-link", "fast"}}),
  };
}

std::string namesBody(const PodInfo& pod, const std::vector<NodeInfo>& nodes) {
  std::string body = R"({"Pod":)" + gte::testing::podJson(pod) + R"(,"Nodes":null,"NodeNames":[)";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i) body.push_back(',');
    body.append("\"").append(nodes[i].name).append("\"");
  }
  return body + "]}";
}

std::string nodesBody(const PodInfo& pod, const std::vector<NodeInfo>& nodes) {
  std::string body = R"({"Pod":)" + gte::testing::podJson(pod) + R"(,"Nodes":{"items":[)";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i) body.push_back(',');
    body.append(gte::testing::nodeJson(nodes[i]));
  }
  return body + R"(]},"NodeNames":null})";
}

struct Tally {
  std::map<std::string, int> verdicts;
  std::set<int> wireScores;
  // Kept nodes whose Score differs when prioritize is sent every node of the request instead of
  // only those filter kept: the rejected nodes shifted the scale.
  int scaledByRejected = 0;
  int gpuSets = 0;
  int migPlacements = 0;
};

// One request through the three endpoints; explain must agree with the other two on every node.
void checkAgreement(const gte::ExtenderService& service, const PodInfo& pod,
                    const std::vector<NodeInfo>& nodes, bool namesMode, Tally& tally) {
  const std::string body = namesMode ? namesBody(pod, nodes) : nodesBody(pod, nodes);
  const auto filterReply = service.filter(body);
  const auto prioritizeReply = service.prioritize(body);
  const auto explainReply = service.explain(body);
  REQUIRE(filterReply.status == 200);
  REQUIRE(prioritizeReply.status == 200);
  REQUIRE(explainReply.status == 200);
  const json filtered = json::parse(filterReply.body);
  const json prioritized = json::parse(prioritizeReply.body);
  const json explained = json::parse(explainReply.body);
  REQUIRE(filtered["Error"] == "");
  CHECK(explained["mode"] == (namesMode ? "nodeNames" : "nodes"));

  std::set<std::string> kept;
  if (namesMode) {
    for (const auto& name : filtered["NodeNames"])
      kept.insert(name.get<std::string>());
  } else {
    for (const auto& node : filtered["Nodes"]["items"])
      kept.insert(node["metadata"]["name"].get<std::string>());
  }
  std::map<std::string, int> wire;
  for (const auto& host : prioritized)
    wire[host["Host"].get<std::string>()] = host["Score"].get<int>();
  // What prioritize answers when sent only the nodes filter kept, which is what kube-scheduler
  // sends it.
  std::vector<NodeInfo> keptNodes;
  for (const NodeInfo& node : nodes) {
    if (kept.count(node.name) == 1) keptNodes.push_back(node);
  }
  const auto keptReply =
      service.prioritize(namesMode ? namesBody(pod, keptNodes) : nodesBody(pod, keptNodes));
  REQUIRE(keptReply.status == 200);
  std::map<std::string, int> keptWire;
  for (const auto& host : json::parse(keptReply.body))
    keptWire[host["Host"].get<std::string>()] = host["Score"].get<int>();

  const json& explainedNodes = explained["nodes"];
  REQUIRE(explainedNodes.size() == nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& node = explainedNodes[i];
    const std::string name = node["name"].get<std::string>();
    const std::string verdict = node["verdict"].get<std::string>();
    CAPTURE(name, verdict, node.dump());
    CHECK(name == nodes[i].name);
    CHECK((verdict == "fit") == (kept.count(name) == 1));
    if (verdict == "unschedulable") {
      REQUIRE(filtered["FailedNodes"].contains(name));
      CHECK(filtered["FailedNodes"][name] == node["reason"]);
    } else {
      CHECK_FALSE(filtered["FailedNodes"].contains(name));
    }
    if (verdict == "unresolvable") {
      REQUIRE(filtered["FailedAndUnresolvableNodes"].contains(name));
      CHECK(filtered["FailedAndUnresolvableNodes"][name] == node["reason"]);
    } else {
      CHECK_FALSE(filtered["FailedAndUnresolvableNodes"].contains(name));
    }
    if (verdict == "fit") CHECK(node["reason"] == "");
    REQUIRE(wire.count(name) == 1);
    if (verdict == "fit") {
      CHECK(node["wireScore"].get<int>() == keptWire.at(name));
      CHECK(node["wireScoreAfterFilter"].get<int>() == keptWire.at(name));
      if (wire[name] != keptWire.at(name)) ++tally.scaledByRejected;
    } else {
      CHECK(node["wireScore"].get<int>() == 0);  // never sent to prioritize
      CHECK(node["wireScoreAfterFilter"].is_null());
    }
    CHECK(node["score"].get<int>() >= 0);
    CHECK(node["score"].get<int>() <= 100);

    ++tally.verdicts[verdict];
    tally.wireScores.insert(node["wireScore"].get<int>());
    const json& demand = explained["pod"]["demand"];
    if (verdict == "fit" && !demand.is_null() && demand["gpus"].get<int>() > 0) {
      // The device plugin hands out exactly the requested number of GPUs on a fitting node.
      CHECK(node["gpus"].size() == demand["gpus"].get<std::size_t>());
      ++tally.gpuSets;
    }
    if (verdict == "fit" && !demand.is_null() && !demand["mig"].empty()) {
      CHECK_FALSE(node["mig"].empty());
      ++tally.migPlacements;
    }
  }
}

}  // namespace

TEST_CASE("Explain agrees with filter and prioritize in both cache modes on real captures") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const std::vector<NodeInfo> nodes = captureNodes();
  gte::ExtenderService fullNodes([policy] { return policy; }, nullptr, nullptr);
  gte::cluster::StaticClusterBackend cluster(gte::cluster::ClusterFileContents{nodes, {}, {}},
                                             policy);
  gte::ExtenderService names([policy] { return policy; }, &cluster, nullptr);

  Tally tally;
  for (const PodInfo& pod : pods()) {
    CAPTURE(pod.name);
    checkAgreement(fullNodes, pod, nodes, false, tally);
    checkAgreement(names, pod, nodes, true, tally);
  }
  // The pods and captures exercise every verdict, several wire steps, GPU sets and MIG placements.
  CHECK(tally.verdicts["fit"] > 0);
  CHECK(tally.verdicts["unschedulable"] > 0);
  CHECK(tally.verdicts["unresolvable"] > 0);
  CHECK(tally.wireScores.size() >= 3);
  CHECK(tally.gpuSets > 0);
  CHECK(tally.migPlacements > 0);
}

TEST_CASE("Explain's wire scores are prioritize's over the nodes filter kept, not every node") {
  // A 2-GPU pod that needs NVLink, on three DGX-1Vs with different free GPUs and two nodes whose
  // topology the extender cannot see (GPU Feature Discovery labels only). Filter rejects the hidden
  // ones (min-link cannot be judged there); prioritize, sent every node, would rank them as a
  // weaker link class and squeeze the DGX-1Vs into 2..10. kube-scheduler sends prioritize only the
  // three DGX-1Vs, which get the whole 0..10: explain must say that.
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  using gte::testing::FixtureState;
  const std::vector<NodeInfo> nodes = {
      gte::testing::makeDgx1Volta(FixtureState().withName("dgx1-empty")),
      gte::testing::makeDgx1Volta(FixtureState().withName("dgx1-two-used").withUsed("00100100")),
      gte::testing::makeDgx1Volta(FixtureState().withName("dgx1-five-used").withUsed("11101100")),
      gte::testing::makeGfdNode("hidden-a", 4, "NVIDIA-A100-SXM4-40GB"),
      gte::testing::makeGfdNode("hidden-b", 8, "NVIDIA-A100-SXM4-40GB"),
  };
  gte::ExtenderService fullNodes([policy] { return policy; }, nullptr, nullptr);
  gte::cluster::StaticClusterBackend cluster(gte::cluster::ClusterFileContents{nodes, {}, {}},
                                             policy);
  gte::ExtenderService names([policy] { return policy; }, &cluster, nullptr);
  const PodInfo pod =
      gte::testing::makeGpuPod("pair-nvlink", 2, {{"gputopo.dev/min-link", "nvlink"}});
  Tally tally;
  checkAgreement(fullNodes, pod, nodes, false, tally);
  checkAgreement(names, pod, nodes, true, tally);
  CHECK(tally.verdicts["fit"] == 6);
  CHECK(tally.verdicts["unresolvable"] == 4);
  // The case is the one that tells the two scales apart.
  CHECK(tally.scaledByRejected > 0);
}
