// Golden wire tests: request bodies as kube-scheduler sends them, and the exact bytes the extender
// must answer, for every verb in both cache modes. A case is tests/golden/cases/<verb>-<mode>-*.
// request.json + .response.json; <mode> is "nodes" (no cluster: full Node objects in the request)
// or "names" (nodeCacheCapable: the cluster in tests/golden/cluster.yaml). After a deliberate
// change of the wire output, regenerate with GTE_UPDATE_GOLDEN=1 and review the diff.
#include <catch2/catch_test_macros.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(GTE_SOURCE_DIR) / "tests" / "golden";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

gte::ServiceReply call(const gte::ExtenderService& service, const std::string& verb,
                       const std::string& body) {
  if (verb == "filter") return service.filter(body);
  if (verb == "prioritize") return service.prioritize(body);
  if (verb == "bind") {
    gte::ServiceReply reply;
    service.bind(body, [&reply](gte::ServiceReply r) { reply = std::move(r); });
    return reply;  // the static cluster backend binds inline
  }
  return service.preempt(body);
}

}  // namespace

TEST_CASE("Golden request/response pairs, byte for byte") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const bool update = std::getenv("GTE_UPDATE_GOLDEN") != nullptr;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(kDir / "cases")) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".request.json";
    if (!file.ends_with(suffix)) continue;
    const std::string name = file.substr(0, file.size() - suffix.size());
    const std::string verb = name.substr(0, name.find('-'));
    const bool namesMode = name.find("-names-") != std::string::npos;
    // A fresh cluster per case: bind changes it.
    std::unique_ptr<gte::cluster::StaticClusterBackend> cluster;
    if (namesMode) {
      auto loaded =
          gte::cluster::StaticClusterBackend::fromFile((kDir / "cluster.yaml").string(), policy);
      REQUIRE(loaded.ok());
      cluster = std::move(*loaded);
    }
    gte::ExtenderService service([policy] { return policy; }, cluster.get(), nullptr);
    const auto reply = call(service, verb, readFile(entry.path()));
    const fs::path expectedPath = kDir / "cases" / (name + ".response.json");
    const std::string actual = std::to_string(reply.status) + " " + reply.body;
    if (update) {
      std::ofstream(expectedPath, std::ios::binary) << actual << "\n";
    }
    CAPTURE(name);
    CHECK(actual == readFile(expectedPath));
    ++cases;
  }
  CHECK(cases >= 8);
}
