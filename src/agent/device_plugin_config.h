#pragma once
// What the NVIDIA device plugin's configuration says about sharing nvidia.com/gpu, read the way
// the plugin reads it (k8s-device-plugin api/config/v1), so the agent can publish it as labels-v1
// `sharing` (docs/sharing.md). The plugin's configuration lives in a ConfigMap, one file per key;
// the node's `nvidia.com/device-plugin.config` label names the key the plugin on that node runs
// with. GPU Feature Discovery publishes the strategy and replicas, but not
// failRequestsGreaterThanOne, which decides whether a container may ask for more than one replica.
// Pure: the agent's daemon reads the ConfigMap (agent/device_plugin_config_source.h).
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/gpu_sharing.h"
#include "model/string_map.h"

namespace gte::agent {

// The node label with which the GPU Operator and the plugin's chart pick a node's configuration.
inline constexpr std::string_view kDevicePluginConfigLabel = "nvidia.com/device-plugin.config";

// The sharing of nvidia.com/gpu in one configuration file (YAML or JSON): `sharing.timeSlicing` or
// `sharing.mps`, with `resources: [{name, replicas}]`, `failRequestsGreaterThanOne` (time-slicing:
// off unless set; MPS: on unless set false). No `sharing`, or no resource entry for
// nvidia.com/gpu (`gpu` means the same), is `none`. Errors, as the plugin refuses the file: both
// strategies configured, a version other than v1, a replica count that is not a whole number of
// at least 1, fields of the wrong type; and what the agent cannot publish as one value: replicas
// that differ between entries for the GPUs (`devices` subsets).
Result<GpuSharing> sharingInDevicePluginConfig(std::string_view text);

// The key of the plugin's ConfigMap that configures this node: the node's
// `nvidia.com/device-plugin.config` label; without it `fallback` (the plugin's default config
// name) when set; else the ConfigMap's only key. Errors name what is missing.
Result<std::string> devicePluginConfigKey(const StringMap& nodeLabels,
                                          const std::vector<std::string>& keys,
                                          const std::string& fallback);

// `data` of a v1.ConfigMap JSON object (an absent `data` is empty).
Result<StringMap> configMapData(std::string_view json);

}  // namespace gte::agent
