// A policy change without a restart, as an admin makes it by editing the ConfigMap: the running
// binary picks up a valid file (new hash in /metrics, new ranking), keeps the last good policy when
// the file turns invalid, and says so in its log and metrics.
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "extender_process.h"
#include "http_test_client.h"

using gte::testing::ExtenderProcess;
using gte::testing::httpRequest;

namespace {

std::string policyHashIn(const std::string& metrics) {
  const std::string key = "gpu_topology_extender_policy_info{hash=\"";
  const auto at = metrics.find(key);
  if (at == std::string::npos) return {};
  return metrics.substr(at + key.size(), 16);
}

std::string currentHash(std::uint16_t port) {
  return policyHashIn(httpRequest(port, "GET", "/metrics").body);
}

// Polls (bounded) until `pred` holds; the store re-reads the file every 5 s.
template <typename Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 150; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

void writeAtomically(const std::filesystem::path& path, const std::string& text) {
  // ConfigMap volumes swap a symlink; a rename is the same for a reader: never a half file.
  const auto tmp = path.string() + ".tmp";
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);
}

}  // namespace

TEST_CASE("The policy file is reloaded on change and a broken one keeps the last good policy") {
  char tmpl[] = "/tmp/gte-policy-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl);
  const auto file = dir / "scheduler-policy.yaml";
  writeAtomically(file, "strategy: binpack\n");
  ExtenderProcess ext({"--policy", file.string()});
  REQUIRE(ext.running());
  const std::string first = currentHash(ext.port());
  REQUIRE(first.size() == 16);

  writeAtomically(file, "strategy: spread\n");
  REQUIRE(eventually([&] { return currentHash(ext.port()) != first; }));
  const std::string second = currentHash(ext.port());
  CHECK(ext.log().find("policy loaded") != std::string::npos);

  writeAtomically(file, "strategy: sideways\n");
  REQUIRE(eventually([&] {
    return httpRequest(ext.port(), "GET", "/metrics")
               .body.find("gpu_topology_extender_policy_reloads_total{result=\"error\"} 1") !=
           std::string::npos;
  }));
  CHECK(currentHash(ext.port()) == second);  // the last good policy stays active
  const std::string log = ext.log();
  CHECK(log.find("policy reload failed; keeping the last good policy") != std::string::npos);
  CHECK(log.find("strategy") != std::string::npos);  // the message names the key
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);

  std::filesystem::remove_all(dir);
}
