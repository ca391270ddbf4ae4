// The bandwidth model (docs/topology-health.md, "The bandwidth model"): the generation read from
// the model label, the per-pair table and a set's weakest pair, on real machines.
#include <catch2/catch_test_macros.hpp>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/link_bandwidth.h"
#include "topology/pair_table.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

GpuTopology topologyOf(const NodeInfo& node) {
  const Result<GpuTopology> topology = readTopology(node, defaultPolicy());
  REQUIRE(topology.ok());
  return *topology;
}

TEST_CASE("the GPU generation comes from a product token of the model label", "[bandwidth]") {
  struct Row {
    const char* model;
    GpuGeneration generation;
  };
  const Row rows[] = {
      {"Tesla-P100-SXM2-16GB", GpuGeneration::kPascal},
      {"Tesla-V100-SXM2-16GB", GpuGeneration::kVolta},
      {"Tesla-T4", GpuGeneration::kTuring},
      {"NVIDIA-A100-SXM4-80GB", GpuGeneration::kAmpere},
      {"NVIDIA-RTX-A6000", GpuGeneration::kAmpere},
      {"NVIDIA-GeForce-RTX-3090", GpuGeneration::kAmpere},
      {"NVIDIA-L40S", GpuGeneration::kAda},
      {"NVIDIA-GeForce-RTX-4090", GpuGeneration::kAda},
      {"NVIDIA-H100-80GB-HBM3", GpuGeneration::kHopper},
      {"NVIDIA-H200", GpuGeneration::kHopper},
      {"NVIDIA-GH200-480GB", GpuGeneration::kHopper},
      {"NVIDIA-B200", GpuGeneration::kBlackwell},
      {"NVIDIA-GeForce-RTX-5090", GpuGeneration::kBlackwell},
      // No product token: a substring ("A1000" holds "A100") is not enough.
      {"NVIDIA-RTX-A1000", GpuGeneration::kUnknown},
      {"", GpuGeneration::kUnknown},
  };
  for (const Row& row : rows) {
    INFO(row.model);
    CHECK(gpuGenerationOf(row.model) == row.generation);
  }
}

TEST_CASE("PCIe levels at each generation, GB/s one way", "[bandwidth]") {
  // x16 link: 16 / 32 / 63 GB/s. PHB 3/4, NODE 5/8, SYS 7/16 of it (integer division).
  CHECK(pcieGBps(PcieLevel::kPix, 3) == 16);
  CHECK(pcieGBps(PcieLevel::kPxb, 4) == 32);
  CHECK(pcieGBps(PcieLevel::kSameBoard, 5) == 63);
  CHECK(pcieGBps(PcieLevel::kPhb, 4) == 24);   // 32 x 3 / 4
  CHECK(pcieGBps(PcieLevel::kNode, 4) == 20);  // 32 x 5 / 8
  CHECK(pcieGBps(PcieLevel::kSys, 5) == 27);   // 63 x 7 / 16 = 27.6
  CHECK(pcieGBps(PcieLevel::kSys, 3) == 7);    // 16 x 7 / 16
  CHECK(pcieGBps(PcieLevel::kUnknown, 4) == 0);
}

TEST_CASE("pairs and sets on real machines", "[bandwidth]") {
  SECTION("DGX-1V: NV2 50, NV1 25, SYS on Gen3 7 GB/s") {
    const PairBandwidths bw(topologyOf(testing::makeDgx1Volta()));
    CHECK(bw.pair(2, 3) == 50);  // nvl '2' x 25
    CHECK(bw.pair(0, 1) == 25);
    CHECK(bw.pair(0, 5) == 7);  // SYS, no NVLink
    // Quad {0,1,2,3}: all NVLink, weakest NV1 = 25.
    CHECK(bw.set(0x0Fu) == 25);
    // {2,3} alone: 50. A set with 0 and 5: the SYS pair bounds it.
    CHECK(bw.set(bitOf(2) | bitOf(3)) == 50);
    CHECK(bw.set(bitOf(0) | bitOf(3) | bitOf(5)) == 7);
    CHECK(bw.set(bitOf(4)) == 0);  // one GPU has no pair
  }
  SECTION("DGX H100: NV18 through NVSwitch, 18 x 25 = 450 GB/s one way (900 both ways)") {
    const PairBandwidths bw(topologyOf(testing::makeDgxH100()));
    CHECK(bw.set(allGpus(8)) == 450);
  }
  SECTION("DGX A100: NV12 x 25 = 300") {
    CHECK(PairBandwidths(topologyOf(testing::makeDgxA100())).set(allGpus(8)) == 300);
  }
  SECTION("4x L40S, all NODE on Gen4: 20") {
    CHECK(PairBandwidths(topologyOf(testing::make4xPcieL40s())).set(allGpus(4)) == 20);
  }
  SECTION("links unknown: 0") {
    GpuTopology fallback;
    fallback.gpuCount = 4;
    CHECK(PairBandwidths(fallback).set(allGpus(4)) == 0);
  }
}

}  // namespace
}  // namespace gte
