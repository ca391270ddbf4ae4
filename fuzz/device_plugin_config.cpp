// The NVIDIA device plugin's configuration as the node agent reads it
// (agent/device_plugin_config.h): the file a ConfigMap key holds (YAML or JSON), and the ConfigMap
// object around it. A refused file says why; an accepted one reads the same twice, and the
// labels-v1 `sharing` value written for it reads back to the same strategy, replicas and flag. The
// same bytes as a ConfigMap object: a refusal says why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/device_plugin_config.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto read = gte::agent::sharingInDevicePluginConfig(text);
  if (!read) {
    check(!read.error().message.empty(), "a refused configuration says why");
  } else {
    const auto again = gte::agent::sharingInDevicePluginConfig(text);
    check(again.ok() && *again == *read, "reading is deterministic");
    const std::string label = gte::formatAgentSharing(*read);
    const auto back = gte::parseAgentSharing(label);
    check(back.has_value(), "the published value reads back");
    check(back->strategy == read->strategy &&
              (read->shared()
                   ? back->replicas == read->replicas &&
                         back->failRequestsGreaterThanOne == read->failRequestsGreaterThanOne
                   : !back->shared()),
          "the published value keeps strategy, replicas and the flag");
    check(label.size() <= 63, "the value fits a label");
  }
  const auto map = gte::agent::configMapData(text);
  if (!map) check(!map.error().message.empty(), "a refused ConfigMap says why");
  return 0;
}
