#include "core/node_content_hash.h"

#include <string_view>

#include "model/gpu_request.h"

namespace gte {
namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

void mix(std::uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  h ^= 0xff;  // field separator, so ("ab","c") and ("a","bc") differ
  h *= kFnvPrime;
}

}  // namespace

std::uint64_t nodeContentHash(const NodeInfo& node) {
  std::uint64_t h = kFnvOffset;
  for (const auto& [k, v] : node.labels) {
    mix(h, k);
    mix(h, v);
  }
  for (const auto& [name, q] : node.allocatable.entries()) {
    if (name != kGpuResource && !name.starts_with(kMigResourcePrefix)) continue;
    mix(h, name);
    const auto nanos = q.nanos();
    mix(h, std::string_view(reinterpret_cast<const char*>(&nanos), sizeof nanos));
  }
  mix(h, node.unschedulable ? "u" : "s");
  return h;
}

}  // namespace gte
