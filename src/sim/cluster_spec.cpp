#include "sim/cluster_spec.h"

#include <charconv>
#include <string>

#include "sim/comma_items.h"
#include "sim/rack_labels.h"

namespace gte::sim {
namespace {

bool parseCount(std::string_view text, int& value) {
  return !text.empty() &&
         std::from_chars(text.data(), text.data() + text.size(), value).ptr ==
             text.data() + text.size() &&
         value >= 0;
}

}  // namespace

Result<std::vector<SimNodeSpec>> parseClusterSpec(std::string_view text) {
  std::vector<SimNodeSpec> nodes;
  int racks = 0;
  for (const std::string_view item : commaItems(text)) {
    const std::size_t colon = item.find(':');
    const NodeTemplate* machine =
        colon == std::string_view::npos ? nullptr : findNodeTemplate(item.substr(0, colon));
    const std::string_view counts =
        colon == std::string_view::npos ? std::string_view() : item.substr(colon + 1);
    const std::size_t slash = counts.find('/');
    int count = -1;
    int perRack = machine == nullptr ? 0 : machine->rackNodes;
    const bool counted =
        machine != nullptr && parseCount(counts.substr(0, slash), count) &&
        (slash == std::string_view::npos || parseCount(counts.substr(slash + 1), perRack));
    if (!counted) {
      std::string names;
      for (const NodeTemplate& known : builtinNodeTemplates()) {
        names += (names.empty() ? "" : ", ") + known.name;
      }
      return invalidArgument(
          "cluster item '" + std::string(item) +
          "': want <template>:<count>[/<nodes per rack>] with a template among " + names);
    }
    StringMap labels;
    for (int i = 0; i < count; ++i) {
      if (perRack > 0 && i % perRack == 0) {
        labels = rackLabels(*machine, racks++);
      }
      nodes.push_back(SimNodeSpec{machine->name + "-" + std::to_string(i), machine,
                                  machine->cpuMilli, machine->memoryMib, labels});
    }
  }
  return nodes;
}

}  // namespace gte::sim
