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

// "250ms", "30s", "2m": a whole number and a unit.
Result<std::chrono::milliseconds> parseDuration(std::string_view flag, std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  const std::string_view unit = text.substr(digits);
  std::uint64_t scale = 0;
  if (unit == "ms") scale = 1;
  if (unit == "s") scale = 1000;
  if (unit == "m") scale = 60'000;
  std::uint64_t n = 0;
  const auto res = std::from_chars(text.data(), text.data() + digits, n);
  if (digits == 0 || scale == 0 || res.ec != std::errc{} || n > 86'400'000 / scale) {
    return invalidArgument(std::string(flag) +
                           ": expected a duration like 500ms, 30s or 2m, got \"" +
                           std::string(text) + "\"");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(n * scale));
}

// A positive duration flag.
Status setDuration(std::string_view flag, const std::string& value, std::chrono::milliseconds& out,
                   bool allowZero = false) {
  auto d = parseDuration(flag, value);
  if (!d) return std::move(d).error();
  if (!allowZero && d->count() == 0) return invalidArgument(std::string(flag) + ": must be > 0");
  out = *d;
  return Ok{};
}

// A count flag within [min, max].
Status setCount(std::string_view flag, const std::string& value, std::size_t& out,
                std::uint64_t min, std::uint64_t max) {
  auto n = parseUnsigned(flag, value);
  if (!n) return std::move(n).error();
  if (*n < min || *n > max) {
    return invalidArgument(std::string(flag) + ": must be " + std::to_string(min) + "-" +
                           std::to_string(max));
  }
  out = static_cast<std::size_t>(*n);
  return Ok{};
}

Status parseListen(std::string_view flag, std::string_view text, std::string& outHost,
                   std::uint16_t& outPort) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return invalidArgument(std::string(flag) + ": expected HOST:PORT, got \"" + std::string(text) +
                           "\"");
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]:8888
  }
  auto port = parseUnsigned(flag, text.substr(colon + 1));
  if (!port) return std::move(port).error();
  // --listen HOST:0 takes a free port (logged as the listening line's port); --metrics-listen's
  // port 0 means off.
  if (*port > 65535 || (*port == 0 && flag != "--listen")) {
    return invalidArgument(std::string(flag) + (flag == "--listen" ? ": port must be 0-65535"
                                                                   : ": port must be 1-65535"));
  }
  outHost = host.empty() ? "0.0.0.0" : std::string(host);  // ":8888": every interface
  outPort = static_cast<std::uint16_t>(*port);
  return Ok{};
}

// A DNS-1123 subdomain's characters (lower-case letters, digits, '-' and '.'), starting and ending
// with a letter or digit: what Kubernetes accepts as a namespace (no '.') or an object name. The
// API server checks the rest; this catches a misplaced flag value at start-up.
bool objectNamePart(std::string_view part, bool dots) {
  if (part.empty() || part.size() > 253) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : part) {
    if (!alnum(c) && c != '-' && !(dots && c == '.')) return false;
  }
  return alnum(part.front()) && alnum(part.back());
}

// NAMESPACE/NAME of a namespaced object (a Lease, a Service).
Status parseObjectName(std::string_view flag, const std::string& value, std::string& ns,
                       std::string& name) {
  const auto slash = value.find('/');
  const bool good = slash != std::string::npos &&
                    objectNamePart(std::string_view(value).substr(0, slash), false) &&
                    objectNamePart(std::string_view(value).substr(slash + 1), true);
  if (!good) {
    return invalidArgument(std::string(flag) + ": expected NAMESPACE/NAME, got \"" + value + "\"");
  }
  ns = value.substr(0, slash);
  name = value.substr(slash + 1);
  return Ok{};
}

Status setLeaderElection(ServeOptions& o, LeaderElection mode) {
  if (o.leaderElection != LeaderElection::kNone && o.leaderElection != mode) {
    return invalidArgument("--leader-elect and --follow-lease are mutually exclusive");
  }
  o.leaderElection = mode;
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
  if (flag == "--listen") return parseListen(flag, value, o.host, o.port);
  if (flag == "--metrics-listen") return parseListen(flag, value, o.metricsHost, o.metricsPort);
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
  if (flag == "--health-pool-label") {
    o.healthPoolLabel = value;
    return Ok{};
  }
  if (flag == "--tls-key") {
    o.tlsKeyFile = value;
    return Ok{};
  }
  if (flag == "--tls-client-ca") {
    o.tlsClientCaFile = value;
    return Ok{};
  }
  if (flag == "--max-header-bytes") return setCount(flag, value, o.maxHeaderBytes, 1024, 1 << 20);
  if (flag == "--max-connections") return setCount(flag, value, o.maxConnections, 1, 1'000'000);
  if (flag == "--max-nodes-per-request") {
    return setCount(flag, value, o.maxNodesPerRequest, 1, 1'000'000);
  }
  if (flag == "--decision-threads") return setCount(flag, value, o.decisionThreads, 1, 256);
  if (flag == "--request-timeout") return setDuration(flag, value, o.requestTimeout);
  if (flag == "--idle-timeout") return setDuration(flag, value, o.idleTimeout);
  if (flag == "--tls-handshake-timeout") return setDuration(flag, value, o.tlsHandshakeTimeout);
  if (flag == "--drain-period") return setDuration(flag, value, o.drainPeriod, true);
  if (flag == "--shutdown-grace") return setDuration(flag, value, o.shutdownGrace, true);
  if (flag == "--bind-concurrency") return setCount(flag, value, o.bindConcurrency, 1, 4096);
  if (flag == "--bind-deadline") return setDuration(flag, value, o.bindDeadline);
  if (flag == "--whatif-max-pods") return setCount(flag, value, o.whatifMaxPods, 1, 100'000);
  if (flag == "--whatif-deadline") return setDuration(flag, value, o.whatifDeadline);
  if (flag == "--api-warm-connections") {
    return setCount(flag, value, o.apiWarmConnections, 0, 1024);
  }
  if (flag == "--leader-elect-lease") {
    if (auto s = setLeaderElection(o, LeaderElection::kHold); !s) return s;
    return parseObjectName(flag, value, o.leaseNamespace, o.leaseName);
  }
  if (flag == "--follow-lease") {
    if (auto s = setLeaderElection(o, LeaderElection::kFollow); !s) return s;
    return parseObjectName(flag, value, o.leaseNamespace, o.leaseName);
  }
  if (flag == "--leader-elect-identity") {
    if (value.empty()) return invalidArgument("--leader-elect-identity: must not be empty");
    o.leaderIdentity = value;
    return Ok{};
  }
  if (flag == "--leader-elect-lease-duration") return setDuration(flag, value, o.leaseDuration);
  if (flag == "--leader-elect-renew-deadline") return setDuration(flag, value, o.renewDeadline);
  if (flag == "--leader-elect-retry-period") return setDuration(flag, value, o.retryPeriod);
  if (flag == "--publish-endpoint") {
    return parseObjectName(flag, value, o.endpointNamespace, o.endpointService);
  }
  if (flag == "--advertise-address") {
    if (value.empty()) return invalidArgument("--advertise-address: must not be empty");
    o.advertiseAddress = value;
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
  return flag == "--listen" || flag == "--metrics-listen" || flag == "--path-prefix" ||
         flag == "--policy" || flag == "--kubeconfig" || flag == "--cluster-file" ||
         flag == "--tls-cert" || flag == "--tls-key" || flag == "--max-body-bytes" ||
         flag == "--log-level" || flag == "--threads" || flag == "--tls-client-ca" ||
         flag == "--max-header-bytes" || flag == "--max-connections" ||
         flag == "--max-nodes-per-request" || flag == "--decision-threads" ||
         flag == "--request-timeout" || flag == "--idle-timeout" ||
         flag == "--tls-handshake-timeout" || flag == "--drain-period" ||
         flag == "--shutdown-grace" || flag == "--bind-concurrency" || flag == "--bind-deadline" ||
         flag == "--api-warm-connections" || flag == "--whatif-max-pods" ||
         flag == "--whatif-deadline" || flag == "--health-pool-label" ||
         flag == "--leader-elect-lease" || flag == "--follow-lease" ||
         flag == "--leader-elect-identity" || flag == "--leader-elect-lease-duration" ||
         flag == "--leader-elect-renew-deadline" || flag == "--leader-elect-retry-period" ||
         flag == "--publish-endpoint" || flag == "--advertise-address";
}

// A flag and its value, given as `--flag=value` or `--flag value` (then `i` moves past the value).
struct FlagValue {
  std::string_view flag;
  std::string value;
};

Result<FlagValue> flagValue(const std::vector<std::string>& args, std::size_t& i) {
  const std::string_view arg = args[i];
  const auto eq = arg.find('=');
  FlagValue out{arg.substr(0, eq), {}};
  if (eq != std::string_view::npos) {
    out.value = std::string(arg.substr(eq + 1));
  } else if (i + 1 < args.size()) {
    out.value = args[++i];
  } else {
    return invalidArgument(std::string(out.flag) + ": needs a value");
  }
  return out;
}

Invocation helpInvocation(std::string text) {
  Invocation inv;
  inv.command = Command::kHelp;
  inv.helpText = std::move(text);
  return inv;
}

Status checkLeaderElection(const ServeOptions& o) {
  if (o.leaderElection == LeaderElection::kNone) {
    if (!o.endpointService.empty()) {
      return invalidArgument("--publish-endpoint needs --leader-elect (only a leader publishes)");
    }
    return Ok{};
  }
  const char* flag =
      o.leaderElection == LeaderElection::kHold ? "--leader-elect" : "--follow-lease";
  if (o.cluster != ClusterSource::kKubeconfig && o.cluster != ClusterSource::kInCluster) {
    return invalidArgument(std::string(flag) +
                           " needs --kubeconfig or --in-cluster (a lease lives "
                           "in the API server)");
  }
  if (o.leaseName.empty()) {
    return invalidArgument("--leader-elect needs --leader-elect-lease NAMESPACE/NAME");
  }
  if (o.renewDeadline >= o.leaseDuration && o.leaderElection == LeaderElection::kHold) {
    return invalidArgument(
        "--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration (a "
        "leader stops binding before anyone else may start)");
  }
  if (o.retryPeriod >= o.renewDeadline) {
    return invalidArgument(
        "--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline (a leader "
        "renews several times before its deadline)");
  }
  if (!o.endpointService.empty() && o.leaderElection != LeaderElection::kHold) {
    return invalidArgument("--publish-endpoint goes with --leader-elect, not --follow-lease");
  }
  return Ok{};
}

Result<Invocation> parseServe(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kServe;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      return helpInvocation(serveHelp());
    }
    if (arg == "--disable-explain") {
      inv.serve.explain = false;
      continue;
    }
    if (arg == "--disable-whatif") {
      inv.serve.whatif = false;
      continue;
    }
    if (arg == "--disable-nodes") {
      inv.serve.nodes = false;
      continue;
    }
    if (arg == "--dra") {
      inv.serve.dra = true;
      continue;
    }
    if (arg == "--in-cluster") {
      if (auto s = setCluster(inv.serve, ClusterSource::kInCluster); !s)
        return std::move(s).error();
      continue;
    }
    if (arg == "--leader-elect") {
      if (auto s = setLeaderElection(inv.serve, LeaderElection::kHold); !s)
        return std::move(s).error();
      continue;
    }
    const std::string_view flag = arg.substr(0, arg.find('='));
    if (!takesValue(flag))
      return invalidArgument("unknown flag " + std::string(flag) + " (see serve --help)");
    auto given = flagValue(args, i);
    if (!given) return std::move(given).error();
    if (auto s = applyValueFlag(given->flag, given->value, inv.serve); !s)
      return std::move(s).error();
  }
  const auto& o = inv.serve;
  if (o.tlsCertFile.empty() != o.tlsKeyFile.empty()) {
    return invalidArgument("--tls-cert and --tls-key must be given together");
  }
  if (!o.tlsClientCaFile.empty() && o.tlsCertFile.empty()) {
    return invalidArgument("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (o.dra && o.cluster != ClusterSource::kKubeconfig && o.cluster != ClusterSource::kInCluster) {
    return invalidArgument("--dra needs --kubeconfig or --in-cluster (it watches the API server)");
  }
  if (auto s = checkLeaderElection(o); !s) return std::move(s).error();
  return inv;
}

Status setUrl(const std::string& value, std::string& out) {
  if (!value.starts_with("http://")) {
    return invalidArgument("--url: expected http://HOST:PORT (plain HTTP), got \"" + value + "\"");
  }
  out = value;
  return Ok{};
}

Status setOutput(std::string_view flag, const std::string& value, OutputFormat& out) {
  if (value == "table") {
    out = OutputFormat::kTable;
  } else if (value == "json") {
    out = OutputFormat::kJson;
  } else {
    return invalidArgument(std::string(flag) + ": one of table, json");
  }
  return Ok{};
}

Status applyExplainFlag(std::string_view flag, const std::string& value, ExplainOptions& o) {
  if (flag == "--url") return setUrl(value, o.url);
  if (flag == "--pod") {
    const auto slash = value.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == value.size() ||
        value.find('/', slash + 1) != std::string::npos) {
      return invalidArgument("--pod: expected NAMESPACE/NAME, got \"" + value + "\"");
    }
    o.pod = value;
    return Ok{};
  }
  if (flag == "--top") return setCount(flag, value, o.top, 1, 1'000'000);
  if (flag == "-o" || flag == "--output") return setOutput(flag, value, o.output);
  return invalidArgument("unknown flag " + std::string(flag) + " (see explain --help)");
}

Result<Invocation> parseExplain(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kExplain;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") return helpInvocation(explainHelp());
    auto given = flagValue(args, i);
    if (!given) return std::move(given).error();
    if (auto s = applyExplainFlag(given->flag, given->value, inv.explain); !s)
      return std::move(s).error();
  }
  if (inv.explain.url.empty() || inv.explain.pod.empty()) {
    return invalidArgument("explain needs --url and --pod (see explain --help)");
  }
  return inv;
}

Status applyWhatifFlag(std::string_view flag, const std::string& value, WhatifOptions& o) {
  if (flag == "--url") return setUrl(value, o.url);
  if (flag == "--gpus") {
    std::size_t gpus = 0;
    if (auto s = setCount(flag, value, gpus, 1, 1024); !s) return s;
    o.gpus = static_cast<std::int64_t>(gpus);
    return Ok{};
  }
  if (flag == "--mig") {
    if (value.empty() || value.find_first_of("/ ") != std::string::npos) {
      return invalidArgument("--mig: expected a MIG profile like 3g.40gb, got \"" + value + "\"");
    }
    o.mig = value;
    return Ok{};
  }
  if (flag == "--count") return setCount(flag, value, o.count, 1, 1'000'000);
  if (flag == "--group-size") return setCount(flag, value, o.groupSize, 1, 1'000'000);
  if (flag == "--min-link") {
    o.minLink = value;
    return Ok{};
  }
  if (flag == "--numa") {
    o.numa = value;
    return Ok{};
  }
  if (flag == "--strategy") {
    o.strategy = value;
    return Ok{};
  }
  std::string* file = flag == "--pod-file" ? &o.podFile
                      : flag == "--csv"    ? &o.csvFile
                      : flag == "--policy" ? &o.policyFile
                                           : nullptr;
  if (file != nullptr) {
    if (value.empty()) return invalidArgument(std::string(flag) + ": needs a file");
    *file = value;
    return Ok{};
  }
  if (flag == "-o" || flag == "--output") return setOutput(flag, value, o.output);
  return invalidArgument("unknown flag " + std::string(flag) + " (see whatif --help)");
}

Result<Invocation> parseWhatif(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kWhatif;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return helpInvocation(whatifHelp());
    auto given = flagValue(args, i);
    if (!given) return std::move(given).error();
    if (auto s = applyWhatifFlag(given->flag, given->value, inv.whatif); !s)
      return std::move(s).error();
  }
  const WhatifOptions& o = inv.whatif;
  if (o.url.empty()) return invalidArgument("whatif needs --url (see whatif --help)");
  const bool flags = o.gpus > 0 || !o.mig.empty();
  const int forms = (flags ? 1 : 0) + (o.podFile.empty() ? 0 : 1) + (o.csvFile.empty() ? 0 : 1);
  if (forms != 1) {
    return invalidArgument("whatif needs one of --gpus/--mig, --pod-file or --csv");
  }
  if (o.count > 0 && !o.csvFile.empty()) {
    return invalidArgument("--count: goes with --gpus, --mig or --pod-file, not --csv");
  }
  if (o.groupSize > 0 && !o.csvFile.empty()) {
    return invalidArgument("--group-size: goes with --gpus, --mig or --pod-file, not --csv");
  }
  if (o.groupSize > 0 && o.count > 0) {
    return invalidArgument(
        "--group-size: give either --count (pods one after another) or --group-size (one group "
        "of that many pods), not both");
  }
  if (!flags && (!o.minLink.empty() || !o.numa.empty() || !o.strategy.empty())) {
    return invalidArgument(
        "--min-link, --numa and --strategy go with --gpus or --mig (a --pod-file or a CSV "
        "carries its own)");
  }
  return inv;
}

Status applyNodesFlag(std::string_view flag, const std::string& value, NodesOptions& o) {
  if (flag == "--url") return setUrl(value, o.url);
  if (flag == "--node") {
    if (value.empty()) return invalidArgument("--node: needs a node name");
    o.node = value;
    return Ok{};
  }
  if (flag == "--limit") return setCount(flag, value, o.limit, 1, 1'000'000);
  if (flag == "-o" || flag == "--output") return setOutput(flag, value, o.output);
  return invalidArgument("unknown flag " + std::string(flag) + " (see nodes --help)");
}

Result<Invocation> parseNodes(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kNodes;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return helpInvocation(nodesHelp());
    auto given = flagValue(args, i);
    if (!given) return std::move(given).error();
    if (auto s = applyNodesFlag(given->flag, given->value, inv.nodes); !s)
      return std::move(s).error();
  }
  if (inv.nodes.url.empty()) return invalidArgument("nodes needs --url (see nodes --help)");
  return inv;
}

Status applyClaimTemplateFlag(std::string_view flag, const std::string& value,
                              ClaimTemplateOptions& o) {
  if (flag == "--gpus") {
    std::size_t gpus = 0;
    if (auto s = setCount(flag, value, gpus, 1, 32); !s) return s;
    o.gpus = static_cast<int>(gpus);
    return Ok{};
  }
  if (flag == "--name") {
    o.name = value;
    return Ok{};
  }
  if (flag == "--namespace" || flag == "-n") {
    o.ns = value;
    return Ok{};
  }
  // Names taken as given; the template builder checks them.
  const std::pair<std::string_view, std::string*> names[] = {
      {"--device-class", &o.deviceClass},
      {"--companion-class", &o.companionClass},
      {"--companion-driver", &o.companionDriver}};
  for (const auto& [name, field] : names) {
    if (flag == name) {
      *field = value;
      return Ok{};
    }
  }
  if (flag == "-o" || flag == "--output") {
    if (value == "yaml") {
      o.output = ManifestFormat::kYaml;
    } else if (value == "json") {
      o.output = ManifestFormat::kJson;
    } else {
      return invalidArgument(std::string(flag) + ": one of yaml, json");
    }
    return Ok{};
  }
  return invalidArgument("unknown flag " + std::string(flag) + " (see claim-template --help)");
}

Result<Invocation> parseClaimTemplate(const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = Command::kClaimTemplate;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      return helpInvocation(claimTemplateHelp());
    }
    if (arg == "--nvswitch-partition") {
      inv.claimTemplate.nvswitchPartition = true;
      continue;
    }
    if (arg == "--nvlink-island") {
      inv.claimTemplate.nvlinkIsland = true;
      continue;
    }
    auto given = flagValue(args, i);
    if (!given) return std::move(given).error();
    if (auto s = applyClaimTemplateFlag(given->flag, given->value, inv.claimTemplate); !s)
      return std::move(s).error();
  }
  if (inv.claimTemplate.gpus == 0) {
    return invalidArgument("claim-template needs --gpus (see claim-template --help)");
  }
  // The companion flags shape only island claims: given alone they would be silently ignored.
  const ClaimTemplateOptions defaults;
  if (!inv.claimTemplate.nvlinkIsland &&
      (inv.claimTemplate.companionClass != defaults.companionClass ||
       inv.claimTemplate.companionDriver != defaults.companionDriver)) {
    return invalidArgument(
        "--companion-class and --companion-driver apply to --nvlink-island claims only");
  }
  return inv;
}

}  // namespace

std::string whatifHelp() {
  return "Usage: gpu-topology-extender whatif --url URL (--gpus N | --mig PROFILE | --pod-file "
         "FILE | --csv FILE)\n"
         "         [--count N | --group-size M] [--min-link CLASS] [--numa single]\n"
         "         [--strategy binpack|spread] [--policy FILE] [-o table|json]\n\n"
         "Asks a running extender (POST URL/whatif; it needs a cluster cache) where pods arriving\n"
         "now would go, with which GPUs, and what each would strand (the node's free all-NVLink\n"
         "sets of 1/2/4/8 GPUs before and after), placing them one after another on a copy of\n"
         "its cluster state. Nothing is reserved or changed.\n\n"
         "  --url URL         the extender's base URL, plain HTTP: http://HOST:PORT\n"
         "  --gpus N          a pod asking for N whole GPUs\n"
         "  --mig PROFILE     a pod asking for one MIG instance (e.g. 3g.40gb)\n"
         "  --pod-file FILE   the pod as JSON (kubectl get pod NAME -o json)\n"
         "  --count N         N such pods, one after another (default 1)\n"
         "  --group-size M    instead: one pod group of M such pods, placed whole by the group\n"
         "                    planner (the domain, each member's node and GPUs)\n"
         "  --min-link CLASS, --numa single, --strategy binpack|spread\n"
         "                    the pod's gputopo.dev/ annotations (with --gpus or --mig)\n"
         "  --csv FILE        pods in the simulator's trace format (name,cpu_milli,memory_mib,"
         "num_gpu)\n"
         "  --policy FILE     a proposed policy YAML: the same pods on another copy of the same\n"
         "                    state under it, shown side by side with the running policy\n"
         "  -o table|json     a table (default), or the extender's JSON as is\n";
}

std::string nodesHelp() {
  return "Usage: gpu-topology-extender nodes --url URL [--node NAME] [--limit N] [-o "
         "table|json]\n\n"
         "Lists the nodes of a running extender's cluster cache (GET URL/nodes) as it sees them\n"
         "now: usable and free GPUs, the free all-NVLink sets of 1/2/4/8 GPUs, the largest\n"
         "all-NVLink set and the GPU pairs per link class.\n\n"
         "  --url URL         the extender's base URL, plain HTTP: http://HOST:PORT\n"
         "  --node NAME       one node\n"
         "  --limit N         the first N nodes by name (default: the extender's\n"
         "                    --max-nodes-per-request)\n"
         "  -o table|json     a table (default), or the extender's JSON as is\n";
}

std::string claimTemplateHelp() {
  return "Usage: gpu-topology-extender claim-template --gpus N [--name NAME] [--namespace NS]\n"
         "         [--device-class CLASS] [--nvswitch-partition] [-o yaml|json]\n"
         "       gpu-topology-extender claim-template --gpus N --nvlink-island\n"
         "         [--companion-class CLASS] [--companion-driver DRIVER] [other flags as above]\n\n"
         "Prints a ResourceClaimTemplate (resource.k8s.io/v1) for N GPUs whose request lists\n"
         "firstAvailable tiers: N devices on one PCIe root complex, else on one NUMA node, else\n"
         "any N. The scheduler's DRA allocator takes the first tier a node can satisfy and\n"
         "prefers nodes where an earlier tier fits. Pods refer to it in spec.resourceClaims.\n\n"
         "  --gpus N               GPUs per claim, 1-32 (1: a plain request, no tiers)\n"
         "  --name NAME            the template's name (default gpus-N)\n"
         "  --namespace NS, -n NS  metadata.namespace (default: none, kubectl's context)\n"
         "  --device-class CLASS   the DeviceClass of whole GPUs (default gpu.nvidia.com)\n"
         "  --nvswitch-partition   first tier: one NVIDIA Fabric Manager partition of N GPUs\n"
         "                         (gpu.nvidia.com/partitionN, published by the driver's\n"
         "                         FabricManagerPartitioning gate; N = 1, 2, 4 or 8); the other\n"
         "                         tiers then keep off GPUs that belong to such partitions\n"
         "  --nvlink-island        instead of tiers: N GPUs of one NVLink island (N = 2-16),\n"
         "                         each GPU tied to its companion device (published by\n"
         "                         gpu-topology-agent --companion-slice) by pciBusID, all\n"
         "                         companions matching on DRIVER/nvlinkIsland. No fallback:\n"
         "                         a node without such an island is not feasible\n"
         "  --companion-class CLASS  the companions' DeviceClass (default topology.gputopo.dev)\n"
         "  --companion-driver DRIVER  their DRA driver (default topology.gputopo.dev)\n"
         "  -o yaml|json           output format (default yaml)\n";
}

std::string explainHelp() {
  return "Usage: gpu-topology-extender explain --url URL --pod NAMESPACE/NAME [--top N] "
         "[-o table|json]\n\n"
         "Asks a running extender (GET URL/explain?pod=NAMESPACE/NAME; it needs a cluster cache)\n"
         "how it judges the pod on every node: filter verdict and reason, score, the GPUs the\n"
         "device plugin would hand out, their weakest link and NUMA span.\n\n"
         "  --url URL         the extender's base URL, plain HTTP: http://HOST:PORT\n"
         "                    (e.g. after kubectl port-forward)\n"
         "  --pod NS/NAME     the pod to explain\n"
         "  --top N           only the N best-scored nodes (default: all)\n"
         "  -o table|json     a table sorted by score (default), or the extender's JSON as is\n";
}

std::string topLevelHelp() {
  return "gpu-topology-extender: a kube-scheduler extender that places GPU pods by "
         "NVLink/PCIe/NUMA\n"
         "topology and MIG placement.\n\n"
         "Usage:\n"
         "  gpu-topology-extender serve [flags]   run the extender (see serve --help)\n"
         "  gpu-topology-extender explain [flags] explain a pod's placement (see explain --help)\n"
         "  gpu-topology-extender whatif [flags]  where pods arriving now would go (see whatif "
         "--help)\n"
         "  gpu-topology-extender nodes [flags]   the nodes as the extender sees them (see nodes "
         "--help)\n"
         "  gpu-topology-extender claim-template --gpus N  print a ResourceClaimTemplate for N\n"
         "                                        well-connected DRA GPUs (see its --help)\n"
         "  gpu-topology-extender version         print the version\n"
         "  gpu-topology-extender --help          this text\n";
}

std::string serveHelp() {
  return "Usage: gpu-topology-extender serve [flags]\n\n"
         "  --listen HOST:PORT        address to serve on (default 127.0.0.1:8888; the Helm "
         "chart\n"
         "                            passes 0.0.0.0:PORT; port 0: a free port, logged)\n"
         "  --metrics-listen HOST:PORT  also serve /healthz, /readyz, /metrics and /version "
         "(only)\n"
         "                            on this plain-HTTP address, e.g. for probes when the main\n"
         "                            port requires client certificates (default: none)\n"
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
         "  --tls-cert FILE --tls-key FILE   serve HTTPS (TLS 1.2+, ECDHE with AES-GCM or "
         "ChaCha20, HTTP/1.1)\n"
         "  --tls-client-ca FILE      require client certificates signed by this CA (PEM)\n"
         "  --max-body-bytes N        largest request body accepted (default 67108864)\n"
         "  --max-header-bytes N      largest request header accepted (default 16384)\n"
         "  --max-connections N       concurrent connections; more are closed at once (default "
         "512)\n"
         "  --max-nodes-per-request N nodes or preemption candidates in one request (default "
         "10000)\n"
         "  --request-timeout D       time to receive a request and send its answer (default 30s)\n"
         "  --idle-timeout D          keep-alive connection idle time (default 120s)\n"
         "  --tls-handshake-timeout D (default 10s)\n"
         "  --drain-period D          after SIGTERM, keep serving for D: /readyz fails, every "
         "answer\n"
         "                            closes its connection, new connections are still "
         "accepted,\n"
         "                            idle ones stay open (default 5s; SIGINT skips it)\n"
         "  --shutdown-grace D        after the drain period, time to finish requests in flight\n"
         "                            (default 20s)\n"
         "  --bind-concurrency N      binds sent to the API server at once; more wait their "
         "turn\n"
         "                            (default 64)\n"
         "  --bind-deadline D         a bind not sent within D of its arrival is dropped and its "
         "GPUs\n"
         "                            released: keep it under kube-scheduler's httpTimeout "
         "(default\n"
         "                            2500ms, for the chart's httpTimeout of 3s)\n"
         "  --api-warm-connections N  API-server connections kept open for bursts of binds "
         "(default\n"
         "                            16; 0: open them when needed)\n"
         "  --health-pool-label LABEL node label whose value groups nodes in the fragmentation\n"
         "                            gauges, e.g. a node pool label (default: the GPU model)\n"
         "  --dra                     with --kubeconfig or --in-cluster: also watch "
         "ResourceSlices,\n"
         "                            DeviceClasses, ResourceClaims and (where served)\n"
         "                            DeviceTaintRules (resource.k8s.io/v1) and place DRA GPU\n"
         "                            pods by the devices DRA will allocate\n"
         "  --log-level LEVEL         debug, info, warn or error (default info)\n"
         "  --threads N               I/O threads: connections, probes, metrics (default: one per\n"
         "                            core, at least 2)\n"
         "  --decision-threads N      threads deciding filter/prioritize/preempt/bind (default: "
         "--threads)\n"
         "  --disable-explain         do not serve PATH/explain and /explain (they show pods'\n"
         "                            requests and nodes' GPU usage to anyone who can connect)\n"
         "  --disable-whatif          do not serve PATH/whatif and /whatif (the same)\n"
         "  --disable-nodes           do not serve PATH/nodes and /nodes (the same)\n"
         "  --whatif-max-pods N       pods in one what-if: its count, group size or CSV rows "
         "(default\n"
         "                            1000)\n"
         "  --whatif-deadline D       the longest one what-if may run; one runs at a time\n"
         "                            (default 3s)\n"
         "High availability (docs/operations.md); every replica keeps its cache warm, only the\n"
         "active one binds, after listing the pods afresh:\n"
         "  --leader-elect            compete for the Lease --leader-elect-lease (standalone\n"
         "                            replicas behind a Service)\n"
         "  --leader-elect-lease NS/NAME  the Lease competed for\n"
         "  --follow-lease NS/NAME    lead while the kube-scheduler beside this process (a "
         "sidecar\n"
         "                            in its pod) holds this Lease: its holder is the identity\n"
         "                            or starts with identity_ (kube-scheduler's hostname_UUID)\n"
         "  --leader-elect-identity NAME  holder identity (default: the host name, which in a\n"
         "                            pod is the pod's name)\n"
         "  --leader-elect-lease-duration D  a holder silent this long loses the Lease (default "
         "10s)\n"
         "  --leader-elect-renew-deadline D  binds stop D after the last confirmed renew (default "
         "7s)\n"
         "  --leader-elect-retry-period D    time between reads of the Lease (default 1s)\n"
         "  --publish-endpoint NS/SERVICE  the leader writes itself into EndpointSlice\n"
         "                            SERVICE-leader of that selector-less Service\n"
         "  --advertise-address IP    the address published (default: $POD_IP)\n"
         "Durations: a whole number with ms, s or m (500ms, 30s, 2m).\n";
}

Result<Invocation> parseCommandLine(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    return helpInvocation(topLevelHelp());
  }
  if (args[0] == "version" || args[0] == "--version") {
    if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
      return helpInvocation("Usage: gpu-topology-extender version\n");
    }
    Invocation inv;
    inv.command = Command::kVersion;
    return inv;
  }
  if (args[0] == "serve") return parseServe(args);
  if (args[0] == "explain") return parseExplain(args);
  if (args[0] == "whatif") return parseWhatif(args);
  if (args[0] == "nodes") return parseNodes(args);
  if (args[0] == "claim-template") return parseClaimTemplate(args);
  return invalidArgument("unknown command \"" + args[0] +
                         "\" (expected serve, explain, whatif, nodes, claim-template or version)");
}

}  // namespace gte::app
