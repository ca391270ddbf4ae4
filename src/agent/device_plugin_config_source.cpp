#include "agent/device_plugin_config_source.h"

#include <vector>

#include "agent/device_plugin_config.h"
#include "kube/api_status.h"
#include "kube/resource_path.h"

namespace gte::agent {
namespace {

constexpr kube::ResourceType kConfigMaps{"", "v1", "configmaps"};

}  // namespace

SharingReading DevicePluginConfigSource::read(const StringMap& nodeLabels) {
  SharingReading out;
  auto response = api_.send("GET", kube::objectPath(kConfigMaps, ns_, name_));
  if (!response.ok()) {
    out.apiError = response.error();
    return out;
  }
  if (!response->success()) {
    out.apiError = kube::statusError("GET configmap " + ref(), *response);
    return out;
  }
  auto data = configMapData(response->body);
  if (!data.ok()) {
    out.configError = data.error();
    return out;
  }
  std::vector<std::string> keys;
  for (const auto& entry : *data)
    keys.push_back(entry.first);
  auto key = devicePluginConfigKey(nodeLabels, keys, fallback_);
  if (!key.ok()) {
    out.configError = key.error();
    return out;
  }
  auto sharing = sharingInDevicePluginConfig(data->at(*key));
  if (!sharing.ok()) {
    out.configError = Error{sharing.error().code,
                            "ConfigMap " + ref() + " key " + *key + ": " + sharing.error().message};
    return out;
  }
  out.sharing = *sharing;
  return out;
}

}  // namespace gte::agent
