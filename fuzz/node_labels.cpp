// Node labels through the node-state build (labels-v1 as the node agent publishes them, GPU
// Feature Discovery labels, allocatable and the usage the extender adds on top): buildNodeState
// never fails, so every input must yield a state that is consistent with itself, and the cached
// path (readNodeState, then rebuildNodeState) must agree with the direct one.
//
// Input: lines of `key=value`. A key without '/' gets the policy's label prefix ("n=8" is
// "gputopo.dev/n=8"); "@<resource>=<quantity>" sets status.allocatable; "!gpu=<i>" marks GPU i as
// taken, "!unknown=<count>" takes GPUs of unknown index, "!mig=<gpu>,<profile>,<start>" takes a
// MIG instance.
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/node_state.h"
#include "fuzz_check.h"
#include "model/quantity.h"
#include "policy/default_policy.h"

namespace {

using gte::fuzz::check;

template <typename Int>
bool readInt(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

void addMig(std::string_view value, gte::NodeUsage& usage) {
  const std::size_t a = value.find(',');
  const std::size_t b = value.rfind(',');
  if (a == std::string_view::npos || b == a) return;
  gte::MigInstanceRef ref;
  if (!readInt(value.substr(0, a), ref.gpu) || !readInt(value.substr(b + 1), ref.start)) return;
  ref.profile = std::string(value.substr(a + 1, b - a - 1));
  usage.mig.push_back(std::move(ref));
}

void applyLine(std::string_view line, const gte::Policy& policy, gte::NodeInfo& node,
               gte::NodeUsage& usage) {
  const std::size_t eq = line.find('=');
  if (eq == std::string_view::npos) return;
  const std::string_view key = line.substr(0, eq);
  const std::string_view value = line.substr(eq + 1);
  if (key.starts_with('@')) {
    if (auto q = gte::parseQuantity(value)) node.allocatable.set(std::string(key.substr(1)), *q);
  } else if (key == "!gpu") {
    int gpu = 0;
    if (readInt(value, gpu)) usage.gpus.push_back(gpu);
  } else if (key == "!unknown") {
    readInt(value, usage.unknownGpus);
  } else if (key == "!mig") {
    addMig(value, usage);
  } else if (key.find('/') == std::string_view::npos) {
    node.labels[policy.labelPrefix + std::string(key)] = std::string(value);
  } else {
    node.labels[std::string(key)] = std::string(value);
  }
}

void checkState(const gte::NodeState& state) {
  check(0 <= state.freeCount && state.freeCount <= state.usableCount &&
            state.usableCount <= state.gpuCount,
        "free <= usable <= gpus");
  check(std::popcount(state.freeMask) == state.freeCount, "freeCount counts freeMask");
  check(std::popcount(state.usableMask) == state.usableCount, "usableCount counts usableMask");
  check((state.freeMask & ~state.usableMask) == 0, "only usable GPUs are free");
  check(state.status != gte::TopologyStatus::kMalformed || !state.topologyError.empty(),
        "a malformed topology says why");
  check(state.whole.size() == static_cast<std::size_t>(state.freeCount) + 1,
        "one whole-GPU option per request size");
  check(state.capacity != nullptr &&
            state.capacity->size() == static_cast<std::size_t>(state.usableCount) + 1,
        "one capacity option per request size");
  for (std::size_t k = 1; k < state.whole.size(); ++k) {
    const gte::WholeGpuOptions& options = state.whole[k];
    for (const gte::GpuPick* pick :
         {&options.devicePlugin, &options.numaAligned, &options.best, &options.bestSingleNuma}) {
      check((pick->gpus & ~state.freeMask) == 0, "a pick takes free GPUs only");
      check(pick->gpus == 0 || std::popcount(pick->gpus) == static_cast<int>(k),
            "a pick for k GPUs has k GPUs");
    }
    check(options.devicePlugin.gpus != 0, "the device plugin always finds k of the free GPUs");
  }
  check(state.migSlicesInUse <= state.migSlicesTotal || state.migSlicesTotal == 0,
        "MIG slices in use fit in the total");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gte::Policy policy = gte::defaultPolicy();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gte::NodeInfo node;
  node.name = "fuzz";
  gte::NodeUsage usage;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    applyLine(text.substr(start, end - start), policy, node, usage);
    start = end + 1;
  }

  const auto built = gte::buildNodeState(node, usage, policy);
  check(built != nullptr, "buildNodeState always answers");
  checkState(*built);

  const auto read = gte::readNodeState(node, policy);
  check(read != nullptr, "readNodeState always answers");
  const auto rebuilt = gte::rebuildNodeState(*read, usage, policy);
  checkState(*rebuilt);
  check(rebuilt->status == built->status && rebuilt->freeMask == built->freeMask &&
            rebuilt->usableMask == built->usableMask &&
            rebuilt->migSlicesInUse == built->migSlicesInUse && rebuilt->sharing == built->sharing,
        "the cached path builds the same state as the direct one");
  // Sharing labels that do not read make the node shared, never exclusive (docs/sharing.md).
  check(built->sharing.unreadable.empty() || built->sharing.shared(),
        "unreadable sharing labels read as shared");

  // Preempt's what-if: releasing what the usage took never leaves fewer GPUs free.
  const auto released = gte::rebuildNodeState(*built, {}, policy, usage);
  checkState(*released);
  check((built->freeMask & ~released->freeMask) == 0,
        "releasing usage frees GPUs, never takes them");
  return 0;
}
