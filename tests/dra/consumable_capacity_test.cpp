// Consumable capacity (the allocator's DRAConsumableCapacity rules): what a request consumes of a
// device under its requestPolicy, the capacity check, and the first-fit replica sharing a device
// that allows multiple allocations, with its counters charged once.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/consumable_capacity.h"
#include "dra/first_fit.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice_json.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

Quantity q(const std::string& text) {
  return *parseQuantity(text);
}

ResourceList amounts(const std::vector<std::pair<std::string, std::string>>& entries) {
  ResourceList out;
  for (const auto& [name, amount] : entries)
    out.set(name, q(amount));
  return out;
}

// One device whose capacity "memory" is `capacity` ({"value":...,"requestPolicy":...}).
ResourceSliceConstSharedPtr deviceWith(const std::string& capacity) {
  const std::string device = testing::draGpuDevice(
      "gpu-0", 0, "r0",
      R"("allowMultipleAllocations":true,"capacity":{"memory":)" + capacity + "}");
  auto slice = parseResourceSliceJson(testing::draSliceJson("s", "n", "n", "[" + device + "]"));
  REQUIRE(slice.ok());
  return *slice;
}

// What a request for `amount` of memory consumes (or "no fit", or the error).
std::string consumes(const ResourceSlice& slice, const std::string& amount,
                     const std::vector<Quantity>& inUse = {}) {
  const ResourceList requests = amount.empty() ? ResourceList{} : amounts({{"memory", amount}});
  const CapacityUse use = checkCapacity(slice, slice.devices[0], requests, inUse);
  if (use.fit == CapacityFit::kNoFit) return "no fit";
  if (use.fit == CapacityFit::kError) return "error: " + use.why;
  REQUIRE(use.consumed.size() == 1);
  return use.consumed[0] == q(amount.empty() ? "0" : amount) ? "as asked" : "rounded";
}

Quantity consumed(const ResourceSlice& slice, const std::string& amount) {
  const ResourceList requests = amount.empty() ? ResourceList{} : amounts({{"memory", amount}});
  const CapacityUse use = checkCapacity(slice, slice.devices[0], requests, {});
  REQUIRE(use.fit == CapacityFit::kFits);
  return use.consumed.at(0);
}

TEST_CASE("a request consumes what its policy rounds it up to", "[dra][capacity]") {
  SECTION("no policy: what is asked, or the whole capacity when nothing is") {
    const auto slice = deviceWith(R"({"value":"80Gi"})");
    CHECK(consumed(*slice, "30Gi") == q("30Gi"));
    CHECK(consumed(*slice, "") == q("80Gi"));
    CHECK(consumes(*slice, "81Gi") == "no fit");
  }
  SECTION("a range: the minimum, then min + a multiple of step; never above max") {
    const auto slice = deviceWith(
        R"({"value":"80Gi","requestPolicy":{"default":"10Gi",
            "validRange":{"min":"10Gi","max":"40Gi","step":"5Gi"}}})");
    CHECK(consumed(*slice, "1Gi") == q("10Gi"));
    CHECK(consumed(*slice, "11Gi") == q("15Gi"));
    CHECK(consumed(*slice, "40Gi") == q("40Gi"));
    CHECK(consumed(*slice, "") == q("10Gi"));     // the default
    CHECK(consumes(*slice, "41Gi") == "no fit");  // rounds to 45Gi, past max
  }
  SECTION("a fractional range is rounded in thousandths") {
    const auto slice =
        deviceWith(R"({"value":"4","requestPolicy":{"validRange":{"min":"500m","step":"250m"}}})");
    CHECK(consumed(*slice, "600m") == q("750m"));
    CHECK(consumed(*slice, "1") == q("1"));
    // Not exact in thousandths: the allocator cannot represent it and aborts.
    CHECK_THAT(consumes(*slice, "600001u"), ContainsSubstring("error: capacity \"memory\""));
  }
  SECTION("valid values: the first at or above the request; none above it is refused") {
    const auto slice =
        deviceWith(R"({"value":"80Gi","requestPolicy":{"validValues":["10Gi","20Gi","40Gi"]}})");
    CHECK(consumed(*slice, "15Gi") == q("20Gi"));
    CHECK(consumed(*slice, "10Gi") == q("10Gi"));
    CHECK(consumes(*slice, "50Gi") == "no fit");
  }
  SECTION("beside what the device's shares hold") {
    const auto slice = deviceWith(R"({"value":"80Gi"})");
    CHECK(consumes(*slice, "30Gi", {q("50Gi")}) == "as asked");
    CHECK(consumes(*slice, "31Gi", {q("50Gi")}) == "no fit");
    CHECK(consumes(*slice, "", {q("1")}) == "no fit");  // the whole capacity is asked
  }
  SECTION("a capacity the device lacks rules it out; a negative amount aborts") {
    const auto slice = deviceWith(R"({"value":"80Gi"})");
    const CapacityUse other =
        checkCapacity(*slice, slice->devices[0], amounts({{"bandwidth", "1"}}), {});
    CHECK(other.fit == CapacityFit::kNoFit);
    CHECK_THAT(consumes(*slice, "-1Gi"), ContainsSubstring("capacity value is negative"));
  }
}

TEST_CASE("slice policies, claim capacity requests and consumed capacity are read",
          "[dra][capacity]") {
  const auto slice = deviceWith(
      R"({"value":"80Gi","requestPolicy":{"default":"8Gi","validValues":["8Gi","16Gi"]}})");
  const StoredQuantity& memory = slice->quantities[slice->devices[0].capacity.first];
  REQUIRE(memory.policy == 0);
  const CapacityRequestPolicy& policy = slice->requestPolicies[0];
  CHECK(policy.defaultValue == q("8Gi"));
  CHECK(policy.validValues == std::vector<Quantity>{q("8Gi"), q("16Gi")});
  CHECK_FALSE(policy.hasRange);

  const auto claim = parseResourceClaimJson(R"({"metadata":{"name":"c","namespace":"ns"},
    "spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com",
      "capacity":{"requests":{"memory":"10Gi"}}}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"g","driver":"gpu.nvidia.com",
      "pool":"n","device":"gpu-0","shareID":"7f3b","consumedCapacity":{"memory":"16Gi"}}]}}}})");
  REQUIRE(claim.ok());
  const DeviceRequestShape& shape = (*claim)->spec.requests[0].alternatives[0];
  CHECK(shape.unsupported.empty());
  CHECK(shape.capacityRequests == amounts({{"memory", "10Gi"}}));
  REQUIRE((*claim)->devices.size() == 1);
  CHECK((*claim)->devices[0].shared);
  CHECK((*claim)->devices[0].consumedCapacity == amounts({{"memory", "16Gi"}}));
}

TEST_CASE("allocated shares add up per device and leave with their claims", "[dra][capacity]") {
  const auto share = [](const std::string& name, const std::string& memory) {
    auto claim = std::make_shared<ResourceClaim>();
    claim->name = name;
    claim->ns = "ml";
    claim->allocated = true;
    AllocatedDevice device;
    device.driver = "gpu.nvidia.com";
    device.pool = "n";
    device.device = "gpu-0";
    device.shared = true;
    device.consumedCapacity = amounts({{"memory", memory}});
    claim->devices.push_back(device);
    claim->reservedFor.push_back({"pods", name, "uid-" + name});
    return claim;
  };
  AllocatedDevices allocated;
  allocated.addClaim(*share("a", "30Gi"));
  allocated.addClaim(*share("b", "20Gi"));
  const auto* shares = allocated.shares("gpu.nvidia.com", "n", "gpu-0");
  REQUIRE(shares != nullptr);
  REQUIRE(shares->size() == 2);
  CHECK((*shares)[0].claim == "ml/a");
  CHECK((*shares)[0].holders == std::vector<std::string>{"uid-a"});
  CHECK(allocated.allocated("gpu.nvidia.com", "n", "gpu-0"));
  CHECK_FALSE(allocated.exclusive("gpu.nvidia.com", "n", "gpu-0"));
  // The node's devices sum them.
  SliceIndex index;
  index.upsert(deviceWith(R"({"value":"80Gi"})"));
  const NodeDevices node = gatherNodeDevices("n", {}, index, allocated);
  REQUIRE(node.devices[0].shares == 0);
  CHECK(node.shareUse[0] == std::vector<Quantity>{q("50Gi")});

  allocated.removeClaim(*share("a", "30Gi"));
  shares = allocated.shares("gpu.nvidia.com", "n", "gpu-0");
  REQUIRE(shares != nullptr);
  REQUIRE(shares->size() == 1);
  CHECK((*shares)[0].consumed == amounts({{"memory", "20Gi"}}));
  allocated.removeClaim(*share("b", "20Gi"));
  CHECK(allocated.shares("gpu.nvidia.com", "n", "gpu-0") == nullptr);
  CHECK_FALSE(allocated.allocated("gpu.nvidia.com", "n", "gpu-0"));
}

// A node with gpu-0 (shareable, 80Gi of memory, consuming all of its counter set's memory) and
// gpu-1 (whole only, no capacity).
struct SharedNode {
  SliceIndex index;
  ClassCatalog catalog{testing::draClasses("nvidia-device-classes.json")};
  NodeDevices devices;
  ClassMatches matches;

  explicit SharedNode(const AllocatedDevices& allocated = {}) {
    const std::string list =
        "[" +
        testing::draGpuDevice(
            "gpu-0", 0, "r0",
            R"("allowMultipleAllocations":true,"capacity":{"memory":{"value":"80Gi"}},
               "consumesCounters":[{"counterSet":"gpu-0-cs","counters":{"mem":{"value":"80Gi"}}}])") +
        "," +
        testing::draGpuDevice("gpu-0-half", 0, "r0",
                              R"("consumesCounters":[{"counterSet":"gpu-0-cs",
                                  "counters":{"mem":{"value":"40Gi"}}}])") +
        "," + testing::draGpuDevice("gpu-1", 1, "r1") + "]";
    // Counter sets live in a slice of their own in the pool.
    auto slice = parseResourceSliceJson(testing::draSliceJson("s", "n", "n", list, "", 1, 2));
    auto counters = parseResourceSliceJson(testing::draSliceJson(
        "s-counters", "n", "n", "[]",
        R"("sharedCounters":[{"name":"gpu-0-cs","counters":{"mem":{"value":"80Gi"}}}])", 1, 2));
    REQUIRE(slice.ok());
    REQUIRE(counters.ok());
    index.upsert(*slice);
    index.upsert(*counters);
    devices = gatherNodeDevices("n", {}, index, allocated);
    matches = matchClasses(devices, catalog);
  }

  // The names picked for one claim of `requests` (memory amounts; "" names no capacity).
  std::vector<std::string> picks(const std::vector<std::string>& requests, bool emptied = false,
                                 FirstFitResult* result = nullptr) {
    std::string spec = R"({"requests":[)";
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (i > 0) spec += ",";
      spec += R"({"name":"r)" + std::to_string(i) +
              R"(","exactly":{"deviceClassName":"gpu.nvidia.com")";
      if (!requests[i].empty()) {
        spec += R"(,"capacity":{"requests":{"memory":")" + requests[i] + R"("}})";
      }
      spec += "}}";
    }
    spec += "]}";
    const auto claim = parseResourceClaimJson(
        R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":)" + spec + "}}");
    REQUIRE(claim.ok());
    const auto program = compileClaim((*claim)->spec, "ns/c", catalog);
    REQUIRE(program.ok());
    FirstFit fit({&*program});
    const FirstFitResult out = fit.run(devices, matches, emptied);
    if (result != nullptr) *result = out;
    if (out.status != FirstFitStatus::kAllocated) return {firstFitStatusName(out.status)};
    std::vector<std::string> names;
    for (const PickedDevice& picked : out.devices) {
      const NodeDevice& d = devices.devices[picked.position];
      names.push_back(std::string(d.slice->deviceName(d.index)));
    }
    return names;
  }
};

using Names = std::vector<std::string>;

TEST_CASE("the first-fit shares a device while its capacity lasts", "[dra][capacity][firstfit]") {
  SharedNode node;
  FirstFitResult result;
  // Two requests of one claim share gpu-0; its counters are charged once, so the second share is
  // not refused for the counter set the first one emptied.
  CHECK(node.picks({"30Gi", "50Gi"}, false, &result) == Names{"gpu-0", "gpu-0"});
  REQUIRE(result.consumed.size() == 2);
  CHECK(result.devices[1].share == 1);
  CHECK(result.consumed[1] == std::vector<Quantity>{q("50Gi")});
  // A third would pass 80Gi; gpu-1 has no memory capacity to ask for.
  CHECK(node.picks({"30Gi", "30Gi", "30Gi"}) == Names{"no fit"});
  // A request naming no capacity takes the whole of gpu-0; the next one needs another device,
  // and gpu-0-half shares gpu-0's counter set, which the first share emptied.
  CHECK(node.picks({"", ""}) == Names{"gpu-0", "gpu-1"});
}

TEST_CASE("shares allocated before count, unless the node is emptied",
          "[dra][capacity][firstfit]") {
  AllocatedDevices allocated;
  allocated.addShared("gpu.nvidia.com", "n", "gpu-0", {"uid-a"}, amounts({{"memory", "50Gi"}}));
  SharedNode node(allocated);
  CHECK(node.picks({"30Gi"}) == Names{"gpu-0"});
  CHECK(node.picks({"40Gi"}) == Names{"no fit"});
  CHECK(node.picks({"40Gi"}, true) == Names{"gpu-0"});
  // The half device draws on the counter set the allocated share has charged.
  CHECK(node.picks({""}) == Names{"gpu-1"});
  CHECK(node.picks({"", ""}) == Names{"no fit"});
}

}  // namespace
}  // namespace gte::dra
