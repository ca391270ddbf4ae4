// Claim shaping: the ResourceClaimTemplate the claim-template command writes (YAML byte for byte
// against tests/data/dra, JSON read back with the extender's own reader), and what the scheduler's
// first-fit (the replica) takes with it: the same-pcieRoot tier where a node has such a set, the
// next tier where it does not.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/claim_shaping.h"
#include "dra/first_fit.h"
#include "dra/resource_slice_json.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

ShapedClaimOptions options(int gpus, bool partition = false) {
  ShapedClaimOptions out;
  out.gpus = gpus;
  out.name = "train-" + std::to_string(gpus);
  out.ns = "ml";
  out.nvswitchPartition = partition;
  return out;
}

// The template as the command writes it in JSON, read back by the extender's template reader.
ClaimSpec readBack(const ShapedClaimOptions& shaped) {
  const auto spec = shapedClaimSpec(shaped);
  REQUIRE(spec.ok());
  const auto read = parseResourceClaimTemplateJson(claimTemplateJson(shaped, *spec));
  REQUIRE(read.ok());
  CHECK((*read)->name == shaped.name);
  CHECK((*read)->ns == "ml");
  CHECK((*read)->spec == *spec);
  return (*read)->spec;
}

// A node of `gpus.nvidia.com` devices listed in `devices` order, the chart's classes.
struct Node {
  SliceIndex index;
  ClassCatalog catalog{testing::draClasses("nvidia-device-classes.json")};
  NodeDevices devices;
  ClassMatches matches;

  Node(const std::string& devicesJson, const AllocatedDevices& allocated = {}) {
    index.upsert(*parseResourceSliceJson(testing::draSliceJson("n-gpu", "n", "n", devicesJson)));
    devices = gatherNodeDevices("n", {}, index, allocated);
    matches = matchClasses(devices, catalog);
  }
};

struct Outcome {
  FirstFitStatus status = FirstFitStatus::kNoFit;
  std::string tier;  // the results' request, "gpus/<tier>"
  std::vector<std::string> devices;
};

Outcome allocate(const Node& node, const ClaimSpec& spec) {
  const auto program = compileClaim(spec, "ml/train", node.catalog);
  REQUIRE(program.ok());
  FirstFit fit({&*program});
  const FirstFitResult result = fit.run(node.devices, node.matches);
  Outcome out{result.status, {}, {}};
  for (const PickedDevice& picked : result.devices) {
    const NodeDevice& d = node.devices.devices[picked.position];
    out.devices.emplace_back(d.slice->deviceName(d.index));
    const RequestProgram& request = program->requests[picked.request];
    out.tier = request.alternatives[picked.alternative].fullName;
  }
  return out;
}

std::string device(const std::string& name, int numa, const std::string& root,
                   const std::string& extra = "") {
  return testing::draGpuDevice(name, numa, root, extra);
}

}  // namespace

TEST_CASE("the claim-template YAML, byte for byte", "[dra][shaping]") {
  const auto four = shapedClaimSpec(options(4));
  REQUIRE(four.ok());
  CHECK(claimTemplateYaml(options(4), *four) == testing::draFixtureText("claim-template-4.yaml"));
  const auto eight = shapedClaimSpec(options(8, true));
  REQUIRE(eight.ok());
  CHECK(claimTemplateYaml(options(8, true), *eight) ==
        testing::draFixtureText("claim-template-8-partition.yaml"));
  // One GPU: a plain request, no tiers; default name, no namespace.
  ShapedClaimOptions one;
  one.gpus = 1;
  const auto single = shapedClaimSpec(one);
  REQUIRE(single.ok());
  CHECK(claimTemplateYaml(one, *single) ==
        "# gpu-topology-extender claim-template: 1 GPU\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n"
        "  name: gpus-1\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpus\n"
        "        exactly:\n          deviceClassName: gpu.nvidia.com\n"
        "          allocationMode: ExactCount\n          count: 1\n");
}

TEST_CASE("the JSON form reads back as the same claim spec", "[dra][shaping]") {
  const ClaimSpec four = readBack(options(4));
  REQUIRE(four.requests.size() == 1);
  CHECK(four.requests[0].firstAvailable);
  REQUIRE(four.requests[0].alternatives.size() == 3);
  CHECK(four.requests[0].alternatives[0].name == "same-pcie-root");
  CHECK(four.requests[0].alternatives[2].name == "any");
  REQUIRE(four.constraints.size() == 2);
  CHECK(four.constraints[0].requests == std::vector<std::string>{"gpus/same-pcie-root"});
  CHECK(four.constraints[0].matchAttribute == "resource.kubernetes.io/pcieRoot");
  CHECK(four.constraints[1].matchAttribute == "resource.kubernetes.io/numaNode");
  const ClaimSpec eight = readBack(options(8, true));
  REQUIRE(eight.requests[0].alternatives.size() == 4);
  CHECK(eight.constraints[0].matchAttribute == "gpu.nvidia.com/partition8");
  CHECK(eight.requests[0].alternatives[0].selectors.empty());
  CHECK(eight.requests[0].alternatives[3].selectors ==
        std::vector<std::string>{"!has(device.attributes['gpu.nvidia.com'].partition8)"});
  readBack(options(1));
}

TEST_CASE("options the template cannot be built from are refused, naming the flag",
          "[dra][shaping]") {
  CHECK_THAT(shapedClaimSpec(options(0)).error().message, ContainsSubstring("--gpus"));
  CHECK_THAT(shapedClaimSpec(options(33)).error().message, ContainsSubstring("--gpus"));
  CHECK_THAT(shapedClaimSpec(options(3, true)).error().message,
             ContainsSubstring("--nvswitch-partition"));
  ShapedClaimOptions bad = options(2);
  bad.name = "Train";
  CHECK_THAT(shapedClaimSpec(bad).error().message, ContainsSubstring("--name"));
  bad = options(2);
  bad.ns = "a.b";
  CHECK_THAT(shapedClaimSpec(bad).error().message, ContainsSubstring("--namespace"));
  bad = options(2);
  bad.deviceClass = "";
  CHECK_THAT(shapedClaimSpec(bad).error().message, ContainsSubstring("--device-class"));
}

TEST_CASE("first-fit takes the same-pcieRoot tier where the node has one, else the next tier",
          "[dra][shaping]") {
  const ClaimSpec two = readBack(options(2));
  // Listed gpu-0 (NUMA 0, root 00), gpu-1 (0, 10), gpu-2 (1, 20), gpu-3 (0, 00): the first pair
  // by position sharing a root is positions 0 and 3. A plain request would take gpu-0, gpu-1.
  const std::string listed =
      "[" + device("gpu-0", 0, "pci0000:00") + "," + device("gpu-1", 0, "pci0000:10") + "," +
      device("gpu-2", 1, "pci0000:20") + "," + device("gpu-3", 0, "pci0000:00") + "]";
  const Outcome root = allocate(Node(listed), two);
  CHECK(root.status == FirstFitStatus::kAllocated);
  CHECK(root.tier == "gpus/same-pcie-root");
  CHECK(root.devices == std::vector<std::string>{"gpu-0", "gpu-3"});
  // gpu-0 taken: gpu-1 (root 10), gpu-2 (20), gpu-3 (00) share no root; gpu-1 and gpu-3 share
  // NUMA node 0.
  AllocatedDevices taken;
  taken.addExclusive("gpu.nvidia.com", "n", "gpu-0");
  const Outcome numa = allocate(Node(listed, taken), two);
  CHECK(numa.tier == "gpus/same-numa-node");
  CHECK(numa.devices == std::vector<std::string>{"gpu-1", "gpu-3"});
  // gpu-0 and gpu-3 taken: gpu-1 (NUMA 0) and gpu-2 (NUMA 1) share nothing: any two.
  taken.addExclusive("gpu.nvidia.com", "n", "gpu-3");
  const Outcome any = allocate(Node(listed, taken), two);
  CHECK(any.tier == "gpus/any");
  CHECK(any.devices == std::vector<std::string>{"gpu-1", "gpu-2"});
  // The H100 fixture gives every GPU its own root: a 4-GPU claim lands on one NUMA node,
  // positions 0, 2, 5, 7 (NUMA 1; see first_fit_test.cpp), where the plain request would span two.
  Node h100("[]");
  h100.index.upsert(testing::draSlice("hgx-h100-slice.json"));
  h100.devices = gatherNodeDevices("hgx-h100-a", {}, h100.index, {});
  h100.matches = matchClasses(h100.devices, h100.catalog);
  const Outcome four = allocate(h100, readBack(options(4)));
  CHECK(four.tier == "gpus/same-numa-node");
  CHECK(four.devices == std::vector<std::string>{"gpu-1", "gpu-3", "gpu-2", "gpu-0"});
}

TEST_CASE(
    "the NVSwitch partition tier: one whole partition, and never a non-partition set on a "
    "partitioned node",
    "[dra][shaping]") {
  const ClaimSpec two = readBack(options(2, true));
  // Fabric Manager partitions of two: {gpu-0, gpu-2} (id 1) and {gpu-1, gpu-3} (id 2).
  // The driver publishes the partition ids as attributes of its own domain (`partition2`).
  const auto fmDevice = [](const std::string& name, int partition) {
    return R"({"name":")" + name +
           R"(","attributes":{"type":{"string":"gpu"},"resource.kubernetes.io/numaNode":{"int":0},)" +
           R"("resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"},"partition2":{"int":)" +
           std::to_string(partition) + "}}}";
  };
  const std::string listed = "[" + fmDevice("gpu-0", 1) + "," + fmDevice("gpu-1", 2) + "," +
                             fmDevice("gpu-2", 1) + "," + fmDevice("gpu-3", 2) + "]";
  const Outcome whole = allocate(Node(listed), two);
  CHECK(whole.tier == "gpus/nvswitch-partition");
  CHECK(whole.devices == std::vector<std::string>{"gpu-0", "gpu-2"});
  // One GPU of each partition taken: two GPUs are free and share a root, but they are in
  // different partitions, which the driver cannot prepare: no tier may take them.
  AllocatedDevices taken;
  taken.addExclusive("gpu.nvidia.com", "n", "gpu-0");
  taken.addExclusive("gpu.nvidia.com", "n", "gpu-3");
  CHECK(allocate(Node(listed, taken), two).status == FirstFitStatus::kNoFit);
  // A node without Fabric Manager partitions: the next tier, same root.
  const std::string plain = "[" + device("gpu-0", 0, "pci0000:00") + "," +
                            device("gpu-1", 1, "pci0000:10") + "," +
                            device("gpu-2", 0, "pci0000:00") + "]";
  const Outcome next = allocate(Node(plain), two);
  CHECK(next.tier == "gpus/same-pcie-root");
  CHECK(next.devices == std::vector<std::string>{"gpu-0", "gpu-2"});
}

TEST_CASE("the island claim (nvlink-island): GPUs tied to their companions, one island, no tiers",
          "[dra][shaping][companion]") {
  ShapedClaimOptions island = options(2);
  island.nvlinkIsland = true;
  const auto spec = shapedClaimSpec(island);
  REQUIRE(spec.ok());
  CHECK(claimTemplateYaml(island, *spec) ==
        testing::draFixtureText("claim-template-2-island.yaml"));
  // Eight GPUs: 16 requests gpu-0, link-0, ..., gpu-7, link-7; 8 bus-id constraints and the
  // island constraint over every link-*.
  island = options(8);
  island.nvlinkIsland = true;
  const ClaimSpec eight = readBack(island);
  REQUIRE(eight.requests.size() == 16);
  CHECK(eight.requests[0].name == "gpu-0");
  CHECK(eight.requests[1].name == "link-0");
  CHECK(eight.requests[1].alternatives[0].deviceClassName == "topology.gputopo.dev");
  CHECK(eight.requests[15].name == "link-7");
  CHECK_FALSE(eight.requests[15].firstAvailable);
  REQUIRE(eight.constraints.size() == 9);
  CHECK(eight.constraints[7].requests == std::vector<std::string>{"gpu-7", "link-7"});
  CHECK(eight.constraints[7].matchAttribute == "resource.kubernetes.io/pciBusID");
  CHECK(eight.constraints[8].matchAttribute == "topology.gputopo.dev/nvlinkIsland");
  CHECK(eight.constraints[8].requests.size() == 8);
  // Another companion driver and class.
  island.companionDriver = "links.example.com";
  island.companionClass = "links";
  const ClaimSpec other = readBack(island);
  CHECK(other.requests[1].alternatives[0].deviceClassName == "links");
  CHECK(other.constraints[8].matchAttribute == "links.example.com/nvlinkIsland");
  // Refused: one GPU (any GPU is an island of one), more than 16 (32 devices), with partitions,
  // bad names.
  island = options(1);
  island.nvlinkIsland = true;
  CHECK_THAT(shapedClaimSpec(island).error().message, ContainsSubstring("--gpus 2 to 16"));
  island.gpus = 17;
  CHECK_THAT(shapedClaimSpec(island).error().message, ContainsSubstring("at most 32 devices"));
  island.gpus = 16;
  CHECK(shapedClaimSpec(island).ok());
  island.nvswitchPartition = true;
  CHECK_THAT(shapedClaimSpec(island).error().message, ContainsSubstring("--nvswitch-partition"));
  island.nvswitchPartition = false;
  island.companionClass = "Links";
  CHECK_THAT(shapedClaimSpec(island).error().message, ContainsSubstring("--companion-class"));
  island.companionClass = "links";
  island.companionDriver = "";
  CHECK_THAT(shapedClaimSpec(island).error().message, ContainsSubstring("--companion-driver"));
}

}  // namespace gte::dra

namespace gte::dra {
namespace {

// Pods of one group made from one template ask the same; the group planner then places them as
// alike members (group/group_plan.cpp). Only the claim's id may differ.
TEST_CASE("two claims of one template ask the same; another count or tier does not",
          "[dra][claim-shaping]") {
  const ClassCatalog catalog{testing::draClasses("nvidia-device-classes.json")};
  const auto compiled = [&](const ShapedClaimOptions& shaped, const std::string& id) {
    const auto spec = shapedClaimSpec(shaped);
    REQUIRE(spec.ok());
    auto program = compileClaim(*spec, id, catalog);
    REQUIRE(program.ok());
    return std::move(program).value();
  };
  const ClaimProgram a = compiled(options(2), "ml/m0-gpus");
  CHECK(asksTheSame(a, compiled(options(2), "ml/m1-gpus")));
  CHECK_FALSE(asksTheSame(a, compiled(options(4), "ml/m1-gpus")));
  CHECK_FALSE(asksTheSame(a, compiled(options(2, true), "ml/m1-gpus")));  // one tier more
  ClaimProgram other = a;
  other.constraints.front().attribute = "resource.kubernetes.io/numaNode";
  CHECK_FALSE(asksTheSame(a, other));
}

}  // namespace
}  // namespace gte::dra
