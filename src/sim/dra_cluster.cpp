#include "sim/dra_cluster.h"

#include <array>
#include <bit>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "dra/claim_shaping.h"
#include "dra/gpu_mapping.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice_json.h"
#include "dra_placement/dra_node_state.h"

namespace gte::sim {
namespace {

constexpr std::array<std::pair<DraDeviceOrder, std::string_view>, 3> kOrders{{
    {DraDeviceOrder::kOff, "off"},
    {DraDeviceOrder::kIndex, "index"},
    {DraDeviceOrder::kShuffled, "shuffled"},
}};

constexpr std::array<std::pair<DraPodForm, std::string_view>, 2> kForms{{
    {DraPodForm::kExtendedResource, "extended-resource"},
    {DraPodForm::kClaimTemplate, "claim-template"},
}};

// The NVIDIA DRA driver chart's class for whole GPUs, as it installs it on resource.k8s.io/v1.
constexpr std::string_view kGpuClassJson =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
    R"("metadata":{"name":"gpu.nvidia.com","creationTimestamp":"2026-01-01T00:00:00Z"},)"
    R"("spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && )"
    R"(device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],)"
    R"("extendedResourceName":"nvidia.com/gpu"}})";

// labels-v1 `pci` levels whose common ancestor lies below one host bridge.
bool sameRoot(char level) noexcept {
  return level == 'O' || level == 'P' || level == 'Q' || level == 'H';
}

int findRoot(std::vector<int>& parent, int gpu) {
  while (parent[static_cast<std::size_t>(gpu)] != gpu) {
    gpu = parent[static_cast<std::size_t>(gpu)];
  }
  return gpu;
}

// Built once from trusted text: a failure is a programming error, not an input error.
template <typename T>
T orThrow(Result<T> result, std::string_view what) {
  if (!result.ok()) {
    throw std::logic_error(std::string(what) + ": " + result.error().message);
  }
  return std::move(result).value();
}

}  // namespace

std::string_view draDeviceOrderName(DraDeviceOrder order) noexcept {
  for (const auto& [value, name] : kOrders) {
    if (value == order) {
      return name;
    }
  }
  return "unknown";
}

std::optional<DraDeviceOrder> draDeviceOrderFromName(std::string_view name) noexcept {
  for (const auto& [value, known] : kOrders) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::string_view draPodFormName(DraPodForm form) noexcept {
  for (const auto& [value, name] : kForms) {
    if (value == form) {
      return name;
    }
  }
  return "unknown";
}

std::optional<DraPodForm> draPodFormFromName(std::string_view name) noexcept {
  for (const auto& [value, known] : kForms) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::vector<int> pcieRootGroups(const NodeTemplate& machine) {
  const int n = machine.gpus;
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  std::size_t pair = 0;  // labels-v1 pair order: (0,1), (0,2), ..., (1,2), ...
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b, ++pair) {
      if (pair < machine.pci.size() && sameRoot(machine.pci[pair])) {
        const int ra = findRoot(parent, a);
        const int rb = findRoot(parent, b);
        parent[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
      }
    }
  }
  std::vector<int> group(static_cast<std::size_t>(n), -1);
  int next = 0;
  for (int gpu = 0; gpu < n; ++gpu) {
    const auto root = static_cast<std::size_t>(findRoot(parent, gpu));
    if (group[root] < 0) {
      group[root] = next++;
    }
    group[static_cast<std::size_t>(gpu)] = group[root];
  }
  return group;
}

std::string templateSliceJson(const NodeTemplate& machine, const std::string& nodeName,
                              std::span<const int> order) {
  const std::vector<int> roots = pcieRootGroups(machine);
  std::string devices;
  for (const int gpu : order) {
    const auto g = static_cast<std::size_t>(gpu);
    char root[16];
    std::snprintf(root, sizeof root, "pci0000:%02x", (roots[g] * 0x10) & 0xff);
    const int numa = g < machine.numa.size() ? machine.numa[g] - '0' : 0;
    devices += devices.empty() ? "" : ",";
    devices += R"({"name":"gpu-)" + std::to_string(gpu) + R"(","attributes":{)" +
               R"("type":{"string":"gpu"},"productName":{"string":")" + machine.model + R"("},)" +
               R"("resource.kubernetes.io/pcieRoot":{"string":")" + root + R"("},)" +
               R"("resource.kubernetes.io/numaNode":{"int":)" + std::to_string(numa) + "}}}";
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
         nodeName + R"(-gpu.nvidia.com"},"spec":{"driver":"gpu.nvidia.com","nodeName":")" +
         nodeName + R"(","pool":{"name":")" + nodeName +
         R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}

NodeInfo makeDraTemplateNode(const NodeTemplate& machine, const std::string& nodeName,
                             const std::string& labelPrefix) {
  NodeInfo node = makeTemplateNode(machine, nodeName, labelPrefix);
  node.allocatable = ResourceList{};
  return node;
}

SimDraCluster::SimDraCluster()
    : catalog_(
          std::make_shared<const dra::ClassCatalog>(std::vector<dra::DeviceClassConstSharedPtr>{
              orThrow(dra::parseDeviceClassJson(kGpuClassJson), "gpu.nvidia.com class")})),
      gpuClass_(catalog_->forExtendedResource(kDraGpuExtendedResource)) {}

void SimDraCluster::publish(const NodeTemplate& machine, const std::string& nodeName,
                            std::span<const int> order) {
  slices_.upsert(orThrow(dra::parseResourceSliceJson(templateSliceJson(machine, nodeName, order)),
                         "simulated ResourceSlice"));
}

DraNodeStateConstSharedPtr SimDraCluster::nodeState(const NodeInfo& node,
                                                    const GpuTopology& topology) const {
  return buildDraNodeState(node, topology, slices_, allocated_, catalog_);
}

const dra::ClaimProgram& SimDraCluster::claim(DraPodForm form, int gpus) {
  const auto key = std::make_pair(form, gpus);
  auto found = claims_.find(key);
  if (found != claims_.end()) {
    return found->second;
  }
  if (form == DraPodForm::kExtendedResource || gpus < 2) {
    return claims_.emplace(key, dra::extendedResourceClaim(gpuClass_, gpus)).first->second;
  }
  dra::ShapedClaimOptions shaped;
  shaped.gpus = gpus;
  const dra::ClaimSpec spec = orThrow(dra::shapedClaimSpec(shaped), "claim template");
  return claims_
      .emplace(key, orThrow(dra::compileClaim(spec, "sim/gpus-" + std::to_string(gpus), *catalog_),
                            "claim template"))
      .first->second;
}

DraDemandConstSharedPtr SimDraCluster::templateDemand(int gpus) {
  auto& demand = demands_[gpus];
  if (demand == nullptr) {
    auto made = std::make_shared<DraDemand>();
    made->claims.push_back(claim(DraPodForm::kClaimTemplate, gpus));
    made->catalog = catalog_;
    classifyClaims(*made);
    demand = std::move(made);
  }
  return demand;
}

void SimDraCluster::allocate(const dra::NodeDevices& devices, const dra::FirstFitResult& picked) {
  for (const dra::PickedDevice& pick : picked.devices) {
    const dra::NodeDevice& device = devices.devices[pick.position];
    const dra::ResourceSlice& slice = *device.slice;
    if (pick.share < 0) {
      allocated_.addExclusive(slice.driver, slice.pool, slice.deviceName(device.index));
      continue;
    }
    const std::vector<Quantity>& consumed = picked.consumed[static_cast<std::size_t>(pick.share)];
    const dra::Range capacity = slice.devices[device.index].capacity;
    ResourceList share;
    for (std::uint32_t i = 0; i < capacity.count && i < consumed.size(); ++i)
      share.set(std::string(slice.view(slice.quantities[capacity.first + i].name)), consumed[i]);
    allocated_.addShared(slice.driver, slice.pool, slice.deviceName(device.index), {}, share);
  }
}

void SimDraCluster::release(const std::string& nodeName, GpuMask gpus) {
  dra::ResourceClaim claim;
  claim.allocated = true;
  for (GpuMask rest = gpus; rest != 0; rest &= rest - 1) {
    dra::AllocatedDevice device;
    device.driver = std::string(dra::kNvidiaGpuDriver);
    device.pool = nodeName;
    device.device = "gpu-" + std::to_string(std::countr_zero(rest));
    claim.devices.push_back(std::move(device));
  }
  allocated_.removeClaim(claim);
}

}  // namespace gte::sim
