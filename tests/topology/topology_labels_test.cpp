// Reading labels-v1: the spec's worked examples, chunked pair strings, every malformation from the
// spec's "Bad labels" section, and the GPU Feature Discovery / allocatable fallbacks.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "model/gpu_request.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/gpu_identity.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

TEST_CASE("labels-v1 worked example: DGX-1V with GPUs 2 and 5 in use", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node =
      testing::makeDgx1Volta(testing::FixtureState().withName("dgx1").withUsed("00100100"));
  const Result<GpuTopology> topo = readTopology(node, policy);
  REQUIRE(topo.ok());
  CHECK(topo->source == TopologySource::kLabelsV1);
  CHECK(topo->gpuCount == 8);
  CHECK(topo->model == "Tesla-V100-SXM2-16GB");
  CHECK(topo->linksKnown);
  CHECK(topo->nvlinkCount(0, 3) == 2);
  CHECK(topo->nvlinkCount(3, 0) == 2);
  CHECK(topo->nvlinkCount(0, 5) == 0);
  CHECK(topo->pcieLevel(0, 1) == PcieLevel::kPix);
  CHECK(topo->pcieLevel(0, 2) == PcieLevel::kPhb);
  CHECK(topo->linkClass(0, 5) == LinkClass::kSys);
  CHECK(topo->linkClass(1, 5) == LinkClass::kNvlink);
  CHECK(topo->numa == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(topo->used[2] == GpuUse::kAllocated);
  CHECK(topo->used[3] == GpuUse::kFree);
  CHECK(topo->migMode[0] == MigMode::kNotCapable);
  CHECK(topo->generation == 1764670000);
}

TEST_CASE("labels-v1 worked example: DGX A100 with GPUs 0 and 1 in MIG mode",
          "[topology][labels]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node = testing::makeDgxA100(testing::FixtureState()
                                                 .withUsed("mm010000")
                                                 .withMig("11000000")
                                                 .withMigTokens(0, "10u02f03u24f")
                                                 .withMigTokens(1, "00f01f02u03f04f05u06f"));
  const Result<GpuTopology> topo = readTopology(node, policy);
  REQUIRE(topo.ok());
  CHECK(topo->nvswitchFabric());
  CHECK(topo->nvlinkCount(0, 7) == 12);
  CHECK(topo->pcieLevel(0, 1) == PcieLevel::kPxb);
  CHECK(topo->numa == std::vector<int>{3, 3, 1, 1, 7, 7, 5, 5});
  CHECK(topo->used[0] == GpuUse::kMigMode);
  CHECK(topo->used[3] == GpuUse::kAllocated);
  REQUIRE(topo->migInstances[0].size() == 4);
  CHECK(topo->migInstances[0][0] == MigInstance{'1', 0, MigInstanceState::kUsed});
  CHECK(topo->migInstances[0][3] == MigInstance{'2', 4, MigInstanceState::kFree});
  CHECK(topo->migInstances[1].size() == 7);
}

TEST_CASE("16-GPU pair strings are read from 60-character chunks", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node = testing::makeDgx2();
  CHECK(node.labels.count("gputopo.dev/nvl0") == 1);
  CHECK(node.labels.count("gputopo.dev/nvl1") == 1);
  CHECK(node.labels.count("gputopo.dev/nvl") == 0);
  const Result<GpuTopology> topo = readTopology(node, policy);
  REQUIRE(topo.ok());
  CHECK(topo->gpuCount == 16);
  CHECK(topo->nvlinkCount(14, 15) == 6);
  CHECK(topo->pcieLevel(14, 15) == PcieLevel::kPix);
  CHECK(topo->pcieLevel(0, 15) == PcieLevel::kSys);
}

TEST_CASE("a custom label prefix is honoured", "[topology][labels]") {
  Policy policy = defaultPolicy();
  policy.labelPrefix = "topo.example.com/";
  const NodeInfo node =
      testing::make4xPcieL40s(testing::FixtureState().withPrefix("topo.example.com/"));
  const Result<GpuTopology> topo = readTopology(node, policy);
  REQUIRE(topo.ok());
  CHECK(topo->source == TopologySource::kLabelsV1);
  CHECK(topo->linkClass(0, 3) == LinkClass::kNode);
  // With the default prefix the same node has no labels-v1 and falls back to allocatable.
  const Result<GpuTopology> fallback = readTopology(node, defaultPolicy());
  REQUIRE(fallback.ok());
  CHECK(fallback->source == TopologySource::kAllocatable);
  CHECK_FALSE(fallback->linksKnown);
}

struct BadLabel {
  const char* what;
  std::string key;  // label key without prefix; empty value removes the label
  std::string value;
  std::string named;  // the key the error must name
};

TEST_CASE("every malformation is an error naming the node and the key", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  const std::vector<BadLabel> cases = {
      {"unsupported version", "v", "2", "gputopo.dev/v"},
      {"n not decimal", "n", "eight", "gputopo.dev/n"},
      {"n beyond 16", "n", "17", "gputopo.dev/n"},
      {"n disagrees with the pair strings", "n", "7", "gputopo.dev/nvl"},
      {"nvl too short", "nvl", "112200021020020010000111221", "gputopo.dev/nvl"},
      {"nvl too long", "nvl", "11220002102002001000011122120", "gputopo.dev/nvl"},
      {"nvl unknown character", "nvl", "1122000210200200100001112Z12", "gputopo.dev/nvl"},
      {"pci unknown character", "pci", "PHHSSSSHHSSSSPSSSSSSSSPHHHHX", "gputopo.dev/pci"},
      {"pci wrong length", "pci", "PHH", "gputopo.dev/pci"},
      {"numa wrong length", "numa", "0000111", "gputopo.dev/numa"},
      {"numa bad character", "numa", "0000111-", "gputopo.dev/numa"},
      {"health bad character", "health", "1111x111", "gputopo.dev/health"},
      {"used wrong length", "used", "000000000", "gputopo.dev/used"},
      {"used bad character", "used", "00200000", "gputopo.dev/used"},
      {"used m without MIG", "used", "m0000000", "gputopo.dev/used"},
      {"mig bad character", "mig", "nnnnnnnx", "gputopo.dev/mig"},
      {"mig tokens on a GPU without MIG", "mig0", "00f", "gputopo.dev/mig0"},
      {"fabric unknown", "fabric", "ring", "gputopo.dev/fabric"},
      {"gen not decimal", "gen", "yesterday", "gputopo.dev/gen"},
      {"chunk without chunk 0", "nvl1", "1", "gputopo.dev/nvl1"},
      {"plain key and chunks together", "nvl0", "1122000210200200100001112212", "gputopo.dev/nvl"},
  };
  for (const BadLabel& c : cases) {
    INFO(c.what);
    NodeInfo node = testing::makeDgx1Volta(testing::FixtureState().withName("bad-node"));
    node.labels["gputopo.dev/" + c.key] = c.value;
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK(topo.error().code == ErrorCode::kInvalidArgument);
    std::string expected = "node bad-node: ";
    expected += c.named;
    expected += ":";
    CHECK_THAT(topo.error().message, ContainsSubstring(expected));
  }
}

TEST_CASE("chunks that do not add up are errors", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  SECTION("a missing last chunk") {
    NodeInfo node = testing::makeDgx2(testing::FixtureState().withName("dgx2"));
    node.labels.erase("gputopo.dev/pci1");
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("gputopo.dev/pci: length 60, want 120"));
  }
  SECTION("a short chunk before another") {
    NodeInfo node = testing::makeDgx2(testing::FixtureState().withName("dgx2"));
    std::string shortened = node.labels.at("gputopo.dev/nvl0");
    shortened.pop_back();
    node.labels.insert_or_assign("gputopo.dev/nvl0", shortened);
    node.labels.insert_or_assign("gputopo.dev/nvl2", std::string(1, '6'));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("gputopo.dev/nvl1: follows a chunk"));
  }
}

TEST_CASE("MIG tokens are checked against the product table", "[topology][labels][mig]") {
  const Policy policy = defaultPolicy();
  struct Case {
    const char* what;
    std::string tokens;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"illegal start", "21f", "3g.40gb cannot start at slice 1"},
      {"unknown profile code", "z0f", "profile code not in the A100-80GB table"},
      {"bad state", "00x", "state must be f, u, r or 1-9 (replicas held)"},
      {"no replicas held is f", "000", "state must be f, u, r or 1-9"},
      {"start out of range", "08f", "start slice must be 0-7"},
      {"not a multiple of 3", "00f0", "want up to 8 tokens"},
      {"more than 8 tokens", "00f01f02f03f04f05f06f00f00f", "want up to 8 tokens"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const NodeInfo node = testing::makeDgxA100(testing::FixtureState()
                                                   .withName("a100")
                                                   .withUsed("m0000000")
                                                   .withMig("10000000")
                                                   .withMigTokens(0, c.tokens));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("gputopo.dev/mig0"));
    CHECK_THAT(topo.error().message, ContainsSubstring(c.message));
  }
  SECTION("a shared device's held replicas read as free with its tenants") {
    const NodeInfo node = testing::makeDgxA100(testing::FixtureState()
                                                   .withName("a100")
                                                   .withUsed("m0000000")
                                                   .withMig("10000000")
                                                   .withMigTokens(0, "00301f029"));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    const std::vector<MigInstance>& instances = topo->migInstances[0];
    REQUIRE(instances.size() == 3);
    CHECK(instances[0] == MigInstance{'0', 0, MigInstanceState::kFree, 3});
    CHECK(instances[1] == MigInstance{'0', 1, MigInstanceState::kFree, 0});
    CHECK(instances[2] == MigInstance{'0', 2, MigInstanceState::kFree, 9});
  }
  SECTION("adjacent instances are legal") {
    // 4g@0 covers slices 0-3 and 3g@4 covers 4-7: they touch but do not overlap.
    const NodeInfo node = testing::makeDgxA100(testing::FixtureState()
                                                   .withName("a100")
                                                   .withUsed("m0000000")
                                                   .withMig("10000000")
                                                   .withMigTokens(0, "30f24u"));
    CHECK(readTopology(node, policy).ok());
  }
  SECTION("a token that overlaps another") {
    // 2g@2 covers slices 2-3; 1g@3 covers slice 3.
    const NodeInfo node = testing::makeDgxA100(testing::FixtureState()
                                                   .withName("a100")
                                                   .withUsed("m0000000")
                                                   .withMig("10000000")
                                                   .withMigTokens(0, "12f03u"));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message,
               ContainsSubstring("gputopo.dev/mig0: token 1 '03u': overlaps"));
  }
  SECTION("tokens on a model without a product table entry") {
    NodeInfo node = testing::makeDgx1Volta(
        testing::FixtureState().withName("v100").withUsed("m0000000").withMig("10000000"));
    node.labels["gputopo.dev/mig0"] = "00f";
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("has no MIG product table entry"));
  }
}

TEST_CASE("nodes without labels-v1 fall back to GFD labels and allocatable", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  SECTION("GPU Feature Discovery") {
    const NodeInfo node = testing::makeGfdNode("gfd", 4, "NVIDIA-L40S");
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    CHECK(topo->source == TopologySource::kFeatureDiscovery);
    CHECK(topo->gpuCount == 4);
    CHECK(topo->model == "NVIDIA-L40S");
    CHECK_FALSE(topo->linksKnown);
    CHECK(topo->linkClass(0, 1) == LinkClass::kUnknown);
    CHECK(topo->numa == std::vector<int>{-1, -1, -1, -1});
  }
  SECTION("allocatable only, with MIG devices") {
    NodeInfo node;
    node.name = "alloc";
    node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(2));
    node.allocatable.set("nvidia.com/mig-1g.10gb", Quantity::fromUnits(7));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    CHECK(topo->source == TopologySource::kAllocatable);
    CHECK(topo->gpuCount == 2);
    REQUIRE(topo->migDeviceCounts.size() == 1);
    CHECK(topo->migDeviceCounts[0] == MigDeviceCount{"1g.10gb", 7});
  }
  SECTION("GFD MIG mixed strategy counts") {
    NodeInfo node = testing::makeGfdNode("mixed", 0, "NVIDIA-A100-SXM4-40GB");
    node.allocatable = ResourceList{};
    node.labels["nvidia.com/mig-3g.20gb.count"] = "2";
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    REQUIRE(topo->migDeviceCounts.size() == 1);
    CHECK(topo->migDeviceCounts[0] == MigDeviceCount{"3g.20gb", 2});
  }
  SECTION("neither: no GPUs") {
    NodeInfo node;
    node.name = "cpu-only";
    node.labels["kubernetes.io/hostname"] = "cpu-only";
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE(topo.ok());
    CHECK(topo->source == TopologySource::kNone);
    CHECK(topo->gpuCount == 0);
  }
  // Found by fuzz_node_labels: a count of -2 became a vector size of 2^64 - 2 and the
  // length_error it threw ended the process.
  SECTION("a negative allocatable count is an error, not a huge GPU array") {
    NodeInfo node;
    node.name = "neg";
    node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(-2));
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("node neg: a negative GPU count (-2)"));
  }
  SECTION("a malformed GFD count is an error naming the key") {
    NodeInfo node = testing::makeGfdNode("gfd", 4, "NVIDIA-L40S");
    node.labels["nvidia.com/gpu.count"] = "four";
    const Result<GpuTopology> topo = readTopology(node, policy);
    REQUIRE_FALSE(topo.ok());
    CHECK_THAT(topo.error().message, ContainsSubstring("nvidia.com/gpu.count"));
  }
}

TEST_CASE("absent optional keys mean unknown", "[topology][labels]") {
  const Policy policy = defaultPolicy();
  NodeInfo node = testing::makeDgx1Volta();
  node.labels.erase("gputopo.dev/pci");
  node.labels.erase("gputopo.dev/numa");
  const Result<GpuTopology> topo = readTopology(node, policy);
  REQUIRE(topo.ok());
  CHECK_FALSE(topo->linksKnown);  // half a graph is not a graph
  CHECK(topo->linkClass(0, 3) == LinkClass::kUnknown);
  CHECK(topo->numa[0] == -1);
  CHECK(topo->pciAddresses.empty());  // no `bus`, no `uuid`: identities unknown
  CHECK(topo->uuids.empty());
}

TEST_CASE("bus and uuid: each GPU's PCI address and UUID, read from chunks",
          "[topology][labels][identity]") {
  const NodeInfo node = testing::makeDgxH100(testing::FixtureState().withIdentities());
  // 8 GPUs x 9 characters = 72: bus0 (60) and bus1 (12); 8 x 32 = 256: uuid0..uuid4.
  CHECK(node.labels.at("gputopo.dev/bus1").size() == 12);
  CHECK(node.labels.at("gputopo.dev/uuid4").size() == 16);
  const Result<GpuTopology> topo = readTopology(node, defaultPolicy());
  REQUIRE(topo.ok());
  REQUIRE(topo->pciAddresses.size() == 8);
  CHECK(pciBusIdText(topo->pciAddresses[0]) == "0000:18:00.0");
  CHECK(pciBusIdText(topo->pciAddresses[7]) == "0000:db:00.0");
  REQUIRE(topo->uuids.size() == 8);
  CHECK(topo->uuids[5] == *parseGpuUuid(testing::fixtureGpuUuid(5)));
}

TEST_CASE("malformed bus and uuid keys are errors naming the key", "[topology][labels][identity]") {
  const Policy policy = defaultPolicy();
  const auto readWith = [&](const std::string& key, const std::string& value) {
    NodeInfo node =
        testing::make4xPcieL40s(testing::FixtureState().withName("bad-node").withIdentities());
    node.labels.erase("gputopo.dev/" + key + "0");
    node.labels.erase("gputopo.dev/" + key + "1");
    node.labels.erase("gputopo.dev/" + key + "2");
    node.labels["gputopo.dev/" + key] = value;
    return readTopology(node, policy);
  };
  const std::string bus4 =
      "000001000"
      "000002000"
      "000003000"
      "000004000";
  REQUIRE(readWith("bus", bus4).ok());
  // A wrong length: 3 of the 4 GPUs.
  CHECK_THAT(readWith("bus", bus4.substr(0, 27)).error().message,
             ContainsSubstring("node bad-node: gputopo.dev/bus: length 27, want 36"));
  // Upper case, and device 0x20: not a token.
  CHECK_THAT(readWith("bus", "00000100A" + bus4.substr(9)).error().message,
             ContainsSubstring("gputopo.dev/bus: token '00000100A' for GPU 0 is not a PCI"));
  CHECK_THAT(readWith("bus", bus4.substr(0, 27) + "000004200").error().message,
             ContainsSubstring("token '000004200' for GPU 3"));
  // Two GPUs at one address: one of them is not what the key says.
  CHECK_THAT(readWith("bus", bus4.substr(0, 27) + "000001000").error().message,
             ContainsSubstring("gputopo.dev/bus: GPU 3 repeats PCI address 000001000"));
  const std::string uuid = testing::makeDgxH100(testing::FixtureState().withIdentities())
                               .labels.at("gputopo.dev/uuid0")
                               .substr(0, 32);
  const std::string uuid4 =
      uuid + uuid.substr(0, 31) + "1" + uuid.substr(0, 31) + "2" + uuid.substr(0, 31) + "3";
  CHECK_THAT(readWith("uuid", uuid4.substr(0, 60)).error().message,
             ContainsSubstring("gputopo.dev/uuid: length 60, want 128"));
  NodeInfo chunked =
      testing::make4xPcieL40s(testing::FixtureState().withName("bad-node").withIdentities());
  REQUIRE(readTopology(chunked, policy).ok());
  chunked.labels.erase("gputopo.dev/uuid2");
  CHECK_THAT(readTopology(chunked, policy).error().message,
             ContainsSubstring("gputopo.dev/uuid: length 120, want 128"));
  std::string repeated = uuid4;
  repeated.replace(96, 32, uuid);
  NodeInfo twice =
      testing::make4xPcieL40s(testing::FixtureState().withName("bad-node").withIdentities());
  twice.labels["gputopo.dev/uuid0"] = repeated.substr(0, 60);
  twice.labels["gputopo.dev/uuid1"] = repeated.substr(60, 60);
  twice.labels["gputopo.dev/uuid2"] = repeated.substr(120);
  CHECK_THAT(readTopology(twice, policy).error().message,
             ContainsSubstring("gputopo.dev/uuid: GPU 3 repeats UUID"));
  twice.labels["gputopo.dev/uuid2"] = "0000000G";
  CHECK_THAT(readTopology(twice, policy).error().message,
             ContainsSubstring("for GPU 3 is not 32 lowercase hex digits"));
}

}  // namespace
}  // namespace gte
