#pragma once
// Reads the NVIDIA device plugin's configuration ConfigMap (--device-plugin-config NS/NAME) once
// per agent pass and gives the sharing of nvidia.com/gpu that the plugin on this node runs with
// (agent/device_plugin_config.h). An API failure and a configuration the agent cannot read are
// told apart: after an API failure the last reading still describes the running plugin (the
// plugin keeps the configuration it loaded); a configuration that does not read describes nothing.
#include <optional>
#include <string>

#include "base/result.h"
#include "kube/api_transport.h"
#include "model/gpu_sharing.h"
#include "model/string_map.h"

namespace gte::agent {

struct SharingReading {
  std::optional<GpuSharing> sharing;  // what the node's configuration says
  std::optional<Error> apiError;      // the ConfigMap could not be read
  std::optional<Error> configError;   // it was read; the node's configuration does not read
};

class DevicePluginConfigSource {
 public:
  // `ref` is NAMESPACE/NAME; `fallbackKey` the plugin's default config name (may be empty).
  DevicePluginConfigSource(kube::ApiTransport& api, std::string ns, std::string name,
                           std::string fallbackKey)
      : api_(api), ns_(std::move(ns)), name_(std::move(name)), fallback_(std::move(fallbackKey)) {}

  SharingReading read(const StringMap& nodeLabels);

  std::string ref() const { return ns_ + "/" + name_; }

 private:
  kube::ApiTransport& api_;
  std::string ns_;
  std::string name_;
  std::string fallback_;
};

}  // namespace gte::agent
