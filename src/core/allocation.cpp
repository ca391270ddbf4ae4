#include "core/allocation.h"

namespace gte {

void addToUsage(NodeUsage& usage, const Allocation& allocation) {
  usage.gpus.insert(usage.gpus.end(), allocation.gpus.begin(), allocation.gpus.end());
  for (const MigAssignment& instance : allocation.mig) {
    usage.mig.push_back({instance.gpu, instance.profile, instance.start});
  }
  if (allocation.replicas > 0) usage.replicas.push_back(allocation.replicas);
}

}  // namespace gte
