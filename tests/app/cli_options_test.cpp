#include "app/cli_options.h"
#include "app/claim_template_command.h"

#include <catch2/catch_test_macros.hpp>

using gte::app::ClusterSource;
using gte::app::Command;
using gte::app::parseCommandLine;

TEST_CASE("serve defaults match the documented ones") {
  auto inv = parseCommandLine({"serve"});
  REQUIRE(inv.ok());
  CHECK(inv->command == Command::kServe);
  CHECK(inv->serve.host == "127.0.0.1");
  CHECK(inv->serve.port == 8888);
  CHECK(inv->serve.pathPrefix == "/scheduler");
  CHECK(inv->serve.cluster == ClusterSource::kNone);
  CHECK(inv->serve.policyFile.empty());
}

TEST_CASE("serve flags, with and without '='") {
  auto inv =
      parseCommandLine({"serve", "--listen", "127.0.0.1:9000", "--path-prefix=/x", "--policy",
                        "p.yaml", "--kubeconfig", "kc", "--max-body-bytes", "2048", "--log-level",
                        "debug", "--tls-cert", "c", "--tls-key", "k"});
  REQUIRE(inv.ok());
  const auto& o = inv->serve;
  CHECK(o.host == "127.0.0.1");
  CHECK(o.port == 9000);
  CHECK(o.pathPrefix == "/x");
  CHECK(o.policyFile == "p.yaml");
  CHECK(o.cluster == ClusterSource::kKubeconfig);
  CHECK(o.kubeconfig == "kc");
  CHECK(o.maxBodyBytes == 2048);
  CHECK(o.logLevel == "debug");
  auto v6 = parseCommandLine({"serve", "--listen", "[::1]:8080"});
  REQUIRE(v6.ok());
  CHECK(v6->serve.host == "::1");
  // Port 0: the kernel picks a free one (the listening line names it).
  auto any = parseCommandLine({"serve", "--listen", "127.0.0.1:0"});
  REQUIRE(any.ok());
  CHECK(any->serve.port == 0);
  CHECK_FALSE(parseCommandLine({"serve", "--metrics-listen", "127.0.0.1:0"}).ok());
}

TEST_CASE("transport limits, timeouts and the probe port") {
  auto defaults = parseCommandLine({"serve"});
  REQUIRE(defaults.ok());
  CHECK(defaults->serve.maxHeaderBytes == 16384);
  CHECK(defaults->serve.maxConnections == 512);
  CHECK(defaults->serve.maxNodesPerRequest == 10000);
  CHECK(defaults->serve.requestTimeout == std::chrono::seconds(30));
  CHECK(defaults->serve.idleTimeout == std::chrono::seconds(120));
  CHECK(defaults->serve.tlsHandshakeTimeout == std::chrono::seconds(10));
  CHECK(defaults->serve.drainPeriod == std::chrono::seconds(5));
  CHECK(defaults->serve.shutdownGrace == std::chrono::seconds(20));
  CHECK(defaults->serve.metricsPort == 0);
  CHECK(defaults->serve.bindConcurrency == 64);
  CHECK(defaults->serve.bindDeadline == std::chrono::milliseconds(2500));
  CHECK(defaults->serve.apiWarmConnections == 16);
  CHECK(defaults->serve.healthPoolLabel.empty());

  auto inv = parseCommandLine({"serve",
                               "--max-header-bytes",
                               "4096",
                               "--max-connections=8",
                               "--max-nodes-per-request",
                               "100",
                               "--request-timeout",
                               "500ms",
                               "--idle-timeout",
                               "2m",
                               "--tls-handshake-timeout",
                               "3s",
                               "--shutdown-grace",
                               "0ms",
                               "--drain-period=1500ms",
                               "--decision-threads",
                               "3",
                               "--tls-cert",
                               "c",
                               "--tls-key",
                               "k",
                               "--tls-client-ca",
                               "ca",
                               "--metrics-listen",
                               ":9090",
                               "--bind-concurrency",
                               "8",
                               "--bind-deadline=5s",
                               "--api-warm-connections=0",
                               "--health-pool-label",
                               "cloud.google.com/gke-nodepool"});
  REQUIRE(inv.ok());
  const auto& o = inv->serve;
  CHECK(o.maxHeaderBytes == 4096);
  CHECK(o.maxConnections == 8);
  CHECK(o.maxNodesPerRequest == 100);
  CHECK(o.requestTimeout == std::chrono::milliseconds(500));
  CHECK(o.idleTimeout == std::chrono::minutes(2));
  CHECK(o.tlsHandshakeTimeout == std::chrono::seconds(3));
  CHECK(o.shutdownGrace == std::chrono::milliseconds(0));
  CHECK(o.drainPeriod == std::chrono::milliseconds(1500));
  CHECK(o.decisionThreads == 3);
  CHECK(o.tlsClientCaFile == "ca");
  CHECK(o.metricsHost == "0.0.0.0");
  CHECK(o.metricsPort == 9090);
  CHECK(o.bindConcurrency == 8);
  CHECK(o.bindDeadline == std::chrono::seconds(5));
  CHECK(o.apiWarmConnections == 0);
  CHECK(o.healthPoolLabel == "cloud.google.com/gke-nodepool");
}

TEST_CASE("bad command lines name the flag") {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  const Case cases[] = {
      {{"serve", "--listen", "nohost"}, "--listen"},
      {{"serve", "--listen", "h:99999"}, "port"},
      {{"serve", "--bogus"}, "unknown flag --bogus"},
      {{"serve", "--policy"}, "needs a value"},
      {{"serve", "--kubeconfig", "a", "--in-cluster"}, "mutually exclusive"},
      {{"serve", "--tls-cert", "c"}, "together"},
      {{"serve", "--max-body-bytes", "12x"}, "not a number"},
      {{"serve", "--log-level", "loud"}, "--log-level"},
      {{"serve", "--path-prefix", "noslash"}, "--path-prefix"},
      {{"serve", "--idle-timeout", "30"}, "500ms, 30s or 2m"},
      {{"serve", "--request-timeout", "1h"}, "--request-timeout"},
      {{"serve", "--request-timeout", "0s"}, "must be > 0"},
      {{"serve", "--max-connections", "0"}, "--max-connections: must be 1-"},
      {{"serve", "--max-header-bytes", "100"}, "--max-header-bytes"},
      {{"serve", "--tls-client-ca", "ca.pem"}, "needs --tls-cert"},
      {{"serve", "--metrics-listen", "9090"}, "--metrics-listen"},
      {{"serve", "--bind-concurrency", "0"}, "--bind-concurrency: must be 1-"},
      {{"serve", "--bind-deadline", "0ms"}, "--bind-deadline: must be > 0"},
      {{"serve", "--drain-period", "5"}, "--drain-period: expected a duration"},
      {{"serve", "--api-warm-connections", "2000"}, "--api-warm-connections: must be 0-"},
      {{"serve", "--api-warm-connections", "-1"}, "--api-warm-connections"},
      {{"frobnicate"}, "unknown command"},
  };
  for (const auto& c : cases) {
    auto inv = parseCommandLine(c.args);
    REQUIRE_FALSE(inv.ok());
    CHECK(inv.error().message.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("help and version") {
  CHECK(parseCommandLine({})->command == Command::kHelp);
  CHECK(parseCommandLine({"--help"})->helpText.find("serve") != std::string::npos);
  CHECK(parseCommandLine({"serve", "--help"})->helpText.find("--listen") != std::string::npos);
  CHECK(parseCommandLine({"version"})->command == Command::kVersion);
}

TEST_CASE("explain is served unless --disable-explain") {
  auto on = parseCommandLine({"serve"});
  REQUIRE(on.ok());
  CHECK(on->serve.explain);
  auto off = parseCommandLine({"serve", "--cluster-file", "c.yaml", "--disable-explain"});
  REQUIRE(off.ok());
  CHECK_FALSE(off->serve.explain);
}

TEST_CASE("the explain command: flags, defaults and errors that name the flag") {
  auto inv = parseCommandLine({"explain", "--url", "http://127.0.0.1:8888", "--pod", "ml/train"});
  REQUIRE(inv.ok());
  CHECK(inv->command == Command::kExplain);
  CHECK(inv->explain.url == "http://127.0.0.1:8888");
  CHECK(inv->explain.pod == "ml/train");
  CHECK(inv->explain.top == 0);
  CHECK(inv->explain.output == gte::app::OutputFormat::kTable);

  auto full = parseCommandLine(
      {"explain", "--url=http://h:1/base", "--pod=a/b", "--top", "5", "-o", "json"});
  REQUIRE(full.ok());
  CHECK(full->explain.top == 5);
  CHECK(full->explain.output == gte::app::OutputFormat::kJson);

  const auto error = [](std::vector<std::string> args) {
    auto r = parseCommandLine(args);
    return r.ok() ? std::string() : r.error().message;
  };
  CHECK(error({"explain", "--pod", "a/b"}).find("--url") != std::string::npos);
  CHECK(error({"explain", "--url", "https://h:1", "--pod", "a/b"}).find("--url") !=
        std::string::npos);
  CHECK(error({"explain", "--url", "http://h:1", "--pod", "nons"}).find("NAMESPACE/NAME") !=
        std::string::npos);
  CHECK(error({"explain", "--url", "http://h:1", "--pod", "a/b/c"}).find("--pod") !=
        std::string::npos);
  CHECK(error({"explain", "--url", "http://h:1", "--pod", "a/b", "-o", "yaml"}).find("-o") !=
        std::string::npos);
  CHECK(error({"explain", "--url", "http://h:1", "--pod", "a/b", "--top", "0"}).find("--top") !=
        std::string::npos);
  auto help = parseCommandLine({"explain", "--help"});
  REQUIRE(help.ok());
  CHECK(help->command == Command::kHelp);
  CHECK(help->helpText.find("--top N") != std::string::npos);
}

TEST_CASE("the claim-template command: flags, defaults and errors that name the flag") {
  auto inv = parseCommandLine({"claim-template", "--gpus", "4"});
  REQUIRE(inv.ok());
  CHECK(inv->command == gte::app::Command::kClaimTemplate);
  CHECK(inv->claimTemplate.gpus == 4);
  CHECK(inv->claimTemplate.deviceClass == "gpu.nvidia.com");
  CHECK_FALSE(inv->claimTemplate.nvswitchPartition);
  CHECK(inv->claimTemplate.output == gte::app::ManifestFormat::kYaml);
  auto all =
      parseCommandLine({"claim-template", "--gpus=8", "--name", "train", "-n", "ml",
                        "--device-class", "gpu.example.com", "--nvswitch-partition", "-o", "json"});
  REQUIRE(all.ok());
  CHECK(all->claimTemplate.name == "train");
  CHECK(all->claimTemplate.ns == "ml");
  CHECK(all->claimTemplate.deviceClass == "gpu.example.com");
  CHECK(all->claimTemplate.nvswitchPartition);
  CHECK(all->claimTemplate.output == gte::app::ManifestFormat::kJson);
  CHECK(parseCommandLine({"claim-template"}).error().message.find("--gpus") != std::string::npos);
  CHECK(parseCommandLine({"claim-template", "--gpus", "33"}).error().message.find("--gpus") !=
        std::string::npos);
  CHECK(parseCommandLine({"claim-template", "--gpus", "2", "-o", "xml"})
            .error()
            .message.find("yaml, json") != std::string::npos);
  auto help = parseCommandLine({"claim-template", "--help"});
  REQUIRE(help.ok());
  CHECK(help->helpText.find("firstAvailable") != std::string::npos);
  CHECK(help->helpText.find("--nvlink-island") != std::string::npos);
  auto island = parseCommandLine({"claim-template", "--gpus", "4", "--nvlink-island",
                                  "--companion-class", "links", "--companion-driver=t.example"});
  REQUIRE(island.ok());
  CHECK(island->claimTemplate.nvlinkIsland);
  CHECK(island->claimTemplate.companionClass == "links");
  CHECK(island->claimTemplate.companionDriver == "t.example");
  CHECK_FALSE(inv->claimTemplate.nvlinkIsland);
  CHECK(inv->claimTemplate.companionDriver == "topology.gputopo.dev");
  // A companion flag without --nvlink-island would shape nothing: refused, naming the flag.
  CHECK(parseCommandLine({"claim-template", "--gpus", "2", "--companion-class", "links"})
            .error()
            .message.find("--nvlink-island") != std::string::npos);
}

TEST_CASE("claim-template text: the manifest, or the builder's error naming the flag") {
  gte::app::ClaimTemplateOptions options;
  options.gpus = 2;
  options.output = gte::app::ManifestFormat::kJson;
  const auto json = gte::app::claimTemplateText(options);
  REQUIRE(json.ok());
  CHECK(json->find(R"("name":"gpus-2")") != std::string::npos);
  options.gpus = 3;
  options.nvswitchPartition = true;
  const auto refused = gte::app::claimTemplateText(options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("--nvswitch-partition") != std::string::npos);
}

TEST_CASE("whatif and nodes are served unless switched off; the what-if's bounds") {
  auto on = parseCommandLine({"serve"});
  REQUIRE(on.ok());
  CHECK(on->serve.whatif);
  CHECK(on->serve.nodes);
  CHECK(on->serve.whatifMaxPods == 1000);
  CHECK(on->serve.whatifDeadline == std::chrono::seconds(3));
  auto off = parseCommandLine({"serve", "--disable-whatif", "--disable-nodes", "--whatif-max-pods",
                               "50", "--whatif-deadline=500ms"});
  REQUIRE(off.ok());
  CHECK_FALSE(off->serve.whatif);
  CHECK_FALSE(off->serve.nodes);
  CHECK(off->serve.explain);
  CHECK(off->serve.whatifMaxPods == 50);
  CHECK(off->serve.whatifDeadline == std::chrono::milliseconds(500));
  CHECK_FALSE(parseCommandLine({"serve", "--whatif-max-pods", "0"}).ok());
  CHECK_FALSE(parseCommandLine({"serve", "--whatif-max-pods", "100001"}).ok());
  CHECK_FALSE(parseCommandLine({"serve", "--whatif-deadline", "0s"}).ok());
}

TEST_CASE("the whatif command: one pod form, its annotations, a CSV, a policy") {
  auto inv = parseCommandLine({"whatif", "--url", "http://127.0.0.1:8888", "--gpus", "8", "--count",
                               "3", "--min-link", "nvlink", "--policy", "new.yaml"});
  REQUIRE(inv.ok());
  CHECK(inv->command == Command::kWhatif);
  CHECK(inv->whatif.gpus == 8);
  CHECK(inv->whatif.count == 3);
  CHECK(inv->whatif.minLink == "nvlink");
  CHECK(inv->whatif.policyFile == "new.yaml");
  CHECK(inv->whatif.output == gte::app::OutputFormat::kTable);
  auto csv = parseCommandLine({"whatif", "--url=http://h:1", "--csv=pods.csv", "-o", "json"});
  REQUIRE(csv.ok());
  CHECK(csv->whatif.csvFile == "pods.csv");
  CHECK(csv->whatif.output == gte::app::OutputFormat::kJson);
  CHECK(parseCommandLine({"whatif", "--url=http://h:1", "--mig", "3g.40gb"}).ok());
  CHECK(parseCommandLine({"whatif", "--url=http://h:1", "--pod-file", "pod.json"}).ok());

  const auto error = [](std::vector<std::string> args) {
    auto r = parseCommandLine(args);
    return r.ok() ? std::string() : r.error().message;
  };
  CHECK(error({"whatif", "--gpus", "1"}).find("--url") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1"}).find("one of --gpus/--mig, --pod-file or --csv") !=
        std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "1", "--csv", "p.csv"}).find("one of") !=
        std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "0"}).find("--gpus: must be 1-1024") !=
        std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "99999"}).find("--gpus") !=
        std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "1", "--count", "0"})
            .find("--count: must be 1-1000000") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--csv", "p.csv", "--count", "2"})
            .find("--count: goes with") != std::string::npos);
  auto group =
      parseCommandLine({"whatif", "--url=http://h:1", "--gpus", "4", "--group-size", "16"});
  REQUIRE(group.ok());
  CHECK(group->whatif.groupSize == 16);
  CHECK(group->whatif.count == 0);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "1", "--group-size", "0"})
            .find("--group-size: must be 1-1000000") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--csv", "p.csv", "--group-size", "2"})
            .find("--group-size: goes with") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "1", "--count", "2", "--group-size", "2"})
            .find("either --count") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--csv", "p.csv", "--min-link", "nvlink"})
            .find("--min-link") != std::string::npos);
  CHECK(error({"whatif", "--url", "http://h:1", "--gpus", "1", "-o", "yaml"}).find("-o") !=
        std::string::npos);
  auto help = parseCommandLine({"whatif", "--help"});
  REQUIRE(help.ok());
  CHECK(help->helpText.find("--policy FILE") != std::string::npos);
  CHECK(help->helpText.find("--group-size M") != std::string::npos);
}

TEST_CASE("the nodes command") {
  auto inv = parseCommandLine({"nodes", "--url", "http://h:1", "--node", "dgx1", "--limit", "5"});
  REQUIRE(inv.ok());
  CHECK(inv->command == Command::kNodes);
  CHECK(inv->nodes.node == "dgx1");
  CHECK(inv->nodes.limit == 5);
  CHECK_FALSE(parseCommandLine({"nodes"}).ok());
  CHECK_FALSE(parseCommandLine({"nodes", "--url", "http://h:1", "--limit", "0"}).ok());
  CHECK(parseCommandLine({"nodes", "--help"})->helpText.find("--node NAME") != std::string::npos);
  CHECK(parseCommandLine({"--help"})->helpText.find("whatif") != std::string::npos);
}
