// A fake libnvidia-ml.so.1 for the agent's tests: implements only the NVML functions the agent
// calls, serving recorded facts of three machines chosen by GTE_FAKE_NVML_MACHINE at nvmlInit_v2:
//   dgx1v        8x Tesla V100-SXM2-16GB, hybrid cube-mesh NVLink (direct links, no remote-type
//                call: an older driver), no NUMA call (sysfs fallback), GPU 5 with page
//                retirement pending (unhealthy)
//   hgx-h100     8x H100 80GB HBM3, 18 NVLinks each to 4 NVSwitches (5/4/4/5), GPU 3 with a row
//                remapping failure (unhealthy), MIG capable but disabled; GPU 7 with MIG
//                being enabled (change pending)
//   dgx-a100-mig 8x A100-SXM4-80GB, 12 NVLinks each to 6 NVSwitches, GPUs 0 and 1 in MIG mode with
//                the GPU instances of the labels-v1 spec's worked example
// Facts: the NVLink pairs of the DGX-1V capture, the PCIe levels of go-gpuallocator's DGX-1V
// fixture, the NUMA nodes of the HGX captures, the A100/H100 MIG placement table.
//
// Health signals a test drives: GTE_FAKE_NVML_HEALTH names a control file, read again at every
// nvmlDeviceGetCount_v2 (the start of each agent pass), one fact per line ('#' comments):
//   replay|recovery|crcflit|crcdata <gpu> <link> <count>   NVLink error counter (default 0)
//   linkdown <gpu> <link>                                  the link is inactive
//   width <gpu> <current> <max>                            PCIe link width (default 16 16)
//   gen <gpu> <current> <max>                              PCIe generation (default 4 4)
//   clocks <gpu> <bits>                                    clock event reasons (default 0)
//   ecc <gpu> <count>                                      volatile uncorrectable ECC (default 0)
//   xid <gpu> <code>                                       an XID event, delivered once, in order
// gteFakeNvmlCalls() counts the NVML calls made since nvmlInit_v2 (tests dlsym it).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/nvml_api.h"

namespace {

constexpr nvmlReturn_t kOk = 0;
constexpr nvmlReturn_t kInvalid = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kNotFound = 6;
constexpr nvmlReturn_t kUninitialized = 1;

struct Link {
  int peerGpu = -1;   // a GPU, or
  int nvswitch = -1;  // a switch index
};

struct Instance {
  unsigned int id;
  unsigned int profileId;
  unsigned int start;
  unsigned int size;
};

struct Handle {
  bool mig = false;
  int gpu = 0;
  int instance = -1;  // for MIG device handles
};

struct Gpu {
  Handle handle;
  std::string uuid;
  std::string name;
  unsigned int bus = 0;
  int numa = -1;
  bool migCapable = false;
  bool migEnabled = false;
  bool migPending = false;  // a mode change waits for a GPU reset
  std::vector<Link> links;
  std::vector<Instance> instances;
  std::vector<Handle> migHandles;
  bool retiredPending = false;
  bool remapFailure = false;
};

struct Profile {
  unsigned int constant;
  unsigned int id;
  unsigned int size;
  std::vector<unsigned int> starts;
};

// The GA100/GH100 geometry (NVML constant -> driver profile ID, memory slices, legal starts).
const std::vector<Profile>& profiles() {
  static const std::vector<Profile> table = {
      {0, 19, 1, {0, 1, 2, 3, 4, 5, 6}},
      {7, 20, 1, {0, 1, 2, 3, 4, 5, 6}},
      {9, 15, 2, {0, 2, 4, 6}},
      {1, 14, 2, {0, 2, 4}},
      {2, 9, 4, {0, 4}},
      {3, 5, 4, {0}},
      {4, 0, 8, {0}},
  };
  return table;
}

struct Machine {
  std::vector<Gpu> gpus;
  std::vector<unsigned int> switchBus;
  bool numaCall = true;
  bool remoteTypeCall = true;
  int (*ancestor)(int, int) = nullptr;
};

Machine g_machine;
bool g_initialized = false;
unsigned long long g_calls = 0;

constexpr unsigned int kLinks = 18;
struct GpuHealthFacts {
  unsigned long long counters[kLinks][4] = {};
  bool linkDown[kLinks] = {};
  unsigned int width = 16, maxWidth = 16, gen = 4, maxGen = 4;
  unsigned long long clocks = 0, ecc = 0;
};
struct Xid {
  int gpu;
  unsigned long long code;
};
std::vector<GpuHealthFacts> g_health;
std::vector<Xid> g_xids;          // every xid line of the control file, in order
std::size_t g_xidsDelivered = 0;  // events already handed out
std::vector<bool> g_registered;   // per GPU: registered for XID events
int g_eventSet = 0;               // the one event set's address is its handle

void readHealthFile() {
  g_health.assign(g_machine.gpus.size(), GpuHealthFacts{});
  g_xids.clear();
  const char* path = std::getenv("GTE_FAKE_NVML_HEALTH");
  if (path == nullptr || *path == 0) {
    return;
  }
  FILE* in = std::fopen(path, "r");
  if (in == nullptr) {
    return;
  }
  char line[256];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    char word[32] = {};
    unsigned long long a = 0, b = 0, c = 0;
    const int n = std::sscanf(line, "%31s %llu %llu %llu", word, &a, &b, &c);
    if (n < 2 || word[0] == '#' || a >= g_health.size()) {
      continue;
    }
    GpuHealthFacts& gpu = g_health[a];
    const std::string w = word;
    const char* counters[] = {"replay", "recovery", "crcflit", "crcdata"};
    for (int k = 0; k < 4; ++k) {
      if (w == counters[k] && n == 4 && b < kLinks) gpu.counters[b][k] = c;
    }
    if (w == "linkdown" && n >= 3 && b < kLinks) gpu.linkDown[b] = true;
    if (w == "width" && n == 4) {
      gpu.width = static_cast<unsigned int>(b);
      gpu.maxWidth = static_cast<unsigned int>(c);
    }
    if (w == "gen" && n == 4) {
      gpu.gen = static_cast<unsigned int>(b);
      gpu.maxGen = static_cast<unsigned int>(c);
    }
    if (w == "clocks" && n >= 3) gpu.clocks = b;
    if (w == "ecc" && n >= 3) gpu.ecc = b;
    if (w == "xid" && n >= 3) g_xids.push_back(Xid{static_cast<int>(a), b});
  }
  std::fclose(in);
}

void addLinks(Machine& m, int a, int b, int count) {
  for (int k = 0; k < count; ++k) {
    m.gpus[a].links.push_back({b, -1});
    m.gpus[b].links.push_back({a, -1});
  }
}

std::vector<Gpu> gpus(const char* tag, const char* name, const unsigned int (&bus)[8]) {
  std::vector<Gpu> out(8);
  for (int i = 0; i < 8; ++i) {
    out[i].handle = Handle{false, i, -1};
    out[i].uuid = std::string("GPU-") + tag + "-" + std::to_string(i);
    out[i].name = name;
    out[i].bus = bus[i];
  }
  return out;
}

Machine dgx1v() {
  Machine m;
  const unsigned int bus[8] = {0x06, 0x07, 0x0a, 0x0b, 0x85, 0x86, 0x89, 0x8a};
  m.gpus = gpus("dgx1v", "Tesla V100-SXM2-16GB", bus);
  // NV1/NV2 pairs of the hybrid cube-mesh (6 links per GPU).
  const int pairs[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                          {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                          {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  for (const auto& p : pairs) {
    addLinks(m, p[0], p[1], p[2]);
  }
  m.gpus[5].retiredPending = true;
  m.numaCall = false;
  m.remoteTypeCall = false;
  m.ancestor = [](int a, int b) { return a / 2 == b / 2 ? 10 : a / 4 == b / 4 ? 30 : 50; };
  return m;
}

Machine hgxH100() {
  Machine m;
  const unsigned int bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  m.gpus = gpus("h100", "NVIDIA H100 80GB HBM3", bus);
  // Real UUID syntax here (the other machines' "GPU-<tag>-<i>" are not UUIDs, so their labels
  // carry no `uuid`): the same values the extender's DRA fixtures use (fixtureGpuUuid).
  for (int i = 0; i < 8; ++i) {
    m.gpus[i].uuid = "GPU-1d6e2f3a-0000-4000-8000-00000000000" + std::to_string(i);
  }
  m.switchBus = {0xe1, 0xe2, 0xe3, 0xe4};
  const int perSwitch[4] = {5, 4, 4, 5};
  for (int i = 0; i < 8; ++i) {
    m.gpus[i].numa = i / 4;
    m.gpus[i].migCapable = true;
    for (int s = 0; s < 4; ++s) {
      for (int k = 0; k < perSwitch[s]; ++k) {
        m.gpus[i].links.push_back({-1, s});
      }
    }
  }
  m.gpus[3].remapFailure = true;
  m.gpus[7].migPending = true;  // MIG being turned on, reset pending
  m.ancestor = [](int a, int b) { return a / 4 == b / 4 ? 40 : 50; };
  return m;
}

Machine dgxA100Mig() {
  Machine m;
  const unsigned int bus[8] = {0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd};
  m.gpus = gpus("a100", "NVIDIA A100-SXM4-80GB", bus);
  m.switchBus = {0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6};
  const int numa[8] = {3, 3, 1, 1, 7, 7, 5, 5};
  for (int i = 0; i < 8; ++i) {
    m.gpus[i].numa = numa[i];
    m.gpus[i].migCapable = true;
    for (int s = 0; s < 6; ++s) {
      m.gpus[i].links.push_back({-1, s});
      m.gpus[i].links.push_back({-1, s});
    }
  }
  m.gpus[0].migEnabled = true;
  m.gpus[0].instances = {{3, 14, 0, 2}, {9, 19, 2, 1}, {10, 19, 3, 1}, {2, 9, 4, 4}};
  m.gpus[1].migEnabled = true;
  for (unsigned int s = 0; s < 7; ++s) {
    m.gpus[1].instances.push_back({7 + s, 19, s, 1});
  }
  for (int g = 0; g < 2; ++g) {
    for (int k = 0; k < static_cast<int>(m.gpus[g].instances.size()); ++k) {
      m.gpus[g].migHandles.push_back(Handle{true, g, k});
    }
  }
  m.ancestor = [](int a, int b) { return a / 2 == b / 2 ? 20 : 50; };
  return m;
}

Gpu* gpuOf(nvmlDevice_t device) {
  auto* handle = reinterpret_cast<Handle*>(device);
  if (!g_initialized || handle == nullptr || handle->mig) {
    return nullptr;
  }
  return &g_machine.gpus[static_cast<std::size_t>(handle->gpu)];
}

void fillPci(nvmlPciInfo_t* pci, unsigned int bus) {
  std::memset(pci, 0, sizeof *pci);
  pci->domain = 0;
  pci->bus = bus;
  pci->device = 0;
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", bus);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", bus);
}

nvmlReturn_t copyString(const std::string& text, char* out, unsigned int length) {
  if (text.size() + 1 > length) {
    return kInsufficientSize;
  }
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kOk;
}

const Profile* profileById(unsigned int id) {
  for (const Profile& p : profiles()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  ++g_calls;
  const char* which = std::getenv("GTE_FAKE_NVML_MACHINE");
  const std::string name = which ? which : "";
  if (name == "dgx1v") {
    g_machine = dgx1v();
  } else if (name == "hgx-h100") {
    g_machine = hgxH100();
  } else if (name == "dgx-a100-mig") {
    g_machine = dgxA100Mig();
  } else {
    return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  }
  g_initialized = true;
  g_calls = 1;
  g_xidsDelivered = 0;
  g_registered.assign(g_machine.gpus.size(), false);
  readHealthFile();
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() {
  ++g_calls;
  g_initialized = false;
  return kOk;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t rc) {
  ++g_calls;
  switch (rc) {
    case kOk:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalid:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNotFound:
      return "Not Found";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  ++g_calls;
  if (!g_initialized) return kUninitialized;
  readHealthFile();
  *count = static_cast<unsigned int>(g_machine.gpus.size());
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(
    unsigned int index, nvmlDevice_t* device) {
  ++g_calls;
  if (!g_initialized) return kUninitialized;
  if (index >= g_machine.gpus.size()) return kInvalid;
  *device = reinterpret_cast<nvmlDevice_t>(&g_machine.gpus[index].handle);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device,
                                                                      char* out,
                                                                      unsigned int length) {
  ++g_calls;
  auto* handle = reinterpret_cast<Handle*>(device);
  if (!g_initialized || handle == nullptr) return kInvalid;
  const Gpu& gpu = g_machine.gpus[static_cast<std::size_t>(handle->gpu)];
  if (handle->mig) {
    const Instance& gi = gpu.instances[static_cast<std::size_t>(handle->instance)];
    return copyString("MIG-" + gpu.uuid.substr(4) + "-gi" + std::to_string(gi.id), out, length);
  }
  return copyString(gpu.uuid, out, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device,
                                                                      char* out,
                                                                      unsigned int length) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  return copyString(gpu->name, out, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                                            nvmlPciInfo_t* pci) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  fillPci(pci, gpu->bus);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device,
                                                                            unsigned int* node) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (!g_machine.numaCall || gpu->numa < 0) return kNotSupported;
  *node = static_cast<unsigned int>(gpu->numa);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(
    nvmlDevice_t a, nvmlDevice_t b, int* level) {
  ++g_calls;
  const Gpu* x = gpuOf(a);
  const Gpu* y = gpuOf(b);
  if (x == nullptr || y == nullptr) return kInvalid;
  *level = g_machine.ancestor(x->handle.gpu, y->handle.gpu);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device,
                                                                             unsigned int link,
                                                                             int* active) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (link >= gpu->links.size()) return kNotSupported;
  *active = g_health[static_cast<std::size_t>(gpu->handle.gpu)].linkDown[link] ? 0 : 1;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(
    nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (link >= gpu->links.size()) return kNotSupported;
  const Link& l = gpu->links[link];
  fillPci(pci, l.peerGpu >= 0 ? g_machine.gpus[static_cast<std::size_t>(l.peerGpu)].bus
                              : g_machine.switchBus[static_cast<std::size_t>(l.nvswitch)]);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(
    nvmlDevice_t device, unsigned int link, int* type) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (!g_machine.remoteTypeCall || link >= gpu->links.size()) return kNotSupported;
  *type = gpu->links[link].peerGpu >= 0 ? 0 : 2;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
                                                                         unsigned int* current,
                                                                         unsigned int* pending) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (!gpu->migCapable) return kNotSupported;
  *current = gpu->migEnabled ? 1 : 0;
  *pending = gpu->migEnabled != gpu->migPending ? 1 : 0;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(
    nvmlDevice_t device, unsigned int constant, nvmlGpuInstanceProfileInfo_t* info) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (!gpu->migCapable) return kNotSupported;
  for (const Profile& p : profiles()) {
    if (p.constant == constant) {
      std::memset(info, 0, sizeof *info);
      info->id = p.id;
      info->instanceCount = static_cast<unsigned int>(p.starts.size());
      return kOk;
    }
  }
  return kInvalid;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(
    nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t* out,
    unsigned int* count) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  const Profile* p = profileById(profileId);
  if (gpu == nullptr || p == nullptr || !gpu->migCapable) return kInvalid;
  if (*count < p->starts.size()) return kInsufficientSize;
  *count = static_cast<unsigned int>(p->starts.size());
  for (std::size_t k = 0; k < p->starts.size(); ++k) {
    out[k] = nvmlGpuInstancePlacement_t{p->starts[k], p->size};
  }
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetGpuInstances(
    nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* out, unsigned int* count) {
  ++g_calls;
  Gpu* gpu = gpuOf(device);
  if (gpu == nullptr || !gpu->migEnabled) return kNotSupported;
  unsigned int n = 0;
  for (std::size_t k = 0; k < gpu->instances.size(); ++k) {
    if (gpu->instances[k].profileId == profileId) {
      out[n++] = reinterpret_cast<nvmlGpuInstance_t>(&gpu->instances[k]);
    }
  }
  *count = n;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlGpuInstanceGetInfo(
    nvmlGpuInstance_t instance, nvmlGpuInstanceInfo_t* info) {
  ++g_calls;
  const auto* gi = reinterpret_cast<const Instance*>(instance);
  if (!g_initialized || gi == nullptr) return kInvalid;
  std::memset(info, 0, sizeof *info);
  info->id = gi->id;
  info->profileId = gi->profileId;
  info->placement = nvmlGpuInstancePlacement_t{gi->start, gi->size};
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(
    nvmlDevice_t device, unsigned int* count) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr || !gpu->migCapable) return kNotSupported;
  *count = 7;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(
    nvmlDevice_t device, unsigned int index, nvmlDevice_t* mig) {
  ++g_calls;
  Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (index >= gpu->migHandles.size()) return kNotFound;
  *mig = reinterpret_cast<nvmlDevice_t>(&gpu->migHandles[index]);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
                                                                               unsigned int* id) {
  ++g_calls;
  auto* handle = reinterpret_cast<Handle*>(device);
  if (!g_initialized || handle == nullptr || !handle->mig) return kInvalid;
  *id = g_machine.gpus[static_cast<std::size_t>(handle->gpu)]
            .instances[static_cast<std::size_t>(handle->instance)]
            .id;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(
    nvmlDevice_t device, int* pending) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  *pending = gpu->retiredPending ? 1 : 0;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRemappedRows(
    nvmlDevice_t device, unsigned int* corrected, unsigned int* uncorrected, unsigned int* pending,
    unsigned int* failed) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr) return kInvalid;
  if (gpu->name.find("V100") != std::string::npos) return kNotSupported;  // A100 and later
  *corrected = 0;
  *uncorrected = gpu->remapFailure ? 1 : 0;
  *pending = 0;
  *failed = gpu->remapFailure ? 1 : 0;
  return kOk;
}

namespace {

const GpuHealthFacts* healthOf(nvmlDevice_t device) {
  const Gpu* gpu = gpuOf(device);
  return gpu == nullptr ? nullptr : &g_health[static_cast<std::size_t>(gpu->handle.gpu)];
}

nvmlReturn_t uintFact(nvmlDevice_t device, unsigned int GpuHealthFacts::*field, unsigned int* out) {
  const GpuHealthFacts* facts = healthOf(device);
  if (facts == nullptr || out == nullptr) return kInvalid;
  *out = facts->*field;
  return kOk;
}

}  // namespace

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(
    nvmlDevice_t device, unsigned int link, unsigned int counter, unsigned long long* value) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr || counter > 4) return kInvalid;
  if (link >= gpu->links.size() || counter == 4) return kNotSupported;
  *value = g_health[static_cast<std::size_t>(gpu->handle.gpu)].counters[link][counter];
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(
    nvmlDevice_t device, unsigned int* width) {
  ++g_calls;
  return uintFact(device, &GpuHealthFacts::width, width);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(
    nvmlDevice_t device, unsigned int* width) {
  ++g_calls;
  return uintFact(device, &GpuHealthFacts::maxWidth, width);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(
    nvmlDevice_t device, unsigned int* gen) {
  ++g_calls;
  return uintFact(device, &GpuHealthFacts::gen, gen);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(
    nvmlDevice_t device, unsigned int* gen) {
  ++g_calls;
  return uintFact(device, &GpuHealthFacts::maxGen, gen);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(
    nvmlDevice_t device, unsigned long long* reasons) {
  ++g_calls;
  const GpuHealthFacts* facts = healthOf(device);
  if (facts == nullptr) return kInvalid;
  *reasons = facts->clocks;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEccErrors(
    nvmlDevice_t device, unsigned int errorType, unsigned int counterType,
    unsigned long long* count) {
  ++g_calls;
  const GpuHealthFacts* facts = healthOf(device);
  if (facts == nullptr) return kInvalid;
  *count = errorType == 1 && counterType == 0 ? facts->ecc : 0;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  ++g_calls;
  if (!g_initialized) return kUninitialized;
  *set = reinterpret_cast<nvmlEventSet_t>(&g_eventSet);
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceRegisterEvents(
    nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  ++g_calls;
  const Gpu* gpu = gpuOf(device);
  if (gpu == nullptr || set != reinterpret_cast<nvmlEventSet_t>(&g_eventSet)) return kInvalid;
  if ((types & 0x8ULL) == 0) return kNotSupported;
  g_registered[static_cast<std::size_t>(gpu->handle.gpu)] = true;
  return kOk;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set,
                                                                        nvmlEventData_t* data,
                                                                        unsigned int) {
  ++g_calls;
  if (!g_initialized || set != reinterpret_cast<nvmlEventSet_t>(&g_eventSet)) return kInvalid;
  while (g_xidsDelivered < g_xids.size()) {
    const Xid xid = g_xids[g_xidsDelivered++];
    if (xid.gpu < 0 || static_cast<std::size_t>(xid.gpu) >= g_registered.size() ||
        !g_registered[static_cast<std::size_t>(xid.gpu)]) {
      continue;
    }
    std::memset(data, 0, sizeof *data);
    data->device =
        reinterpret_cast<nvmlDevice_t>(&g_machine.gpus[static_cast<std::size_t>(xid.gpu)].handle);
    data->eventType = 0x8ULL;
    data->eventData = xid.code;
    return kOk;
  }
  return 10;  // NVML_ERROR_TIMEOUT
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  ++g_calls;
  return set == reinterpret_cast<nvmlEventSet_t>(&g_eventSet) ? kOk : kInvalid;
}

__attribute__((visibility("default"))) unsigned long long gteFakeNvmlCalls() {
  return g_calls;
}

}  // extern "C"
