// The Boost.Graph link graph: NVLink domains among free GPUs and the dense pair table it exports.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/gpu_graph.h"
#include "topology/nvlink_clique.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

GpuGraph graphOf(const NodeInfo& node, const Policy& policy) {
  const Result<GpuTopology> topology = readTopology(node, policy);
  REQUIRE(topology.ok());
  return GpuGraph(*topology, policy.linkScores);
}

TEST_CASE("NVLink domains among free GPUs", "[topology][graph]") {
  const Policy policy = defaultPolicy();
  const GpuGraph dgx1 = graphOf(testing::makeDgx1Volta(), policy);
  // The whole cube-mesh is one domain.
  CHECK(dgx1.nvlinkDomains(0xFFu) == std::vector<GpuMask>{0xFFu});
  // 0-5 is SYS, 1-4 is SYS: {0,5} and {1,4} fall apart into singletons...
  CHECK(dgx1.nvlinkDomains(bitOf(0) | bitOf(5)) == std::vector<GpuMask>{bitOf(0), bitOf(5)});
  // ...but {0,1,5}: 0-1 NV1 and 1-5 NV2 join them through GPU 1.
  CHECK(dgx1.nvlinkDomains(bitOf(0) | bitOf(1) | bitOf(5)) ==
        std::vector<GpuMask>{bitOf(0) | bitOf(1) | bitOf(5)});
  CHECK(dgx1.nvlinkDomains(0).empty());

  const GpuGraph l40s = graphOf(testing::make4xPcieL40s(), policy);
  CHECK(l40s.nvlinkDomains(0x0Fu).size() == 4);  // no NVLink at all
}

TEST_CASE("pair table carries policy scores, device plugin scores and classes",
          "[topology][graph]") {
  const Policy policy = defaultPolicy();
  const PairTable a100 = graphOf(testing::makeDgxA100(), policy).pairTable();
  // Policy: 12 NVLinks x 100 + PXB 40; the device plugin does not see NVSwitch links: PXB 40.
  CHECK(a100.score[0][1] == 1240);
  CHECK(a100.pluginScore[0][1] == 40);
  CHECK(a100.pluginScore[0][2] == 10);
  CHECK(a100.linkClass[0][2] == LinkClass::kNvlink);
  CHECK(a100.weakestLink(0xFFu) == LinkClass::kNvlink);
  CHECK(a100.singleNuma(bitOf(0) | bitOf(1)));
  CHECK_FALSE(a100.singleNuma(bitOf(0) | bitOf(2)));
  CHECK(a100.maxScore == 1240);

  const PairTable l40s = graphOf(testing::make4xPcieL40s(), policy).pairTable();
  CHECK(l40s.weakestLink(0x0Fu) == LinkClass::kNode);
  CHECK(l40s.weakestLink(bitOf(2)) == LinkClass::kNvlink);  // a single GPU has no weak pair
}

TEST_CASE("largest all-NVLink set among free GPUs", "[topology][graph]") {
  const Policy policy = defaultPolicy();
  const PairTable dgx1 = graphOf(testing::makeDgx1Volta(), policy).pairTable();
  // The cube-mesh's cliques are its two quads.
  CHECK(largestNvlinkClique(dgx1, 0xFFu) == 4);
  CHECK(largestNvlinkClique(dgx1, bitOf(0) | bitOf(1) | bitOf(4) | bitOf(5)) == 2);
  CHECK(largestNvlinkClique(dgx1, bitOf(0) | bitOf(5)) == 1);
  CHECK(largestNvlinkClique(dgx1, 0) == 0);
  const PairTable dgx2 = graphOf(testing::makeDgx2(), policy).pairTable();
  CHECK(largestNvlinkClique(dgx2, 0xFFFFu) == 16);
  const PairTable l40s = graphOf(testing::make4xPcieL40s(), policy).pairTable();
  CHECK(largestNvlinkClique(l40s, 0x0Fu) == 1);
}

TEST_CASE("each free GPU's largest all-NVLink set (fragmentation)", "[topology][graph]") {
  const Policy policy = defaultPolicy();
  const Result<GpuTopology> dgx1 = readTopology(testing::makeDgx1Volta(), policy);
  REQUIRE(dgx1.ok());
  const auto sizesOf = [&](GpuMask free) { return nvlinkSetSizes(*dgx1, free); };
  // All free: every GPU sits in one of the cube-mesh's quads.
  for (int gpu = 0; gpu < 8; ++gpu)
    CHECK(sizesOf(0xFFu)[static_cast<std::size_t>(gpu)] == 4);
  // {0,1,4,5}: 0-1, 0-4, 1-5, 4-5 are NVLink but 0-5 and 1-4 are not: pairs only.
  const auto pairs = sizesOf(bitOf(0) | bitOf(1) | bitOf(4) | bitOf(5));
  CHECK(pairs[0] == 2);
  CHECK(pairs[5] == 2);
  CHECK(pairs[2] == 0);  // not free: not counted
  // {0,5}: no NVLink between them, each GPU alone.
  CHECK(sizesOf(bitOf(0) | bitOf(5))[0] == 1);
  CHECK(sizesOf(bitOf(0) | bitOf(5))[5] == 1);
  const Result<GpuTopology> l40s = readTopology(testing::make4xPcieL40s(), policy);
  REQUIRE(l40s.ok());
  CHECK(nvlinkSetSizes(*l40s, 0x0Fu)[3] == 1);
}

}  // namespace
}  // namespace gte
