#include "support/node_fixtures.h"

#include "model/gpu_request.h"
#include "topology/gpu_identity.h"

namespace gte::testing {
namespace {

void put(NodeInfo& node, const std::string& prefix, const std::string& key,
         const std::string& value) {
  node.labels[prefix + key] = value;
}

void putPairs(NodeInfo& node, const std::string& prefix, const std::string& key,
              const std::string& value) {
  if (value.size() <= 60) {
    put(node, prefix, key, value);
    return;
  }
  for (std::size_t chunk = 0; chunk * 60 < value.size(); ++chunk) {
    put(node, prefix, key + std::to_string(chunk), value.substr(chunk * 60, 60));
  }
}

}  // namespace

NodeInfo makeLabelsV1Node(const MachineLabels& machine, const FixtureState& state) {
  NodeInfo node;
  node.name = state.name;
  node.uid = "uid-" + state.name;
  const auto n = static_cast<std::size_t>(machine.gpus);
  const std::string& p = state.prefix;
  put(node, p, "v", "1");
  put(node, p, "n", std::to_string(machine.gpus));
  put(node, p, "model", machine.model);
  put(node, p, "fabric", machine.fabric);
  putPairs(node, p, "nvl", machine.nvl);
  putPairs(node, p, "pci", machine.pci);
  put(node, p, "numa", machine.numa);
  put(node, p, "health", state.health.value_or(std::string(n, '1')));
  put(node, p, "used", state.used.value_or(std::string(n, '0')));
  put(node, p, "mig", state.mig.value_or(std::string(n, machine.migDefault)));
  for (const auto& [gpu, tokens] : state.migTokens) {
    put(node, p, "mig" + std::to_string(gpu), tokens);
  }
  if (state.identities) {
    std::string bus;
    std::string uuid;
    for (std::size_t gpu = 0; gpu < n; ++gpu) {
      const auto address = parsePciBusId(machine.busIds.at(gpu));
      bus += pciAddressToken(address.value());
      uuid += gpuUuidToken(parseGpuUuid(fixtureGpuUuid(static_cast<int>(gpu))).value());
    }
    putPairs(node, p, "bus", bus);
    putPairs(node, p, "uuid", uuid);
  }
  put(node, p, "gen", "1764670000");
  if (state.devicePlugin) {
    node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(machine.gpus));
  }
  return node;
}

std::string fixtureGpuUuid(int gpu) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string uuid = "GPU-1d6e2f3a-0000-4000-8000-0000000000";
  uuid += kHex[(gpu >> 4) & 0xf];
  uuid += kHex[gpu & 0xf];
  return uuid;
}

NodeInfo makeDgxH100(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 8;
  machine.model = "NVIDIA-H100-80GB-HBM3";
  machine.fabric = "nvsw4";
  machine.nvl = pairString(8, [](int, int) { return 'i'; });  // NV18
  // Each GPU has a PCIe switch of its own: same socket crosses host bridges (NODE), else SYS.
  machine.pci = pairString(8, [](int i, int j) { return i / 4 == j / 4 ? 'N' : 'S'; });
  machine.numa = "00001111";
  machine.migDefault = '0';
  // NVML index order is PCI bus order on the DGX H100.
  machine.busIds = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                    "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeDgxA100(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 8;
  machine.model = "NVIDIA-A100-SXM4-80GB";
  machine.fabric = "nvsw6";
  machine.nvl = pairString(8, [](int, int) { return 'c'; });  // NV12
  machine.pci = "QSSSSSSSSSSSSQSSSSSSSSQSSSSQ";
  machine.numa = "33117755";
  machine.migDefault = '0';
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeA100PcieBridged(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 8;
  machine.model = "NVIDIA-A100-PCIE-40GB";
  machine.fabric = "mesh";
  machine.nvl = pairString(8, [](int i, int j) {
    const bool bridged =
        (i == 0 && j == 2) || (i == 1 && j == 3) || (i == 4 && j == 5) || (i == 6 && j == 7);
    return bridged ? 'c' : '0';
  });
  machine.pci = pairString(8, [](int i, int j) { return i / 4 == j / 4 ? 'N' : 'S'; });
  machine.numa = "00001111";
  machine.migDefault = '0';
  machine.busIds = {"0000:17:00.0", "0000:31:00.0", "0000:4b:00.0", "0000:65:00.0",
                    "0000:98:00.0", "0000:b1:00.0", "0000:ca:00.0", "0000:e3:00.0"};
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeDgx1Volta(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 8;
  machine.model = "Tesla-V100-SXM2-16GB";
  machine.fabric = "mesh";
  machine.nvl = "1122000210200200100001112212";
  machine.pci = "PHHSSSSHHSSSSPSSSSSSSSPHHHHP";
  machine.numa = "00001111";
  // The fake NVML's DGX-1V (tests/agent/fake_nvml), for withIdentities().
  machine.busIds = {"0000:06:00.0", "0000:07:00.0", "0000:0a:00.0", "0000:0b:00.0",
                    "0000:85:00.0", "0000:86:00.0", "0000:89:00.0", "0000:8a:00.0"};
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeDgx1Pascal(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 8;
  machine.model = "Tesla-P100-SXM2-16GB";
  machine.fabric = "mesh";
  // NV1 inside each quad and between GPU i and i+4 (go-gpuallocator's DGX-1 Pascal fixture;
  // tests/data/topologies/dgx1-p100-nvlink-only.topo).
  machine.nvl =
      pairString(8, [](int i, int j) { return (i / 4 == j / 4 || j == i + 4) ? '1' : '0'; });
  // PIX for (0,2),(1,3),(4,6),(5,7); PHB for other same-socket pairs; SYS across sockets.
  machine.pci = pairString(8, [](int i, int j) {
    if (i / 4 != j / 4) {
      return 'S';
    }
    return j == i + 2 ? 'P' : 'H';
  });
  machine.numa = "00001111";
  return makeLabelsV1Node(machine, state);
}

NodeInfo make4xPcieL40s(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 4;
  machine.model = "NVIDIA-L40S";
  machine.fabric = "none";
  machine.nvl = "000000";
  machine.pci = "NNNNNN";
  machine.numa = "0000";
  machine.busIds = {"0000:38:00.0", "0000:3a:00.0", "0000:3c:00.0", "0000:3e:00.0"};
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeDgx2(const FixtureState& state) {
  MachineLabels machine;
  machine.gpus = 16;
  machine.model = "Tesla-V100-SXM3-32GB";
  machine.fabric = "nvsw12";
  machine.nvl = pairString(16, [](int, int) { return '6'; });
  machine.pci = pairString(16, [](int i, int j) {
    if (i / 2 == j / 2) {
      return 'P';
    }
    if (i / 4 == j / 4) {
      return 'Q';
    }
    return i / 8 == j / 8 ? 'N' : 'S';
  });
  machine.numa = "0000000011111111";
  return makeLabelsV1Node(machine, state);
}

NodeInfo makePatternless16(const FixtureState& state) {
  const auto mix = [](int i, int j) { return static_cast<unsigned>((i * 7919 + j * 104729) % 97); };
  MachineLabels machine;
  machine.gpus = 16;
  machine.model = "NVIDIA-H100-80GB-HBM3";
  machine.fabric = "none";
  machine.nvl =
      pairString(16, [&](int i, int j) { return static_cast<char>('0' + mix(i, j) % 4); });
  machine.pci = pairString(16, [&](int i, int j) { return "PQNS"[mix(i, j) % 4]; });
  machine.numa = "0000000011111111";
  return makeLabelsV1Node(machine, state);
}

NodeInfo makeGfdNode(const std::string& name, int gpus, const std::string& product) {
  NodeInfo node;
  node.name = name;
  node.uid = "uid-" + name;
  node.labels["nvidia.com/gpu.count"] = std::to_string(gpus);
  node.labels["nvidia.com/gpu.product"] = product;
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(gpus));
  return node;
}

NodeInfo makeSlicedDgxH100(const std::string& replicas, const std::string& tenants) {
  NodeInfo node = makeDgxH100(FixtureState().withName("sliced"));
  node.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
  if (!replicas.empty()) node.labels.insert_or_assign("nvidia.com/gpu.replicas", replicas);
  if (!tenants.empty()) node.labels.insert_or_assign("gputopo.dev/tenants", tenants);
  return node;
}

NodeInfo slicedMigA100(const std::string& strategy, const std::string& replicas,
                       const std::string& gpu1Tokens) {
  NodeInfo node = makeDgxA100(FixtureState()
                                  .withName("mig")
                                  .withUsed("mm010000")
                                  .withMig("11000000")
                                  .withMigTokens(0, "10u02f03u24f")
                                  .withMigTokens(1, gpu1Tokens));
  if (!strategy.empty()) node.labels["nvidia.com/mig-1g.10gb.sharing-strategy"] = strategy;
  if (!replicas.empty()) node.labels["nvidia.com/mig-1g.10gb.replicas"] = replicas;
  node.labels["nvidia.com/mig-3g.40gb.sharing-strategy"] = "none";
  node.labels["nvidia.com/mig-3g.40gb.replicas"] = "1";
  return node;
}

}  // namespace gte::testing
