// DRA devices to graph GPU indices: by PCI bus id, then UUID, then the old index attribute, then
// (assumed) the device name; and every mismatch an error naming the node. The H100 fixture's
// slice lists GPUs 5 2 7 0 3 6 1 4 (by NVML index) as gpu-1 gpu-6 gpu-3 gpu-4 gpu-7 gpu-2 gpu-5
// gpu-0: the minor numbers do not follow the index, which is why names are the last resort.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/gpu_mapping.h"
#include "dra/resource_slice_json.h"
#include "policy/default_policy.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "topology/topology_labels.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

GpuTopology h100(bool identities = true) {
  testing::FixtureState state;
  state.name = "hgx-h100-a";
  if (identities) state.withIdentities();
  return readTopology(testing::makeDgxH100(state), defaultPolicy()).value();
}

NodeDevices h100Devices(const std::string& file = "hgx-h100-slice.json") {
  SliceIndex index;
  index.upsert(testing::draSlice(file));
  return gatherNodeDevices("hgx-h100-a", {}, index, AllocatedDevices{});
}

std::vector<int> gpus(const GpuMapping& mapping) {
  std::vector<int> out;
  for (const DeviceGpu& d : mapping.devices)
    out.push_back(d.gpu);
  return out;
}

const std::vector<int> kSliceOrder = {5, 2, 7, 0, 3, 6, 1, 4};

TEST_CASE("bus ids map every GPU of the H100 slice", "[dra][mapping]") {
  const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), h100(), false);
  CHECK(mapping.error.empty());
  CHECK(gpus(mapping) == kSliceOrder);
  CHECK(mapping.weakest == MappingBasis::kBusId);
  CHECK(mapping.assumed == 0);
  CHECK(mapping.wholeGpus == 0xffu);
  CHECK(mapping.devices[0].role == DeviceRole::kWholeGpu);
}

TEST_CASE("UUIDs map when the labels carry no bus ids", "[dra][mapping]") {
  GpuTopology topology = h100();
  topology.pciAddresses.clear();
  const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), topology, false);
  CHECK(gpus(mapping) == kSliceOrder);
  CHECK(mapping.weakest == MappingBasis::kUuid);
}

TEST_CASE("without identities the device name is assumed to be the index, and counted",
          "[dra][mapping]") {
  const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), h100(false), false);
  CHECK(mapping.error.empty());
  // gpu-1 taken as GPU 1, though it is GPU 5: the assumption explain shows.
  CHECK(gpus(mapping) == std::vector<int>{1, 6, 3, 4, 7, 2, 5, 0});
  CHECK(mapping.weakest == MappingBasis::kDeviceName);
  CHECK(mapping.assumed == 8);
}

TEST_CASE("mismatches are errors naming the node, and map nothing", "[dra][mapping]") {
  SECTION("a bus id the graph does not have") {
    GpuTopology topology = h100();
    topology.pciAddresses[5] = *parsePciBusId("0000:19:00.0");
    const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), topology, false);
    CHECK_THAT(mapping.error, ContainsSubstring("node hgx-h100-a: DRA GPU mapping: device gpu-1"));
    CHECK_THAT(mapping.error,
               ContainsSubstring("PCI bus id 0000:ab:00.0 is not one of the node's GPUs"));
    CHECK(gpus(mapping) == std::vector<int>(8, -1));
    CHECK(mapping.wholeGpus == 0);
    // Every device keeps its role: the node's DRA GPUs still count, topology-unknown.
    for (const DeviceGpu& d : mapping.devices)
      CHECK(d.role == DeviceRole::kWholeGpu);
  }
  SECTION("a UUID the graph does not have") {
    GpuTopology topology = h100();
    topology.pciAddresses.clear();
    topology.uuids[0] = *parseGpuUuid(testing::fixtureGpuUuid(99));
    const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), topology, false);
    CHECK_THAT(mapping.error, ContainsSubstring("UUID GPU-1d6e2f3a-0000-4000-8000-000000000000"));
  }
  SECTION("GPUs advertised by the device plugin and by DRA") {
    const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), h100(), true);
    CHECK_THAT(mapping.error, ContainsSubstring("the device plugin advertises nvidia.com/gpu"));
  }
  SECTION("more DRA GPUs than the labels have") {
    GpuTopology topology = h100(false);
    topology.gpuCount = 4;
    const GpuMapping mapping = mapGpuDevices("hgx-h100-a", h100Devices(), topology, false);
    CHECK_THAT(mapping.error,
               ContainsSubstring("GPU 6 (by device-name (assumed)) is beyond the 4 GPUs"));
  }
  SECTION("two devices on one GPU") {
    SliceIndex index;
    std::string list = "[";
    list += testing::draGpuDevice("gpu-0", 0, "r");
    list += R"(,{"name":"gpu-9","attributes":{"type":{"string":"gpu"},"index":{"int":0}}}])";
    index.upsert(
        *parseResourceSliceJson(testing::draSliceJson("s", "hgx-h100-a", "hgx-h100-a", list)));
    const NodeDevices devices = gatherNodeDevices("hgx-h100-a", {}, index, AllocatedDevices{});
    const GpuMapping mapping = mapGpuDevices("hgx-h100-a", devices, h100(false), false);
    CHECK_THAT(mapping.error, ContainsSubstring("two whole-GPU devices are GPU 0"));
  }
}

TEST_CASE("older drivers: the index attribute and gpu.nvidia.com/pcieBusID", "[dra][mapping]") {
  SliceIndex index;
  index.upsert(*parseResourceSliceJson(testing::draSliceJson(
      "s", "hgx-h100-a", "hgx-h100-a",
      R"([{"name":"gpu-4","attributes":{"type":{"string":"gpu"},"index":{"int":0},"minor":{"int":4}}},
          {"name":"gpu-5","attributes":{"type":{"string":"gpu"},"pcieBusID":{"string":"0000:ab:00.0"}}}])")));
  const NodeDevices devices = gatherNodeDevices("hgx-h100-a", {}, index, AllocatedDevices{});
  // With bus ids in the labels the second device maps by its (older) bus id attribute; the first
  // has no bus id or UUID, so its index attribute decides.
  const GpuMapping mapping = mapGpuDevices("hgx-h100-a", devices, h100(), false);
  CHECK(mapping.error.empty());
  CHECK(gpus(mapping) == std::vector<int>{0, 5});
  CHECK(mapping.devices[0].basis == MappingBasis::kIndexAttribute);
  CHECK(mapping.devices[1].basis == MappingBasis::kBusId);
  CHECK(mapping.weakest == MappingBasis::kIndexAttribute);
}

TEST_CASE("MIG devices map to their parent GPU", "[dra][mapping]") {
  SliceIndex index;
  index.upsert(*parseResourceSliceJson(testing::draSliceJson(
      "s", "hgx-h100-a", "hgx-h100-a",
      R"([{"name":"gpu-4-mig-1g10gb-19-0","attributes":{"type":{"string":"mig"},
            "parentUUID":{"string":"GPU-1d6e2f3a-0000-4000-8000-000000000002"},"profile":{"string":"1g.10gb"}}},
          {"name":"cd-channel-0","attributes":{"type":{"string":"channel"}}}])")));
  const NodeDevices devices = gatherNodeDevices("hgx-h100-a", {}, index, AllocatedDevices{});
  GpuTopology topology = h100();
  topology.pciAddresses.clear();
  const GpuMapping mapping = mapGpuDevices("hgx-h100-a", devices, topology, false);
  CHECK(mapping.error.empty());
  CHECK(mapping.devices[0].role == DeviceRole::kMig);
  CHECK(mapping.devices[0].gpu == 2);
  CHECK(mapping.devices[1].role == DeviceRole::kOther);
  CHECK(mapping.devices[1].gpu == -1);
  CHECK(mapping.wholeGpus == 0);  // a MIG device holds part of its GPU, not the whole
}

}  // namespace
}  // namespace gte::dra
