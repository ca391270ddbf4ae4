#include "agent/publishable_labels.h"

#include "agent/label_rules.h"
#include "model/node_info.h"
#include "topology/topology_labels.h"
#include "topology/topology_labels_writer.h"

namespace gte::agent {

Result<StringMap> publishableLabels(const Discovery& discovery, std::int64_t generation,
                                    const Policy& policy) {
  GpuTopology topo = discovery.topology;
  topo.generation = generation;
  auto labels = writeLabelsV1(topo, policy.labelPrefix);
  if (!labels.ok()) {
    return labels.error();
  }
  NodeInfo self;
  self.name = "this node";
  self.labels = *labels;
  if (auto readBack = readLabelsV1(self, policy); !readBack.ok()) {
    return Error{ErrorCode::kInternal,
                 "the extender would reject these labels: " + readBack.error().message};
  }
  if (auto status = checkLabels(*labels); !status.ok()) {
    return status.error();
  }
  return labels;
}

}  // namespace gte::agent
