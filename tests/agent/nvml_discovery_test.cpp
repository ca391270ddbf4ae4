// NVML discovery through the real dlopen path, against the fake libnvidia-ml.so.1 built by the test
// tree (tests/agent/fake_nvml), for a DGX-1V, an HGX H100 with NVSwitch and a DGX A100 with MIG.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/nvml_discovery.h"
#include "agent/publishable_labels.h"
#include "agent/usage.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;

const std::string kFakeNvml = std::string(GTE_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
constexpr std::int64_t kGen = 1764670000;

Discovery discoverMachine(const char* machine, const NvmlDiscoveryOptions& options = {}) {
  ::setenv("GTE_FAKE_NVML_MACHINE", machine, 1);
  auto discovery = discoverWithNvml(kFakeNvml, options);
  INFO(machine);
  REQUIRE(discovery.ok());
  return *discovery;
}

StringMap labelsOf(const Discovery& discovery) {
  auto labels = publishableLabels(discovery, kGen, defaultPolicy());
  REQUIRE(labels.ok());
  return *labels;
}

// A sysfs tree with numa_node files for the DGX-1V's GPUs (its driver has no NUMA call).
std::string fakeSysfs() {
  const auto root = std::filesystem::temp_directory_path() / "gte-agent-sysfs";
  const char* bdfs[8] = {"06", "07", "0a", "0b", "85", "86", "89", "8a"};
  for (int i = 0; i < 8; ++i) {
    const auto dir = root / "bus/pci/devices" / ("0000:" + std::string(bdfs[i]) + ":00.0");
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "numa_node") << (i < 4 ? 0 : 1) << "\n";
  }
  return root.string();
}

TEST_CASE("NVML: DGX-1V, direct NVLinks without remote types, NUMA from sysfs", "[agent][nvml]") {
  NvmlDiscoveryOptions options;
  options.sysfsRoot = fakeSysfs();
  const Discovery d = discoverMachine("dgx1v", options);
  CHECK(labelsOf(d) == StringMap{{"gputopo.dev/v", "1"},
                                 {"gputopo.dev/n", "8"},
                                 {"gputopo.dev/model", "Tesla-V100-SXM2-16GB"},
                                 {"gputopo.dev/fabric", "mesh"},
                                 {"gputopo.dev/nvl", "1122000210200200100001112212"},
                                 {"gputopo.dev/pci", "PHHSSSSHHSSSSPSSSSSSSSPHHHHP"},
                                 {"gputopo.dev/numa", "00001111"},
                                 {"gputopo.dev/health", "11111011"},
                                 {"gputopo.dev/used", "00000000"},
                                 {"gputopo.dev/mig", "nnnnnnnn"},
                                 // 9 characters per GPU's PCI address, chunked at 60; no `uuid`:
                                 // "GPU-dgx1v-3" is not a UUID.
                                 {"gputopo.dev/bus0",
                                  "00000600000000700000000a00000000b000000085000000086000000089"},
                                 {"gputopo.dev/bus1", "00000008a000"},
                                 {"gputopo.dev/gen", "1764670000"}});
  CHECK(d.gpuUuids[3] == "GPU-dgx1v-3");
  CHECK(d.busIds[4] == "00000000:85:00.0");
}

TEST_CASE("NVML: DGX-1V without sysfs NUMA files: NUMA unknown", "[agent][nvml]") {
  NvmlDiscoveryOptions options;
  options.sysfsRoot = "/nonexistent";
  CHECK(labelsOf(discoverMachine("dgx1v", options)).at("gputopo.dev/numa") == "ZZZZZZZZ");
}

TEST_CASE("NVML: HGX H100, links to 4 NVSwitches count for every pair", "[agent][nvml]") {
  const Discovery d = discoverMachine("hgx-h100");
  const StringMap labels = labelsOf(d);
  CHECK(labels.at("gputopo.dev/model") == "NVIDIA-H100-80GB-HBM3");
  CHECK(labels.at("gputopo.dev/fabric") == "nvsw4");
  CHECK(labels.at("gputopo.dev/nvl") == std::string(28, 'i'));
  CHECK(labels.at("gputopo.dev/pci") == "NNNSSSSNNSSSSNSSSSSSSSNNNNNN");
  CHECK(labels.at("gputopo.dev/numa") == "00001111");
  CHECK(labels.at("gputopo.dev/health") == "11101111");
  CHECK(labels.at("gputopo.dev/mig") == "0000000p");  // GPU 7: MIG change pending
  CHECK(labels.count("gputopo.dev/mig7") == 0);
  CHECK(labels.at("gputopo.dev/used") == "00000000");
  // 9 characters per PCI address: 72 in chunks of 60 (bus 18 of GPU 0 first, db of GPU 7 last).
  CHECK(labels.at("gputopo.dev/bus0") ==
        "00001800000002a00000003a00000005d00000009a0000000ab0000000ba");
  CHECK(labels.at("gputopo.dev/bus1") == "0000000db000");
  // 32 hex digits per GPU: 256 characters in chunks of 60, 60, 60, 60, 16.
  CHECK(labels.at("gputopo.dev/uuid0") ==
        "1d6e2f3a0000400080000000000000001d6e2f3a00004000800000000000");
  CHECK(labels.at("gputopo.dev/uuid4") == "8000000000000007");
  CHECK(labels.count("gputopo.dev/uuid5") == 0);
  REQUIRE(d.placements[0].size() == 7);
  CHECK(placementMismatches(d, defaultPolicy().migProducts).empty());
}

TEST_CASE("NVML: DGX A100 with MIG, the spec's worked example; pods by device UUID",
          "[agent][nvml]") {
  Discovery d = discoverMachine("dgx-a100-mig");
  // GPU3 whole, and the MIG devices at GPU0 slices 0 and 3 and GPU1 slices 2 and 5.
  const std::vector<std::string> unmatched =
      applyDeviceIds(d, {"GPU-a100-3", "MIG-a100-0-gi3", "MIG-a100-0-gi10", "MIG-a100-1-gi9",
                         "MIG-a100-1-gi12", "GPU-elsewhere"});
  CHECK(unmatched == std::vector<std::string>{"GPU-elsewhere"});
  CHECK(labelsOf(d) == StringMap{{"gputopo.dev/v", "1"},
                                 {"gputopo.dev/n", "8"},
                                 {"gputopo.dev/model", "NVIDIA-A100-SXM4-80GB"},
                                 {"gputopo.dev/fabric", "nvsw6"},
                                 {"gputopo.dev/nvl", std::string(28, 'c')},
                                 {"gputopo.dev/pci", "QSSSSSSSSSSSSQSSSSSSSSQSSSSQ"},
                                 {"gputopo.dev/numa", "33117755"},
                                 {"gputopo.dev/health", "11111111"},
                                 {"gputopo.dev/used", "mm010000"},
                                 {"gputopo.dev/mig", "11000000"},
                                 {"gputopo.dev/mig0", "10u02f03u24f"},
                                 {"gputopo.dev/mig1", "00f01f02u03f04f05u06f"},
                                 {"gputopo.dev/bus0",
                                  "00000700000000f00000004700000004e0000000870000000900000000b7"},
                                 {"gputopo.dev/bus1", "0000000bd000"},
                                 {"gputopo.dev/gen", "1764670000"}});
  CHECK(placementMismatches(d, defaultPolicy().migProducts).empty());
}

TEST_CASE(
    "NVML: replicas of shared MIG devices leave the instance free, tenants counted, while one is "
    "left",
    "[agent][nvml][sharing]") {
  Discovery d = discoverMachine("dgx-a100-mig");
  // GFD's labels: 1g.10gb devices time-sliced 2 ways; 3g.40gb not shared; a profile the A100
  // does not offer, and a count that does not read, are ignored.
  const MigReplicas replicas = sharedMigReplicas({{"nvidia.com/mig-1g.10gb.replicas", "2"},
                                                  {"nvidia.com/mig-3g.40gb.replicas", "1"},
                                                  {"nvidia.com/mig-9g.99gb.replicas", "4"},
                                                  {"nvidia.com/mig-2g.20gb.replicas", "two"}},
                                                 defaultPolicy().migProducts, d.topology.model);
  CHECK(replicas == MigReplicas{{'0', 2}});
  // GPU1's 1g.10gb devices at slices 2 (one of its two replicas held: state `1`) and 5 (both
  // held: used); GPU0's 3g.40gb at slice 4 by a replica id while its profile is not shared: in
  // use, as before.
  const std::vector<std::string> unmatched = applyDeviceIds(
      d, {"MIG-a100-1-gi9::0", "MIG-a100-1-gi12::0", "MIG-a100-1-gi12::1", "MIG-a100-0-gi2::0"},
      replicas);
  CHECK(unmatched.empty());
  const StringMap labels = labelsOf(d);
  CHECK(labels.at("gputopo.dev/mig1") == "00f01f02103f04f05u06f");
  CHECK(labels.at("gputopo.dev/mig0") == "10f02f03f24u");
  // Without the replicas (no GFD labels): every replica's instance is in use.
  Discovery plain = discoverMachine("dgx-a100-mig");
  applyDeviceIds(plain, {"MIG-a100-1-gi9::0"});
  CHECK(labelsOf(plain).at("gputopo.dev/mig1") == "00f01f02u03f04f05f06f");
}

TEST_CASE("NVML: a missing library or a failing init is a clear error", "[agent][nvml]") {
  auto missing = discoverWithNvml("/nonexistent/libnvidia-ml.so.1");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, ContainsSubstring("cannot load /nonexistent/libnvidia-ml"));
  CHECK_THAT(missing.error().message, ContainsSubstring("NVIDIA driver"));
  ::setenv("GTE_FAKE_NVML_MACHINE", "none", 1);
  auto init = discoverWithNvml(kFakeNvml);
  REQUIRE_FALSE(init.ok());
  CHECK(init.error().message == "nvmlInit_v2: Driver Not Loaded (9)");
}

}  // namespace
}  // namespace gte::agent

namespace gte::agent {
namespace {

TEST_CASE("driver placements that differ from the extender's MIG table are reported",
          "[agent][nvml]") {
  Discovery d;
  d.topology = blankTopology(TopologySource::kLabelsV1, 1, MigMode::kNotCapable);
  d.topology.model = "NVIDIA-A100-SXM4-80GB";
  d.placements = {{ProfilePlacements{'2', 9, 4, {0, 4}}, ProfilePlacements{'1', 14, 2, {0, 2}},
                   ProfilePlacements{'c', 99, 4, {0}}}};
  const auto mismatches = placementMismatches(d, defaultPolicy().migProducts);
  REQUIRE(mismatches.size() == 2);
  CHECK_THAT(mismatches[0], ContainsSubstring("GPU 0 profile ID 14 (code 1): driver placements "
                                              "differ from the extender's table for 2g.20gb"));
  CHECK_THAT(mismatches[1], ContainsSubstring("profile ID 99 (code c): not in the extender's MIG "
                                              "table"));
}

}  // namespace
}  // namespace gte::agent
