#include "topology/topology_labels.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "model/gpu_request.h"

namespace gte {
namespace {

constexpr std::size_t kChunkLength = 60;
constexpr std::size_t kMaxMigTokens = 8;

std::optional<int> base36Digit(char c) noexcept {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 10;
  }
  return std::nullopt;
}

template <typename Int>
std::optional<Int> parseDecimal(std::string_view text) noexcept {
  Int value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) {
    return std::nullopt;
  }
  return value;
}

// Reads the labels-v1 keys of one node; every error names the node and the full label key.
class LabelsV1Reader {
 public:
  LabelsV1Reader(const NodeInfo& node, const Policy& policy)
      : node_(node), policy_(policy), prefix_(policy.labelPrefix) {}

  Result<GpuTopology> read() {
    GpuTopology topo;
    topo.source = TopologySource::kLabelsV1;
    const std::string* version = label("v");
    if (version == nullptr) {
      return fail("v", "missing");
    }
    if (*version != "1") {
      return fail("v", "unsupported schema version '" + *version + "'");
    }
    const std::string* count = label("n");
    if (count == nullptr) {
      return fail("n", "missing");
    }
    const auto n = parseDecimal<int>(*count);
    if (!n) {
      return fail("n", "not a decimal GPU count: '" + *count + "'");
    }
    if (*n > kMaxGpus) {
      return fail("n",
                  std::to_string(*n) + " GPUs exceed the supported " + std::to_string(kMaxGpus));
    }
    topo.gpuCount = *n;
    if (const std::string* model = label("model")) {
      topo.model = *model;
    }
    if (auto status = readFabric(topo); !status.ok()) {
      return status.error();
    }
    if (auto status = readLinks(topo); !status.ok()) {
      return status.error();
    }
    if (auto status = readPerGpu(topo); !status.ok()) {
      return status.error();
    }
    if (auto status = readLinkHealth(topo); !status.ok()) {
      return status.error();
    }
    if (auto status = readMigInstances(topo); !status.ok()) {
      return status.error();
    }
    if (auto status = readIdentities(topo); !status.ok()) {
      return status.error();
    }
    if (const std::string* gen = label("gen")) {
      const auto value = parseDecimal<std::int64_t>(*gen);
      if (!value) {
        return fail("gen", "not a decimal unix time: '" + *gen + "'");
      }
      topo.generation = *value;
    }
    return topo;
  }

 private:
  const std::string* label(std::string_view key) const {
    const auto it = node_.labels.find(prefix_ + std::string(key));
    return it == node_.labels.end() ? nullptr : &it->second;
  }

  Error fail(std::string_view key, const std::string& what) const {
    return invalidArgument("node " + node_.name + ": " + prefix_ + std::string(key) + ": " + what);
  }

  Status readFabric(GpuTopology& topo) const {
    const std::string* fabric = label("fabric");
    if (fabric == nullptr) {
      return Ok{};
    }
    const std::string_view value = *fabric;
    bool ok = value == "none" || value == "mesh" || value == "nvsw";
    if (!ok && value.rfind("nvsw", 0) == 0) {
      ok = parseDecimal<int>(value.substr(4)).has_value();
    }
    if (!ok) {
      return fail("fabric", "want none, mesh, nvsw or nvsw<N>, got '" + *fabric + "'");
    }
    topo.fabric = *fabric;
    return Ok{};
  }

  // A long string is either one key or chunks `<key>0`, `<key>1`, ... of 60 characters (the last
  // may be shorter), joined to exactly `length` characters (`what` says what that length counts,
  // for the error). nullopt when absent.
  Result<std::optional<std::string>> chunkedString(std::string_view key, std::size_t length,
                                                   const std::string& what) const {
    const std::string* whole = label(key);
    const std::string* first = label(std::string(key) + "0");
    if (whole != nullptr && first != nullptr) {
      return fail(key, "both the plain key and chunk " + std::string(key) + "0 are present");
    }
    if (first == nullptr && hasStrayChunk(key)) {
      return fail(std::string(key) + "1", "chunk present without " + std::string(key) + "0");
    }
    std::string value;
    if (whole != nullptr) {
      value = *whole;
    } else if (first != nullptr) {
      for (int chunk = 0;; ++chunk) {
        const std::string chunkKey = std::string(key) + std::to_string(chunk);
        const std::string* part = label(chunkKey);
        if (part == nullptr) {
          break;
        }
        if (!value.empty() && value.size() % kChunkLength != 0) {
          return fail(chunkKey, "follows a chunk shorter than 60 characters");
        }
        value += *part;
      }
    } else {
      return std::optional<std::string>();
    }
    if (value.size() != length) {
      return fail(key, "length " + std::to_string(value.size()) + ", want " +
                           std::to_string(length) + " " + what);
    }
    return std::optional<std::string>(std::move(value));
  }

  Result<std::optional<std::string>> pairString(std::string_view key, int n) const {
    return chunkedString(key, static_cast<std::size_t>(pairCount(n)),
                         "pairs for n=" + std::to_string(n));
  }

  // One fixed-width token per GPU, chunked like a pair string.
  Result<std::optional<std::string>> tokenString(std::string_view key, int n,
                                                 std::size_t tokenLength) const {
    std::string what = std::to_string(tokenLength);
    what += " characters per GPU for n=";
    what += std::to_string(n);
    return chunkedString(key, tokenLength * static_cast<std::size_t>(n), what);
  }

  // One identity per GPU from a token string: each token must parse, none may repeat.
  template <typename Id, typename Parse>
  Status readTokens(std::string_view key, int n, std::size_t width, Parse parse,
                    std::string_view noun, std::string_view form, std::vector<Id>& out) const {
    auto text = tokenString(key, n, width);
    if (!text.ok()) {
      return text.error();
    }
    if (!text->has_value()) {
      return Ok{};
    }
    for (int gpu = 0; gpu < n; ++gpu) {
      const std::string_view token =
          std::string_view(**text).substr(static_cast<std::size_t>(gpu) * width, width);
      const std::optional<Id> id = parse(token);
      std::string what = "GPU " + std::to_string(gpu);
      if (!id) {
        return fail(
            key, "token '" + std::string(token) + "' for " + what + " is not " + std::string(form));
      }
      if (std::find(out.begin(), out.end(), *id) != out.end()) {
        return fail(key, what + " repeats " + std::string(noun) + " " + std::string(token));
      }
      out.push_back(*id);
    }
    return Ok{};
  }

  // `bus` and `uuid`: optional, all GPUs or none, no two GPUs alike.
  Status readIdentities(GpuTopology& topo) const {
    if (auto status = readTokens("bus", topo.gpuCount, kPciAddressTokenLength, parsePciAddressToken,
                                 "PCI address", "a PCI address (dddd bb dd f, lowercase hex)",
                                 topo.pciAddresses);
        !status.ok()) {
      return status;
    }
    return readTokens("uuid", topo.gpuCount, kGpuUuidTokenLength, parseGpuUuidToken, "UUID",
                      "32 lowercase hex digits", topo.uuids);
  }

  bool hasStrayChunk(std::string_view key) const {
    return label(std::string(key) + "1") != nullptr;
  }

  Status readLinks(GpuTopology& topo) const {
    const int pairs = pairCount(topo.gpuCount);
    auto nvl = pairString("nvl", topo.gpuCount);
    if (!nvl.ok()) {
      return nvl.error();
    }
    auto pci = pairString("pci", topo.gpuCount);
    if (!pci.ok()) {
      return pci.error();
    }
    topo.nvlinks.assign(static_cast<std::size_t>(pairs), 0);
    topo.pcie.assign(static_cast<std::size_t>(pairs), PcieLevel::kUnknown);
    if (nvl->has_value()) {
      const std::string& text = **nvl;
      for (std::size_t k = 0; k < text.size(); ++k) {
        const auto links = base36Digit(text[k]);
        if (!links) {
          return fail("nvl", "character '" + std::string(1, text[k]) + "' at pair " +
                                 std::to_string(k) + " is not base-36");
        }
        topo.nvlinks[k] = static_cast<std::uint8_t>(*links);
      }
    }
    if (pci->has_value()) {
      const std::string& text = **pci;
      for (std::size_t k = 0; k < text.size(); ++k) {
        const auto level = pcieLevelFromCode(text[k]);
        if (!level) {
          return fail("pci", "character '" + std::string(1, text[k]) + "' at pair " +
                                 std::to_string(k) + " is not one of OPQHNSU");
        }
        topo.pcie[k] = *level;
      }
    }
    // Half a graph is not a graph: without both strings a pair's class cannot be told.
    topo.linksKnown = nvl->has_value() && pci->has_value();
    return Ok{};
  }

  // `nvlh`: per pair `1` fine, `d` degraded, `0` down, `c` cordoned. Absent: every link fine. Only
  // read where the links are known: a mark on a pair nobody can place is noise, not an error.
  Status readLinkHealth(GpuTopology& topo) const {
    auto text = pairString("nvlh", topo.gpuCount);
    if (!text.ok()) {
      return text.error();
    }
    if (!text->has_value() || !topo.linksKnown) {
      return Ok{};
    }
    topo.linkHealth.reserve((*text)->size());
    for (std::size_t k = 0; k < (*text)->size(); ++k) {
      const char c = (**text)[k];
      if (c != '1' && c != 'd' && c != '0' && c != 'c') {
        return fail("nvlh", "character '" + std::string(1, c) + "' at pair " + std::to_string(k) +
                                " is not one of 1d0c");
      }
      topo.linkHealth.push_back(c == '1'   ? LinkHealth::kOk
                                : c == 'd' ? LinkHealth::kDegraded
                                : c == '0' ? LinkHealth::kDown
                                           : LinkHealth::kCordoned);
    }
    return Ok{};
  }

  // One character per GPU from `allowed`; absent keys give `fallback` for every GPU.
  Result<std::string> perGpu(std::string_view key, int n, std::string_view allowed,
                             char fallback) const {
    const std::string* value = label(key);
    if (value == nullptr) {
      return std::string(static_cast<std::size_t>(n), fallback);
    }
    if (value->size() != static_cast<std::size_t>(n)) {
      return fail(key, "length " + std::to_string(value->size()) + ", want n=" + std::to_string(n));
    }
    for (std::size_t i = 0; i < value->size(); ++i) {
      if (allowed.find((*value)[i]) == std::string_view::npos) {
        return fail(key, "character '" + std::string(1, (*value)[i]) + "' for GPU " +
                             std::to_string(i) + " is not one of " + std::string(allowed));
      }
    }
    return *value;
  }

  Status readPerGpu(GpuTopology& topo) const {
    const int n = topo.gpuCount;
    const auto numa = perGpu("numa", n, "0123456789abcdefghijklmnopqrstuvwxyzZ", 'Z');
    if (!numa.ok()) {
      return numa.error();
    }
    const auto health = perGpu("health", n, "10cd", '1');
    if (!health.ok()) {
      return health.error();
    }
    const auto used = perGpu("used", n, "01m", '0');
    if (!used.ok()) {
      return used.error();
    }
    const auto mig = perGpu("mig", n, "n01p", '0');
    if (!mig.ok()) {
      return mig.error();
    }
    if (label("tenants") != nullptr) {
      const auto tenants = perGpu("tenants", n, "0123456789abcdefghijklmnopqrstuvwxyz", '0');
      if (!tenants.ok()) {
        return tenants.error();
      }
      for (const char c : *tenants)
        topo.tenants.push_back(static_cast<std::uint8_t>(*base36Digit(c)));
    }
    for (int i = 0; i < n; ++i) {
      const auto at = static_cast<std::size_t>(i);
      const char numaChar = (*numa)[at];
      topo.numa.push_back(numaChar == 'Z' ? -1 : *base36Digit(numaChar));
      const char h = (*health)[at];
      topo.health.push_back(h == '1'   ? GpuHealth::kHealthy
                            : h == '0' ? GpuHealth::kUnhealthy
                            : h == 'd' ? GpuHealth::kDegraded
                                       : GpuHealth::kCordoned);
      const char u = (*used)[at];
      topo.used.push_back(u == '0'   ? GpuUse::kFree
                          : u == '1' ? GpuUse::kAllocated
                                     : GpuUse::kMigMode);
      const char m = (*mig)[at];
      topo.migMode.push_back(m == 'n'   ? MigMode::kNotCapable
                             : m == '0' ? MigMode::kDisabled
                             : m == '1' ? MigMode::kEnabled
                                        : MigMode::kPending);
      // `used=m` and `mig=1` describe the same fact twice; disagreeing copies mean a broken agent.
      if (m == '1' && u != 'm') {
        return fail("used", "GPU " + std::to_string(i) + " has MIG enabled but is not marked m");
      }
      if (u == 'm' && m != '1' && m != 'p') {
        return fail("used", "GPU " + std::to_string(i) + " is marked m but MIG is not enabled");
      }
    }
    return Ok{};
  }

  Status readMigInstances(GpuTopology& topo) const {
    topo.migInstances.assign(static_cast<std::size_t>(topo.gpuCount), {});
    for (int gpu = 0; gpu < topo.gpuCount; ++gpu) {
      const std::string key = "mig" + std::to_string(gpu);
      const std::string* tokens = label(key);
      if (tokens == nullptr) {
        continue;
      }
      if (topo.migMode[static_cast<std::size_t>(gpu)] != MigMode::kEnabled) {
        return fail(key, "GPU " + std::to_string(gpu) + " does not have MIG enabled");
      }
      auto instances = readMigTokens(key, *tokens, topo.model);
      if (!instances.ok()) {
        return instances.error();
      }
      topo.migInstances[static_cast<std::size_t>(gpu)] = std::move(instances).value();
    }
    // A key past n (e.g. mig8 on an 8-GPU node) disagrees with n.
    const std::string beyond = "mig" + std::to_string(topo.gpuCount);
    if (label(beyond) != nullptr) {
      return fail(beyond, "names a GPU beyond n=" + std::to_string(topo.gpuCount));
    }
    return Ok{};
  }

  Result<std::vector<MigInstance>> readMigTokens(const std::string& key, const std::string& text,
                                                 const std::string& model) const {
    if (text.size() % 3 != 0 || text.size() / 3 > kMaxMigTokens) {
      return fail(key, "want up to 8 tokens of 3 characters, got " + std::to_string(text.size()) +
                           " characters");
    }
    const MigProduct* product = findMigProduct(policy_.migProducts, model);
    if (product == nullptr && !text.empty()) {
      // Slice sizes differ per product; without the table overlaps cannot be checked.
      return fail(key, "model '" + model + "' has no MIG product table entry");
    }
    std::vector<MigInstance> instances;
    std::uint8_t occupied = 0;
    for (std::size_t t = 0; t < text.size(); t += 3) {
      const std::string token = text.substr(t, 3);
      const std::string where = "token " + std::to_string(t / 3) + " '" + token + "'";
      const MigProfile* profile = product->findByCode(token[0]);
      if (profile == nullptr) {
        return fail(key, where + ": profile code not in the " + product->name + " table");
      }
      const char startChar = token[1];
      if (startChar < '0' || startChar > '7') {
        return fail(key, where + ": start slice must be 0-7");
      }
      const int start = startChar - '0';
      if (std::find(profile->starts.begin(), profile->starts.end(), start) ==
          profile->starts.end()) {
        return fail(
            key, where + ": " + profile->name + " cannot start at slice " + std::to_string(start));
      }
      const char stateChar = token[2];
      const bool held = stateChar >= '1' && stateChar <= '0' + kMaxWrittenHeldReplicas;
      if (stateChar != 'f' && stateChar != 'u' && stateChar != 'r' && !held) {
        return fail(key, where + ": state must be f, u, r or 1-9 (replicas held)");
      }
      const auto slices =
          static_cast<std::uint8_t>(((1u << profile->slices) - 1u) << static_cast<unsigned>(start));
      if ((occupied & slices) != 0) {
        return fail(key, where + ": overlaps another instance");
      }
      occupied = static_cast<std::uint8_t>(occupied | slices);
      instances.push_back({token[0], start,
                           stateChar == 'f' || held ? MigInstanceState::kFree
                           : stateChar == 'u'       ? MigInstanceState::kUsed
                                                    : MigInstanceState::kReserved,
                           static_cast<std::uint8_t>(held ? stateChar - '0' : 0)});
    }
    std::sort(instances.begin(), instances.end(),
              [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
    return instances;
  }

  const NodeInfo& node_;
  const Policy& policy_;
  const std::string prefix_;
};

constexpr std::string_view kGfdCount = "nvidia.com/gpu.count";
constexpr std::string_view kGfdProduct = "nvidia.com/gpu.product";
constexpr std::string_view kCountSuffix = ".count";

// Whole-GPU and MIG-device counts from the fallback sources.
std::vector<MigDeviceCount> migCountsFromAllocatable(const NodeInfo& node) {
  std::vector<MigDeviceCount> counts;
  for (const auto& [name, quantity] : node.allocatable.entries()) {
    if (name.rfind(kMigResourcePrefix, 0) != 0) {
      continue;
    }
    const auto whole = quantity.wholeUnits();
    if (whole && *whole > 0) {
      counts.push_back({name.substr(kMigResourcePrefix.size()), *whole});
    }
  }
  return counts;
}

std::vector<MigDeviceCount> migCountsFromGfd(const NodeInfo& node) {
  std::vector<MigDeviceCount> counts;
  for (const auto& [key, value] : node.labels) {
    if (key.rfind(kMigResourcePrefix, 0) != 0 || key.size() <= kCountSuffix.size() ||
        key.compare(key.size() - kCountSuffix.size(), kCountSuffix.size(), kCountSuffix) != 0) {
      continue;
    }
    const auto count = parseDecimal<std::int64_t>(value);
    if (count && *count > 0) {
      const std::size_t begin = kMigResourcePrefix.size();
      const std::size_t length = key.size() - kCountSuffix.size() - begin;
      counts.push_back({key.substr(begin, length), *count});
    }
  }
  return counts;
}

}  // namespace

Result<GpuTopology> readLabelsV1(const NodeInfo& node, const Policy& policy) {
  return LabelsV1Reader(node, policy).read();
}

Result<GpuTopology> readFallbackTopology(const NodeInfo& node) {
  TopologySource source = TopologySource::kNone;
  std::optional<std::int64_t> count;
  const auto gfdCount = node.labels.find(kGfdCount);
  const auto gfdProduct = node.labels.find(kGfdProduct);
  const bool migSingle =
      gfdProduct != node.labels.end() && gfdProduct->second.find("-MIG-") != std::string::npos;
  if (gfdCount != node.labels.end() && !migSingle) {
    count = parseDecimal<std::int64_t>(gfdCount->second);
    if (!count) {
      return invalidArgument("node " + node.name + ": " + std::string(kGfdCount) +
                             ": not a decimal count: '" + gfdCount->second + "'");
    }
    source = TopologySource::kFeatureDiscovery;
  } else if (const Quantity* allocatable = node.allocatable.find(kGpuResource)) {
    count = allocatable->wholeUnits().value_or(0);
    source = TopologySource::kAllocatable;
  }
  std::vector<MigDeviceCount> migCounts = migCountsFromAllocatable(node);
  if (migCounts.empty()) {
    migCounts = migCountsFromGfd(node);
  }
  const std::int64_t gpus = count.value_or(0);
  if (count || !migCounts.empty()) {
    if (gpus < 0) {  // a Node object is outside input: allocatable may say anything
      return invalidArgument("node " + node.name + ": a negative GPU count (" +
                             std::to_string(gpus) + ")");
    }
    if (gpus > kMaxGpus) {
      return invalidArgument("node " + node.name + ": " + std::to_string(gpus) +
                             " GPUs exceed the supported " + std::to_string(kMaxGpus));
    }
    if (source == TopologySource::kNone) {
      source = TopologySource::kFeatureDiscovery;  // MIG device counts alone
    }
  }
  // The fallbacks cannot tell whether a GPU is in MIG mode: its counts are taken as they come.
  GpuTopology topo = blankTopology(source, static_cast<int>(gpus), MigMode::kDisabled);
  if (gfdProduct != node.labels.end()) {
    topo.model = gfdProduct->second;
  }
  topo.migDeviceCounts = std::move(migCounts);
  return topo;
}

bool hasLabelsV1(const NodeInfo& node, const Policy& policy) {
  return node.labels.find(policy.labelPrefix + "v") != node.labels.end();
}

Result<GpuTopology> readTopology(const NodeInfo& node, const Policy& policy) {
  if (hasLabelsV1(node, policy)) {
    return readLabelsV1(node, policy);
  }
  return readFallbackTopology(node);
}

}  // namespace gte
