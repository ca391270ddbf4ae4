#include "agent/publishable_labels.h"

#include "agent/label_rules.h"
#include "model/node_info.h"
#include "topology/gpu_identity.h"
#include "topology/topology_labels.h"
#include "topology/topology_labels_writer.h"

namespace gte::agent {

namespace {

// Each GPU's PCI address and UUID as labels-v1 `bus` and `uuid`, when every GPU has a readable one
// (text captures know none; a lost GPU or a PCI domain above 0xffff leaves the key out: a partial
// key would map DRA devices to the wrong GPUs).
template <typename Id, typename Parse>
std::vector<Id> allParsed(const std::vector<std::string>& texts, std::size_t n, Parse parse) {
  std::vector<Id> out;
  if (texts.size() != n) return out;
  for (const std::string& text : texts) {
    const auto id = parse(text);
    if (!id) return {};
    out.push_back(*id);
  }
  return out;
}

}  // namespace

Result<StringMap> publishableLabels(const Discovery& discovery, std::int64_t generation,
                                    const Policy& policy) {
  GpuTopology topo = discovery.topology;
  topo.generation = generation;
  const auto n = static_cast<std::size_t>(topo.gpuCount);
  topo.pciAddresses = allParsed<PciAddress>(discovery.busIds, n, parsePciBusId);
  topo.uuids = allParsed<GpuUuid>(discovery.gpuUuids, n, parseGpuUuid);
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
