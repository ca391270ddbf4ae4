#include "agent/discover_command.h"

#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "agent/nvml_discovery.h"
#include "agent/nvml_health.h"
#include "agent/publishable_labels.h"
#include "agent/text_discovery.h"
#include "agent/usage.h"
#include "base/yaml_quoted.h"
#include "model/gpu_request.h"
#include "policy/default_policy.h"
#include "topology/topology_labels_writer.h"

namespace gte::agent {
namespace {

Result<TextCaptures> loadCaptures(const SourceOptions& source) {
  TextCaptures captures;
  const auto load = [](const std::string& path) -> Result<CaptureFile> {
    auto text = readCaptureFile(path);
    if (!text.ok()) {
      return text.error();
    }
    return CaptureFile{path, std::move(text).value()};
  };
  auto topo = load(source.topoFile);
  if (!topo.ok()) return topo.error();
  captures.topo = std::move(topo).value();
  if (!source.topoMpFile.empty()) {
    auto mp = load(source.topoMpFile);
    if (!mp.ok()) return mp.error();
    captures.topoMp = std::move(mp).value();
  }
  if (!source.migFile.empty()) {
    auto mig = load(source.migFile);
    if (!mig.ok()) return mig.error();
    captures.mig = std::move(mig).value();
  }
  return captures;
}

// What the NVIDIA device plugin advertises for the discovered GPUs: whole GPUs not in MIG mode as
// nvidia.com/gpu, MIG instances as nvidia.com/mig-<profile> (the mixed strategy).
std::map<std::string, std::int64_t> allocatable(const GpuTopology& topology, const Policy& policy) {
  std::map<std::string, std::int64_t> out;
  std::int64_t whole = 0;
  const MigProduct* product = findMigProduct(policy.migProducts, topology.model);
  for (int gpu = 0; gpu < topology.gpuCount; ++gpu) {
    const auto at = static_cast<std::size_t>(gpu);
    const bool mig = at < topology.migMode.size() && topology.migMode[at] == MigMode::kEnabled;
    if (!mig) {
      ++whole;
      continue;
    }
    if (product == nullptr || at >= topology.migInstances.size()) continue;
    for (const MigInstance& instance : topology.migInstances[at]) {
      if (const MigProfile* profile = product->findByCode(instance.profileCode)) {
        ++out[std::string(kMigResourcePrefix) + migResourceSuffix(profile->name)];
      }
    }
  }
  out["nvidia.com/gpu"] = whole;
  return out;
}

void writeNodeYaml(const std::string& name, const StringMap& labels, const Discovery& discovery,
                   const Policy& policy, std::ostream& out) {
  out << "apiVersion: v1\nkind: Node\nmetadata:\n  name: " << yamlQuoted(name) << "\n  labels:\n";
  out << "    kubernetes.io/hostname: " << yamlQuoted(name) << '\n';
  for (const auto& [key, value] : labels)
    out << "    " << key << ": " << yamlQuoted(value) << '\n';
  out << "status:\n  allocatable:\n";
  for (const auto& [resource, count] : allocatable(discovery.topology, policy))
    out << "    " << resource << ": " << yamlQuoted(std::to_string(count)) << '\n';
}

std::int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// discover --health: per GPU its health and reasons, per NVLink its state and counters.
void writeHealthReport(const Discovery& discovery, const HealthVerdict& verdict, bool xids,
                       std::ostream& out) {
  const auto value = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  out << "# health: one pass; rates need two passes (run), XIDs are those since this pass began"
      << (xids ? "" : " (driver has no XID events)") << '\n';
  for (std::size_t i = 0; i < verdict.gpus.size(); ++i) {
    const GpuVerdict& gpu = verdict.gpus[i];
    out << "# gpu " << i << ": " << healthCode(gpu.health);
    for (std::size_t k = 0; k < gpu.reasons.size(); ++k) {
      out << (k == 0 ? " (" : "; ") << gpu.reasons[k];
    }
    out << (gpu.reasons.empty() ? "" : ")") << '\n';
    if (i >= discovery.health.gpus.size()) {
      continue;
    }
    const GpuSample& sample = discovery.health.gpus[i];
    out << "#   pcie width " << value(sample.pcieWidth) << '/' << value(sample.pcieMaxWidth)
        << " gen " << value(sample.pcieGen) << '/' << value(sample.pcieMaxGen)
        << " clock-event-reasons " << value(sample.clockEventReasons)
        << " ecc-uncorrected-volatile " << value(sample.eccUncorrectedVolatile) << '\n';
    // Quiet links (active, every counter 0) in one line; the others one line each.
    int quiet = 0;
    bool listed = false;
    for (std::size_t l = 0; l < sample.links.size(); ++l) {
      const LinkSample& link = sample.links[l];
      const auto zero = [](const std::optional<std::uint64_t>& v) { return !v || *v == 0; };
      if (link.active && zero(link.replay) && zero(link.recovery) && zero(link.crcFlit) &&
          zero(link.crcData)) {
        ++quiet;
        continue;
      }
      listed = true;
      out << "#   nvlink " << l << ' ' << (link.active ? "active" : "inactive");
      if (link.active) {
        out << " to "
            << (link.peerGpu >= 0 ? "gpu " + std::to_string(link.peerGpu)
                : link.toSwitch   ? std::string("nvswitch")
                                  : std::string("-"))
            << " replay " << value(link.replay) << " recovery " << value(link.recovery)
            << " crc-flit " << value(link.crcFlit) << " crc-data " << value(link.crcData);
      }
      out << '\n';
    }
    if (!sample.links.empty()) {
      out << "#   nvlinks: " << quiet << (listed ? " more" : "")
          << " active with every error counter at 0\n";
    }
  }
}

}  // namespace

Result<Discovery> discoverNode(const SourceOptions& source, const Policy& policy,
                               int& exitCodeOnError) {
  exitCodeOnError = kExitFailed;
  Result<Discovery> discovery = invalidArgument("no discovery source");
  if (source.nvml) {
    discovery = discoverWithNvml(source.nvmlLib);
  } else {
    auto captures = loadCaptures(source);
    if (!captures.ok()) {
      exitCodeOnError = kExitBadCapture;
      return captures.error();
    }
    discovery = discoverFromText(*captures, sanitiseModelName(source.model), policy.migProducts);
    if (!discovery.ok()) {
      exitCodeOnError = kExitBadCapture;
      return discovery.error();
    }
  }
  if (!discovery.ok()) {
    return discovery.error();
  }
  if (source.used) {
    if (auto status = applyUsedBits(*discovery, *source.used); !status.ok()) {
      exitCodeOnError = kExitUsage;
      return status.error();
    }
  }
  return discovery;
}

int runDiscover(const AgentInvocation& invocation, std::ostream& out, std::ostream& err) {
  Policy policy = defaultPolicy();
  policy.labelPrefix = invocation.source.labelPrefix;
  int exitCode = kExitFailed;
  std::unique_ptr<NvmlHealthSource> health;
  Result<Discovery> discovery = invalidArgument("no discovery");
  if (invocation.source.healthReport) {
    health =
        std::make_unique<NvmlHealthSource>(invocation.source.nvmlLib, invocation.source.health);
    discovery = health->discover();
    if (discovery.ok() && invocation.source.used) {
      if (auto status = applyUsedBits(*discovery, *invocation.source.used); !status.ok()) {
        exitCode = kExitUsage;
        discovery = status.error();
      }
    }
  } else {
    discovery = discoverNode(invocation.source, policy, exitCode);
  }
  if (!discovery.ok()) {
    err << discovery.error().message << '\n';
    return exitCode;
  }
  // The extender plans MIG with its own product table; say so when the driver disagrees.
  for (const std::string& mismatch : placementMismatches(*discovery, policy.migProducts)) {
    err << "warning: " << mismatch << '\n';
  }
  auto labels = publishableLabels(*discovery, invocation.generation.value_or(unixNow()), policy);
  if (!labels.ok()) {
    err << labels.error().message << '\n';
    return kExitFailed;
  }
  if (invocation.output == "node") {
    writeNodeYaml(invocation.nodeName, *labels, *discovery, policy, out);
    return kExitOk;
  }
  for (const auto& [key, value] : *labels) {  // StringMap is sorted by key
    out << key << '=' << value << '\n';
  }
  if (health) {
    writeHealthReport(*discovery, health->lastVerdict(), health->watchingXids(), out);
  }
  return kExitOk;
}

}  // namespace gte::agent
