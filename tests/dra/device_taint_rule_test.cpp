// DeviceTaintRules (docs/dra.md, "Device taint rules"): the reader (what it keeps, what it refuses
// and how it says so) and the merge of a rule's taint into the devices it selects, as
// kube-scheduler 1.37's ResourceSlice tracker does it: driver, pool and device name each narrow
// the selection; no selector selects nothing, an empty one everything.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/device_taint_rule.h"
#include "dra/slice_taint_rules.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

DeviceTaintRuleConstSharedPtr rule(const std::string& selector,
                                   const std::string& effect = "NoSchedule") {
  auto read = parseDeviceTaintRuleJson(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
          "metadata":{"name":"maintenance","resourceVersion":"42"},
          "spec":{"deviceSelector":)" +
      selector + R"(,"taint":{"key":"example.com/maintenance","value":"planned","effect":")" +
      effect + R"(","timeAdded":"2026-12-04T10:00:00Z"}},
          "status":{"conditions":[{"type":"EvictionInProgress","status":"False"}]}})");
  REQUIRE(read.ok());
  return *read;
}

// Per device of the slice, in order: "name:key=value:effect" for each taint it carries.
std::vector<std::string> taints(const ResourceSlice& slice) {
  std::vector<std::string> out;
  for (std::uint32_t d = 0; d < slice.devices.size(); ++d) {
    std::string line(slice.deviceName(d));
    const Range range = slice.devices[d].taints;
    for (std::uint32_t t = range.first; t < range.first + range.count; ++t) {
      const StoredTaint& taint = slice.taints[t];
      line.append(":").append(slice.view(taint.key)).append("=").append(slice.view(taint.value));
      line.append(taint.effect == TaintEffect::kNoSchedule ? ":NoSchedule"
                  : taint.effect == TaintEffect::kNone     ? ":None"
                                                           : ":other");
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace

TEST_CASE("DeviceTaintRule reader: selector, taint, refusals", "[dra][taintrules]") {
  const auto read = rule(R"({"driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-3"})");
  CHECK(read->name == "maintenance");
  CHECK(read->resourceVersion == "42");
  REQUIRE(read->selector.has_value());
  CHECK(read->selector->driver == "gpu.nvidia.com");
  CHECK(read->selector->pool == "node-a");
  CHECK(read->selector->device == "gpu-3");
  CHECK(read->key == "example.com/maintenance");
  CHECK(read->value == "planned");
  CHECK(read->effect == TaintEffect::kNoSchedule);
  CHECK(read->blocks());

  CHECK_FALSE(rule("null")->selector.has_value());
  CHECK(rule(R"({"driver":null})")->selector == DeviceTaintSelector{});
  CHECK(rule("{}", "NoExecute")->blocks());
  CHECK_FALSE(rule("{}", "None")->blocks());
  // An effect this reader predates reads, and counts like None (the API's rule for consumers).
  CHECK(rule("{}", "NoExecuteWithPodDisruptionBudget")->effect == TaintEffect::kOther);
  CHECK_FALSE(rule("{}", "NoExecuteWithPodDisruptionBudget")->blocks());

  struct Bad {
    const char* json;
    const char* says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {R"({"spec":{"taint":{"key":"k","effect":"NoSchedule"}}})",
            "DeviceTaintRule: metadata.name: missing"},
           {R"({"metadata":{"name":"r"},"spec":{"taint":{"effect":"NoSchedule"}}})",
            "DeviceTaintRule r: spec.taint.key: missing"},
           {R"({"metadata":{"name":"r"},"spec":{"taint":{"key":"k"}}})",
            "DeviceTaintRule r: spec.taint.effect: missing"},
           {R"({"metadata":{"name":"r"},"spec":{"deviceSelector":{"pool":7},"taint":{}}})",
            "DeviceTaintRule r: spec.deviceSelector.pool"},
           {R"({"metadata":{"name":"r"},"spec":{"taint":{"key":"k","effect":["NoSchedule"]}}})",
            "DeviceTaintRule r: spec.taint.effect"},
           {R"({"metadata":{"name":"r"},"spec":{"deviceSelector":[]}})",
            "DeviceTaintRule r: spec.deviceSelector"},
           {R"({"metadata":{"name":"r"},"spec":{"taint":{"key":"k","effect":"None"}}} x)",
            "DeviceTaintRule"},
       }) {
    const auto refused = parseDeviceTaintRuleJson(bad.json);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, ContainsSubstring(bad.says));
  }
}

TEST_CASE("DeviceTaintRule merge: driver, pool and device select; every effect is merged",
          "[dra][taintrules]") {
  // hgx-h100-a lists gpu-1 gpu-6 gpu-3 gpu-4 gpu-7 gpu-2 gpu-5 gpu-0 (driver gpu.nvidia.com, pool
  // hgx-h100-a), none of them tainted.
  const ResourceSliceConstSharedPtr slice = testing::draSlice("hgx-h100-slice.json");
  const std::string tainted = ":example.com/maintenance=planned:NoSchedule";

  const auto merged = withTaintRules(slice, {rule(R"({"device":"gpu-3"})")});
  REQUIRE(merged != slice);
  const std::string gpu3 = std::string("gpu-3").append(tainted);
  CHECK(taints(*merged) == std::vector<std::string>{"gpu-1", "gpu-6", gpu3, "gpu-4", "gpu-7",
                                                    "gpu-2", "gpu-5", "gpu-0"});
  CHECK(taints(*slice)[2] == "gpu-3");  // the slice as read is left alone
  // Everything else of the slice is the same: names, attributes.
  CHECK(merged->attributes.size() == slice->attributes.size());
  CHECK(merged->deviceName(7) == "gpu-0");

  // Two rules on one device: both taints, in rule order; a pool selects every device of it.
  const auto pool = withTaintRules(
      slice, {rule(R"({"driver":"gpu.nvidia.com","pool":"hgx-h100-a"})"), rule("{}")});
  CHECK(taints(*pool)[0] == std::string("gpu-1").append(tainted).append(tainted));

  // Not selected: the very same slice, not a copy.
  for (const std::string& selector :
       {std::string(R"({"driver":"example.com"})"), std::string(R"({"pool":"hgx-h100-b"})"),
        std::string(R"({"device":"gpu-8"})"), std::string("null")}) {
    CAPTURE(selector);
    CHECK(withTaintRules(slice, {rule(selector)}) == slice);
  }
  CHECK(withTaintRules(slice, {}) == slice);
  // A taint of effect None blocks nothing but marks the device degraded (docs/health.md): merged.
  const auto warned = withTaintRules(slice, {rule(R"({"device":"gpu-0"})", "None")});
  REQUIRE(warned != slice);
  CHECK(taints(*warned)[7] == "gpu-0:example.com/maintenance=planned:None");
  CHECK(taintsSome(*slice, {rule(R"({"device":"gpu-0"})")}));
  CHECK(taintsSome(*slice, {rule(R"({"device":"gpu-0"})", "None")}));
}

}  // namespace gte::dra
