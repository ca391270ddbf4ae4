#include "dra/gpu_mapping.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "dra/slice_device.h"
#include "topology/pair_table.h"

namespace gte::dra {
namespace {

constexpr std::string_view kBusIdAttribute = "resource.kubernetes.io/pciBusID";
constexpr std::string_view kOlderBusIdAttribute = "gpu.nvidia.com/pcieBusID";

struct Found {
  int gpu = -1;
  MappingBasis basis = MappingBasis::kNone;
  std::string error;
};

std::optional<int> leadingNumber(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  if (end != text.data() + text.size() && *end != '-') return std::nullopt;
  return value;
}

std::optional<std::string_view> stringAttribute(const SliceDevice& device, std::string_view name) {
  const auto value = device.qualifiedAttribute(name);
  if (!value || value->kind != ValueKind::kString) return std::nullopt;
  return value->text;
}

DeviceRole roleOf(const SliceDevice& device) {
  if (device.driver() != kNvidiaGpuDriver) return DeviceRole::kOther;
  const auto type = stringAttribute(device, "gpu.nvidia.com/type");
  if (!type) return device.name().starts_with("gpu-") ? DeviceRole::kWholeGpu : DeviceRole::kOther;
  if (*type == "gpu" || *type == "vfio") return DeviceRole::kWholeGpu;
  if (*type == "mig") return DeviceRole::kMig;
  return DeviceRole::kOther;
}

std::string describe(const SliceDevice& device) {
  return "device " + std::string(device.name()) + " of pool " + device.slice().pool;
}

// The GPU whose identity (labels-v1 `key`) is the device's `published` one; an error when the
// labels have no such GPU (the identity both sides know decides: no weaker rule is tried).
template <typename Id>
Found byIdentity(const SliceDevice& device, std::string_view published,
                 const std::optional<Id>& parsed, const std::vector<Id>& known, MappingBasis basis,
                 std::string_view what, std::string_view key) {
  Found out;
  const auto it = parsed ? std::find(known.begin(), known.end(), *parsed) : known.end();
  if (it == known.end()) {
    out.error = describe(device) + ": " + std::string(what) + " " + std::string(published) +
                " is not one of the node's GPUs (labels-v1 " + std::string(key) + ")";
    return out;
  }
  out.gpu = static_cast<int>(it - known.begin());
  out.basis = basis;
  return out;
}

// The precedence of the header: the first identity both sides know decides, right or wrong.
Found locate(const SliceDevice& device, DeviceRole role, const GpuTopology& topology) {
  Found out;
  auto bus = stringAttribute(device, kBusIdAttribute);
  if (!bus) bus = stringAttribute(device, kOlderBusIdAttribute);
  if (bus && !topology.pciAddresses.empty()) {
    return byIdentity(device, *bus, parsePciBusId(*bus), topology.pciAddresses,
                      MappingBasis::kBusId, "PCI bus id", "bus");
  }
  const auto uuid = stringAttribute(
      device, role == DeviceRole::kMig ? "gpu.nvidia.com/parentUUID" : "gpu.nvidia.com/uuid");
  if (uuid && !topology.uuids.empty()) {
    return byIdentity(device, *uuid, parseGpuUuid(*uuid), topology.uuids, MappingBasis::kUuid,
                      "UUID", "uuid");
  }
  if (role == DeviceRole::kWholeGpu) {
    const auto index = device.qualifiedAttribute("gpu.nvidia.com/index");
    if (index && index->kind == ValueKind::kInt) {
      out.gpu = static_cast<int>(std::clamp<std::int64_t>(index->integer, -1, kMaxGpus));
      out.basis = MappingBasis::kIndexAttribute;
      return out;
    }
  }
  if (device.name().starts_with("gpu-")) {
    if (const auto n = leadingNumber(device.name().substr(4))) {
      out.gpu = *n;
      out.basis = MappingBasis::kDeviceName;
    }
  }
  return out;
}

}  // namespace

const char* mappingBasisName(MappingBasis basis) noexcept {
  switch (basis) {
    case MappingBasis::kNone:
      return "none";
    case MappingBasis::kBusId:
      return "pci-bus-id";
    case MappingBasis::kUuid:
      return "uuid";
    case MappingBasis::kIndexAttribute:
      return "index-attribute";
    case MappingBasis::kDeviceName:
      return "device-name (assumed)";
  }
  return "none";
}

GpuMapping mapGpuDevices(std::string_view nodeName, const NodeDevices& devices,
                         const GpuTopology& topology, bool devicePluginAdvertisesGpus) {
  GpuMapping mapping;
  mapping.devices.resize(devices.devices.size());
  const auto fail = [&](const std::string& why) {
    mapping.error = "node " + std::string(nodeName) + ": DRA GPU mapping: " + why;
    for (DeviceGpu& d : mapping.devices) {
      d.gpu = -1;
      d.basis = MappingBasis::kNone;
    }
    mapping.weakest = MappingBasis::kNone;
    mapping.assumed = 0;
    mapping.wholeGpus = 0;
    return mapping;
  };
  // Roles first: a failed mapping keeps them (the node's DRA GPUs still count).
  for (std::size_t i = 0; i < devices.devices.size(); ++i) {
    const NodeDevice& nd = devices.devices[i];
    mapping.devices[i].role = roleOf(SliceDevice(*nd.slice, nd.index));
  }
  int wholeDevices = 0;
  for (std::size_t i = 0; i < devices.devices.size(); ++i) {
    const NodeDevice& nd = devices.devices[i];
    const SliceDevice device(*nd.slice, nd.index);
    DeviceGpu& out = mapping.devices[i];
    if (out.role == DeviceRole::kOther) continue;
    const Found found = locate(device, out.role, topology);
    if (!found.error.empty()) return fail(found.error);
    if (found.basis == MappingBasis::kNone) continue;  // unmapped: topology-unknown
    if (found.gpu < 0 || found.gpu >= topology.gpuCount) {
      return fail(describe(device) + ": GPU " + std::to_string(found.gpu) + " (by " +
                  mappingBasisName(found.basis) + ") is beyond the " +
                  std::to_string(topology.gpuCount) + " GPUs of the node's labels");
    }
    out.gpu = static_cast<std::int8_t>(found.gpu);
    out.basis = found.basis;
    mapping.weakest = std::max(mapping.weakest, found.basis);
    if (found.basis == MappingBasis::kDeviceName) ++mapping.assumed;
    if (out.role != DeviceRole::kWholeGpu) continue;
    ++wholeDevices;
    if ((mapping.wholeGpus & bitOf(found.gpu)) != 0) {
      return fail("two whole-GPU devices are GPU " + std::to_string(found.gpu) +
                  " (the second is " + describe(device) + ")");
    }
    mapping.wholeGpus |= bitOf(found.gpu);
  }
  if (wholeDevices > topology.gpuCount) {
    return fail(std::to_string(wholeDevices) + " whole-GPU devices, the node's labels have " +
                std::to_string(topology.gpuCount) + " GPUs");
  }
  const bool anyGpuDevice =
      std::any_of(mapping.devices.begin(), mapping.devices.end(),
                  [](const DeviceGpu& d) { return d.role == DeviceRole::kWholeGpu; });
  if (devicePluginAdvertisesGpus && anyGpuDevice) {
    return fail(
        "the device plugin advertises nvidia.com/gpu and a DRA driver publishes the "
        "same GPUs: each would hand them out");
  }
  return mapping;
}

}  // namespace gte::dra
