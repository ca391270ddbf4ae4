#include "sim/cluster_spec.h"

#include <charconv>
#include <string>

namespace gte::sim {

Result<std::vector<SimNodeSpec>> parseClusterSpec(std::string_view text) {
  std::vector<SimNodeSpec> nodes;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view item = text.substr(start, end - start);
    const std::size_t colon = item.find(':');
    const NodeTemplate* machine =
        colon == std::string_view::npos ? nullptr : findNodeTemplate(item.substr(0, colon));
    int count = -1;
    const bool counted =
        machine != nullptr &&
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), count).ptr ==
            item.data() + item.size();
    if (!counted || count < 0) {
      std::string names;
      for (const NodeTemplate& known : builtinNodeTemplates()) {
        names += (names.empty() ? "" : ", ") + known.name;
      }
      return invalidArgument("cluster item '" + std::string(item) +
                             "': want <template>:<count> with a template among " + names);
    }
    for (int i = 0; i < count; ++i) {
      nodes.push_back(SimNodeSpec{machine->name + "-" + std::to_string(i), machine,
                                  machine->cpuMilli, machine->memoryMib});
    }
    start = end + 1;
  }
  return nodes;
}

}  // namespace gte::sim
