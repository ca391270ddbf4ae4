// The labels-v1 writer is the reader's inverse: every fixture machine (including a 16-GPU DGX-2
// with chunked pair strings and a DGX A100 with MIG tokens) reads, writes back to the very same
// labels, and reads again to the same topology. Writer errors name the field.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/topology_labels.h"
#include "topology/topology_labels_writer.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

constexpr std::string_view kPrefix = "gputopo.dev/";

// Only the labels-v1 keys of a fixture node (fixtures also carry GFD labels).
StringMap topologyLabels(const NodeInfo& node) {
  StringMap out;
  for (const auto& [key, value] : node.labels) {
    if (key.rfind(kPrefix, 0) == 0) {
      out[key] = value;
    }
  }
  return out;
}

NodeInfo nodeWithLabels(const StringMap& labels) {
  NodeInfo node;
  node.name = "round-trip";
  node.labels = labels;
  return node;
}

TEST_CASE("writer reproduces every fixture's labels exactly", "[topology][labels][writer]") {
  const Policy policy = defaultPolicy();
  const std::vector<NodeInfo> nodes = {
      testing::makeDgx1Volta(testing::FixtureState().withUsed("00100100")),
      testing::makeDgx1Pascal(),
      testing::makeDgxH100(),
      testing::make4xPcieL40s(),
      testing::makeDgx2(),
      testing::makeDgxH100(testing::FixtureState().withIdentities()),
      testing::makeDgxA100(testing::FixtureState()
                               .withUsed("mm010000")
                               .withMig("11000000")
                               .withMigTokens(0, "10u02f03u24f")
                               .withMigTokens(1, "00f01f02u03f04f05u06f")),
      // A shared profile's devices with 3 and 9 of their replicas held.
      testing::makeDgxA100(testing::FixtureState()
                               .withUsed("m0000000")
                               .withMig("10000000")
                               .withMigTokens(0, "00301f029")),
  };
  for (const NodeInfo& node : nodes) {
    INFO(node.name);
    const Result<GpuTopology> topo = readLabelsV1(node, policy);
    REQUIRE(topo.ok());
    const Result<StringMap> written = writeLabelsV1(*topo, kPrefix);
    REQUIRE(written.ok());
    CHECK(*written == topologyLabels(node));
    const Result<GpuTopology> again = readLabelsV1(nodeWithLabels(*written), policy);
    REQUIRE(again.ok());
    CHECK(*again == *topo);
  }
}

TEST_CASE("a 16-GPU node's pair strings are written in 60-character chunks",
          "[topology][labels][writer]") {
  const Result<GpuTopology> topo = readLabelsV1(testing::makeDgx2(), defaultPolicy());
  REQUIRE(topo.ok());
  const Result<StringMap> written = writeLabelsV1(*topo, kPrefix);
  REQUIRE(written.ok());
  CHECK(written->count("gputopo.dev/nvl") == 0);
  CHECK(written->at("gputopo.dev/nvl0").size() == 60);
  CHECK(written->at("gputopo.dev/nvl1").size() == 60);
  CHECK(written->count("gputopo.dev/nvl2") == 0);
  CHECK(written->at("gputopo.dev/pci0").size() == 60);
}

TEST_CASE("unknown facts are left out, not invented", "[topology][labels][writer]") {
  GpuTopology topo;
  topo.gpuCount = 2;
  topo.nvlinks = {0};
  topo.pcie = {PcieLevel::kUnknown};
  topo.numa = {-1, 1};
  topo.health = {GpuHealth::kHealthy, GpuHealth::kUnhealthy};
  topo.used = {GpuUse::kFree, GpuUse::kAllocated};
  topo.migMode = {MigMode::kNotCapable, MigMode::kNotCapable};
  topo.migInstances = {{}, {}};
  const Result<StringMap> written = writeLabelsV1(topo, kPrefix);
  REQUIRE(written.ok());
  CHECK(*written == StringMap{{"gputopo.dev/v", "1"},
                              {"gputopo.dev/n", "2"},
                              {"gputopo.dev/numa", "Z1"},
                              {"gputopo.dev/health", "10"},
                              {"gputopo.dev/used", "01"},
                              {"gputopo.dev/mig", "nn"}});
}

TEST_CASE("writer rejects topologies the format cannot carry", "[topology][labels][writer]") {
  GpuTopology topo;
  topo.gpuCount = 2;
  topo.linksKnown = true;
  topo.nvlinks = {36};
  topo.pcie = {PcieLevel::kSys};
  topo.numa = {0, 0};
  topo.health = {GpuHealth::kHealthy, GpuHealth::kHealthy};
  topo.used = {GpuUse::kFree, GpuUse::kFree};
  topo.migMode = {MigMode::kDisabled, MigMode::kDisabled};
  topo.migInstances = {{}, {}};
  SECTION("more than 35 NVLinks") {
    const auto written = writeLabelsV1(topo, kPrefix);
    REQUIRE_FALSE(written.ok());
    CHECK_THAT(written.error().message, ContainsSubstring("nvl: pair 0 has 36 links"));
  }
  SECTION("a per-GPU vector of the wrong length") {
    topo.nvlinks = {2};
    topo.numa = {0};
    const auto written = writeLabelsV1(topo, kPrefix);
    REQUIRE_FALSE(written.ok());
    CHECK_THAT(written.error().message, ContainsSubstring("numa: has 1 entries, want 2"));
  }
  SECTION("PCI addresses or UUIDs for some GPUs only, or repeated") {
    topo.nvlinks = {2};
    topo.pciAddresses = {0x1800};
    CHECK_THAT(writeLabelsV1(topo, kPrefix).error().message,
               ContainsSubstring("bus: has 1 entries, want 2"));
    topo.pciAddresses = {0x1800, 0x1800};
    CHECK_THAT(writeLabelsV1(topo, kPrefix).error().message,
               ContainsSubstring("bus: GPU 1 repeats 000018000"));
    topo.pciAddresses = {};
    topo.uuids = {GpuUuid{}, GpuUuid{}};
    CHECK_THAT(writeLabelsV1(topo, kPrefix).error().message,
               ContainsSubstring("uuid: GPU 1 repeats"));
  }
  SECTION("MIG instances on a GPU without MIG") {
    topo.nvlinks = {2};
    topo.migInstances[1] = {MigInstance{'0', 3, MigInstanceState::kFree}};
    const auto written = writeLabelsV1(topo, kPrefix);
    REQUIRE_FALSE(written.ok());
    CHECK_THAT(written.error().message, ContainsSubstring("mig1: GPU instances on a GPU without"));
  }
}

TEST_CASE("model names are sanitised as GPU Feature Discovery does", "[topology][labels][writer]") {
  CHECK(sanitiseModelName("NVIDIA A100-SXM4-80GB") == "NVIDIA-A100-SXM4-80GB");
  CHECK(sanitiseModelName("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3");
  CHECK(sanitiseModelName("  Tesla V100-SXM2-16GB ") == "Tesla-V100-SXM2-16GB");
  CHECK(sanitiseModelName("NVIDIA GeForce RTX (TM) 3090") == "NVIDIA-GeForce-RTX-TM-3090");
  CHECK(sanitiseModelName("A  !  B") == "A-B");
  const std::string longName(70, 'x');
  CHECK(sanitiseModelName(longName + " y").size() == 63);
  CHECK(sanitiseModelName(std::string(62, 'x') + " -y") == std::string(62, 'x'));
}

TEST_CASE("a shared MIG device's held replicas past a digit are written used",
          "[topology][labels][writer][sharing]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node = testing::makeDgxA100(
      testing::FixtureState().withUsed("m0000000").withMig("10000000").withMigTokens(0, "00f01f"));
  Result<GpuTopology> topo = readLabelsV1(node, policy);
  REQUIRE(topo.ok());
  topo->migInstances[0][0].heldReplicas = 10;  // of 16, say: 6 free, but a digit says 9 at most
  topo->migInstances[0][1].heldReplicas = 9;
  const Result<StringMap> written = writeLabelsV1(*topo, kPrefix);
  REQUIRE(written.ok());
  // Read back, the first offers no replica: a tenant may be refused, never one too many admitted.
  CHECK(written->at("gputopo.dev/mig0") == "00u019");
}

}  // namespace
}  // namespace gte
