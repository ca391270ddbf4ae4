// The in-tree scores kube-scheduler adds to the extender's, with upstream's integer arithmetic.
#include <catch2/catch_test_macros.hpp>

#include "sim/node_chooser.h"

using namespace gte::sim;

TEST_CASE("LeastAllocated plus BalancedAllocation, as the default profile scores a node") {
  // cpu 1 of 4 cores after placement: 75; memory 4 of 8 GiB: 50; mean 62 (integer division).
  // Balanced: fractions 0.25 and 0.5, standard deviation 0.125: 87.
  const NodeLoad load{4000, 1000, 8192, 4096, 8, 2};
  CHECK(inTreeScore(InTree::kLeastAllocated, load) == 62 + 87);
  // MostAllocated counts nvidia.com/gpu too: cpu 25, memory 50, gpu 25 -> 33.
  CHECK(inTreeScore(InTree::kMostAllocated, load) == 33 + 87);
  CHECK(inTreeScore(InTree::kNone, load) == 0);
}

TEST_CASE("an emptier node scores higher under LeastAllocated, a fuller one under MostAllocated") {
  const NodeLoad empty{64000, 4000, 262144, 16384, 8, 1};
  const NodeLoad full{64000, 48000, 262144, 196608, 8, 7};
  CHECK(inTreeScore(InTree::kLeastAllocated, empty) > inTreeScore(InTree::kLeastAllocated, full));
  CHECK(inTreeScore(InTree::kMostAllocated, full) > inTreeScore(InTree::kMostAllocated, empty));
}

TEST_CASE("chooser and in-tree names round-trip") {
  for (const Chooser chooser : {Chooser::kExtender, Chooser::kLeastAllocated,
                                Chooser::kMostAllocatedGpu, Chooser::kBestFit, Chooser::kRandom}) {
    CHECK(chooserFromName(chooserName(chooser)) == chooser);
  }
  CHECK(inTreeFromName("most-allocated") == InTree::kMostAllocated);
  CHECK_FALSE(chooserFromName("fgd").has_value());
}
