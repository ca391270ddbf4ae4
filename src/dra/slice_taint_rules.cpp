#include "dra/slice_taint_rules.h"

#include "dra/device_text.h"

namespace gte::dra {
namespace {

// Every effect applies: NoSchedule and NoExecute keep devices from the allocator, None (and the
// effects this reader does not know, which the API says to treat like None) mark hardware the
// extender ranks as degraded (docs/health.md).
bool selectsSome(const DeviceTaintRule& rule, const ResourceSlice& slice) noexcept {
  if (!rule.selectsSlice(slice)) return false;
  for (std::uint32_t d = 0; d < slice.devices.size(); ++d) {
    if (rule.selectsDevice(slice, d)) return true;
  }
  return false;
}

}  // namespace

bool taintsSome(const ResourceSlice& slice,
                const std::vector<DeviceTaintRuleConstSharedPtr>& rules) noexcept {
  for (const DeviceTaintRuleConstSharedPtr& rule : rules) {
    if (selectsSome(*rule, slice)) return true;
  }
  return false;
}

ResourceSliceConstSharedPtr withTaintRules(
    const ResourceSliceConstSharedPtr& slice,
    const std::vector<DeviceTaintRuleConstSharedPtr>& rules) {
  std::vector<const DeviceTaintRule*> applying;
  for (const DeviceTaintRuleConstSharedPtr& rule : rules) {
    if (selectsSome(*rule, *slice)) applying.push_back(rule.get());
  }
  if (applying.empty()) return slice;
  auto out = std::make_shared<ResourceSlice>(*slice);
  TextInterner text(out->text);
  out->taints.clear();
  for (std::uint32_t d = 0; d < out->devices.size(); ++d) {
    Range& range = out->devices[d].taints;
    const Range own = range;
    range.first = static_cast<std::uint32_t>(out->taints.size());
    for (std::uint32_t t = own.first; t < own.first + own.count; ++t)
      out->taints.push_back(slice->taints[t]);
    for (const DeviceTaintRule* rule : applying) {
      if (!rule->selectsDevice(*slice, d)) continue;
      out->taints.push_back(
          StoredTaint{text.intern(rule->key), text.intern(rule->value), rule->effect});
    }
    range.count = static_cast<std::uint32_t>(out->taints.size()) - range.first;
  }
  text.shrink();
  out->taints.shrink_to_fit();
  return out;
}

}  // namespace gte::dra
