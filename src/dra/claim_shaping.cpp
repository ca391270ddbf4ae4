#include "dra/claim_shaping.h"

#include <algorithm>
#include <array>

#include "base/yaml_quoted.h"
#include "json/json_writer.h"

namespace gte::dra {
namespace {

constexpr std::string_view kPcieRoot = "resource.kubernetes.io/pcieRoot";
constexpr std::string_view kNumaNode = "resource.kubernetes.io/numaNode";

bool dnsCharacter(char c, bool dots) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.');
}

// RFC 1123 subdomain (`dots`: object and class names, up to 253) or label (namespaces, up to 63).
bool dnsName(std::string_view text, bool dots) noexcept {
  const std::size_t limit = dots ? 253 : 63;
  if (text.empty() || text.size() > limit || text.front() == '-' || text.back() == '-' ||
      text.front() == '.' || text.back() == '.') {
    return false;
  }
  for (const char c : text) {
    if (!dnsCharacter(c, dots)) return false;
  }
  return true;
}

std::string partitionAttribute(int gpus) {
  return "gpu.nvidia.com/partition" + std::to_string(gpus);
}

DeviceRequestShape tier(const ShapedClaimOptions& options, std::string name) {
  DeviceRequestShape shape;
  shape.name = std::move(name);
  shape.deviceClassName = options.deviceClass;
  shape.count = options.gpus;
  if (options.nvswitchPartition) {
    // GPUs in a Fabric Manager partition can only be prepared as one whole partition: the
    // tiers after the partition tier keep off them.
    shape.selectors.push_back("!has(device.attributes['gpu.nvidia.com'].partition" +
                              std::to_string(options.gpus) + ")");
  }
  return shape;
}

std::string templateName(const ShapedClaimOptions& options) {
  return options.name.empty() ? "gpus-" + std::to_string(options.gpus) : options.name;
}

void shapeYaml(std::string& out, const DeviceRequestShape& shape, const std::string& indent) {
  out += indent + "deviceClassName: " + shape.deviceClassName + "\n";
  if (!shape.selectors.empty()) {
    out += indent + "selectors:\n";
    for (const std::string& selector : shape.selectors) {
      out += indent + "- cel:\n" + indent + "    expression: " + yamlQuoted(selector) + "\n";
    }
  }
  out += indent + "allocationMode: ExactCount\n";
  out += indent + "count: " + std::to_string(shape.count) + "\n";
}

void shapeJson(json::JsonWriter& w, const DeviceRequestShape& shape) {
  w.key("deviceClassName").string(shape.deviceClassName);
  if (!shape.selectors.empty()) {
    w.key("selectors").beginArray();
    for (const std::string& selector : shape.selectors) {
      w.element().beginObject().key("cel").beginObject().key("expression").string(selector);
      w.endObject().endObject();
    }
    w.endArray();
  }
  w.key("allocationMode").string("ExactCount").key("count").integer(shape.count);
}

DeviceRequest exactlyOne(std::string name, const std::string& deviceClass) {
  DeviceRequest request;
  request.name = std::move(name);
  DeviceRequestShape shape;
  shape.name = request.name;
  shape.deviceClassName = deviceClass;
  shape.count = 1;
  request.alternatives.push_back(std::move(shape));
  return request;
}

Result<ClaimSpec> nvlinkIslandSpec(const ShapedClaimOptions& options) {
  if (options.nvswitchPartition) {
    return invalidArgument("--nvlink-island: not with --nvswitch-partition (one or the other)");
  }
  if (options.gpus < 2 || options.gpus > 16) {
    return invalidArgument(
        "--nvlink-island: want --gpus 2 to 16 (each GPU adds a companion device; a claim holds at "
        "most 32 devices), got " +
        std::to_string(options.gpus));
  }
  if (!dnsName(options.companionClass, true)) {
    return invalidArgument("--companion-class: want a DeviceClass name, got \"" +
                           options.companionClass + "\"");
  }
  if (!dnsName(options.companionDriver, true)) {
    return invalidArgument("--companion-driver: want a DRA driver name (a DNS subdomain), got \"" +
                           options.companionDriver + "\"");
  }
  ClaimSpec spec;
  DeviceConstraint island;
  island.matchAttribute = options.companionDriver + "/" + std::string(kNvlinkIslandAttribute);
  for (int i = 0; i < options.gpus; ++i) {
    const std::string gpu = "gpu-" + std::to_string(i);
    const std::string link = "link-" + std::to_string(i);
    spec.requests.push_back(exactlyOne(gpu, options.deviceClass));
    spec.requests.push_back(exactlyOne(link, options.companionClass));
    spec.constraints.push_back(DeviceConstraint{{gpu, link}, std::string(kPciBusIdAttribute), {}});
    island.requests.push_back(link);
  }
  spec.constraints.push_back(std::move(island));
  return spec;
}

}  // namespace

Result<ClaimSpec> shapedClaimSpec(const ShapedClaimOptions& options) {
  if (options.gpus < 1 || options.gpus > 32) {
    return invalidArgument("--gpus: want 1 to 32 (a claim holds at most 32 devices), got " +
                           std::to_string(options.gpus));
  }
  if (!options.name.empty() && !dnsName(options.name, true)) {
    return invalidArgument("--name: want a lowercase DNS subdomain (a-z, 0-9, '-', '.'), got \"" +
                           options.name + "\"");
  }
  if (!options.ns.empty() && !dnsName(options.ns, false)) {
    return invalidArgument("--namespace: want a lowercase DNS label (a-z, 0-9, '-'), got \"" +
                           options.ns + "\"");
  }
  if (!dnsName(options.deviceClass, true)) {
    return invalidArgument("--device-class: want a DeviceClass name, got \"" + options.deviceClass +
                           "\"");
  }
  if (options.nvlinkIsland) {
    return nvlinkIslandSpec(options);
  }
  constexpr std::array<int, 4> kPartitionSizes = {1, 2, 4, 8};
  if (options.nvswitchPartition && std::find(kPartitionSizes.begin(), kPartitionSizes.end(),
                                             options.gpus) == kPartitionSizes.end()) {
    return invalidArgument(
        "--nvswitch-partition: Fabric Manager partitions hold 1, 2, 4 or 8 GPUs, got --gpus " +
        std::to_string(options.gpus));
  }
  ClaimSpec spec;
  DeviceRequest request;
  request.name = std::string(kShapedRequestName);
  const std::string prefix = request.name + "/";
  if (options.gpus == 1 && !options.nvswitchPartition) {
    // One device meets every constraint: no tiers.
    spec.requests.push_back(exactlyOne(request.name, options.deviceClass));
    return spec;
  }
  request.firstAvailable = true;
  if (options.nvswitchPartition) {
    DeviceRequestShape partition = tier(options, "nvswitch-partition");
    partition.selectors.clear();
    request.alternatives.push_back(std::move(partition));
    spec.constraints.push_back(
        DeviceConstraint{{prefix + "nvswitch-partition"}, partitionAttribute(options.gpus), {}});
  }
  if (options.gpus > 1) {
    request.alternatives.push_back(tier(options, "same-pcie-root"));
    spec.constraints.push_back(
        DeviceConstraint{{prefix + "same-pcie-root"}, std::string(kPcieRoot), {}});
    request.alternatives.push_back(tier(options, "same-numa-node"));
    spec.constraints.push_back(
        DeviceConstraint{{prefix + "same-numa-node"}, std::string(kNumaNode), {}});
  }
  request.alternatives.push_back(tier(options, "any"));
  spec.requests.push_back(std::move(request));
  return spec;
}

std::string claimTemplateYaml(const ShapedClaimOptions& options, const ClaimSpec& spec) {
  const std::string what =
      options.nvlinkIsland
          ? " GPUs of one NVLink island (companion devices of " + options.companionDriver + ")"
      : options.gpus == 1 ? " GPU"
                          : " GPUs; DRA takes the first tier a node can satisfy";
  std::string out =
      "# gpu-topology-extender claim-template: " + std::to_string(options.gpus) + what +
      "\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: " +
      templateName(options) + "\n";
  if (!options.ns.empty()) out += "  namespace: " + options.ns + "\n";
  out += "spec:\n  spec:\n    devices:\n      requests:\n";
  for (const DeviceRequest& request : spec.requests) {
    out += "      - name: " + request.name + "\n";
    if (!request.firstAvailable) {
      out += "        exactly:\n";
      shapeYaml(out, request.alternatives.front(), "          ");
      continue;
    }
    out += "        firstAvailable:\n";
    for (const DeviceRequestShape& shape : request.alternatives) {
      out += "        - name: " + shape.name + "\n";
      shapeYaml(out, shape, "          ");
    }
  }
  if (!spec.constraints.empty()) {
    out += "      constraints:\n";
    for (const DeviceConstraint& constraint : spec.constraints) {
      out += "      - requests:\n";
      for (const std::string& name : constraint.requests)
        out += "        - " + name + "\n";
      out += "        matchAttribute: " + constraint.matchAttribute + "\n";
    }
  }
  return out;
}

std::string claimTemplateJson(const ShapedClaimOptions& options, const ClaimSpec& spec) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("resource.k8s.io/v1");
  w.key("kind").string("ResourceClaimTemplate");
  w.key("metadata").beginObject().key("name").string(templateName(options));
  if (!options.ns.empty()) w.key("namespace").string(options.ns);
  w.endObject();
  w.key("spec").beginObject().key("spec").beginObject().key("devices").beginObject();
  w.key("requests").beginArray();
  for (const DeviceRequest& request : spec.requests) {
    w.element().beginObject().key("name").string(request.name);
    if (!request.firstAvailable) {
      w.key("exactly").beginObject();
      shapeJson(w, request.alternatives.front());
      w.endObject();
    } else {
      w.key("firstAvailable").beginArray();
      for (const DeviceRequestShape& shape : request.alternatives) {
        w.element().beginObject().key("name").string(shape.name);
        shapeJson(w, shape);
        w.endObject();
      }
      w.endArray();
    }
    w.endObject();
  }
  w.endArray();
  if (!spec.constraints.empty()) {
    w.key("constraints").beginArray();
    for (const DeviceConstraint& constraint : spec.constraints) {
      w.element().beginObject().key("requests").beginArray();
      for (const std::string& name : constraint.requests)
        w.element().string(name);
      w.endArray().key("matchAttribute").string(constraint.matchAttribute).endObject();
    }
    w.endArray();
  }
  w.endObject().endObject().endObject().endObject();
  out.push_back('\n');
  return out;
}

}  // namespace gte::dra
