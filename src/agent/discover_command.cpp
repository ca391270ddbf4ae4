#include "agent/discover_command.h"

#include <chrono>
#include <ostream>

#include "agent/nvml_discovery.h"
#include "agent/publishable_labels.h"
#include "agent/text_discovery.h"
#include "agent/usage.h"
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

std::int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
  auto discovery = discoverNode(invocation.source, policy, exitCode);
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
  for (const auto& [key, value] : *labels) {  // StringMap is sorted by key
    out << key << '=' << value << '\n';
  }
  return kExitOk;
}

}  // namespace gte::agent
