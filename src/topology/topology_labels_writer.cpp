#include "topology/topology_labels_writer.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace gte {
namespace {

constexpr std::size_t kChunkLength = 60;
constexpr std::size_t kMaxMigTokens = 8;
constexpr std::size_t kMaxLabelValue = 63;
constexpr int kMaxBase36 = 35;

char base36(int value) noexcept {
  return static_cast<char>(value < 10 ? '0' + value : 'a' + (value - 10));
}

Error fieldError(std::string_view field, const std::string& what) {
  return invalidArgument("labels-v1 writer: " + std::string(field) + ": " + what);
}

// Per-GPU vectors must all have gpuCount entries; pair vectors pairCount entries.
Status checkSizes(const GpuTopology& topo) {
  const auto n = static_cast<std::size_t>(topo.gpuCount);
  const auto pairs = static_cast<std::size_t>(pairCount(topo.gpuCount));
  const auto check = [](std::string_view field, std::size_t have, std::size_t want) -> Status {
    if (have != want) {
      return fieldError(field,
                        "has " + std::to_string(have) + " entries, want " + std::to_string(want));
    }
    return Ok{};
  };
  for (const auto& [field, have, want] :
       {std::tuple{"numa", topo.numa.size(), n}, std::tuple{"health", topo.health.size(), n},
        std::tuple{"used", topo.used.size(), n}, std::tuple{"mig", topo.migMode.size(), n},
        std::tuple{"migInstances", topo.migInstances.size(), n},
        std::tuple{"nvl", topo.nvlinks.size(), pairs}, std::tuple{"pci", topo.pcie.size(), pairs},
        std::tuple{"nvlh", topo.linkHealth.empty() ? pairs : topo.linkHealth.size(), pairs}}) {
    if (auto status = check(field, have, want); !status.ok()) {
      return status;
    }
  }
  return Ok{};
}

// A pair string or a per-GPU token string: over 60 characters it goes in 60-character chunks.
void putChunked(StringMap& labels, const std::string& key, const std::string& value) {
  if (value.size() <= kChunkLength) {
    labels.insert_or_assign(key, std::string(value));
    return;
  }
  for (std::size_t chunk = 0; chunk * kChunkLength < value.size(); ++chunk) {
    labels.insert_or_assign(key + std::to_string(chunk),
                            std::string(value.substr(chunk * kChunkLength, kChunkLength)));
  }
}

Result<std::string> nvlString(const GpuTopology& topo) {
  std::string out;
  for (std::size_t k = 0; k < topo.nvlinks.size(); ++k) {
    if (topo.nvlinks[k] > kMaxBase36) {
      return fieldError("nvl", "pair " + std::to_string(k) + " has " +
                                   std::to_string(topo.nvlinks[k]) + " links, more than 35");
    }
    out += base36(topo.nvlinks[k]);
  }
  return out;
}

std::string pciString(const GpuTopology& topo) {
  std::string out;
  for (const PcieLevel level : topo.pcie) {
    out += pcieLevelCode(level);
  }
  return out;
}

Result<std::string> numaString(const GpuTopology& topo) {
  std::string out;
  for (std::size_t i = 0; i < topo.numa.size(); ++i) {
    const int node = topo.numa[i];
    if (node > kMaxBase36) {
      return fieldError("numa", "GPU " + std::to_string(i) + " on NUMA node " +
                                    std::to_string(node) + ", more than 35");
    }
    out += node < 0 ? 'Z' : base36(node);
  }
  return out;
}

char healthCode(GpuHealth health) noexcept {
  switch (health) {
    case GpuHealth::kHealthy:
      return '1';
    case GpuHealth::kUnhealthy:
      return '0';
    case GpuHealth::kCordoned:
      return 'c';
    case GpuHealth::kDegraded:
      return 'd';
  }
  return '0';
}

char linkHealthCode(LinkHealth health) noexcept {
  switch (health) {
    case LinkHealth::kOk:
      return '1';
    case LinkHealth::kDegraded:
      return 'd';
    case LinkHealth::kDown:
      return '0';
    case LinkHealth::kCordoned:
      return 'c';
  }
  return '1';
}

char useCode(GpuUse use) noexcept {
  switch (use) {
    case GpuUse::kFree:
      return '0';
    case GpuUse::kAllocated:
      return '1';
    case GpuUse::kMigMode:
      return 'm';
  }
  return '1';
}

char migModeCode(MigMode mode) noexcept {
  switch (mode) {
    case MigMode::kNotCapable:
      return 'n';
    case MigMode::kDisabled:
      return '0';
    case MigMode::kEnabled:
      return '1';
    case MigMode::kPending:
      return 'p';
  }
  return 'n';
}

// A shared device's held replicas as a digit while one is free; past what a digit says, used (the
// extender then offers none of its replicas: it may refuse a tenant, never admit one too many).
char instanceStateCode(const MigInstance& instance) noexcept {
  switch (instance.state) {
    case MigInstanceState::kFree:
      if (instance.heldReplicas > kMaxWrittenHeldReplicas) return 'u';
      if (instance.heldReplicas > 0) return static_cast<char>('0' + instance.heldReplicas);
      return 'f';
    case MigInstanceState::kUsed:
      return 'u';
    case MigInstanceState::kReserved:
      return 'r';
  }
  return 'r';
}

Result<std::string> migTokens(const GpuTopology& topo, std::size_t gpu) {
  const auto& instances = topo.migInstances[gpu];
  const std::string field = "mig" + std::to_string(gpu);
  if (instances.size() > kMaxMigTokens) {
    return fieldError(field, std::to_string(instances.size()) + " instances, at most 8 fit");
  }
  if (topo.migMode[gpu] != MigMode::kEnabled) {
    return fieldError(field, "GPU instances on a GPU without MIG enabled");
  }
  std::string out;
  for (const MigInstance& instance : instances) {
    if (instance.start < 0 || instance.start > 7) {
      return fieldError(field, "start slice " + std::to_string(instance.start) + " is not 0-7");
    }
    out += instance.profileCode;
    out += static_cast<char>('0' + instance.start);
    out += instanceStateCode(instance);
  }
  return out;
}

// One token per GPU under `key` when the identities are known (non-empty): all GPUs, no repeats
// (the reader refuses both).
template <typename Id, typename TokenOf>
Status putIdentity(StringMap& labels, const std::string& key, std::string_view field,
                   const std::vector<Id>& ids, std::size_t n, TokenOf tokenOf) {
  if (ids.empty()) {
    return Ok{};
  }
  if (ids.size() != n) {
    return fieldError(field,
                      "has " + std::to_string(ids.size()) + " entries, want " + std::to_string(n));
  }
  std::string tokens;
  for (std::size_t i = 0; i < n; ++i) {
    const auto earlier = ids.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(ids.begin(), earlier, ids[i]) != earlier) {
      return fieldError(field, "GPU " + std::to_string(i) + " repeats " + tokenOf(ids[i]));
    }
    tokens += tokenOf(ids[i]);
  }
  putChunked(labels, key, tokens);
  return Ok{};
}

Status putIdentities(StringMap& labels, const std::string& p, const GpuTopology& topo) {
  const auto n = static_cast<std::size_t>(topo.gpuCount);
  if (auto status = putIdentity(labels, p + "bus", "bus", topo.pciAddresses, n,
                                [](PciAddress a) { return pciAddressToken(a); });
      !status.ok()) {
    return status;
  }
  return putIdentity(labels, p + "uuid", "uuid", topo.uuids, n,
                     [](const GpuUuid& u) { return gpuUuidToken(u); });
}

}  // namespace

Result<StringMap> writeLabelsV1(const GpuTopology& topo, std::string_view prefix) {
  if (topo.gpuCount < 0 || topo.gpuCount > kMaxGpus) {
    return fieldError("n", std::to_string(topo.gpuCount) + " GPUs, want 0-16");
  }
  if (auto status = checkSizes(topo); !status.ok()) {
    return status.error();
  }
  const std::string p(prefix);
  StringMap labels;
  labels.insert_or_assign(p + "v", std::string("1"));
  labels.insert_or_assign(p + "n", std::to_string(topo.gpuCount));
  if (!topo.model.empty()) {
    labels.insert_or_assign(p + "model", topo.model);
  }
  if (!topo.fabric.empty()) {
    labels.insert_or_assign(p + "fabric", topo.fabric);
  }
  if (topo.linksKnown) {
    auto nvl = nvlString(topo);
    if (!nvl.ok()) {
      return nvl.error();
    }
    putChunked(labels, p + "nvl", *nvl);
    putChunked(labels, p + "pci", pciString(topo));
    // Only where some link is not fine: healthy nodes keep the labels they had.
    if (std::any_of(topo.linkHealth.begin(), topo.linkHealth.end(),
                    [](LinkHealth h) { return h != LinkHealth::kOk; })) {
      std::string marks;
      for (const LinkHealth h : topo.linkHealth)
        marks += linkHealthCode(h);
      putChunked(labels, p + "nvlh", marks);
    }
  }
  auto numa = numaString(topo);
  if (!numa.ok()) {
    return numa.error();
  }
  labels.insert_or_assign(p + "numa", *numa);
  std::string health, used, mig;
  for (std::size_t i = 0; i < static_cast<std::size_t>(topo.gpuCount); ++i) {
    health += healthCode(topo.health[i]);
    used += useCode(topo.used[i]);
    mig += migModeCode(topo.migMode[i]);
  }
  labels.insert_or_assign(p + "health", health);
  labels.insert_or_assign(p + "used", used);
  labels.insert_or_assign(p + "mig", mig);
  // Only where some GPU has tenants (shared GPUs): unshared nodes keep the labels they had.
  if (std::any_of(topo.tenants.begin(), topo.tenants.end(), [](std::uint8_t t) { return t > 0; })) {
    std::string tenants;
    for (int i = 0; i < topo.gpuCount; ++i)
      tenants += base36(std::min(topo.tenantsOf(i), 35));
    labels.insert_or_assign(p + "tenants", tenants);
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(topo.gpuCount); ++i) {
    if (topo.migInstances[i].empty()) {
      continue;
    }
    auto tokens = migTokens(topo, i);
    if (!tokens.ok()) {
      return tokens.error();
    }
    labels.insert_or_assign(p + "mig" + std::to_string(i), *tokens);
  }
  if (auto status = putIdentities(labels, p, topo); !status.ok()) {
    return status.error();
  }
  if (topo.generation > 0) {
    labels.insert_or_assign(p + "gen", std::to_string(topo.generation));
  }
  return labels;
}

std::string sanitiseModelName(std::string_view nvmlName) {
  std::string out;
  bool pendingSpace = false;
  for (const char c : nvmlName) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) != 0) {
      pendingSpace = !out.empty();
      continue;
    }
    if (std::isalnum(u) == 0 && c != '-' && c != '_' && c != '.') {
      continue;  // GFD drops everything outside [A-Za-z0-9-_. ]
    }
    if (pendingSpace) {
      out += '-';
      pendingSpace = false;
    }
    out += c;
  }
  if (out.size() > kMaxLabelValue) {
    out.resize(kMaxLabelValue);
  }
  // A label value must start and end alphanumeric.
  const auto edge = [](char c) { return c == '-' || c == '_' || c == '.'; };
  while (!out.empty() && edge(out.back())) {
    out.pop_back();
  }
  std::size_t begin = 0;
  while (begin < out.size() && edge(out[begin])) {
    ++begin;
  }
  return out.substr(begin);
}

}  // namespace gte
