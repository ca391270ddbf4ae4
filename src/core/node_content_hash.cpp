#include "core/node_content_hash.h"

#include <string_view>
#include <vector>

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

// The allocatable entries a state is read from: whole GPUs and MIG devices.
bool isDevice(std::string_view resource) noexcept {
  return resource == kGpuResource || resource.starts_with(kMigResourcePrefix);
}

using Entries = std::vector<ResourceList::Entry>;

Entries::const_iterator nextDevice(Entries::const_iterator it, Entries::const_iterator end) {
  while (it != end && !isDevice(it->first))
    ++it;
  return it;
}

bool sameDevices(const ResourceList& a, const ResourceList& b) {
  const Entries& x = a.entries();
  const Entries& y = b.entries();
  auto i = nextDevice(x.begin(), x.end());
  auto j = nextDevice(y.begin(), y.end());
  for (; i != x.end() && j != y.end();
       i = nextDevice(i + 1, x.end()), j = nextDevice(j + 1, y.end())) {
    if (i->first != j->first || i->second.nanos() != j->second.nanos()) return false;
  }
  return i == x.end() && j == y.end();
}

}  // namespace

std::uint64_t nodeContentHash(const NodeInfo& node) {
  std::uint64_t h = kFnvOffset;
  for (const auto& [k, v] : node.labels) {
    mix(h, k);
    mix(h, v);
  }
  for (const auto& [name, q] : node.allocatable.entries()) {
    if (!isDevice(name)) continue;
    mix(h, name);
    const auto nanos = q.nanos();
    mix(h, std::string_view(reinterpret_cast<const char*>(&nanos), sizeof nanos));
  }
  return h;
}

bool sameNodeContent(const NodeInfo& a, const NodeInfo& b) {
  return a.labels == b.labels && sameDevices(a.allocatable, b.allocatable);
}

}  // namespace gte
