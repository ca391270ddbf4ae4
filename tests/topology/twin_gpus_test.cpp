// Twins on the DGX-2 as the device plugin scores it: the two GPUs of each PCIe switch, and only
// among the GPUs asked about.
#include "topology/twin_gpus.h"

#include <catch2/catch_test_macros.hpp>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/gpu_graph.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

PairTable dgx2Table() {
  const Policy policy = defaultPolicy();
  const Result<GpuTopology> topology = readTopology(testing::makeDgx2(), policy);
  REQUIRE(topology.ok());
  return GpuGraph(*topology, policy.linkScores).pairTable();
}

TEST_CASE("twins are the GPUs of one PCIe switch, later pointing to earlier", "[topology]") {
  const PairTable table = dgx2Table();
  const auto twins = earlierTwins(table.pluginScore, allGpus(16), allGpus(16));
  for (int gpu = 0; gpu < 16; ++gpu) {
    INFO("GPU " << gpu);
    CHECK(twins[static_cast<std::size_t>(gpu)] == (gpu % 2 == 1 ? bitOf(gpu - 1) : 0u));
  }
}

TEST_CASE("twins are judged among the members and chosen among the eligible", "[topology]") {
  const PairTable table = dgx2Table();
  // Without GPU 1, GPU 0 has no twin left: it scores PXB with 3 where 2 scores PIX. GPUs 2 and 3
  // still score alike with everyone else. With GPU 2 not eligible (say, required), 3 has none.
  const GpuMask members = allGpus(16) & ~bitOf(1);
  const auto twins = earlierTwins(table.pluginScore, members, members);
  CHECK(twins[3] == bitOf(2));
  CHECK(twins[2] == 0u);
  const auto withoutTwo = earlierTwins(table.pluginScore, members, members & ~bitOf(2));
  CHECK(withoutTwo[3] == 0u);
}

}  // namespace
}  // namespace gte
