// Racked clusters: GB200 NVL72 racks (one clique per rack) and HGX H100 racks, labelled as the
// agent (labels-v1) and the cluster's labellers (clique, block) would label them.
#include <catch2/catch_test_macros.hpp>
#include <set>
#include <string>

#include "sim/cluster_spec.h"
#include "sim/node_template.h"
#include "sim/rack_labels.h"
#include "support/node_fixtures.h"
#include "support/topo_matrix.h"

using namespace gte;
using namespace gte::sim;

namespace {

const std::string kClique(kCliqueLabel);
const std::string kBlock(kBlockLabel);

std::string labelOf(const SimNodeSpec& node, const std::string& key) {
  const auto found = node.labels.find(key);
  return found == node.labels.end() ? "" : found->second;
}

// The labels-v1 keys that describe the machine (not the node's name, uid or publication time).
void checkSameMachine(const NodeInfo& simulated, const NodeInfo& reference) {
  for (const char* key :
       {"v", "n", "model", "fabric", "nvl", "pci", "numa", "health", "used", "mig"}) {
    INFO(key);
    CHECK(simulated.labels.at(std::string("gputopo.dev/") + key) ==
          reference.labels.at(std::string("gputopo.dev/") + key));
  }
  CHECK(simulated.allocatable == reference.allocatable);
}

}  // namespace

TEST_CASE("GB200 and HGX H100 templates carry the labels the agent publishes for those machines") {
  // The GB200 tray from its `nvidia-smi topo -m` capture, through the test converter (the agent's
  // text discovery path: NV18 everywhere, `nvsw`, PCIe level unknown under NVLink).
  const auto capture =
      testing::readTextFile(std::string(GTE_TEST_DATA_DIR) + "/topologies/gb200-tray-nv18.topo");
  REQUIRE(capture.ok());
  testing::TopoNodeOptions options;
  options.model = "NVIDIA-GB200";
  const auto tray = testing::nodeFromTopoMatrix(*capture, options);
  REQUIRE(tray.ok());
  checkSameMachine(makeTemplateNode(*findNodeTemplate("gb200"), "n", "gputopo.dev/"), *tray);
  // The DGX H100 fixture (NV18 through 4 NVSwitches, NODE inside a socket, SYS across).
  checkSameMachine(makeTemplateNode(*findNodeTemplate("hgx-h100"), "n", "gputopo.dev/"),
                   testing::makeDgxH100());
}

TEST_CASE("racks: an NVL72 rack is 18 GB200 trays sharing one clique, HGX racks a block each") {
  // 40 GB200 trays: racks 0, 1 (18 each) and 2 (4, short); 10 H100 nodes 4 to a rack: racks 3, 4
  // and 5 (2).
  const auto nodes = parseClusterSpec("gb200:40,hgx-h100:10/4");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 50);
  std::set<std::string> cliques;
  std::set<std::string> blocks;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const SimNodeSpec& node = (*nodes)[i];
    INFO(node.name);
    const int rack = i < 40 ? static_cast<int>(i) / 18 : 3 + static_cast<int>(i - 40) / 4;
    CHECK(labelOf(node, kBlock) == "leaf-" + std::to_string(rack));
    if (i < 40) {
      CHECK(labelOf(node, kClique) ==
            labelOf((*nodes)[static_cast<std::size_t>(rack) * 18], kClique));
      cliques.insert(labelOf(node, kClique));
    } else {
      CHECK(labelOf(node, kClique).empty());  // no multi-node NVLink on HGX
    }
    blocks.insert(labelOf(node, kBlock));
  }
  CHECK(cliques.size() == 3);
  CHECK(blocks.size() == 6);
  // `<ClusterUUID>.<CliqueId>` as GPU Feature Discovery writes it.
  CHECK(labelOf((*nodes)[0], kClique) == "6c1f0e2a-9b3d-4e57-8a10-000000000000.1");
}

TEST_CASE("racks: /0 leaves racked templates unracked; unracked templates stay bare") {
  const auto nodes = parseClusterSpec("gb200:4/0,hgx-a100:2,hgx-a100:4/2");
  REQUIRE(nodes.ok());
  CHECK((*nodes)[0].labels.empty());
  CHECK((*nodes)[4].labels.empty());
  CHECK(labelOf((*nodes)[6], kBlock) == "leaf-0");
  CHECK(labelOf((*nodes)[8], kBlock) == "leaf-1");
  CHECK(labelOf((*nodes)[8], kClique).empty());
  for (const char* bad : {"gb200:4/x", "gb200:4/", "gb200:/2", "gb200:-1"}) {
    INFO(bad);
    const auto refused = parseClusterSpec(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("<template>:<count>[/<nodes per rack>]") !=
          std::string::npos);
  }
}
