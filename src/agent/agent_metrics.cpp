#include "agent/agent_metrics.h"

namespace gte::agent {
namespace {

void family(std::string& out, const char* name, const char* type, const char* help,
            const std::string& value) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
         name + " " + value + "\n";
}

}  // namespace

void AgentMetrics::passSucceeded(std::int64_t unixSeconds) {
  lastSuccess_.store(unixSeconds);
  setError("");
}

void AgentMetrics::discoveryFailed(const std::string& error, bool nvml) {
  ++discoveryErrors_;
  if (nvml) {
    ++nvmlErrors_;
  }
  setError(error);
}

void AgentMetrics::usageFailed(const std::string& error) {
  ++usageErrors_;
  setError(error);
}

void AgentMetrics::apiFailed(const std::string& error) {
  ++apiErrors_;
  setError(error);
}

void AgentMetrics::labelsWritten() {
  ++writes_;
}

void AgentMetrics::companionWritten() {
  ++companionWrites_;
  companionPublished_ = true;
}

void AgentMetrics::companionRefused(CompanionRefusal why) {
  ++(why == CompanionRefusal::kApiServer ? apiServerRefusals_ : kubeletRefusals_);
  companionPublished_ = false;
}

void AgentMetrics::companionPublished(bool published) {
  companionPublished_ = published;
}

void AgentMetrics::setHealthMetrics(std::string text) {
  MutexLock lock(mutex_);
  healthText_ = std::move(text);
}

void AgentMetrics::cordonAnnotationErrors(std::uint64_t count) {
  cordonErrors_ += count;
}

void AgentMetrics::setError(const std::string& error) {
  MutexLock lock(mutex_);
  lastError_ = error;
}

std::string AgentMetrics::lastError() const {
  MutexLock lock(mutex_);
  return lastError_;
}

bool AgentMetrics::healthy(std::int64_t nowUnix, std::int64_t staleAfterSeconds) const {
  const std::int64_t last = lastSuccess_.load();
  return last > 0 && nowUnix - last <= staleAfterSeconds;
}

std::string AgentMetrics::render() const {
  std::string out;
  family(out, "gte_agent_last_success_timestamp_seconds", "gauge",
         "Unix time of the last pass that discovered and published (or found nothing to change).",
         std::to_string(lastSuccess_.load()));
  family(out, "gte_agent_discovery_errors_total", "counter",
         "Passes whose discovery failed (NVML, captures, labels the extender would reject).",
         std::to_string(discoveryErrors_.load()));
  family(out, "gte_agent_nvml_errors_total", "counter",
         "Discovery failures that came from NVML (library missing, init or query failed).",
         std::to_string(nvmlErrors_.load()));
  family(out, "gte_agent_usage_errors_total", "counter",
         "Passes whose usage read (kubelet PodResources) failed; nothing is written then.",
         std::to_string(usageErrors_.load()));
  family(out, "gte_agent_api_errors_total", "counter",
         "Failed reads or patches of the Node at the API server.",
         std::to_string(apiErrors_.load()));
  family(out, "gte_agent_label_writes_total", "counter",
         "Merge patches of the Node's labels the API server accepted.",
         std::to_string(writes_.load()));
  family(out, "gte_agent_cordon_annotation_errors_total", "counter",
         "Malformed entries in the cordoned-gpus / cordoned-links Node annotations (skipped).",
         std::to_string(cordonErrors_.load()));
  family(out, "gte_agent_device_plugin_config_errors_total", "counter",
         "Passes whose device plugin configuration (--device-plugin-config) did not read; "
         "labels-v1 sharing is not published then.",
         std::to_string(devicePluginConfigErrors_.load()));
  {
    MutexLock lock(mutex_);
    out += healthText_;
  }
  if (companionEnabled_) {
    family(out, "gte_agent_companion_slice_writes_total", "counter",
           "Companion ResourceSlices created or replaced that the API server kept with "
           "skipNodeOperations.",
           std::to_string(companionWrites_.load()));
    out +=
        "# HELP gte_agent_companion_slice_refused_total Passes that published no companion slice "
        "because DRAOptionalNodeOperations is off: the API server dropped skipNodeOperations "
        "(reason apiserver; the slice was deleted again) or the Node does not declare the feature "
        "(reason kubelet).\n# TYPE gte_agent_companion_slice_refused_total counter\n"
        "gte_agent_companion_slice_refused_total{reason=\"apiserver\"} " +
        std::to_string(apiServerRefusals_.load()) +
        "\ngte_agent_companion_slice_refused_total{reason=\"kubelet\"} " +
        std::to_string(kubeletRefusals_.load()) + "\n";
    family(out, "gte_agent_companion_slice_published", "gauge",
           "1 while this node's companion slice is published with skipNodeOperations, else 0.",
           companionPublished_.load() ? "1" : "0");
  }
  return out;
}

}  // namespace gte::agent
