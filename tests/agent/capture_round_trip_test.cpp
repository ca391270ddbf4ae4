// Every capture round-trips: capture -> agent discovery -> published labels -> the extender's
// reader gives the same links, NUMA and counts as the extender's own reading of the capture
// (the test converter in tests/support), and every label passes the Kubernetes label rules.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/label_rules.h"
#include "agent/publishable_labels.h"
#include "agent/text_discovery.h"
#include "agent/usage.h"
#include "policy/default_policy.h"
#include "support/topo_matrix.h"
#include "topology/topology_labels.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

const std::string kTopologies = std::string(GTE_TEST_DATA_DIR) + "/topologies/";
const std::string kAgentData = std::string(GTE_TEST_DATA_DIR) + "/agent/";
constexpr std::int64_t kGen = 1764670000;

CaptureFile capture(const std::string& path) {
  auto text = readCaptureFile(path);
  REQUIRE(text.ok());
  return CaptureFile{path, *text};
}

GpuTopology readBack(const StringMap& labels, const Policy& policy) {
  NodeInfo node;
  node.name = "agent-node";
  node.labels = labels;
  auto topo = readLabelsV1(node, policy);
  REQUIRE(topo.ok());
  return *topo;
}

std::vector<std::string> captureFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kTopologies)) {
    if (entry.path().extension() != ".topo") continue;  // the folder's README is no capture
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("every complete capture: agent labels read back as the extender reads the capture",
          "[agent][captures]") {
  const Policy policy = defaultPolicy();
  int complete = 0;
  for (const std::string& file : captureFiles()) {
    INFO(file);
    const CaptureFile topo = capture(kTopologies + file);
    auto discovery = discoverFromText(TextCaptures{topo, {}, {}}, "Test-GPU", policy.migProducts);
    if (file.find("partial") != std::string::npos) {
      REQUIRE_FALSE(discovery.ok());
      CHECK_THAT(discovery.error().message, StartsWith(kTopologies + file + ":"));
      CHECK_THAT(discovery.error().message, ContainsSubstring("(partial capture)"));
      continue;
    }
    REQUIRE(discovery.ok());
    ++complete;
    auto labels = publishableLabels(*discovery, kGen, policy);
    REQUIRE(labels.ok());
    for (const auto& [key, value] : *labels) {
      INFO(key << "=" << value);
      CHECK(checkLabelKey(key).ok());
      CHECK(checkLabelValue(value).ok());
      CHECK(value.size() <= 63);
    }
    const GpuTopology agent = readBack(*labels, policy);

    testing::TopoNodeOptions options;
    options.model = "Test-GPU";
    auto reference = testing::nodeFromTopoMatrix(topo.text, options);
    REQUIRE(reference.ok());
    auto extender = readLabelsV1(*reference, policy);
    REQUIRE(extender.ok());
    CHECK(agent.gpuCount == extender->gpuCount);
    CHECK(agent.nvlinks == extender->nvlinks);
    CHECK(agent.pcie == extender->pcie);
    CHECK(agent.numa == extender->numa);
    CHECK(agent.fabric == extender->fabric);
    CHECK(agent.linksKnown);
    CHECK(agent.generation == kGen);
    for (int i = 0; i < agent.gpuCount; ++i) {
      for (int j = i + 1; j < agent.gpuCount; ++j) {
        CHECK(agent.linkClass(i, j) == extender->linkClass(i, j));
      }
    }
  }
  CHECK(complete == 11);
}

// Shared GPUs (docs/sharing.md): the kubelet reports a replica of a time-sliced GPU as
// "<GPU id>::<n>". Each is a tenant of its GPU, which stays free for the replicas left; the agent
// publishes the tenants per GPU, and the extender reads them back.
TEST_CASE("replica ids count tenants per GPU and are published as `tenants`", "[agent][sharing]") {
  const Policy policy = defaultPolicy();
  TextCaptures captures{capture(kTopologies + "dgx1-v100-cubemesh.topo"),
                        capture(kAgentData + "dgx1-v100.topo-mp"),
                        {}};
  auto discovery = discoverFromText(captures, "Tesla-V100-SXM2-16GB", policy.migProducts);
  REQUIRE(discovery.ok());
  CHECK(splitReplicaId("GPU-8c5f::2")->device == "GPU-8c5f");
  CHECK(splitReplicaId("GPU-8c5f::2")->replica == 2);
  for (const char* id : {"GPU-8c5f", "::2", "GPU-8c5f::", "GPU-8c5f::x", "GPU-8c5f::-1"})
    CHECK_FALSE(splitReplicaId(id));
  // Three replicas of GPU 1, one of GPU 6, GPU 2 whole; one replica of a GPU this node lacks.
  const auto unmatched =
      applyDeviceIds(*discovery, {"1::0", "1::3", "1::1", "6::2", "2", "9::0", "1::x"});
  CHECK(unmatched == std::vector<std::string>{"9::0", "1::x"});
  auto labels = publishableLabels(*discovery, kGen, policy);
  REQUIRE(labels.ok());
  CHECK(labels->at("gputopo.dev/used") == "00100000");
  CHECK(labels->at("gputopo.dev/tenants") == "03000010");
  NodeInfo node;
  node.name = "dgx";
  node.labels = *labels;
  const auto read = readTopology(node, policy);
  REQUIRE(read.ok());
  CHECK(read->tenantsOf(1) == 3);
  CHECK(read->tenantsOf(6) == 1);
  CHECK(read->tenantsOf(0) == 0);
  // No tenant anywhere: no `tenants` label, as before sharing was read.
  auto whole = discoverFromText(captures, "Tesla-V100-SXM2-16GB", policy.migProducts);
  REQUIRE(whole.ok());
  CHECK_FALSE(publishableLabels(*whole, kGen, policy)->contains("gputopo.dev/tenants"));
  // A tenants value that does not read makes the labels malformed, as any per-GPU key.
  node.labels["gputopo.dev/tenants"] = "03000!10";
  CHECK_FALSE(readTopology(node, policy).ok());
}

TEST_CASE("topo -mp fills the PCIe level topo -m hides: DGX-1V equals the spec's example",
          "[agent][captures]") {
  const Policy policy = defaultPolicy();
  TextCaptures captures{capture(kTopologies + "dgx1-v100-cubemesh.topo"),
                        capture(kAgentData + "dgx1-v100.topo-mp"),
                        {}};
  auto discovery = discoverFromText(captures, "Tesla-V100-SXM2-16GB", policy.migProducts);
  REQUIRE(discovery.ok());
  REQUIRE(applyUsedBits(*discovery, "00100100").ok());
  auto labels = publishableLabels(*discovery, kGen, policy);
  REQUIRE(labels.ok());
  CHECK(*labels == StringMap{{"gputopo.dev/v", "1"},
                             {"gputopo.dev/n", "8"},
                             {"gputopo.dev/model", "Tesla-V100-SXM2-16GB"},
                             {"gputopo.dev/fabric", "mesh"},
                             {"gputopo.dev/nvl", "1122000210200200100001112212"},
                             {"gputopo.dev/pci", "PHHSSSSHHSSSSPSSSSSSSSPHHHHP"},
                             {"gputopo.dev/numa", "ZZZZZZZZ"},
                             {"gputopo.dev/health", "11111111"},
                             {"gputopo.dev/used", "00100100"},
                             {"gputopo.dev/mig", "nnnnnnnn"},
                             {"gputopo.dev/gen", "1764670000"}});
}

TEST_CASE("topo -mp that contradicts topo -m is rejected", "[agent][captures]") {
  TextCaptures captures{capture(kTopologies + "pcie8-pix-pxb-sys.topo"),
                        capture(kAgentData + "dgx1-v100.topo-mp"),
                        {}};
  auto discovery = discoverFromText(captures, "", defaultPolicy().migProducts);
  REQUIRE_FALSE(discovery.ok());
  CHECK_THAT(discovery.error().message,
             StartsWith(kAgentData + "dgx1-v100.topo-mp:2: GPU0/GPU2 PCIe level differs"));
}

TEST_CASE("a partial topo -mp is rejected with its file and line", "[agent][captures]") {
  TextCaptures captures{capture(kTopologies + "dgx1-v100-cubemesh.topo"),
                        capture(kAgentData + "dgx1-v100-partial.topo-mp"),
                        {}};
  auto discovery = discoverFromText(captures, "", defaultPolicy().migProducts);
  REQUIRE_FALSE(discovery.ok());
  CHECK(discovery.error().message ==
        kAgentData + "dgx1-v100-partial.topo-mp:9: no row for GPU7 of 8 (partial capture)");
}

TEST_CASE("MIG listing: the DGX A100 worked example of the spec", "[agent][captures]") {
  const Policy policy = defaultPolicy();
  TextCaptures captures{capture(kTopologies + "hgx-a100-nvswitch.topo"),
                        {},
                        capture(kAgentData + "dgx-a100-mig.txt")};
  auto discovery = discoverFromText(captures, "NVIDIA-A100-SXM4-80GB", policy.migProducts);
  REQUIRE(discovery.ok());
  REQUIRE(applyUsedBits(*discovery, "mm010000").ok());
  auto labels = publishableLabels(*discovery, kGen, policy);
  REQUIRE(labels.ok());
  CHECK(labels->at("gputopo.dev/mig") == "11000000");
  CHECK(labels->at("gputopo.dev/used") == "mm010000");
  CHECK(labels->at("gputopo.dev/mig0") == "10f02f03f24f");
  CHECK(labels->at("gputopo.dev/mig1") == "00f01f02f03f04f05f06f");
  CHECK(labels->at("gputopo.dev/numa") == "33117755");
  const GpuTopology topo = readBack(*labels, policy);
  CHECK(topo.migInstances[0].size() == 4);
  CHECK(topo.migMode[2] == MigMode::kDisabled);  // A100 without MIG: capable, disabled
}

TEST_CASE("used bits: errors", "[agent][captures]") {
  const Policy policy = defaultPolicy();
  TextCaptures captures{capture(kTopologies + "hgx-a100-nvswitch.topo"),
                        {},
                        capture(kAgentData + "dgx-a100-mig.txt")};
  auto discovery = discoverFromText(captures, "NVIDIA-A100-SXM4-80GB", policy.migProducts);
  REQUIRE(discovery.ok());
  CHECK_THAT(applyUsedBits(*discovery, "0000").error().message,
             ContainsSubstring("4 characters, want one per GPU (8)"));
  CHECK_THAT(applyUsedBits(*discovery, "1m000000").error().message,
             ContainsSubstring("for GPU 0 (MIG enabled: want m or 0)"));
  CHECK_THAT(applyUsedBits(*discovery, "mmm00000").error().message,
             ContainsSubstring("for GPU 2 (want 0 or 1)"));
}

TEST_CASE("a MIG instance at a placement -lgipp does not list is rejected", "[agent][captures]") {
  const std::string mig =
      "| GPU instances:                                        |\n"
      "|   0  MIG 3g.40gb          9        2          2:4     |\n"
      "+-------------------------------------------------------+\n"
      "GPU  0 Profile ID  9 Placements: {0,4}:4\n";
  TextCaptures captures{
      capture(kTopologies + "hgx-a100-nvswitch.topo"), {}, CaptureFile{"mig.txt", mig}};
  auto discovery = discoverFromText(captures, "NVIDIA-A100-SXM4-80GB", defaultPolicy().migProducts);
  REQUIRE_FALSE(discovery.ok());
  CHECK(discovery.error().message ==
        "mig.txt:2: placement 2:4 of profile ID 9 is not among the -lgipp placements");
}

}  // namespace
}  // namespace gte::agent
