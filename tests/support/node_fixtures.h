#pragma once
// Real machines as labels-v1 nodes, exactly as the node agent would label them.
// Every builder takes a FixtureState for the parts that change at run time (which GPUs are used,
// health, MIG layout), so tests describe a situation in one line.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/node_info.h"

namespace gte::testing {

struct FixtureState {
  std::string name = "node";
  std::string prefix = "gputopo.dev/";
  std::optional<std::string> used;       // labels-v1 `used`; default all free
  std::optional<std::string> health;     // default all healthy
  std::optional<std::string> mig;        // labels-v1 `mig`; default per machine
  std::map<int, std::string> migTokens;  // `mig<i>` values
  bool identities =
      false;  // publish `bus` and `uuid` (the machine's PCI addresses, fixtureGpuUuid)
  bool devicePlugin = true;  // status.allocatable nvidia.com/gpu (false: a DRA-only node)

  // Fluent setters for one-line situations: FixtureState().withName("n1").withUsed("00100100").
  FixtureState& withName(std::string value) {
    name = std::move(value);
    return *this;
  }
  FixtureState& withPrefix(std::string value) {
    prefix = std::move(value);
    return *this;
  }
  FixtureState& withUsed(std::string value) {
    used = std::move(value);
    return *this;
  }
  FixtureState& withHealth(std::string value) {
    health = std::move(value);
    return *this;
  }
  FixtureState& withMig(std::string value) {
    mig = std::move(value);
    return *this;
  }
  FixtureState& withMigTokens(int gpu, std::string tokens) {
    migTokens[gpu] = std::move(tokens);
    return *this;
  }
  FixtureState& withIdentities() {
    identities = true;
    return *this;
  }
  FixtureState& withoutDevicePlugin() {
    devicePlugin = false;
    return *this;
  }
};

// The static part of a machine: what `nvidia-smi topo -m/-mp` and NVML report.
struct MachineLabels {
  int gpus = 0;
  std::string model;
  std::string fabric;
  std::string nvl;  // pair string
  std::string pci;  // pair string
  std::string numa;
  char migDefault = 'n';
  std::vector<std::string> busIds;  // per GPU, "0000:18:00.0"; empty when the fixture has none
};

// The UUID fixtures give GPU i: "GPU-1d6e2f3a-0000-4000-8000-0000000000<ii>" (ii = i in hex, two
// digits). The DRA fixtures under tests/data/dra use the same values.
std::string fixtureGpuUuid(int gpu);

NodeInfo makeLabelsV1Node(const MachineLabels& machine, const FixtureState& state);

// DGX H100: 8x H100-SXM5-80GB, NV18 through 4 NVSwitches, each GPU behind its own PCIe switch,
// GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1 (tests/data/topologies/hgx-h100-nvswitch.topo).
NodeInfo makeDgxH100(const FixtureState& state = FixtureState());
// A DGX H100 whose device plugin time-slices its GPUs `replicas` ways (GPU Feature Discovery's
// labels; "" leaves the replicas label out) and whose agent reports `tenants` per GPU (labels-v1
// `tenants`; "" leaves it out), named "sliced".
NodeInfo makeSlicedDgxH100(const std::string& replicas, const std::string& tenants);
// DGX A100: 8x A100-SXM4-80GB, NV12 through 6 NVSwitches, GPU pairs under one PCIe switch complex
// (PXB), NUMA 3,3,1,1,7,7,5,5 (AMD NPS4) — the labels-v1 worked example.
NodeInfo makeDgxA100(const FixtureState& state = FixtureState());
// DGX-1V: 8x V100-SXM2-16GB hybrid cube-mesh (NV1/NV2), PCIe as in go-gpuallocator's fixture —
// the labels-v1 worked example.
NodeInfo makeDgx1Volta(const FixtureState& state = FixtureState());
// DGX-1P: 8x P100 NV1 mesh (go-gpuallocator NewDGX1PascalNode).
NodeInfo makeDgx1Pascal(const FixtureState& state = FixtureState());
// 4x L40S on PCIe, all pairs NODE, one NUMA node (AWS g6e.12xlarge capture).
NodeInfo make4xPcieL40s(const FixtureState& state = FixtureState());
// DGX-2: 16x V100-SXM3-32GB, NV6 through NVSwitch; PCIe PIX pairs, PXB quads, NODE per socket.
NodeInfo makeDgx2(const FixtureState& state = FixtureState());
// 16 GPUs whose NVLink counts and PCIe levels follow no switch hierarchy (a hash of the pair): the
// device-plugin replay has no symmetry to cut by and runs until its work allowance is spent.
NodeInfo makePatternless16(const FixtureState& state = FixtureState());

// 8x A100 PCIe with NVLink bridges on the pairs (0,2) (1,3) (4,5) (6,7) (NV12 each), no other
// NVLink; GPUs 0-3 on NUMA 0, 4-7 on NUMA 1, NODE within a socket and SYS across.
NodeInfo makeA100PcieBridged(const FixtureState& state = FixtureState());

// The DGX A100 with MIG on GPUs 0 and 1 (GPU0 tokens "10u02f03u24f", GPU1 `gpu1Tokens`), its
// 1g.10gb devices shared by the device plugin as GFD labels them under the `mixed` MIG strategy
// (`strategy`, `replicas`; "" leaves a label out), its 3g.40gb devices not shared.
NodeInfo slicedMigA100(const std::string& strategy, const std::string& replicas,
                       const std::string& gpu1Tokens = "00f01f02u03f04f05u06f");

// A node with only NVIDIA GPU Feature Discovery labels and allocatable (no labels-v1).
NodeInfo makeGfdNode(const std::string& name, int gpus, const std::string& product);

// Pair string of length n(n-1)/2 from a function of (i, j).
template <typename PairChar>
std::string pairString(int n, PairChar pairChar) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      out.push_back(pairChar(i, j));
    }
  }
  return out;
}

}  // namespace gte::testing
