// DeviceTaintRules through their reader and the merge into a slice's devices. The input is read as
// a DeviceTaintRule; an accepted rule is merged into the HGX H100 fixture's slice, and the merged
// slice must be the same slice with, per device, its own taints followed by the rule's taint
// exactly when the rule selects the device, whatever its effect (the very same slice when it
// selects none).
// A refused rule says why.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "dra/device_taint_rule.h"
#include "dra/resource_slice_json.h"
#include "dra/slice_taint_rules.h"
#include "fuzz_check.h"

namespace {

using gte::fuzz::check;
namespace dra = gte::dra;

const dra::ResourceSliceConstSharedPtr& h100() {
  static const dra::ResourceSliceConstSharedPtr slice = [] {
    std::ifstream in(std::string(GTE_SOURCE_DIR) + "/tests/data/dra/hgx-h100-slice.json");
    std::ostringstream text;
    text << in.rdbuf();
    return dra::parseResourceSliceJson(text.str()).value();
  }();
  return slice;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto rule = dra::parseDeviceTaintRuleJson(text);
  if (!rule.ok()) {
    check(!rule.error().message.empty(), "a refused rule says why");
    return 0;
  }
  check(!(*rule)->name.empty() && !(*rule)->key.empty(), "an accepted rule has a name and a key");
  const dra::ResourceSlice& slice = *h100();
  const dra::ResourceSliceConstSharedPtr merged = dra::withTaintRules(h100(), {*rule});
  bool selected = false;
  check(merged->devices.size() == slice.devices.size(), "the same devices");
  for (std::uint32_t d = 0; d < slice.devices.size(); ++d) {
    const bool adds = (*rule)->selectsDevice(slice, d);
    selected = selected || adds;
    const dra::Range own = slice.devices[d].taints;
    const dra::Range now = merged->devices[d].taints;
    check(merged->deviceName(d) == slice.deviceName(d), "devices keep their names and order");
    check(now.count == own.count + (adds ? 1u : 0u), "one taint more exactly where selected");
    check(now.first + now.count <= merged->taints.size(), "taint ranges stay inside the slice");
    if (!adds) continue;
    const dra::StoredTaint& added = merged->taints[now.first + now.count - 1];
    check(merged->view(added.key) == (*rule)->key, "the rule's key");
    check(merged->view(added.value) == (*rule)->value, "the rule's value");
    check(added.effect == (*rule)->effect, "the rule's effect");
  }
  check(selected == (merged != h100()), "copied exactly when some device is selected");
  check(dra::taintsSome(slice, {*rule}) == selected, "taintsSome agrees with the merge");
  return 0;
}
