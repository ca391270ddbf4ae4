// Command-line parsing of gpu-topology-agent: every flag and error a user can hit.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "agent/agent_options.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using namespace std::chrono_literals;

Result<AgentInvocation> parse(std::vector<std::string> args,
                              std::optional<std::string> nodeEnv = std::nullopt) {
  return parseAgentCommandLine(args, nodeEnv);
}

TEST_CASE("discover: text captures switch NVML off", "[agent][options]") {
  auto inv = parse({"discover", "--topo-file", "a", "--topo-mp-file=b", "--mig-file", "c",
                    "--model", "M", "--used", "0101", "--gen", "42"});
  REQUIRE(inv.ok());
  CHECK(inv->command == AgentCommand::kDiscover);
  CHECK_FALSE(inv->source.nvml);
  CHECK(inv->source.topoMpFile == "b");
  CHECK(inv->source.used == "0101");
  CHECK(inv->generation == 42);
  auto nvml = parse({"discover", "--nvml", "--nvml-lib", "/x/libnvidia-ml.so.1"});
  REQUIRE(nvml.ok());
  CHECK(nvml->source.nvml);
  CHECK(nvml->source.nvmlLib == "/x/libnvidia-ml.so.1");
}

TEST_CASE("discover: errors name the flag", "[agent][options]") {
  CHECK_THAT(parse({"discover", "--mig-file", "c"}).error().message,
             ContainsSubstring("need --topo-file"));
  CHECK_THAT(parse({"discover", "--topo-file"}).error().message,
             ContainsSubstring("--topo-file needs a value"));
  CHECK_THAT(parse({"discover", "--bogus"}).error().message,
             ContainsSubstring("unknown flag --bogus"));
  CHECK_THAT(parse({"discover", "--gen", "x"}).error().message, ContainsSubstring("--gen"));
  CHECK_THAT(parse({"discover", "--label-prefix", "x.dev"}).error().message,
             ContainsSubstring("must end with '/'"));
}

TEST_CASE("run: node from the flag or NODE_NAME, durations, access", "[agent][options]") {
  auto inv = parse({"run", "--in-cluster", "--interval", "1m", "--min-interval=500ms", "--listen",
                    "127.0.0.1:9000"},
                   "node-from-env");
  REQUIRE(inv.ok());
  CHECK(inv->run.node == "node-from-env");
  CHECK(inv->run.access == ClusterAccess::kInCluster);
  CHECK(inv->run.interval == 60s);
  CHECK(inv->run.minInterval == 500ms);
  CHECK(inv->run.listen == "127.0.0.1:9000");
  auto flag = parse({"run", "--node", "n1", "--kubeconfig", "k", "--cleanup"}, "other");
  REQUIRE(flag.ok());
  CHECK(flag->run.node == "n1");
  CHECK(flag->run.kubeconfig == "k");
  CHECK(flag->run.cleanup);
  CHECK(flag->run.interval == 30s);
  CHECK(flag->run.minInterval == 10s);
}

TEST_CASE("run: errors", "[agent][options]") {
  CHECK_THAT(parse({"run", "--in-cluster"}).error().message, ContainsSubstring("NODE_NAME"));
  CHECK_THAT(parse({"run", "--node", "n"}).error().message,
             ContainsSubstring("--kubeconfig or --in-cluster"));
  CHECK(parse({"run", "--node", "n", "--dry-run"}).ok());
  CHECK_THAT(parse({"run", "--node", "n", "--dry-run", "--interval", "5s"}).error().message,
             ContainsSubstring("--interval must not be shorter than --min-interval"));
  CHECK_THAT(parse({"run", "--node", "n", "--dry-run", "--interval", "5x"}).error().message,
             ContainsSubstring("units ms, s, m, h"));
}

TEST_CASE("run: --companion-slice and --companion-driver", "[agent][options]") {
  auto off = parse({"run", "--node", "n", "--dry-run"});
  REQUIRE(off.ok());
  CHECK_FALSE(off->run.companionSlice);
  CHECK(off->run.companionDriver == "topology.gputopo.dev");
  auto on = parse({"run", "--node", "n", "--dry-run", "--companion-slice",
                   "--companion-driver=links.example.com"});
  REQUIRE(on.ok());
  CHECK(on->run.companionSlice);
  CHECK(on->run.companionDriver == "links.example.com");
  CHECK_THAT(
      parse({"run", "--node", "n", "--dry-run", "--companion-driver", "Bad_Name"}).error().message,
      ContainsSubstring("--companion-driver"));
  // Text captures have no PCI bus ids, which tie a companion to its GPU.
  CHECK_THAT(parse({"run", "--node", "n", "--dry-run", "--companion-slice", "--topo-file", "t"})
                 .error()
                 .message,
             ContainsSubstring("needs NVML discovery"));
  CHECK_THAT(agentHelp(), ContainsSubstring("--companion-slice"));
}

TEST_CASE("run: --device-plugin-config and its default key", "[agent][options][sharing]") {
  auto on = parse({"run", "--node", "n", "--in-cluster", "--device-plugin-config",
                   "gpu-operator/time-slicing-config", "--device-plugin-config-default=any"});
  REQUIRE(on.ok());
  CHECK(on->run.devicePluginConfigNamespace == "gpu-operator");
  CHECK(on->run.devicePluginConfigName == "time-slicing-config");
  CHECK(on->run.devicePluginConfigDefault == "any");
  CHECK(parse({"run", "--node", "n", "--in-cluster"})->run.devicePluginConfigName.empty());
  for (const char* bad : {"config", "/config", "ns/", "a/b/c"}) {
    INFO(bad);
    CHECK_THAT(parse({"run", "--node", "n", "--in-cluster", "--device-plugin-config", bad})
                   .error()
                   .message,
               ContainsSubstring("want NAMESPACE/NAME"));
  }
  CHECK_THAT(parse({"run", "--node", "n", "--in-cluster", "--device-plugin-config-default", "x"})
                 .error()
                 .message,
             ContainsSubstring("needs --device-plugin-config"));
  CHECK_THAT(
      parse({"run", "--node", "n", "--dry-run", "--device-plugin-config", "a/b"}).error().message,
      ContainsSubstring("not --dry-run"));
  CHECK_THAT(agentHelp(), ContainsSubstring("--device-plugin-config NS/NAME"));
}

TEST_CASE("help, version and unknown commands", "[agent][options]") {
  CHECK(parse({})->command == AgentCommand::kHelp);
  CHECK_THAT(parse({"--help"})->helpText, ContainsSubstring("discover"));
  CHECK(parse({"version"})->command == AgentCommand::kVersion);
  CHECK_THAT(parse({"serve"}).error().message, ContainsSubstring("unknown command 'serve'"));
}

TEST_CASE("health flags: thresholds, window, defaults and errors", "[agent][options][health]") {
  auto defaults = parse({"run", "--node", "n1", "--dry-run"});
  REQUIRE(defaults.ok());
  CHECK(defaults->source.health.recoveryPerHour == 2);
  CHECK(defaults->source.health.replayPerHour == 100);
  CHECK(defaults->source.health.window == 3600s);
  auto set = parse({"run", "--node", "n1", "--dry-run", "--nvlink-recovery-per-hour", "0.5",
                    "--nvlink-replay-per-hour=0", "--health-window", "30m"});
  REQUIRE(set.ok());
  CHECK(set->source.health.recoveryPerHour == 0.5);
  CHECK(set->source.health.replayPerHour == 0);
  CHECK(set->source.health.window == 1800s);
  auto discover = parse({"discover", "--health", "--health-window", "2h"});
  REQUIRE(discover.ok());
  CHECK(discover->source.healthReport);
  CHECK(discover->source.health.window == 7200s);
  CHECK_THAT(
      parse({"run", "--node", "n1", "--dry-run", "--nvlink-replay-per-hour", "-1"}).error().message,
      ContainsSubstring("--nvlink-replay-per-hour: not a non-negative number"));
  CHECK_THAT(parse({"run", "--node", "n1", "--dry-run", "--nvlink-recovery-per-hour", "x"})
                 .error()
                 .message,
             ContainsSubstring("--nvlink-recovery-per-hour"));
  CHECK_THAT(
      parse({"run", "--node", "n1", "--dry-run", "--health-window", "500ms"}).error().message,
      ContainsSubstring("at least 1s"));
  CHECK_THAT(parse({"discover", "--health", "--topo-file", "a"}).error().message,
             ContainsSubstring("--health needs NVML"));
}

}  // namespace
}  // namespace gte::agent
