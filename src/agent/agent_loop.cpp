#include "agent/agent_loop.h"

#include <ostream>

#include "agent/cordon_annotations.h"
#include "agent/publishable_labels.h"
#include "agent/usage.h"
#include "log/logger.h"

namespace gte::agent {
namespace {

std::int64_t unixSeconds(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// Equal facts: every label but `gen`.
bool sameFacts(const StringMap& a, const StringMap& b, const std::string& prefix) {
  const std::string gen = prefix + "gen";
  StringMap x = a, y = b;
  x.erase(gen);
  y.erase(gen);
  return x == y;
}

}  // namespace

AgentLoop::AgentLoop(DiscoverFn discover, UsageFn usage, NodePublisher* publisher, Policy policy,
                     Settings settings, AgentMetrics& metrics, std::ostream& dryRunOut)
    : discover_(std::move(discover)),
      usage_(std::move(usage)),
      publisher_(publisher),
      policy_(std::move(policy)),
      settings_(settings),
      metrics_(metrics),
      dryRunOut_(dryRunOut) {}

Result<StringMap> AgentLoop::desiredLabels(Discovery& discovery, Clock::time_point now,
                                           const StringMap* nodeLabels) {
  if (usage_) {
    auto ids = usage_();
    if (!ids.ok()) {
      metrics_.usageFailed(ids.error().message);
      log::error("usage read failed; writing nothing", {{"error", ids.error().message}});
      return ids.error();
    }
    // Shared MIG devices (GFD's replicas labels on the Node): free while a replica is left.
    const MigReplicas migReplicas =
        nodeLabels != nullptr
            ? sharedMigReplicas(*nodeLabels, policy_.migProducts, discovery.topology.model)
            : MigReplicas{};
    for (const std::string& id : applyDeviceIds(discovery, *ids, migReplicas)) {
      log::debug("allocated device not on this node's GPUs", {{"device", id}});
    }
  }
  for (const std::string& mismatch : placementMismatches(discovery, policy_.migProducts)) {
    log::warn("MIG placements differ from the extender's table", {{"detail", mismatch}});
  }
  auto labels = publishableLabels(discovery, unixSeconds(now), policy_);
  if (!labels.ok()) {
    metrics_.discoveryFailed(labels.error().message, false);
    log::error("discovered labels rejected; writing nothing", {{"error", labels.error().message}});
    return labels;
  }
  if (sharing_) {
    labels->insert_or_assign(policy_.labelPrefix + std::string(kAgentSharingKey),
                             formatAgentSharing(*sharing_));
  }
  return labels;
}

PassOutcome AgentLoop::pass(Clock::time_point now) {
  auto discovery = discover_();
  if (!discovery.ok()) {
    metrics_.discoveryFailed(discovery.error().message, settings_.nvml);
    log::error("discovery failed; writing nothing", {{"error", discovery.error().message}});
    return PassOutcome{};
  }
  std::optional<NodeView> node;
  if (publisher_ != nullptr) {
    auto read = publisher_->read();
    if (!read.ok()) {
      metrics_.apiFailed(read.error().message);
      log::error("reading the Node failed; will retry", {{"error", read.error().message}});
      return PassOutcome{};
    }
    node = std::move(read).value();
    applyOperatorCordons(*discovery, node->annotations);
    readSharing(node->labels);
  }
  auto desired = desiredLabels(*discovery, now, node ? &node->labels : nullptr);
  if (!desired.ok()) {
    return PassOutcome{};
  }
  PassOutcome outcome = publish(*desired, now, node ? &node->labels : nullptr);
  publishCompanion(*discovery);
  return outcome;
}

void AgentLoop::readSharing(const StringMap& nodeLabels) {
  if (sharingSource_ == nullptr) return;
  SharingReading reading = sharingSource_->read(nodeLabels);
  if (reading.apiError) {
    // The plugin keeps running with what it loaded: the last reading stands.
    metrics_.apiFailed(reading.apiError->message);
    log::error("reading the device plugin's configuration failed; keeping the last reading",
               {{"configmap", sharingSource_->ref()}, {"error", reading.apiError->message}});
    return;
  }
  if (reading.configError) {
    sharing_.reset();
    metrics_.devicePluginConfigFailed();
    if (reading.configError->message != lastSharingError_) {
      log::warn("device plugin configuration not read; labels-v1 sharing not published",
                {{"configmap", sharingSource_->ref()}, {"error", reading.configError->message}});
      lastSharingError_ = reading.configError->message;
    }
    return;
  }
  lastSharingError_.clear();
  if (reading.sharing != sharing_) {
    log::info("device plugin sharing read", {{"configmap", sharingSource_->ref()},
                                             {"sharing", formatAgentSharing(*reading.sharing)}});
  }
  sharing_ = reading.sharing;
}

void AgentLoop::applyOperatorCordons(Discovery& discovery, const StringMap& annotations) {
  const Cordons cordons =
      parseCordons(annotations, policy_.labelPrefix, discovery.topology.gpuCount);
  if (cordons.errors != lastCordonErrors_) {  // logged and counted once per change
    for (const std::string& error : cordons.errors) {
      log::warn("malformed cordon annotation entry skipped", {{"error", error}});
    }
    metrics_.cordonAnnotationErrors(cordons.errors.size());
    lastCordonErrors_ = cordons.errors;
  }
  applyCordons(cordons, discovery.topology);
}

void AgentLoop::publishCompanion(const Discovery& discovery) {
  if (companion_ == nullptr) {
    return;
  }
  auto devices = companionDevices(discovery);
  if (!devices.ok()) {
    metrics_.discoveryFailed(devices.error().message, false);
    log::error("companion devices not built; the slice is left as it is",
               {{"error", devices.error().message}});
    return;
  }
  auto outcome = companion_->publish(*devices);
  if (!outcome.ok()) {
    metrics_.apiFailed(outcome.error().message);
    log::error("publishing the companion slice failed; will retry",
               {{"error", outcome.error().message}});
    return;
  }
  switch (*outcome) {
    case CompanionOutcome::kWritten:
      metrics_.companionWritten();
      break;
    case CompanionOutcome::kRefused:
      metrics_.companionRefused(CompanionRefusal::kApiServer);
      break;
    case CompanionOutcome::kNodeLacksFeature:
      metrics_.companionRefused(CompanionRefusal::kKubelet);
      break;
    case CompanionOutcome::kUnchanged:
      metrics_.companionPublished(true);
      break;
    case CompanionOutcome::kDeleted:
      metrics_.companionPublished(false);
      break;
  }
}

PassOutcome AgentLoop::publish(const StringMap& desired, Clock::time_point now,
                               const StringMap* currentLabels) {
  PassOutcome outcome;
  const bool changed = !lastPublished_ || !sameFacts(*lastPublished_, desired, policy_.labelPrefix);
  if (lastWrite_ && now - *lastWrite_ < settings_.minInterval) {
    if (changed) {
      outcome.retryAt = *lastWrite_ + settings_.minInterval;  // rate limit: one write per interval
    }
    outcome.ok = true;
    metrics_.passSucceeded(unixSeconds(now));
    return outcome;
  }
  if (publisher_ == nullptr) {
    if (changed) {
      for (const auto& [key, value] : desired) {
        dryRunOut_ << key << '=' << value << '\n';
      }
      dryRunOut_ << std::flush;
      lastWrite_ = now;
      lastPublished_ = desired;
      outcome.wrote = true;
    }
    outcome.ok = true;
    metrics_.passSucceeded(unixSeconds(now));
    return outcome;
  }
  // The Node is read every pass: another writer (a person, a reinstall) may have changed it.
  auto wrote = currentLabels != nullptr ? publisher_->publish(desired, *currentLabels)
                                        : publisher_->publish(desired);
  if (!wrote.ok()) {
    metrics_.apiFailed(wrote.error().message);
    log::error("publishing labels failed; will retry", {{"error", wrote.error().message}});
    return outcome;
  }
  lastPublished_ = desired;
  if (*wrote) {
    lastWrite_ = now;
    metrics_.labelsWritten();
    log::info("labels published", {{"gen", desired.at(policy_.labelPrefix + "gen")}});
  }
  outcome.ok = true;
  outcome.wrote = *wrote;
  metrics_.passSucceeded(unixSeconds(now));
  return outcome;
}

}  // namespace gte::agent
