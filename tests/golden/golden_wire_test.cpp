// Golden wire tests: request bodies as kube-scheduler (or a user of explain) sends them, and the
// exact bytes the extender must answer, for every verb in both cache modes and every refusal of
// the error table (service/error_reply.h). A case is tests/golden/cases/<verb>-<mode>-*.
// request.json + .response.json, <verb> one of filter, prioritize, bind, preempt, explain, whatif,
// nodes (a GET: its request file holds the query string, empty for none), and <mode>:
//   nodes     no cluster: full Node objects in the request (kube-scheduler's nodeCacheCapable:
//             false, the binary with no cluster flag);
//   names     nodeCacheCapable: the cluster in tests/golden/cluster.yaml, full Node objects refused
//             (the binary with --cluster-file);
//   unsynced  a cluster cache whose first full list is not in yet;
//   groups    pod groups: the cluster in tests/golden/groups-cluster.yaml (NVLink cliques).
// A case may come with <name>.before: lines "<verb> <case>" whose requests are sent first on the
// same cluster (a group's first member, a bind), so that a case shows how a later member or another
// pod is answered. Each case goes through the Router, as the binary serves it, with at most
// kMaxNodes nodes per request (--max-nodes-per-request). The response file holds
// "<status> <body>". After a deliberate change of the wire output, regenerate with
// GTE_UPDATE_GOLDEN=1 and review the diff.
#include <catch2/catch_test_macros.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "server/router.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(GTE_SOURCE_DIR) / "tests" / "golden";
constexpr std::size_t kMaxNodes = 6;

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

// The cluster cache before its first full list: every read of it waits for the list.
class UnsyncedCache final : public gte::ClusterBackend {
 public:
  explicit UnsyncedCache(gte::PolicyConstSharedPtr policy) {
    auto empty = std::make_shared<gte::ClusterSnapshot>();
    empty->policy = std::move(policy);
    snapshot_ = std::move(empty);
  }
  gte::ClusterSnapshotConstSharedPtr snapshot() const override { return snapshot_; }
  bool ready() const override { return false; }
  bool healthy(std::string* /*why*/) const override { return true; }
  gte::Status bind(const gte::BindRequest& /*request*/) override { return notListed(); }
  std::optional<gte::PodInfo> podByUid(const std::string& /*uid*/) const override { return {}; }
  gte::Result<gte::PodInfo> podByName(const std::string& /*ns*/,
                                      const std::string& /*name*/) const override {
    return notListed();
  }
  std::vector<gte::PodInfo> podsOnNode(const std::string& /*node*/) const override { return {}; }

 private:
  static gte::Error notListed() { return {gte::ErrorCode::kUnavailable, "cache not synced"}; }

  gte::ClusterSnapshotConstSharedPtr snapshot_;
};

// The case's cluster, as the binary would run for its mode (null: no cluster flag).
std::unique_ptr<gte::ClusterBackend> clusterFor(const std::string& mode,
                                                const gte::PolicyConstSharedPtr& policy) {
  if (mode == "nodes") return nullptr;
  if (mode == "unsynced") return std::make_unique<UnsyncedCache>(policy);
  REQUIRE((mode == "names" || mode == "groups"));
  const char* file = mode == "groups" ? "groups-cluster.yaml" : "cluster.yaml";
  auto loaded = gte::cluster::StaticClusterBackend::fromFile((kDir / file).string(), policy);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
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
    const std::string mode =
        name.substr(verb.size() + 1, name.find('-', verb.size() + 1) - verb.size() - 1);
    CAPTURE(name);
    // A fresh cluster per case: bind changes it.
    const std::unique_ptr<gte::ClusterBackend> cluster = clusterFor(mode, policy);
    gte::ExtenderService service([policy] { return policy; }, cluster.get(), nullptr);
    gte::server::RouterOptions options;
    options.maxNodesPerRequest = kMaxNodes;
    options.namesOnly = cluster != nullptr;
    const gte::server::Router router("/scheduler", service, nullptr, "{}", options);
    const fs::path before = kDir / "cases" / (name + ".before");
    if (fs::exists(before)) {
      std::istringstream steps(readFile(before));
      std::string step;
      while (std::getline(steps, step)) {
        if (step.empty() || step[0] == '#') continue;
        const std::string stepVerb = step.substr(0, step.find(' '));
        const std::string stepCase = step.substr(step.find(' ') + 1);
        CAPTURE(step);
        std::optional<gte::Reply> stepReply;
        router.dispatch("POST", "/scheduler/" + stepVerb,
                        readFile(kDir / "cases" / (stepCase + ".request.json")),
                        [&stepReply](gte::Reply r) { stepReply = std::move(r); });
        REQUIRE(stepReply.has_value());
        REQUIRE(stepReply->status == 200);
      }
    }
    std::optional<gte::Reply> reply;
    const bool get = verb == "nodes";
    const std::string request = readFile(entry.path());
    router.dispatch(get ? "GET" : "POST", "/scheduler/" + verb + (get ? request : ""),
                    get ? std::string() : request,
                    [&reply](gte::Reply r) { reply = std::move(r); });
    REQUIRE(reply.has_value());  // no case waits on an API server: bind answers inline
    const fs::path expectedPath = kDir / "cases" / (name + ".response.json");
    const std::string actual = std::to_string(reply->status) + " " + reply->body;
    if (update) {
      std::ofstream(expectedPath, std::ios::binary) << actual << "\n";
    }
    CHECK(actual == readFile(expectedPath));
    ++cases;
  }
  CHECK(cases >= 45);
}
