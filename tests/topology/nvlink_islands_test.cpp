// NVLink islands (topology/nvlink_islands.h): the partition the node agent publishes as each
// companion device's `nvlinkIsland`. Checked on the real captures in tests/data/topologies and on
// small graphs whose reasoning is written next to each row.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "support/topo_matrix.h"
#include "topology/nvlink_islands.h"
#include "topology/pair_table.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

const std::string kTopologies = std::string(GTE_TEST_DATA_DIR) + "/topologies/";

GpuTopology fromMatrix(const std::string& text) {
  const Result<NodeInfo> node = testing::nodeFromTopoMatrix(text, {});
  REQUIRE(node.ok());
  const Result<GpuTopology> topo = readTopology(*node, defaultPolicy());
  REQUIRE(topo.ok());
  return *topo;
}

GpuTopology capture(const std::string& file) {
  const Result<std::string> text = testing::readTextFile(kTopologies + file);
  REQUIRE(text.ok());
  return fromMatrix(*text);
}

TEST_CASE("islands of the real captures", "[topology][islands]") {
  struct Row {
    std::string file;
    std::vector<int> islands;  // per GPU
  };
  const std::vector<Row> rows = {
      // Hybrid cube-mesh: 0-3 are pairwise NVLinked (NV1/NV2), so are 4-7; the cross links
      // 0-4, 1-5, 2-6, 3-7 join one GPU of each quad only, so no 5-set is a clique: {0-3}, {4-7}.
      {"dgx1-v100-cubemesh.topo", {0, 0, 0, 0, 4, 4, 4, 4}},
      // DGX-1 (Pascal): the same pattern with NV1 everywhere.
      {"dgx1-p100-nvlink-only.topo", {0, 0, 0, 0, 4, 4, 4, 4}},
      // NVSwitch: every pair NV12 / NV18, one island of all GPUs.
      {"hgx-a100-nvswitch.topo", {0, 0, 0, 0, 0, 0, 0, 0}},
      {"hgx-h100-nvswitch.topo", {0, 0, 0, 0, 0, 0, 0, 0}},
      {"aws-p4d-a100-nvswitch.topo", {0, 0, 0, 0, 0, 0, 0, 0}},
      {"gb200-tray-nv18.topo", {0, 0, 0, 0}},
      // PCIe only: no NVLink, every GPU its own island (id = its index).
      {"pcie8-pix-phb-sys.topo", {0, 1, 2, 3, 4, 5, 6, 7}},
      {"pcie8-pix-pxb-sys.topo", {0, 1, 2, 3, 4, 5, 6, 7}},
      {"rtx4090x8-all-sys.topo", {0, 1, 2, 3, 4, 5, 6, 7}},
      {"g6e-l40sx4-node.topo", {0, 1, 2, 3}},
      {"k80x2-workstation-pix-phb.topo", {0, 1, 2, 3}},
  };
  for (const Row& row : rows) {
    INFO(row.file);
    CHECK(nvlinkIslands(capture(row.file)) == row.islands);
  }
}

TEST_CASE("PCIe cards with NVLink bridges: each bridged pair is an island", "[topology][islands]") {
  // Constructed, not a capture (no public capture of bridged cards is kept): four PCIe cards,
  // bridges on 0-1 and 2-3 (NV4), the pairs under different host bridges.
  const std::string matrix =
      "        GPU0    GPU1    GPU2    GPU3    CPU Affinity\n"
      "GPU0     X      NV4     PHB     PHB     0-11\n"
      "GPU1    NV4      X      PHB     PHB     0-11\n"
      "GPU2    PHB     PHB      X      NV4     0-11\n"
      "GPU3    PHB     PHB     NV4      X      0-11\n";
  CHECK(nvlinkIslands(fromMatrix(matrix)) == std::vector<int>{0, 0, 2, 2});
}

TEST_CASE("island rule on small NVLink graphs", "[topology][islands]") {
  struct Row {
    const char* what;
    int gpus;
    std::vector<std::pair<int, int>> links;
    std::vector<int> islands;
  };
  const std::vector<Row> rows = {
      // A path 0-1-2: cliques of 2 are {0,1} and {1,2}; {0,1} comes first lexicographically,
      // so 2 is left alone.
      {"path", 3, {{0, 1}, {1, 2}}, {0, 0, 2}},
      // A path 2-1-0 written the other way round: the same graph, the same answer.
      {"path reversed", 3, {{2, 1}, {1, 0}}, {0, 0, 2}},
      // Triangle {1,2,3} plus 0-1: the triangle is larger than any pair with 0, so it goes first;
      // 0 is then alone (its only peer is taken). Its id is 1, its lowest index.
      {"triangle and pendant", 4, {{0, 1}, {1, 2}, {1, 3}, {2, 3}}, {0, 1, 1, 1}},
      // A 4-cycle 0-1-2-3-0: no triangle; the first pair is {0,1}, then {2,3} (joined): two pairs.
      {"4-cycle", 4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, {0, 0, 2, 2}},
      // A 5-cycle: {0,1}, then of 2,3,4 the first linked pair {2,3}, and 4 alone.
      {"5-cycle", 5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}}, {0, 0, 2, 2, 4}},
      // Two triangles sharing GPU 2 ({0,1,2}, {2,3,4}): the first takes 2, leaving {3,4}.
      {"bowtie", 5, {{0, 1}, {0, 2}, {1, 2}, {2, 3}, {2, 4}, {3, 4}}, {0, 0, 0, 3, 3}},
      // A later, larger clique wins over an earlier pair: {0,1} linked, {2,3,4,5} all linked.
      {"size before order",
       6,
       {{0, 1}, {2, 3}, {2, 4}, {2, 5}, {3, 4}, {3, 5}, {4, 5}},
       {0, 0, 2, 2, 2, 2}},
      // No links: singletons.
      {"none", 3, {}, {0, 1, 2}},
      {"empty node", 0, {}, {}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    std::array<GpuMask, kMaxGpus> neighbours{};
    for (const auto& [a, b] : row.links) {
      neighbours[static_cast<std::size_t>(a)] |= bitOf(b);
      neighbours[static_cast<std::size_t>(b)] |= bitOf(a);
    }
    CHECK(nvlinkIslands(neighbours, row.gpus) == row.islands);
  }
}

TEST_CASE("16 GPUs all linked are one island; links unknown make singletons",
          "[topology][islands]") {
  std::array<GpuMask, kMaxGpus> all{};
  for (int i = 0; i < kMaxGpus; ++i) {
    all[static_cast<std::size_t>(i)] = allGpus(kMaxGpus) & ~bitOf(i);
  }
  CHECK(nvlinkIslands(all, kMaxGpus) == std::vector<int>(kMaxGpus, 0));

  GpuTopology unknown = capture("dgx1-v100-cubemesh.topo");
  unknown.linksKnown = false;
  CHECK(nvlinkIslands(unknown) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

}  // namespace
}  // namespace gte
