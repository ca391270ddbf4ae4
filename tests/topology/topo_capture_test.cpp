// Every real `nvidia-smi topo -m` capture in tests/data/topologies goes through the test
// converter into labels-v1 and back through the label reader; partial captures are rejected.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/node_state.h"
#include "policy/default_policy.h"
#include "support/topo_matrix.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

const std::string kTopologies = std::string(GTE_TEST_DATA_DIR) + "/topologies/";

struct Capture {
  std::string file;
  int gpus;
  std::string fabric;
  LinkClass pair01;   // class of GPU pair (0, 1)
  LinkClass weakest;  // weakest pair on the node
  std::string numa;
};

testing::TopoNodeOptions namedOptions(const std::string& name) {
  testing::TopoNodeOptions options;
  options.name = name;
  return options;
}

NodeInfo loadCapture(const std::string& file) {
  const Result<std::string> text = testing::readTextFile(kTopologies + file);
  REQUIRE(text.ok());
  const Result<NodeInfo> node = testing::nodeFromTopoMatrix(*text, namedOptions(file));
  REQUIRE(node.ok());
  return *node;
}

TEST_CASE("every complete capture converts and reads back", "[topology][captures]") {
  const std::vector<Capture> captures = {
      {"aws-p4d-a100-nvswitch.topo", 8, "nvsw", LinkClass::kNvlink, LinkClass::kNvlink, "00001111"},
      {"dgx1-p100-nvlink-only.topo", 8, "mesh", LinkClass::kNvlink, LinkClass::kSys, "ZZZZZZZZ"},
      {"dgx1-v100-cubemesh.topo", 8, "mesh", LinkClass::kNvlink, LinkClass::kSys, "ZZZZZZZZ"},
      {"g6e-l40sx4-node.topo", 4, "none", LinkClass::kNode, LinkClass::kNode, "0000"},
      {"gb200-tray-nv18.topo", 4, "nvsw", LinkClass::kNvlink, LinkClass::kNvlink, "0011"},
      {"hgx-a100-nvswitch.topo", 8, "nvsw", LinkClass::kNvlink, LinkClass::kNvlink, "33117755"},
      {"hgx-h100-nvswitch.topo", 8, "nvsw", LinkClass::kNvlink, LinkClass::kNvlink, "00001111"},
      {"k80x2-workstation-pix-phb.topo", 4, "none", LinkClass::kPix, LinkClass::kPhb, "ZZZZ"},
      {"pcie8-pix-phb-sys.topo", 8, "none", LinkClass::kPix, LinkClass::kSys, "00001111"},
      {"pcie8-pix-pxb-sys.topo", 8, "none", LinkClass::kPix, LinkClass::kSys, "ZZZZZZZZ"},
      {"rtx4090x8-all-sys.topo", 8, "none", LinkClass::kSys, LinkClass::kSys, "00001111"},
  };
  const Policy policy = defaultPolicy();
  for (const Capture& c : captures) {
    INFO(c.file);
    const NodeInfo node = loadCapture(c.file);
    CHECK(node.labels.at("gputopo.dev/fabric") == c.fabric);
    CHECK(node.labels.at("gputopo.dev/numa") == c.numa);
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    CHECK(topo->gpuCount == c.gpus);
    CHECK(topo->linksKnown);
    CHECK(topo->linkClass(0, 1) == c.pair01);
    LinkClass weakest = LinkClass::kNvlink;
    for (int i = 0; i < c.gpus; ++i) {
      for (int j = i + 1; j < c.gpus; ++j) {
        weakest = std::min(weakest, topo->linkClass(i, j));
      }
    }
    CHECK(weakest == c.weakest);
    // The node state builds with every GPU free and usable.
    const NodeStateConstSharedPtr state = buildNodeState(node, {}, policy);
    CHECK(state->status == TopologyStatus::kKnown);
    CHECK(state->freeCount == c.gpus);
  }
}

TEST_CASE("captures cover every file in the data directory", "[topology][captures]") {
  int complete = 0;
  int partial = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kTopologies)) {
    if (entry.path().extension() != ".topo") continue;  // README.md: the captures' provenance
    const std::string name = entry.path().filename().string();
    const bool isPartial = name.find("-partial") != std::string::npos;
    const Result<std::string> text = testing::readTextFile(entry.path().string());
    REQUIRE(text.ok());
    INFO(name);
    CHECK(testing::parseTopoMatrix(*text).ok() == !isPartial);
    (isPartial ? partial : complete) += 1;
  }
  CHECK(complete == 11);
  CHECK(partial == 2);
}

TEST_CASE("partial captures are rejected cleanly", "[topology][captures]") {
  SECTION("DGX A100 with rows 6-7 missing") {
    const Result<std::string> text =
        testing::readTextFile(kTopologies + "dgx-a100-nvswitch-partial.topo");
    REQUIRE(text.ok());
    const Result<NodeInfo> node = testing::nodeFromTopoMatrix(*text, {});
    REQUIRE_FALSE(node.ok());
    CHECK_THAT(node.error().message, ContainsSubstring("6 GPU rows, header names 8 GPUs"));
  }
  SECTION("DGX-2 with a truncated row") {
    const Result<std::string> text =
        testing::readTextFile(kTopologies + "dgx2-v100-nvswitch-partial.topo");
    REQUIRE(text.ok());
    const Result<NodeInfo> node = testing::nodeFromTopoMatrix(*text, {});
    REQUIRE_FALSE(node.ok());
    CHECK_THAT(node.error().message, ContainsSubstring("partial capture"));
  }
}

TEST_CASE("NVLink hides the PCIe level in topo -m: those pairs are unknown, not guessed",
          "[topology][captures]") {
  const NodeInfo node = loadCapture("dgx1-v100-cubemesh.topo");
  const Result<GpuTopology> topo = readTopology(node, defaultPolicy());
  REQUIRE(topo.ok());
  CHECK(topo->nvlinkCount(0, 3) == 2);
  CHECK(topo->pcieLevel(0, 3) == PcieLevel::kUnknown);
  CHECK(topo->pcieLevel(0, 5) == PcieLevel::kSys);
}

}  // namespace
}  // namespace gte
