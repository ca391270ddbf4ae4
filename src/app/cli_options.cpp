#include "app/cli_options.h"

#include <charconv>
#include <string_view>

namespace gte::app {
namespace {

Result<std::uint64_t> parseUnsigned(std::string_view flag, std::string_view text) {
  std::uint64_t v = 0;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || res.ec != std::errc{} || res.ptr != text.data() + text.size()) {
    return invalidArgument(std::string(flag) + ": not a number: \"" + std::string(text) + "\"");
  }
  return v;
}

Status parseListen(std::string_view text, ServeOptions& o) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return invalidArgument("--listen: expected HOST:PORT, got \"" + std::string(text) + "\"");
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]:8888
  }
  auto port = parseUnsigned("--listen", text.substr(colon + 1));
  if (!port) return std::move(port).error();
  if (*port == 0 || *port > 65535) return invalidArgument("--listen: port must be 1-65535");
  o.host = host.empty() ? "0.0.0.0" : std::string(host);
  o.port = static_cast<std::uint16_t>(*port);
  return Ok{};
}

Status setCluster(ServeOptions& o, ClusterSource source) {
  if (o.cluster != ClusterSource::kNone && o.cluster != source) {
    return invalidArgument("--kubeconfig, --in-cluster and --cluster-file are mutually exclusive");
  }
  o.cluster = source;
  return Ok{};
}

// Applies one flag that takes a value.
Status applyValueFlag(std::string_view flag, const std::string& value, ServeOptions& o) {
  if (flag == "--listen") return parseListen(value, o);
  if (flag == "--path-prefix") {
    if (!value.empty() && value.front() != '/') {
      return invalidArgument("--path-prefix: must start with '/'");
    }
    if (value.find('?') != std::string::npos)
      return invalidArgument("--path-prefix: no '?' allowed");
    o.pathPrefix = value;
    return Ok{};
  }
  if (flag == "--policy") {
    o.policyFile = value;
    return Ok{};
  }
  if (flag == "--kubeconfig") {
    o.kubeconfig = value;
    return setCluster(o, ClusterSource::kKubeconfig);
  }
  if (flag == "--cluster-file") {
    o.clusterFile = value;
    return setCluster(o, ClusterSource::kClusterFile);
  }
  if (flag == "--tls-cert") {
    o.tlsCertFile = value;
    return Ok{};
  }
  if (flag == "--tls-key") {
    o.tlsKeyFile = value;
    return Ok{};
  }
  if (flag == "--max-body-bytes") {
    auto n = parseUnsigned(flag, value);
    if (!n) return std::move(n).error();
    if (*n < 1024) return invalidArgument("--max-body-bytes: must be at least 1024");
    o.maxBodyBytes = static_cast<std::size_t>(*n);
    return Ok{};
  }
  if (flag == "--log-level") {
    if (value != "debug" && value != "info" && value != "warn" && value != "error") {
      return invalidArgument("--log-level: one of debug, info, warn, error");
    }
    o.logLevel = value;
    return Ok{};
  }
  if (flag == "--threads") {
    auto n = parseUnsigned(flag, value);
    if (!n) return std::move(n).error();
    if (*n < 1 || *n > 256) return invalidArgument("--threads: must be 1-256");
    o.threads = static_cast<std::size_t>(*n);
    return Ok{};
  }
  return invalidArgument("unknown flag " + std::string(flag) + " (see serve --help)");
}

bool takesValue(std::string_view flag) {
  return flag == "--listen" || flag == "--path-prefix" || flag == "--policy" ||
         flag == "--kubeconfig" || flag == "--cluster-file" || flag == "--tls-cert" ||
         flag == "--tls-key" || flag == "--max-body-bytes" || flag == "--log-level" ||
         flag == "--threads";
}

Result<Invocation> parseServe(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kServe;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      return Invocation{Command::kHelp, {}, serveHelp()};
    }
    if (arg == "--in-cluster") {
      if (auto s = setCluster(inv.serve, ClusterSource::kInCluster); !s)
        return std::move(s).error();
      continue;
    }
    std::string value;
    const auto eq = arg.find('=');
    std::string_view flag = arg.substr(0, eq);
    if (!takesValue(flag))
      return invalidArgument("unknown flag " + std::string(flag) + " (see serve --help)");
    if (eq != std::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return invalidArgument(std::string(flag) + ": needs a value");
    }
    if (auto s = applyValueFlag(flag, value, inv.serve); !s) return std::move(s).error();
  }
  const auto& o = inv.serve;
  if (o.tlsCertFile.empty() != o.tlsKeyFile.empty()) {
    return invalidArgument("--tls-cert and --tls-key must be given together");
  }
  return inv;
}

}  // namespace

std::string topLevelHelp() {
  return "gpu-topology-extender: a kube-scheduler extender that places GPU pods by "
         "NVLink/PCIe/NUMA\n"
         "topology and MIG placement.\n\n"
         "Usage:\n"
         "  gpu-topology-extender serve [flags]   run the extender (see serve --help)\n"
         "  gpu-topology-extender version         print the version\n"
         "  gpu-topology-extender --help          this text\n";
}

std::string serveHelp() {
  return "Usage: gpu-topology-extender serve [flags]\n\n"
         "  --listen HOST:PORT        address to serve on (default 0.0.0.0:8888)\n"
         "  --path-prefix PATH        URL prefix of the verbs (default /scheduler):\n"
         "                            POST PATH/filter, PATH/prioritize, PATH/bind, PATH/preempt\n"
         "  --policy FILE             scheduler policy YAML, reloaded when it changes\n"
         "                            (default: the built-in policy, same as "
         "config/scheduler-policy.yaml)\n"
         "  --kubeconfig FILE         watch nodes and pods through this kubeconfig's current "
         "context\n"
         "  --in-cluster              watch nodes and pods with the pod's service account\n"
         "  --cluster-file FILE       JSON/YAML list of Node and Pod objects as the cluster state\n"
         "                            (nodeCacheCapable without an API server: demos, benchmarks)\n"
         "                            Without any of these three, decisions come from the Nodes "
         "in\n"
         "                            each request (nodeCacheCapable: false).\n"
         "  --tls-cert FILE --tls-key FILE   serve HTTPS (TLS 1.2+, HTTP/1.1)\n"
         "  --max-body-bytes N        largest request body accepted (default 67108864)\n"
         "  --log-level LEVEL         debug, info, warn or error (default info)\n"
         "  --threads N               HTTP worker threads (default: one per core, at least 2)\n";
}

Result<Invocation> parseCommandLine(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    return Invocation{Command::kHelp, {}, topLevelHelp()};
  }
  if (args[0] == "version" || args[0] == "--version") {
    if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
      return Invocation{Command::kHelp, {}, "Usage: gpu-topology-extender version\n"};
    }
    return Invocation{Command::kVersion, {}, {}};
  }
  if (args[0] == "serve") return parseServe(args);
  return invalidArgument("unknown command \"" + args[0] + "\" (expected serve or version)");
}

}  // namespace gte::app
