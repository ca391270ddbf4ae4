#include "core/node_content.h"

#include <string_view>
#include <vector>

#include "model/gpu_request.h"

namespace gte {
namespace {

// The allocatable entries a state is read from: whole GPUs and MIG devices.
bool isDevice(std::string_view resource) noexcept {
  return resource == kGpuResource || resource == kSharedGpuResource ||
         resource.starts_with(kMigResourcePrefix);
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

bool sameNodeContent(const NodeInfo& a, const NodeInfo& b) {
  return a.labels == b.labels && sameDevices(a.allocatable, b.allocatable) &&
         a.declaresDraOptionalNodeOperations == b.declaresDraOptionalNodeOperations;
}

}  // namespace gte
