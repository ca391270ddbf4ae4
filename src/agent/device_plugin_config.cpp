#include "agent/device_plugin_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "json/json_reader.h"

namespace gte::agent {
namespace {

constexpr std::string_view kWhere = "device plugin config: ";

Error configError(const std::string& what) {
  return invalidArgument(std::string(kWhere) + what);
}

// A scalar as the plugin's decoder takes it (sigs.k8s.io/yaml: YAML to JSON, then encoding/json).
std::optional<std::string> scalar(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;  // a missing key is not defined
  return node.Scalar();
}

Result<bool> boolField(const YAML::Node& parent, const char* key, bool absent,
                       const std::string& where) {
  const YAML::Node node = parent[key];
  if (!node.IsDefined() || node.IsNull()) return absent;
  const auto text = scalar(node);
  if (text && (*text == "true" || *text == "false")) return *text == "true";
  return configError(where + "." + key + ": want true or false");
}

// The plugin's ReplicatedResource.replicas: a whole number of at least 1.
Result<std::int64_t> replicasField(const YAML::Node& resource, const std::string& where) {
  const auto text = scalar(resource["replicas"]);
  std::int64_t value = 0;
  if (text) {
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (error == std::errc() && end == text->data() + text->size() && value >= 1) return value;
  }
  return configError(where + ".replicas: want a whole number of at least 1");
}

// The plugin prefixes a resource name without a domain with `nvidia.com/`.
bool namesGpuResource(const std::string& name) {
  return name == "nvidia.com/gpu" || name == "gpu";
}

// One strategy's section: the replicas of nvidia.com/gpu (0: not replicated) and its flag.
struct Section {
  std::int64_t replicas = 0;
  bool failRequestsGreaterThanOne = false;
};

Result<Section> readSection(const YAML::Node& node, const std::string& where, bool flagDefault) {
  if (!node.IsMap()) return configError(where + ": want a mapping");
  Section out;
  auto flag = boolField(node, "failRequestsGreaterThanOne", flagDefault, where);
  if (!flag) return flag.error();
  out.failRequestsGreaterThanOne = *flag;
  if (auto rename = boolField(node, "renameByDefault", false, where); !rename) {
    return rename.error();
  }
  const YAML::Node resources = node["resources"];
  if (!resources.IsDefined() || resources.IsNull()) return out;
  if (!resources.IsSequence()) return configError(where + ".resources: want a list");
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const std::string at = where + ".resources[" + std::to_string(i) + "]";
    const YAML::Node resource = resources[i];
    if (!resource.IsMap()) return configError(at + ": want a mapping");
    const auto name = scalar(resource["name"]);
    if (!name || name->empty()) return configError(at + ".name: want a resource name");
    auto replicas = replicasField(resource, at);
    if (!replicas) return replicas.error();
    if (!namesGpuResource(*name)) continue;  // MIG resources: not read (docs/sharing.md)
    if (out.replicas != 0 && out.replicas != *replicas) {
      return configError(at + ": nvidia.com/gpu has different replicas for different devices (" +
                         std::to_string(out.replicas) + " and " + std::to_string(*replicas) +
                         "); not one value to publish");
    }
    out.replicas = *replicas;
  }
  return out;
}

Result<GpuSharing> readConfig(const YAML::Node& root) {
  GpuSharing none;
  if (!root.IsDefined() || root.IsNull()) return none;
  if (!root.IsMap()) return configError("want a mapping at the top");
  if (const YAML::Node version = root["version"]; version.IsDefined() && !version.IsNull()) {
    if (scalar(version) != "v1") return configError("version: want v1");
  }
  const YAML::Node sharing = root["sharing"];
  if (!sharing.IsDefined() || sharing.IsNull()) return none;
  if (!sharing.IsMap()) return configError("sharing: want a mapping");
  const YAML::Node timeSlicing = sharing["timeSlicing"];
  const YAML::Node mps = sharing["mps"];
  const bool hasTimeSlicing = timeSlicing.IsDefined() && !timeSlicing.IsNull();
  const bool hasMps = mps.IsDefined() && !mps.IsNull();
  if (hasTimeSlicing && hasMps) {
    return configError("sharing: timeSlicing and mps both set; the plugin accepts one");
  }
  if (!hasTimeSlicing && !hasMps) return none;
  // MPS: the plugin turns failRequestsGreaterThanOne on unless the file turns it off (releases
  // up to v0.17 force it on whatever the file says; the extender refuses such requests under MPS
  // in any case).
  auto section = hasMps ? readSection(mps, "sharing.mps", true)
                        : readSection(timeSlicing, "sharing.timeSlicing", false);
  if (!section) return section.error();
  if (section->replicas <= 1) return none;  // one replica is the GPU itself
  GpuSharing out;
  out.strategy = hasMps ? SharingStrategy::kMps : SharingStrategy::kTimeSlicing;
  out.replicas = static_cast<std::uint16_t>(std::min<std::int64_t>(section->replicas, UINT16_MAX));
  out.failRequestsGreaterThanOne = section->failRequestsGreaterThanOne;
  return out;
}

}  // namespace

Result<GpuSharing> sharingInDevicePluginConfig(std::string_view text) {
  try {
    // yaml-cpp reports errors only by exception; this runs once per agent pass, not per request.
    return readConfig(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    return configError(std::string("YAML: ") + e.what());
  }
}

Result<std::string> devicePluginConfigKey(const StringMap& nodeLabels,
                                          const std::vector<std::string>& keys,
                                          const std::string& fallback) {
  const auto has = [&](const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  if (const auto label = nodeLabels.find(std::string(kDevicePluginConfigLabel));
      label != nodeLabels.end()) {
    if (has(label->second)) return label->second;
    return Error{ErrorCode::kNotFound,
                 std::string(kWhere) + "the node's " + std::string(kDevicePluginConfigLabel) +
                     " label names '" + label->second + "', which the ConfigMap does not hold"};
  }
  if (!fallback.empty()) {
    if (has(fallback)) return fallback;
    return Error{ErrorCode::kNotFound, std::string(kWhere) + "the default config '" + fallback +
                                           "' is not a key of the ConfigMap"};
  }
  if (keys.size() == 1) return keys.front();
  return Error{ErrorCode::kNotFound,
               std::string(kWhere) + "the node has no " + std::string(kDevicePluginConfigLabel) +
                   " label and the ConfigMap holds " + std::to_string(keys.size()) +
                   " keys (set --device-plugin-config-default)"};
}

Result<StringMap> configMapData(std::string_view text) {
  json::JsonReader reader(text);
  StringMap out;
  const auto fail = [&]() -> Error { return configError("ConfigMap: " + reader.error()); };
  if (!reader.beginObject()) return fail();
  std::string key;
  while (reader.nextKey(key)) {
    if (key != "data" || reader.readNull()) {
      if (key != "data" && !reader.skipValue()) return fail();
      continue;
    }
    if (!reader.beginObject()) return fail();
    std::string name;
    while (reader.nextKey(name)) {
      std::string value;
      if (!reader.readString(value)) return fail();
      out.insert_or_assign(name, std::move(value));
    }
    if (!reader.ok()) return fail();
  }
  if (!reader.ok() || !reader.finish()) return fail();
  return out;
}

}  // namespace gte::agent
