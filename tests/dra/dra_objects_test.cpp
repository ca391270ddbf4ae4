// Reading ResourceSlices, DeviceClasses, ResourceClaims and templates: the NVIDIA-shaped fixtures
// read to the values the allocator uses, and every malformed field is an error naming the object
// and the field, never a crash or a silently dropped device.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/device_class.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice_json.h"
#include "dra/slice_device.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

TEST_CASE("an NVIDIA ResourceSlice: pool, node, devices as listed, attributes by both lookups",
          "[dra][slice]") {
  const auto slice = testing::draSlice("hgx-h100-slice.json");
  CHECK(slice->name == "hgx-h100-a-gpu.nvidia.com-7xk2p");
  CHECK(slice->driver == "gpu.nvidia.com");
  CHECK(slice->pool == "hgx-h100-a");
  CHECK(slice->generation == 1);
  CHECK(slice->resourceSliceCount == 1);
  CHECK(slice->selection.nodeName == "hgx-h100-a");
  REQUIRE(slice->devices.size() == 8);
  // Devices stay in the order published (the driver's map order), never re-sorted.
  CHECK(slice->deviceName(0) == "gpu-1");
  CHECK(slice->deviceName(7) == "gpu-0");
  const SliceDevice first(*slice, 0);
  // CEL: unqualified names belong to the driver's domain.
  const auto type = first.celAttribute("gpu.nvidia.com", "type");
  REQUIRE(type.has_value());
  CHECK(type->kind == ValueKind::kString);
  CHECK(type->text == "gpu");
  CHECK_FALSE(first.celAttribute("other.example.com", "type").has_value());
  const auto numa = first.celAttribute("resource.kubernetes.io", "numaNode");
  REQUIRE(numa.has_value());
  CHECK(numa->kind == ValueKind::kInt);
  CHECK(numa->integer == 1);
  CHECK(first.celAttribute("gpu.nvidia.com", "driverVersion")->kind == ValueKind::kVersion);
  // Constraints: the fully qualified name, or the bare id in the driver's own domain.
  CHECK(first.qualifiedAttribute("resource.kubernetes.io/pcieRoot")->text == "pci0000:a8");
  CHECK(first.qualifiedAttribute("gpu.nvidia.com/uuid")->text ==
        "GPU-1d6e2f3a-0000-4000-8000-000000000005");
  // The published key itself matches too (the allocator looks the exact key up first).
  CHECK(first.qualifiedAttribute("uuid").has_value());
  CHECK_FALSE(first.qualifiedAttribute("other.example.com/uuid").has_value());
  const Quantity* memory = first.celCapacity("gpu.nvidia.com", "memory");
  REQUIRE(memory != nullptr);
  CHECK(*memory == Quantity::fromUnits(81559LL * 1024 * 1024));
}

TEST_CASE("a slice keeps each distinct string once", "[dra][slice]") {
  const auto slice = testing::draSlice("hgx-h100-slice.json");
  // 8 devices x 11 attributes share names and most values: the buffer holds the 11 names, the
  // shared values and per GPU its name, UUID, bus id and root, far less than 8 copies of all.
  CHECK(slice->attributes.size() == 88);
  CHECK(slice->text.text().size() < 1200);
  CHECK(slice->heapBytes() < 4000);
}

struct BadSlice {
  const char* what;
  std::string json;
  const char* message;
};

std::string sliceWith(const std::string& spec) {
  return R"({"metadata":{"name":"s1"},"spec":{"driver":"gpu.nvidia.com","nodeName":"n",)"
         R"("pool":{"name":"n","generation":1,"resourceSliceCount":1},)" +
         spec + "}}";
}

TEST_CASE("malformed slices are errors naming the slice and the field", "[dra][slice]") {
  const std::vector<BadSlice> cases = {
      {"not JSON", "{", "malformed ResourceSlice"},
      {"no driver", R"({"metadata":{"name":"s1"},"spec":{"pool":{"name":"p"}}})",
       "ResourceSlice s1: spec.driver: missing"},
      {"no pool name", R"({"metadata":{"name":"s1"},"spec":{"driver":"d"}})",
       "ResourceSlice s1: spec.pool.name: missing"},
      {"generation a string",
       R"({"metadata":{"name":"s1"},"spec":{"driver":"d","pool":{"name":"p","generation":"1"}}})",
       "ResourceSlice s1: spec.pool.generation"},
      {"device without a name", sliceWith(R"("devices":[{"attributes":{}}])"),
       "spec.devices[0].name: missing"},
      {"attribute with two values",
       sliceWith(R"("devices":[{"name":"d","attributes":{"x":{"int":1,"string":"a"}}}])"),
       "spec.devices[0].attributes.x: want exactly one of int, bool, string, version, got 2"},
      {"attribute with no value", sliceWith(R"("devices":[{"name":"d","attributes":{"x":{}}}])"),
       "spec.devices[0].attributes.x: want exactly one"},
      {"int attribute out of range",
       sliceWith(R"("devices":[{"name":"d","attributes":{"x":{"int":99999999999999999999}}}])"),
       "spec.devices[0].attributes.x.int"},
      {"capacity without a value",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{}}}])"),
       "spec.devices[0].capacity.memory.value: missing"},
      {"capacity not a quantity",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{"value":"lots"}}}])"),
       "spec.devices[0].capacity.memory.value"},
      {"capacity range without a minimum",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{"value":"8Gi",
                    "requestPolicy":{"validRange":{"step":"1Gi"}}}}}])"),
       "spec.devices[0].capacity.memory.requestPolicy.validRange.min: missing"},
      {"capacity range with a zero step",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{"value":"8Gi",
                    "requestPolicy":{"validRange":{"min":"1Gi","step":"0"}}}}}])"),
       "validRange.step: not positive"},
      {"capacity policy with both forms",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{"value":"8Gi",
                    "requestPolicy":{"validValues":["1Gi"],"validRange":{"min":"1Gi"}}}}}])"),
       "requestPolicy: sets both validValues and validRange"},
      {"capacity valid values out of order",
       sliceWith(R"("devices":[{"name":"d","capacity":{"memory":{"value":"8Gi",
                    "requestPolicy":{"validValues":["2Gi","1Gi"]}}}}])"),
       "validValues[1]: not in ascending order"},
      {"counter set without a name",
       sliceWith(R"("sharedCounters":[{"counters":{"c":{"value":"1"}}}])"),
       "spec.sharedCounters[0].name: missing"},
      {"consumption without a counter set",
       sliceWith(R"("devices":[{"name":"d","consumesCounters":[{"counters":{}}]}])"),
       "spec.devices[0].consumesCounters[0].counterSet: missing"},
      {"a device that is a number", sliceWith(R"("devices":[7])"), "spec.devices[0]"},
      {"trailing garbage", sliceWith(R"("devices":[])") + "x", "malformed ResourceSlice"},
  };
  for (const BadSlice& c : cases) {
    INFO(c.what);
    const auto slice = parseResourceSliceJson(c.json);
    REQUIRE_FALSE(slice.ok());
    CHECK(slice.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(slice.error().message, ContainsSubstring(c.message));
  }
}

TEST_CASE("slice node selection, counters, taints and per-device flags", "[dra][slice]") {
  const auto slice = parseResourceSliceJson(sliceWith(R"(
    "devices":[{"name":"d0","consumesCounters":[{"counterSet":"gpu-0-cs",
                 "counters":{"memory-slice-0":{"value":"1"},"memory-slice-1":{"value":"1"}}}],
                "taints":[{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule"}],
                "bindingConditions":["attached"],"allowMultipleAllocations":true},
               {"name":"d1","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[
                 {"key":"zone","operator":"In","values":["a","b"]}]}]}}],
    "sharedCounters":[{"name":"gpu-0-cs","counters":{"memory-slice-0":{"value":"1"}}}])"));
  REQUIRE(slice.ok());
  const ResourceSlice& s = **slice;
  REQUIRE(s.devices.size() == 2);
  const Device& d0 = s.devices[0];
  REQUIRE(d0.consumesCounters.count == 1);
  const CounterGroup& use = s.counterGroups[d0.consumesCounters.first];
  CHECK(s.view(use.counterSet) == "gpu-0-cs");
  CHECK(use.counters.count == 2);
  REQUIRE(d0.taints.count == 1);
  CHECK(s.view(s.taints[d0.taints.first].key) == "gpu.nvidia.com/xid");
  CHECK(s.taints[d0.taints.first].effect == TaintEffect::kNoSchedule);
  CHECK(d0.bindingConditions);
  CHECK(d0.allowMultipleAllocations);
  CHECK(d0.nodeSelection == -1);
  REQUIRE(s.devices[1].nodeSelection == 0);
  REQUIRE(s.deviceSelections[0].nodeSelector.has_value());
  CHECK(s.deviceSelections[0].nodeSelector->terms[0].matchExpressions[0].values ==
        std::vector<std::string>{"a", "b"});
  REQUIRE(s.sharedCounters.count == 1);
  CHECK(s.view(s.counterGroups[s.sharedCounters.first].counterSet) == "gpu-0-cs");
}

TEST_CASE("the NVIDIA chart's DeviceClasses", "[dra][class]") {
  const auto classes = testing::draClasses("nvidia-device-classes.json");
  REQUIRE(classes.size() == 5);
  CHECK(classes[0]->name == "gpu.nvidia.com");
  CHECK(classes[0]->extendedResourceName == "nvidia.com/gpu");
  REQUIRE(classes[0]->selectors.size() == 1);
  CHECK_THAT(classes[0]->selectors[0], ContainsSubstring("type == 'gpu'"));
  CHECK(classes[1]->extendedResourceName.empty());
  CHECK(implicitExtendedResourceName("mig.nvidia.com") ==
        "deviceclass.resource.kubernetes.io/mig.nvidia.com");
  const auto unnamed = parseDeviceClassJson(R"({"spec":{}})");
  REQUIRE_FALSE(unnamed.ok());
  CHECK_THAT(unnamed.error().message, ContainsSubstring("DeviceClass: metadata.name: missing"));
  const auto other = parseDeviceClassJson(R"({"metadata":{"name":"x"},"spec":{"selectors":[{}]}})");
  REQUIRE(other.ok());
  CHECK((*other)->unknownSelector);
}

TEST_CASE("claims: exactly, firstAvailable, constraints and the allocation", "[dra][claim]") {
  const auto two = testing::draClaim("claim-2-gpus.json");
  CHECK(two->name == "train-0-gpus");
  CHECK(two->ns == "ml");
  REQUIRE(two->spec.requests.size() == 1);
  const DeviceRequest& gpus = two->spec.requests[0];
  CHECK_FALSE(gpus.firstAvailable);
  REQUIRE(gpus.alternatives.size() == 1);
  CHECK(gpus.alternatives[0].name == "gpus");
  CHECK(gpus.alternatives[0].deviceClassName == "gpu.nvidia.com");
  CHECK(gpus.alternatives[0].count == 2);
  CHECK(gpus.alternatives[0].unsupported.empty());
  CHECK_FALSE(two->allocated);

  const auto tiers = testing::draClaim("claim-first-available.json");
  const DeviceRequest& tiered = tiers->spec.requests[0];
  CHECK(tiered.firstAvailable);
  REQUIRE(tiered.alternatives.size() == 3);
  CHECK(tiered.alternatives[1].name == "same-numa");
  REQUIRE(tiers->spec.constraints.size() == 2);
  CHECK(tiers->spec.constraints[0].requests == std::vector<std::string>{"gpus/same-root"});
  CHECK(tiers->spec.constraints[0].matchAttribute == "resource.kubernetes.io/pcieRoot");

  const auto allocated = testing::draClaim("claim-allocated.json");
  CHECK(allocated->allocated);
  REQUIRE(allocated->devices.size() == 1);
  CHECK(allocated->devices[0] ==
        AllocatedDevice{"gpu", "gpu.nvidia.com", "hgx-h100-a", "gpu-1", false, false, {}});
  REQUIRE(allocated->reservedFor.size() == 1);
  CHECK(allocated->reservedFor[0].uid == "pod-uid-infer-0");

  const auto tmpl = testing::draTemplate("template-4-gpus.json");
  CHECK(tmpl->name == "four-gpus");
  REQUIRE(tmpl->spec.requests.size() == 1);
  CHECK(tmpl->spec.requests[0].alternatives[0].count == 4);
  REQUIRE(tmpl->spec.constraints.size() == 1);
  CHECK(tmpl->spec.constraints[0].requests.empty());  // every request of the claim
}

std::string claimWith(const std::string& devices) {
  return R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":)" + devices + "}}";
}

TEST_CASE("claim defaults and what the extender cannot replicate", "[dra][claim]") {
  const auto defaulted = parseResourceClaimJson(
      claimWith(R"({"requests":[{"name":"r","exactly":{"deviceClassName":"c"}}]})"));
  REQUIRE(defaulted.ok());
  const DeviceRequestShape& shape = (*defaulted)->spec.requests[0].alternatives[0];
  CHECK(shape.mode == AllocationMode::kExactCount);
  CHECK(shape.count == 1);  // the API default
  const auto all = parseResourceClaimJson(claimWith(
      R"({"requests":[{"name":"r","exactly":{"deviceClassName":"c","allocationMode":"All"}}]})"));
  REQUIRE(all.ok());
  CHECK((*all)->spec.requests[0].alternatives[0].mode == AllocationMode::kAll);
  const std::vector<std::pair<std::string, std::string>> unsupported = {
      {R"("adminAccess":true)", "admin access"},
      {R"("derivedAttributes":[{"name":"x","expression":"1"}])", "derived attributes"},
      {R"("allocationMode":"Some")", "allocation mode Some"},
      {R"("selectors":[{"future":{}}])", "a selector that is not CEL"},
  };
  for (const auto& [field, reason] : unsupported) {
    INFO(field);
    const auto claim = parseResourceClaimJson(claimWith(
        R"({"requests":[{"name":"r","exactly":{"deviceClassName":"c",)" + field + "}}]}"));
    REQUIRE(claim.ok());
    CHECK((*claim)->spec.requests[0].alternatives[0].unsupported == reason);
  }
  const auto futureConstraint = parseResourceClaimJson(claimWith(
      R"({"requests":[{"name":"r","exactly":{"deviceClassName":"c"}}],"constraints":[{"requests":["r"]}]})"));
  REQUIRE(futureConstraint.ok());
  CHECK_THAT((*futureConstraint)->spec.unsupported, ContainsSubstring("constraint 0"));
}

TEST_CASE("malformed claims are errors naming the claim and the field", "[dra][claim]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {claimWith(R"({"requests":[{"name":"r"}]})"),
       "ResourceClaim ns/c: spec.devices.requests[0]: want exactly one of exactly, firstAvailable"},
      {claimWith(R"({"requests":[{"exactly":{"deviceClassName":"c"}}]})"),
       "spec.devices.requests[0].name: missing"},
      {claimWith(R"({"requests":[{"name":"r","exactly":{}}]})"),
       "spec.devices.requests[0].exactly.deviceClassName: missing"},
      {claimWith(R"({"requests":[{"name":"r","exactly":{"deviceClassName":"c","count":-2}}]})"),
       "exactly.count: negative"},
      {claimWith(R"({"requests":[{"name":"r","firstAvailable":[]}]})"),
       "want exactly one of exactly, firstAvailable"},
      {R"({"metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"devices":{"results":[{"driver":"d"}]}}}})",
       "status.allocation.devices.results[0]: want driver, pool and device"},
      {R"({"spec":{}})", "ResourceClaim: metadata.name: missing"},
      {R"({"metadata":{"name":"c"},"spec":{"devices":{"requests":{}}}})", "spec.devices.requests"},
  };
  for (const auto& [json, message] : cases) {
    INFO(json);
    const auto claim = parseResourceClaimJson(json);
    REQUIRE_FALSE(claim.ok());
    CHECK_THAT(claim.error().message, ContainsSubstring(message));
  }
}

}  // namespace
}  // namespace gte::dra
