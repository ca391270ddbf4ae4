// The first-fit replica, table by table, with the order reasoning in comments. The H100 slice
// lists (by NVML index) GPUs 5 2 7 0 3 6 1 4 as gpu-1 gpu-6 gpu-3 gpu-4 gpu-7 gpu-2 gpu-5 gpu-0,
// so positions 0..7 have NUMA nodes 1 0 1 0 0 1 0 1; every GPU has its own pcieRoot.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <memory>
#include <string>
#include <vector>

#include "dra/first_fit.h"
#include "dra/resource_slice_json.h"
#include "dra/slice_taint_rules.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

struct Node {
  SliceIndex index;
  ClassCatalog catalog{testing::draClasses("nvidia-device-classes.json")};
  NodeDevices devices;
  ClassMatches matches;

  void gather(const std::string& name, const AllocatedDevices& allocated = {}) {
    devices = gatherNodeDevices(name, {}, index, allocated);
    matches = matchClasses(devices, catalog);
  }
};

Node fixtureNode(const std::string& file, const std::string& name,
                 const AllocatedDevices& allocated = {}) {
  Node node;
  node.index.upsert(testing::draSlice(file));
  node.gather(name, allocated);
  return node;
}

ClaimProgram compile(const Node& node, const std::string& devices) {
  const auto claim = parseResourceClaimJson(
      R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":)" + devices + "}}");
  REQUIRE(claim.ok());
  auto program = compileClaim((*claim)->spec, "ns/c", node.catalog);
  REQUIRE(program.ok());
  return std::move(program).value();
}

// The picked devices' names, or the status when nothing was allocated.
std::vector<std::string> picks(const Node& node, const std::vector<std::string>& claims,
                               FirstFitResult* result = nullptr) {
  std::vector<ClaimProgram> programs;
  for (const std::string& claim : claims)
    programs.push_back(compile(node, claim));
  std::vector<const ClaimProgram*> pointers;
  for (const ClaimProgram& program : programs)
    pointers.push_back(&program);
  FirstFit fit(pointers);
  const FirstFitResult out = fit.run(node.devices, node.matches);
  if (result != nullptr) *result = out;
  std::vector<std::string> names;
  if (out.status != FirstFitStatus::kAllocated) return {firstFitStatusName(out.status)};
  for (const PickedDevice& picked : out.devices) {
    const NodeDevice& d = node.devices.devices[picked.position];
    names.push_back(std::string(d.slice->deviceName(d.index)));
  }
  return names;
}

std::string gpus(int count, const std::string& extra = "") {
  return R"({"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":)" +
         std::to_string(count) + extra + "}}]}";
}

using Names = std::vector<std::string>;

TEST_CASE("plain requests take the first free devices in slice order", "[dra][firstfit]") {
  Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  // Positions 0 and 1.
  CHECK(picks(node, {gpus(2)}) == Names{"gpu-1", "gpu-6"});
  // gpu-1 (position 0) allocated to another claim: positions 1 and 2.
  AllocatedDevices allocated;
  allocated.addClaim(*testing::draClaim("claim-allocated.json"));
  node.gather("hgx-h100-a", allocated);
  CHECK(picks(node, {gpus(2)}) == Names{"gpu-6", "gpu-3"});
  // 8 GPUs with one in use: no fit.
  CHECK(picks(node, {gpus(8)}) == Names{"no fit"});
  CHECK(picks(node, {gpus(7)}).size() == 7);
}

TEST_CASE("matchAttribute: the first subset, by position, whose values agree", "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  const std::string numa =
      R"(,"constraints":[{"matchAttribute":"resource.kubernetes.io/numaNode"}])";
  const auto withConstraint = [&](int count) {
    std::string spec = gpus(count);
    spec.insert(spec.size() - 1, numa);
    return spec;
  };
  // Position 0 (NUMA 1) fixes the value; then positions 2, 5, 7 are the next NUMA-1 devices.
  CHECK(picks(node, {withConstraint(4)}) == Names{"gpu-1", "gpu-3", "gpu-2", "gpu-0"});
  // Two: positions 0 and 2.
  CHECK(picks(node, {withConstraint(2)}) == Names{"gpu-1", "gpu-3"});
  // Five with one NUMA node each of four: the search exhausts every subset.
  FirstFitResult result;
  CHECK(picks(node, {withConstraint(5)}, &result) == Names{"no fit"});
  CHECK(result.steps > 8);
  // pcieRoot differs on every H100 GPU: no two share one.
  std::string root = gpus(2);
  root.insert(root.size() - 1,
              R"(,"constraints":[{"matchAttribute":"resource.kubernetes.io/pcieRoot"}])");
  CHECK(picks(node, {root}) == Names{"no fit"});
}

TEST_CASE("distinctAttribute: values pairwise different", "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  std::string spec = gpus(3);
  spec.insert(spec.size() - 1,
              R"(,"constraints":[{"distinctAttribute":"resource.kubernetes.io/numaNode"}])");
  // Positions 0 (NUMA 1) and 1 (NUMA 0); a third NUMA node does not exist.
  CHECK(picks(node, {spec}) == Names{"no fit"});
  spec = gpus(2);
  spec.insert(spec.size() - 1,
              R"(,"constraints":[{"distinctAttribute":"resource.kubernetes.io/numaNode"}])");
  CHECK(picks(node, {spec}) == Names{"gpu-1", "gpu-6"});
}

TEST_CASE("firstAvailable: the first alternative the rest also succeeds with", "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  const std::string tiers = R"({"requests":[{"name":"gpus","firstAvailable":[
      {"name":"same-root","deviceClassName":"gpu.nvidia.com","count":2},
      {"name":"same-numa","deviceClassName":"gpu.nvidia.com","count":2},
      {"name":"any","deviceClassName":"gpu.nvidia.com","count":2}]}],
    "constraints":[{"requests":["gpus/same-root"],"matchAttribute":"resource.kubernetes.io/pcieRoot"},
                   {"requests":["gpus/same-numa"],"matchAttribute":"resource.kubernetes.io/numaNode"}]})";
  // No two GPUs share a root; same-numa takes positions 0 and 2 (both NUMA 1).
  FirstFitResult result;
  CHECK(picks(node, {tiers}, &result) == Names{"gpu-1", "gpu-3"});
  REQUIRE(result.devices.size() == 2);
  CHECK(result.devices[0].alternative == 1);
  // On the A100 box GPUs 0 and 1 share pci0000:16: same-root wins at once.
  const Node a100 = fixtureNode("a100-pcie-first-slice.json", "a100-pcie-first");
  CHECK(picks(a100, {tiers}, &result) == Names{"gpu-0", "gpu-1"});
  CHECK(result.devices[0].alternative == 0);
}

TEST_CASE("claims and requests in order; constraints reach across requests", "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  // The first claim takes position 0; the second starts over at 0 and takes 1 and 2.
  CHECK(picks(node, {gpus(1), gpus(2)}) == Names{"gpu-1", "gpu-6", "gpu-3"});
  // Two requests of one claim under one matchAttribute: r1 takes position 0 (NUMA 1); r2 starts
  // at 0 again, skips 0 (taken) and 1 (NUMA 0), takes 2.
  const std::string twoRequests = R"({"requests":[
      {"name":"r1","exactly":{"deviceClassName":"gpu.nvidia.com"}},
      {"name":"r2","exactly":{"deviceClassName":"gpu.nvidia.com"}}],
    "constraints":[{"matchAttribute":"resource.kubernetes.io/numaNode"}]})";
  CHECK(picks(node, {twoRequests}) == Names{"gpu-1", "gpu-3"});
  // A constraint limited to r2 leaves r1 free: positions 0 and 1.
  const std::string onlyR2 = R"({"requests":[
      {"name":"r1","exactly":{"deviceClassName":"gpu.nvidia.com"}},
      {"name":"r2","exactly":{"deviceClassName":"gpu.nvidia.com"}}],
    "constraints":[{"requests":["r2"],"matchAttribute":"resource.kubernetes.io/numaNode"}]})";
  CHECK(picks(node, {onlyR2}) == Names{"gpu-1", "gpu-6"});
  // Constraints are per claim: a second claim's constraint does not see the first claim's device.
  std::string numaPair = gpus(2);
  numaPair.insert(numaPair.size() - 1,
                  R"(,"constraints":[{"matchAttribute":"resource.kubernetes.io/numaNode"}])");
  // Claim 1: position 0. Claim 2: position 1 (NUMA 0) fixes it, next NUMA 0 free is 3.
  CHECK(picks(node, {gpus(1), numaPair}) == Names{"gpu-1", "gpu-6", "gpu-4"});
}

TEST_CASE("allocation mode All", "[dra][firstfit]") {
  Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  const std::string all =
      R"({"requests":[{"name":"all","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All"}}]})";
  CHECK(picks(node, {all}).size() == 8);
  // One in use: All cannot have it, no fit.
  AllocatedDevices allocated;
  allocated.addExclusive("gpu.nvidia.com", "hgx-h100-a", "gpu-0");
  node.gather("hgx-h100-a", allocated);
  CHECK(picks(node, {all}) == Names{"no fit"});
  // A pool being updated on the node: the allocator refuses All outright.
  node.index.upsert(*parseResourceSliceJson(
      testing::draSliceJson("half", "hgx-h100-a", "other-pool", "[]", "", 1, 2)));
  node.gather("hgx-h100-a");
  FirstFitResult result;
  CHECK(picks(node, {all}, &result) == Names{"allocator error"});
  CHECK_THAT(result.why, ContainsSubstring("pool gpu.nvidia.com/other-pool is being updated"));
  // ...but an exact count still allocates from the complete pool.
  CHECK(picks(node, {gpus(2)}) == Names{"gpu-1", "gpu-6"});
}

TEST_CASE("classes and request selectors select; a CEL runtime error is an error",
          "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  const std::string numa0 =
      R"({"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,
          "selectors":[{"cel":{"expression":"device.attributes['resource.kubernetes.io'].numaNode == 0"}}]}}]})";
  // NUMA 0 devices are at positions 1, 3, 4, 6.
  CHECK(picks(node, {numa0}) == Names{"gpu-6", "gpu-4"});
  const std::string mig =
      R"({"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com"}}]})";
  CHECK(picks(node, {mig}) == Names{"no fit"});  // no MIG devices on this node
  const std::string broken =
      R"({"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com",
          "selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].partition8 == 1"}}]}}]})";
  FirstFitResult result;
  CHECK(picks(node, {broken}, &result) == Names{"allocator error"});
  CHECK_THAT(result.why, ContainsSubstring("fails on device gpu-1"));
}

TEST_CASE("taints keep devices away unless tolerated", "[dra][firstfit]") {
  Node node;
  std::string list = "[";
  list += testing::draGpuDevice(
      "gpu-0", 0, "r0",
      R"("taints":[{"key":"example.com/xid","value":"79","effect":"NoSchedule"}])");
  list += ",";
  list += testing::draGpuDevice("gpu-1", 0, "r1",
                                R"("taints":[{"key":"example.com/info","effect":"None"}])");
  list += ",";
  list += testing::draGpuDevice("gpu-2", 0, "r2");
  list += "]";
  node.index.upsert(*parseResourceSliceJson(testing::draSliceJson("s", "n", "n", list)));
  node.gather("n");
  // gpu-0's NoSchedule taint is not tolerated; an effect of None never keeps a device away.
  CHECK(picks(node, {gpus(2)}) == Names{"gpu-1", "gpu-2"});
  const std::string tolerating =
      R"(,"tolerations":[{"key":"example.com/xid","operator":"Exists"}])";
  CHECK(picks(node, {gpus(2, tolerating)}) == Names{"gpu-0", "gpu-1"});
  const std::string wrongValue =
      R"(,"tolerations":[{"key":"example.com/xid","operator":"Equal","value":"48"}])";
  CHECK(picks(node, {gpus(2, wrongValue)}) == Names{"gpu-1", "gpu-2"});
}

TEST_CASE("counters: a whole GPU and its partitions share memory slices", "[dra][firstfit]") {
  Node node;
  node.index.upsert(*parseResourceSliceJson(testing::draSliceJson(
      "a-counters", "n", "n", "[]",
      R"("sharedCounters":[{"name":"gpu-0-cs","counters":{"memory-slice":{"value":"8"}}}])", 1,
      2)));
  node.index.upsert(*parseResourceSliceJson(
      testing::draSliceJson("b-devices", "n", "n",
                            R"([{"name":"gpu-0","attributes":{"type":{"string":"gpu"}},
           "consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"memory-slice":{"value":"8"}}}]},
          {"name":"gpu-0-mig-4g-0","attributes":{"type":{"string":"mig"}},
           "consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"memory-slice":{"value":"4"}}}]},
          {"name":"gpu-0-mig-4g-4","attributes":{"type":{"string":"mig"}},
           "consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"memory-slice":{"value":"4"}}}]}])",
                            "", 1, 2)));
  node.gather("n");
  const std::string mig2 =
      R"({"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com","count":2}}]})";
  CHECK(picks(node, {mig2}) == Names{"gpu-0-mig-4g-0", "gpu-0-mig-4g-4"});
  // The whole GPU and one partition would need 12 of 8 slices.
  const std::string both = R"({"requests":[
      {"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com"}},
      {"name":"m","exactly":{"deviceClassName":"mig.nvidia.com"}}]})";
  CHECK(picks(node, {both}) == Names{"no fit"});
  // One partition allocated elsewhere: 4 slices left, the whole GPU no longer fits.
  AllocatedDevices allocated;
  allocated.addExclusive("gpu.nvidia.com", "n", "gpu-0-mig-4g-0");
  node.gather("n", allocated);
  CHECK(picks(node, {gpus(1)}) == Names{"no fit"});
  CHECK(picks(node,
              {R"({"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com"}}]})"}) ==
        Names{"gpu-0-mig-4g-4"});
}

TEST_CASE("what the replica does not reproduce is uninterpretable, not a guess",
          "[dra][firstfit]") {
  // A search over more steps than the budget.
  const Node h100 = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  std::string spec = gpus(5);
  spec.insert(spec.size() - 1,
              R"(,"constraints":[{"matchAttribute":"resource.kubernetes.io/numaNode"}])");
  const ClaimProgram program = compile(h100, spec);
  FirstFit small({&program}, 10);
  const FirstFitResult stopped = small.run(h100.devices, h100.matches);
  CHECK(stopped.status == FirstFitStatus::kUninterpretable);
  CHECK_THAT(stopped.why, ContainsSubstring("more than 10 steps"));
}

TEST_CASE("claims the replica cannot compile say why", "[dra][firstfit]") {
  const Node node = fixtureNode("hgx-h100-slice.json", "hgx-h100-a");
  const auto reason = [&](const std::string& devices) {
    const auto claim = parseResourceClaimJson(
        R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":)" + devices + "}}");
    REQUIRE(claim.ok());
    const auto program = compileClaim((*claim)->spec, "ns/c", node.catalog);
    REQUIRE_FALSE(program.ok());
    return program.error().message;
  };
  CHECK_THAT(reason(R"({"requests":[{"name":"g","exactly":{"deviceClassName":"nope"}}]})"),
             ContainsSubstring("claim ns/c request g: device class nope is not known"));
  CHECK_THAT(reason(gpus(33)), ContainsSubstring("more than a claim can hold"));
  CHECK_THAT(reason(R"j({"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com",
               "selectors":[{"cel":{"expression":"device.attributes['a'].b.matches('x')"}}]}}]})j"),
             ContainsSubstring("outside the CEL subset"));
  // Two requests of 20 cannot share one claim's 32 results.
  const ClaimProgram two = compile(node, R"({"requests":[
      {"name":"a","exactly":{"deviceClassName":"gpu.nvidia.com","count":20}},
      {"name":"b","exactly":{"deviceClassName":"gpu.nvidia.com","count":20}}]})");
  FirstFit fit({&two});
  const FirstFitResult result = fit.run(node.devices, node.matches);
  CHECK(result.status == FirstFitStatus::kError);
  CHECK_THAT(result.why, ContainsSubstring("needs more than 32 devices"));
}

TEST_CASE("NVLink pair or PCIe pair: the slice order decides", "[dra][firstfit]") {
  // The same 8x A100 PCIe box (NVLink bridges on 0-2, 1-3, 4-5, 6-7) published in two orders.
  const Node nvlinkFirst = fixtureNode("a100-nvlink-first-slice.json", "a100-nvlink-first");
  const Node pcieFirst = fixtureNode("a100-pcie-first-slice.json", "a100-pcie-first");
  CHECK(picks(nvlinkFirst, {gpus(2)}) == Names{"gpu-0", "gpu-2"});  // bridged
  CHECK(picks(pcieFirst, {gpus(2)}) == Names{"gpu-0", "gpu-1"});    // PCIe only
  // The extended-resource claim the scheduler builds for `nvidia.com/gpu: 2` is the same.
  const int gpuClass = nvlinkFirst.catalog.forExtendedResource("nvidia.com/gpu");
  REQUIRE(gpuClass >= 0);
  const ClaimProgram er = extendedResourceClaim(gpuClass, 2);
  FirstFit fit({&er});
  const FirstFitResult result = fit.run(pcieFirst.devices, pcieFirst.matches);
  REQUIRE(result.status == FirstFitStatus::kAllocated);
  CHECK(result.devices[1].position == 1);
}

TEST_CASE("DeviceTaintRules: a rule's taint moves first-fit as a slice taint would",
          "[dra][firstfit][taintrules]") {
  // a100-nvlink-first lists gpu-0 gpu-2 gpu-5 gpu-1 ...; its NVLink bridges join 0-2, 1-3, 4-5,
  // 6-7, so first-fit of two takes the bridged pair gpu-0 + gpu-2 (test above).
  const auto withRules = [](const std::vector<std::string>& rules) {
    std::vector<DeviceTaintRuleConstSharedPtr> parsed;
    for (const std::string& json : rules) {
      auto rule = parseDeviceTaintRuleJson(json);
      REQUIRE(rule.ok());
      parsed.push_back(*rule);
    }
    Node node;
    node.index.upsert(withTaintRules(testing::draSlice("a100-nvlink-first-slice.json"), parsed));
    node.gather("a100-nvlink-first");
    return node;
  };
  const auto rule = [](const std::string& selector, const std::string& effect = "NoSchedule") {
    return R"({"metadata":{"name":"r-)" + effect + R"("},"spec":{"deviceSelector":)" + selector +
           R"(,"taint":{"key":"example.com/maintenance","effect":")" + effect + R"("}}})";
  };
  const std::string gpu0 =
      R"({"driver":"gpu.nvidia.com","pool":"a100-nvlink-first","device":"gpu-0"})";
  // gpu-0 tainted: positions 1 and 2, gpu-2 + gpu-5, which no bridge joins.
  CHECK(picks(withRules({rule(gpu0)}), {gpus(2)}) == Names{"gpu-2", "gpu-5"});
  CHECK(picks(withRules({rule(gpu0, "NoExecute")}), {gpus(2)}) == Names{"gpu-2", "gpu-5"});
  // Selected by device name alone, any driver and pool: the same device.
  CHECK(picks(withRules({rule(R"({"device":"gpu-0"})")}), {gpus(2)}) == Names{"gpu-2", "gpu-5"});
  // A claim tolerating the rule's taint gets the bridged pair back.
  const std::string tolerating =
      R"(,"tolerations":[{"key":"example.com/maintenance","operator":"Exists"}])";
  CHECK(picks(withRules({rule(gpu0)}), {gpus(2, tolerating)}) == Names{"gpu-0", "gpu-2"});
  // Effect None, another pool, another driver, no selector: nothing changes.
  CHECK(picks(withRules({rule(gpu0, "None")}), {gpus(2)}) == Names{"gpu-0", "gpu-2"});
  CHECK(picks(withRules({rule(R"({"pool":"other-node","device":"gpu-0"})")}), {gpus(2)}) ==
        Names{"gpu-0", "gpu-2"});
  CHECK(picks(withRules({rule(R"({"driver":"example.com","device":"gpu-0"})")}), {gpus(2)}) ==
        Names{"gpu-0", "gpu-2"});
  CHECK(picks(withRules({rule("null")}), {gpus(2)}) == Names{"gpu-0", "gpu-2"});
  // The whole pool tainted (an empty selector selects every device): nothing to take.
  CHECK(picks(withRules({rule(R"({"pool":"a100-nvlink-first"})")}), {gpus(2)}) == Names{"no fit"});
  CHECK(picks(withRules({rule("{}")}), {gpus(1)}) == Names{"no fit"});
}

}  // namespace
}  // namespace gte::dra
