// The device order a node offers the allocator: pools sorted by (driver, pool) with
// binding-condition pools last, slices by name, devices as listed; slices of older generations,
// incomplete and invalid pools, slices for other nodes and per-device node selection as the
// incubating allocator treats them; counters net of what allocated devices consume.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/node_devices.h"
#include "dra/resource_slice_json.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;
using testing::draGpuDevice;
using testing::draSliceJson;

void add(SliceIndex& index, const std::string& json) {
  auto slice = parseResourceSliceJson(json);
  REQUIRE(slice.ok());
  index.upsert(*slice);
}

std::vector<std::string> order(const NodeDevices& devices) {
  std::vector<std::string> names;
  for (const NodeDevice& d : devices.devices) {
    names.push_back(d.slice->pool + "/" + std::string(d.slice->deviceName(d.index)));
  }
  return names;
}

std::string devices(std::initializer_list<const char*> names) {
  std::string out = "[";
  for (const char* name : names) {
    if (out.size() > 1) out += ",";
    out += draGpuDevice(name, 0, "pci0000:00");
  }
  return out + "]";
}

TEST_CASE("device order: pools by driver and name, slices by name, devices as listed",
          "[dra][order]") {
  SliceIndex index;
  // Pool "n1" has two slices; "b-slice" sorts before "c-slice" whatever the insertion order.
  add(index, draSliceJson("c-slice", "n1", "n1", devices({"gpu-9", "gpu-2"}), "", 1, 2));
  add(index, draSliceJson("b-slice", "n1", "n1", devices({"gpu-7", "gpu-1"}), "", 1, 2));
  // Pool "a-pool" (same driver) sorts before "n1"; devices as listed, not by name.
  add(index, draSliceJson("z-slice", "n1", "a-pool", devices({"gpu-5", "gpu-3"})));
  // Another node's slice is not a candidate.
  add(index, draSliceJson("other", "n2", "n2", devices({"gpu-0"})));
  const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
  CHECK(node.error.empty());
  CHECK(order(node) == std::vector<std::string>{"a-pool/gpu-5", "a-pool/gpu-3", "n1/gpu-7",
                                                "n1/gpu-1", "n1/gpu-9", "n1/gpu-2"});
  REQUIRE(node.pools.size() == 2);
  CHECK(node.pools[0].name == "a-pool");
}

TEST_CASE("pools with binding conditions come after every other pool", "[dra][order]") {
  SliceIndex index;
  add(index,
      draSliceJson("s-a", "n1", "a-pool", R"([{"name":"d0","bindingConditions":["attached"]}])"));
  add(index, draSliceJson("s-z", "n1", "z-pool", devices({"gpu-0"})));
  const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
  CHECK(order(node) == std::vector<std::string>{"z-pool/gpu-0", "a-pool/d0"});
}

TEST_CASE("generations, incomplete pools and invalid pools", "[dra][order]") {
  SliceIndex index;
  SECTION("only the newest generation counts") {
    add(index, draSliceJson("old", "n1", "n1", devices({"gpu-0"}), "", 1));
    add(index, draSliceJson("new", "n1", "n1", devices({"gpu-1"}), "", 2));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    CHECK(order(node) == std::vector<std::string>{"n1/gpu-1"});
  }
  SECTION("a pool short of slices offers nothing, and is marked") {
    add(index, draSliceJson("one-of-two", "n1", "n1", devices({"gpu-0"}), "", 1, 2));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    CHECK(node.devices.empty());
    REQUIRE(node.pools.size() == 1);
    CHECK(node.pools[0].incomplete);
    CHECK(node.anyIncompleteOrInvalid());
  }
  SECTION("the missing slice serving another node completes the pool") {
    add(index, draSliceJson("mine", "n1", "shared", devices({"gpu-0"}), "", 1, 2));
    add(index, draSliceJson("theirs", "n2", "shared", devices({"gpu-1"}), "", 1, 2));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    CHECK_FALSE(node.anyIncompleteOrInvalid());
    CHECK(order(node) == std::vector<std::string>{"shared/gpu-0"});
  }
  SECTION("a newer generation elsewhere makes the pool obsolete: ignored") {
    add(index, draSliceJson("mine", "n1", "shared", devices({"gpu-0"}), "", 1, 2));
    add(index, draSliceJson("theirs", "n2", "shared", devices({"gpu-1"}), "", 2, 2));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    CHECK(node.pools.empty());
    CHECK(node.devices.empty());
  }
  SECTION("duplicate device names make the pool invalid") {
    add(index, draSliceJson("a", "n1", "n1", devices({"gpu-0"}), "", 1, 2));
    add(index, draSliceJson("b", "n1", "n1", devices({"gpu-0"}), "", 1, 2));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    REQUIRE(node.pools.size() == 1);
    CHECK(node.pools[0].invalid);
    CHECK_THAT(node.pools[0].invalidReason, ContainsSubstring("duplicate device name gpu-0"));
    CHECK(node.devices.empty());
  }
  SECTION("consuming a counter set the pool does not have makes it invalid") {
    add(index,
        draSliceJson("a", "n1", "n1",
                     R"([{"name":"d","consumesCounters":[{"counterSet":"nope","counters":{}}]}])"));
    const NodeDevices node = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
    CHECK(node.pools[0].invalid);
    CHECK_THAT(node.pools[0].invalidReason, ContainsSubstring("counter set nope not found"));
  }
}

TEST_CASE("slices for all nodes, by node selector and per device", "[dra][order]") {
  SliceIndex index;
  add(index, draSliceJson("everywhere", "", "net", R"([{"name":"nic-0"}])", R"("allNodes":true)"));
  add(index,
      draSliceJson(
          "zone-a", "", "zone", R"([{"name":"z-0"}])",
          R"("nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]})"));
  add(index, draSliceJson("per-device", "", "per",
                          R"([{"name":"p-0","nodeName":"n1"},{"name":"p-1","nodeName":"n2"}])",
                          R"("perDeviceNodeSelection":true)"));
  const NodeDevices inA = gatherNodeDevices("n1", {{"zone", "a"}}, index, AllocatedDevices{});
  CHECK(order(inA) == std::vector<std::string>{"net/nic-0", "per/p-0", "zone/z-0"});
  const NodeDevices inB = gatherNodeDevices("n2", {{"zone", "b"}}, index, AllocatedDevices{});
  CHECK(order(inB) == std::vector<std::string>{"net/nic-0", "per/p-1"});
  add(index,
      draSliceJson(
          "broken", "", "bad", R"([{"name":"x"}])",
          R"("nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Near"}]}]})"));
  const NodeDevices broken = gatherNodeDevices("n1", {}, index, AllocatedDevices{});
  CHECK_THAT(broken.error, ContainsSubstring("slice broken: node selector requirement k Near"));
}

TEST_CASE("allocated devices are in use; their counters are consumed", "[dra][order][counters]") {
  SliceIndex index;
  add(index,
      draSliceJson(
          "counters", "n1", "n1", "[]",
          R"("sharedCounters":[{"name":"gpu-0-cs","counters":{"memory-slice":{"value":"8"}}}])", 1,
          2));
  add(index,
      draSliceJson(
          "devices", "n1", "n1",
          R"([{"name":"gpu-0","consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"memory-slice":{"value":"8"}}}]},
                              {"name":"gpu-0-mig-1g","consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"memory-slice":{"value":"1"}}}]}])",
          "", 1, 2));
  AllocatedDevices allocated;
  allocated.addExclusive("gpu.nvidia.com", "n1", "gpu-0-mig-1g");
  const NodeDevices node = gatherNodeDevices("n1", {}, index, allocated);
  REQUIRE(node.devices.size() == 2);
  CHECK_FALSE(node.devices[0].inUse);
  CHECK(node.devices[1].inUse);
  REQUIRE(node.pools[0].counters.size() == 1);
  // 8 memory slices minus the 1 the allocated MIG device holds.
  CHECK(node.pools[0].counters[0].available == Quantity::fromUnits(7));
}

}  // namespace
}  // namespace gte::dra
