#include "agent/agent_options.h"

#include <charconv>

#include "agent/companion_slice.h"

namespace gte::agent {
namespace {

Error usage(const std::string& what) {
  return invalidArgument(what);
}

class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return next_ >= args_.size(); }
  const std::string& take() { return args_[next_++]; }
  // The value of `--flag V` or `--flag=V`.
  Result<std::string> value(const std::string& flag, const std::string& arg) {
    const std::size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      return arg.substr(eq + 1);
    }
    if (done()) {
      return usage(flag + " needs a value");
    }
    return take();
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t next_ = 0;
};

std::string flagName(const std::string& arg) {
  return arg.substr(0, arg.find('='));
}

// Flags shared by discover and run. Returns false when `flag` is not one of them.
Result<bool> sourceFlag(const std::string& flag, const std::string& arg, ArgReader& in,
                        SourceOptions& source) {
  const auto set = [&](std::string& field) -> Result<bool> {
    auto v = in.value(flag, arg);
    if (!v.ok()) {
      return v.error();
    }
    field = *v;
    return true;
  };
  if (flag == "--nvml") {
    source.nvml = true;
    return true;
  }
  if (flag == "--nvml-lib") return set(source.nvmlLib);
  if (flag == "--topo-file") return set(source.topoFile);
  if (flag == "--topo-mp-file") return set(source.topoMpFile);
  if (flag == "--mig-file") return set(source.migFile);
  if (flag == "--model") return set(source.model);
  if (flag == "--label-prefix") return set(source.labelPrefix);
  if (flag == "--nvlink-recovery-per-hour" || flag == "--nvlink-replay-per-hour") {
    auto v = in.value(flag, arg);
    if (!v.ok()) return v.error();
    double value = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), value);
    if (v->empty() || ec != std::errc() || ptr != v->data() + v->size() || value < 0) {
      return usage(flag + ": not a non-negative number: '" + *v + "'");
    }
    (flag == "--nvlink-recovery-per-hour" ? source.health.recoveryPerHour
                                          : source.health.replayPerHour) = value;
    return true;
  }
  if (flag == "--health-window") {
    auto v = in.value(flag, arg);
    if (!v.ok()) return v.error();
    auto d = parseDuration(*v);
    if (!d.ok()) return usage(flag + ": " + d.error().message);
    if (*d < std::chrono::seconds(1)) return usage(flag + ": must be at least 1s");
    source.health.window = std::chrono::duration_cast<std::chrono::seconds>(*d);
    return true;
  }
  if (flag == "--used") {
    auto v = in.value(flag, arg);
    if (!v.ok()) {
      return v.error();
    }
    source.used = *v;
    return true;
  }
  return false;
}

Status finishSource(SourceOptions& source) {
  if (!source.topoFile.empty()) {
    source.nvml = false;
  } else if (!source.topoMpFile.empty() || !source.migFile.empty()) {
    return usage("--topo-mp-file and --mig-file need --topo-file");
  }
  if (source.labelPrefix.empty() || source.labelPrefix.back() != '/') {
    return usage("--label-prefix must end with '/'");
  }
  return Ok{};
}

Result<std::int64_t> parseInt(const std::string& flag, const std::string& text) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return usage(flag + ": not a non-negative integer: '" + text + "'");
  }
  return value;
}

Result<AgentInvocation> parseDiscover(ArgReader& in) {
  AgentInvocation out;
  out.command = AgentCommand::kDiscover;
  while (!in.done()) {
    const std::string& arg = in.take();
    const std::string flag = flagName(arg);
    auto handled = sourceFlag(flag, arg, in, out.source);
    if (!handled.ok()) {
      return handled.error();
    }
    if (*handled) {
      continue;
    }
    if (flag == "--gen") {
      auto v = in.value(flag, arg);
      if (!v.ok()) return v.error();
      auto gen = parseInt(flag, *v);
      if (!gen.ok()) return gen.error();
      out.generation = *gen;
      continue;
    }
    if (flag == "-o" || flag == "--output") {
      auto v = in.value(flag, arg);
      if (!v.ok()) return v.error();
      if (*v != "labels" && *v != "node") {
        return usage("discover: " + flag + ": labels or node, got '" + *v + "'");
      }
      out.output = *v;
      continue;
    }
    if (flag == "--health") {
      out.source.healthReport = true;
      continue;
    }
    if (flag == "--node-name") {
      auto v = in.value(flag, arg);
      if (!v.ok()) return v.error();
      out.nodeName = *v;
      continue;
    }
    return usage("discover: unknown flag " + flag);
  }
  if (out.source.healthReport && !out.source.topoFile.empty()) {
    return usage("discover: --health needs NVML discovery");
  }
  if (out.output == "node" && out.nodeName.empty()) {
    return usage("discover: -o node needs --node-name NAME (the Node's metadata.name)");
  }
  if (auto status = finishSource(out.source); !status.ok()) {
    return status.error();
  }
  return out;
}

Result<bool> runFlag(const std::string& flag, const std::string& arg, ArgReader& in,
                     RunOptions& run) {
  const auto text = [&]() { return in.value(flag, arg); };
  if (flag == "--node" || flag == "--kubeconfig" || flag == "--listen" ||
      flag == "--pod-resources-socket" || flag == "--log-level" || flag == "--companion-driver") {
    auto v = text();
    if (!v.ok()) return v.error();
    if (flag == "--node") run.node = *v;
    if (flag == "--kubeconfig") {
      run.kubeconfig = *v;
      run.access = ClusterAccess::kKubeconfig;
    }
    if (flag == "--listen") run.listen = *v;
    if (flag == "--pod-resources-socket") run.podResourcesSocket = *v;
    if (flag == "--log-level") run.logLevel = *v;
    if (flag == "--companion-driver") run.companionDriver = *v;
    return true;
  }
  if (flag == "--device-plugin-config" || flag == "--device-plugin-config-default") {
    auto v = text();
    if (!v.ok()) return v.error();
    if (flag == "--device-plugin-config-default") {
      run.devicePluginConfigDefault = *v;
      return true;
    }
    const auto slash = v->find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == v->size() ||
        v->find('/', slash + 1) != std::string::npos) {
      return usage(flag + ": want NAMESPACE/NAME of the device plugin's ConfigMap, got '" + *v +
                   "'");
    }
    run.devicePluginConfigNamespace = v->substr(0, slash);
    run.devicePluginConfigName = v->substr(slash + 1);
    return true;
  }
  if (flag == "--interval" || flag == "--min-interval") {
    auto v = text();
    if (!v.ok()) return v.error();
    auto d = parseDuration(*v);
    if (!d.ok()) return usage(flag + ": " + d.error().message);
    (flag == "--interval" ? run.interval : run.minInterval) = *d;
    return true;
  }
  if (flag == "--in-cluster") {
    run.access = ClusterAccess::kInCluster;
    return true;
  }
  if (flag == "--dry-run") {
    run.dryRun = true;
    return true;
  }
  if (flag == "--cleanup") {
    run.cleanup = true;
    return true;
  }
  if (flag == "--once") {
    run.once = true;
    return true;
  }
  if (flag == "--companion-slice") {
    run.companionSlice = true;
    return true;
  }
  return false;
}

Result<AgentInvocation> parseRun(ArgReader& in, const std::optional<std::string>& nodeNameEnv) {
  AgentInvocation out;
  out.command = AgentCommand::kRun;
  while (!in.done()) {
    const std::string& arg = in.take();
    const std::string flag = flagName(arg);
    auto source = sourceFlag(flag, arg, in, out.source);
    if (!source.ok()) return source.error();
    if (*source) continue;
    auto run = runFlag(flag, arg, in, out.run);
    if (!run.ok()) return run.error();
    if (*run) continue;
    return usage("run: unknown flag " + flag);
  }
  if (auto status = finishSource(out.source); !status.ok()) {
    return status.error();
  }
  if (out.run.node.empty() && nodeNameEnv) {
    out.run.node = *nodeNameEnv;
  }
  if (out.run.node.empty()) {
    return usage("run: --node (or the NODE_NAME environment variable) is required");
  }
  if (out.run.access == ClusterAccess::kNone && !out.run.dryRun) {
    return usage("run: --kubeconfig or --in-cluster is required unless --dry-run");
  }
  if (out.run.interval < out.run.minInterval) {
    return usage("run: --interval must not be shorter than --min-interval");
  }
  if (out.run.interval.count() <= 0) {
    return usage("run: --interval must be positive");
  }
  if (!validDriverName(out.run.companionDriver)) {
    return usage(
        "run: --companion-driver: want a lowercase DNS subdomain of at most 63 "
        "characters, got '" +
        out.run.companionDriver + "'");
  }
  if (!out.run.devicePluginConfigDefault.empty() && out.run.devicePluginConfigName.empty()) {
    return usage("run: --device-plugin-config-default needs --device-plugin-config");
  }
  if (!out.run.devicePluginConfigName.empty() && out.run.dryRun) {
    return usage("run: --device-plugin-config reads the API server (not --dry-run)");
  }
  if (out.run.companionSlice && !out.source.nvml) {
    return usage(
        "run: --companion-slice needs NVML discovery (text captures carry no PCI bus ids)");
  }
  return out;
}

}  // namespace

Result<std::chrono::milliseconds> parseDuration(const std::string& text) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || value < 0) {
    return usage("not a duration: '" + text + "' (want e.g. 30s, 500ms, 1m)");
  }
  const std::string unit(ptr, text.data() + text.size());
  std::int64_t factor = 0;
  if (unit == "ms") factor = 1;
  if (unit == "s") factor = 1000;
  if (unit == "m") factor = 60'000;
  if (unit == "h") factor = 3'600'000;
  if (factor == 0) {
    return usage("not a duration: '" + text + "' (units ms, s, m, h)");
  }
  return std::chrono::milliseconds(value * factor);
}

Result<AgentInvocation> parseAgentCommandLine(const std::vector<std::string>& args,
                                              const std::optional<std::string>& nodeNameEnv) {
  AgentInvocation help;
  help.helpText = agentHelp();
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    return help;
  }
  ArgReader in(args);
  const std::string command = in.take();
  if (command == "discover") return parseDiscover(in);
  if (command == "run") return parseRun(in, nodeNameEnv);
  if (command == "version") {
    AgentInvocation out;
    out.command = AgentCommand::kVersion;
    return out;
  }
  return usage("unknown command '" + command + "' (want discover, run or version)");
}

std::string agentHelp() {
  return R"(gpu-topology-agent: publishes this node's GPU topology as gputopo.dev/* labels (labels-v1).

Commands:
  discover [--nvml | --topo-file F [--topo-mp-file F] [--mig-file F]] [--model M] [--used BITS]
           [--gen UNIX_SECONDS] [--nvml-lib PATH] [--label-prefix P] [-o labels|node --node-name N]
           [--health]
      Prints the labels it would write, one key=value per line, sorted by key; with -o node a
      v1 Node (YAML) named N with those labels and the allocatable GPUs and MIG devices the device
      plugin would advertise, ready for a cluster file (serve --cluster-file). Exit codes: 0 ok,
      1 discovery failed (no NVML, NVML error, labels the extender would reject), 2 a capture it
      cannot read (one line: file:line: what), 64 bad flags. --health (NVML) also prints, after
      the labels, '# ' lines: each GPU's health with its reasons and each NVLink's counters.
  run --node NAME [--kubeconfig F | --in-cluster] [--interval 30s] [--min-interval 10s]
      [--dry-run] [--cleanup] [--once] [--listen ADDR] [--pod-resources-socket PATH]
      [--companion-slice [--companion-driver NAME]]
      [--device-plugin-config NS/NAME [--device-plugin-config-default KEY]]
      [discovery flags as for discover]
      The daemon: discover, read usage, merge-patch the node's labels when a value changes (at most
      one write per --min-interval); /healthz and /metrics on --listen (default :9464, "" to
      disable). NODE_NAME is used when --node is absent. --cleanup removes every label under the
      prefix (and, with --companion-slice, the companion slice) and exits.
      --companion-slice also publishes one ResourceSlice of NVLink-island companion devices
      under the DRA driver --companion-driver (default topology.gputopo.dev), with
      skipNodeOperations, while the Node declares DRAOptionalNodeOperations (needs that gate on
      API server, scheduler and kubelet; without it no slice stays, counted). NVML only.
      --device-plugin-config reads the NVIDIA device plugin's configuration ConfigMap each pass
      (the key the node's nvidia.com/device-plugin.config label names, else KEY, else its only
      key) and publishes <prefix>sharing: time-slicing or MPS, replicas, failRequestsGreaterThanOne
      (docs/sharing.md). Needs get on that ConfigMap.
  Health flags (NVML; run and discover): --nvlink-recovery-per-hour N (default 2),
      --nvlink-replay-per-hour N (default 100; 0 turns a check off), --health-window D (default
      1h). The Node annotations <prefix>cordoned-gpus and <prefix>cordoned-links are merged in
      (docs/agent.md, Health).
  version
)";
}

}  // namespace gte::agent
