// Policy YAML (the ConfigMap the extender hot-reloads). A refused policy must say why; an accepted
// one must parse the same way twice, hash, and drive the node-state build of a MIG node without
// crashing (its MIG product tables and link scores feed the decision core directly).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/node_state.h"
#include "fuzz_check.h"
#include "policy/policy_hash.h"
#include "policy/policy_yaml.h"

namespace {

// An A100 node with two GPUs partitioned (labels-v1, as the node agent publishes them).
gte::NodeInfo migNode(const gte::Policy& policy) {
  gte::NodeInfo node;
  node.name = "a100";
  const std::string& p = policy.labelPrefix;
  node.labels = {{p + "v", "1"},
                 {p + "n", "8"},
                 {p + "model", "NVIDIA-A100-SXM4-80GB"},
                 {p + "fabric", "nvsw6"},
                 {p + "nvl", "cccccccccccccccccccccccccccc"},
                 {p + "pci", "QSSSSSSSSSSSSQSSSSSSSSQSSSSQ"},
                 {p + "numa", "33117755"},
                 {p + "health", "11111111"},
                 {p + "used", "mm010000"},
                 {p + "mig", "11000000"},
                 {p + "mig0", "10u02f03u24f"},
                 {p + "mig1", "00f01f02u03f04f05u06f"},
                 {p + "gen", "1764670000"}};
  return node;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = gte::parsePolicyYaml(text);
  if (!parsed) {
    check(!parsed.error().message.empty(), "a refused policy says why");
    return 0;
  }
  const auto again = gte::parsePolicyYaml(text);
  check(again.ok() && *again == *parsed, "parsing is deterministic");
  check(!gte::policyHash(*parsed).empty(), "an accepted policy hashes");
  const auto state = gte::buildNodeState(migNode(*parsed), {}, *parsed);
  check(state != nullptr && state->freeCount <= state->usableCount,
        "an accepted policy builds a consistent node state");
  return 0;
}
