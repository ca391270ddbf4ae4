#include "app/cli_options.h"

#include <catch2/catch_test_macros.hpp>

using gte::app::ClusterSource;
using gte::app::Command;
using gte::app::parseCommandLine;

TEST_CASE("serve defaults match the documented ones") {
  auto inv = parseCommandLine({"serve"});
  REQUIRE(inv.ok());
  CHECK(inv->command == Command::kServe);
  CHECK(inv->serve.host == "0.0.0.0");
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
