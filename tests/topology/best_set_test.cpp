// Exact best-set search: known answers on real machines, agreement with brute force, and speed on
// a 16-GPU node (it runs for every k whenever a node changes).
#include <catch2/catch_test_macros.hpp>

#include <random>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/best_set.h"
#include "topology/gpu_graph.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

PairTable tableOf(const NodeInfo& node) {
  const Policy policy = defaultPolicy();
  const Result<GpuTopology> topology = readTopology(node, policy);
  REQUIRE(topology.ok());
  return GpuGraph(*topology, policy.linkScores).pairTable();
}

GpuSet bruteForce(const PairTable& table, GpuMask candidates, int k) {
  GpuSet best;
  for (GpuMask set = 1; set < (GpuMask{1} << table.gpuCount); ++set) {
    if ((set & ~candidates) != 0 || gpuCountOf(set) != k) {
      continue;
    }
    const int score = table.setScore(set);
    if (best.gpus == 0 || score > best.score) {
      best = {set, score};
    }
  }
  return best;
}

TEST_CASE("best sets on a DGX-1V", "[topology][best-set]") {
  const PairTable table = tableOf(testing::makeDgx1Volta());
  // Policy scores equal upstream's on a mesh: {2,3} and {6,7} are NV2+PIX = 250.
  CHECK(findBestSet(table, allGpus(8), 2).gpus == (bitOf(2) | bitOf(3)));
  CHECK(findBestSet(table, allGpus(8), 2).score == 250);
  // Quad {0,1,2,3}: 150+130+230+230+130+250 = 1120, the maximum over all 70 quads.
  CHECK(findBestSet(table, allGpus(8), 4).gpus == 0x0Fu);
  CHECK(findBestSet(table, allGpus(8), 4).score == 1120);
  CHECK(table.weakestLink(0x0Fu) == LinkClass::kNvlink);
  // With 2 and 3 taken the best pair left is {0,4} or {6,7}: NV2+SYS 210 < NV2+PIX 250.
  CHECK(findBestSet(table, allGpus(8) & ~(bitOf(2) | bitOf(3)), 2).gpus == (bitOf(6) | bitOf(7)));
}

TEST_CASE("best set search agrees with brute force", "[topology][best-set]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    PairTable table;
    table.gpuCount = 2 + static_cast<int>(rng() % 11);
    for (int i = 0; i < table.gpuCount; ++i) {
      for (int j = i + 1; j < table.gpuCount; ++j) {
        const int s = static_cast<int>(rng() % 5) * 50;
        table.score[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = s;
        table.score[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = s;
        table.maxScore = std::max(table.maxScore, s);
      }
    }
    const GpuMask candidates = static_cast<GpuMask>(rng()) & allGpus(table.gpuCount);
    const int k = 1 + static_cast<int>(rng() % static_cast<unsigned>(table.gpuCount));
    const GpuSet fast = findBestSet(table, candidates, k);
    const GpuSet slow = bruteForce(table, candidates, k);
    INFO("trial " << trial);
    // Several sets may share the best score; any of them is right, and it must be a k-subset.
    CHECK(fast.score == slow.score);
    CHECK(gpuCountOf(fast.gpus) == gpuCountOf(slow.gpus));
    CHECK((fast.gpus & ~candidates) == 0);
    CHECK(table.setScore(fast.gpus) == fast.score);
  }
}

// Its speed (well under a millisecond per k) is measured by bench/bench_topology.cpp.
TEST_CASE("best set on 16 GPUs answers every k", "[topology][best-set]") {
  const PairTable table = tableOf(testing::makeDgx2());
  for (int k = 1; k <= 16; ++k) {
    const GpuSet set = findBestSet(table, allGpus(16), k);
    INFO("k=" << k);
    CHECK(gpuCountOf(set.gpus) == k);
  }
  // PIX pairs, then PXB quads, then the socket: the policy counts the NVSwitch links too.
  CHECK(findBestSet(table, allGpus(16), 4).gpus == 0x000Fu);
  CHECK(findBestSet(table, allGpus(16), 8).gpus == 0x00FFu);
}

}  // namespace
}  // namespace gte
