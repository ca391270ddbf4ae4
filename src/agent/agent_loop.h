#pragma once
// One publishing pass of the daemon, clock injected: discover, read usage, build the labels, and
// merge-patch the Node when a fact changed, at most once per min-interval. A failed discovery or
// usage read writes nothing (the labels already on the Node stay, and their `gen` says how old
// they are); every failure is counted and kept as the last error for /healthz. With a publisher
// the Node is read once per pass, before the labels are built: its cordon annotations
// (cordon_annotations.h) are merged into the published health.
#include <chrono>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_metrics.h"
#include "agent/companion_publisher.h"
#include "agent/device_plugin_config_source.h"
#include "agent/discovery.h"
#include "agent/node_publisher.h"
#include "base/result.h"
#include "model/string_map.h"
#include "policy/policy.h"

namespace gte::agent {

using Clock = std::chrono::system_clock;

struct PassOutcome {
  bool ok = false;     // discovered and published (or nothing to change)
  bool wrote = false;  // a patch was accepted
  // A change waits for the rate limit: run the next pass no later than this.
  std::optional<Clock::time_point> retryAt;
};

class AgentLoop {
 public:
  using DiscoverFn = std::function<Result<Discovery>()>;
  // Device ids allocated to pods; an empty function means usage comes with the discovery.
  using UsageFn = std::function<Result<std::vector<std::string>>()>;

  struct Settings {
    std::chrono::milliseconds minInterval{10'000};
    bool nvml = true;  // discovery failures count as NVML errors too
  };

  // `publisher` null: dry run, the labels are printed to `dryRunOut` when they change.
  AgentLoop(DiscoverFn discover, UsageFn usage, NodePublisher* publisher, Policy policy,
            Settings settings, AgentMetrics& metrics, std::ostream& dryRunOut);

  PassOutcome pass(Clock::time_point now);

  // --companion-slice: after each discovery (whatever the labels' rate limit) the companion slice
  // is brought in step; its failures are counted as API errors and do not fail the pass.
  void setCompanionPublisher(CompanionPublisher* companion) { companion_ = companion; }
  // --device-plugin-config: each pass reads the device plugin's configuration for this node and
  // publishes labels-v1 `sharing` (docs/sharing.md). An API failure keeps the last reading; a
  // configuration that does not read drops the label (the extender then reads GFD's labels or the
  // allocatable), logged once per distinct error and counted.
  void setSharingSource(DevicePluginConfigSource* source) { sharingSource_ = source; }

 private:
  Result<StringMap> desiredLabels(Discovery& discovery, Clock::time_point now,
                                  const StringMap* nodeLabels);
  PassOutcome publish(const StringMap& desired, Clock::time_point now,
                      const StringMap* currentLabels);
  void applyOperatorCordons(Discovery& discovery, const StringMap& annotations);
  void publishCompanion(const Discovery& discovery);
  void readSharing(const StringMap& nodeLabels);

  DiscoverFn discover_;
  UsageFn usage_;
  NodePublisher* publisher_;
  CompanionPublisher* companion_ = nullptr;
  DevicePluginConfigSource* sharingSource_ = nullptr;
  std::optional<GpuSharing> sharing_;  // the last reading that read
  std::string lastSharingError_;
  Policy policy_;
  Settings settings_;
  AgentMetrics& metrics_;
  std::ostream& dryRunOut_;
  std::optional<Clock::time_point> lastWrite_;
  std::optional<StringMap> lastPublished_;
  std::vector<std::string> lastCordonErrors_;
};

}  // namespace gte::agent
