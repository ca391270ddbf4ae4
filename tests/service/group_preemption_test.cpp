// Preempt for a member of a pod group with no plan yet (docs/groups.md#preemption): victims are
// kept only where the whole group can then land, in the domain whose freeing evicts the fewest
// pods, on the nodes there whose freeing evicts the fewest. DGX H100s in NVLink cliques, every GPU
// in use, either by four 2-GPU pods ("small": four victims) or by one 8-GPU pod ("big": one); a
// group of two 8-GPU members needs two nodes of one clique emptied.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"

using nlohmann::json;

namespace {

gte::PodInfo running(const std::string& name, const std::string& node, const std::string& gpus,
                     std::int64_t count, std::int64_t priority) {
  gte::PodInfo pod = gte::testing::makeGpuPod(name, count, {{"gputopo.dev/gpus", gpus}});
  pod.nodeName = node;
  pod.phase = "Running";
  pod.priority = priority;
  return pod;
}

std::int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Busy {
  const char* node;
  const char* clique;
  bool big;  // one 8-GPU pod, else four 2-GPU pods
  std::int64_t priority = -10;
  std::int64_t ranSeconds = 0;  // how long its pods have run (0: bind time unknown)
};

struct Cliques {
  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::unique_ptr<gte::cluster::StaticClusterBackend> backend;
  std::unique_ptr<gte::ExtenderService> service;
  // Node -> the UIDs kube-scheduler proposes as its victims (all of its pods).
  std::map<std::string, std::vector<std::string>> victims;

  // `nominatedOn`: the group's first member m0 is pending, nominated there by kube-scheduler's
  // preemption, whose victims are still terminating (kube-scheduler then proposes no victim on
  // that node for the next member: its nominated pod fills it).
  // `firstWaiting`: m0 is pending, not nominated (what the cache shows until the watch brings a
  // nomination).
  explicit Cliques(const std::vector<Busy>& layout, const std::string& nominatedOn = "",
                   bool firstWaiting = false) {
    std::vector<gte::NodeInfo> nodes;
    std::vector<gte::cluster::FilePod> pods;
    if (!nominatedOn.empty() || firstWaiting) {
      gte::PodInfo first = memberPod("m0");
      first.nominatedNodeName = nominatedOn;
      pods.push_back({first, std::nullopt});
    }
    for (const Busy& busy : layout) {
      const std::string name = busy.node;
      gte::NodeInfo node = gte::testing::makeDgxH100(
          gte::testing::FixtureState().withName(name).withUsed("11111111"));
      node.labels["nvidia.com/gpu.clique"] = busy.clique;
      // The agent's last pass came after the binds: its `used` counts the pods.
      if (busy.ranSeconds > 0) node.labels["gputopo.dev/gen"] = std::to_string(unixNow());
      nodes.push_back(std::move(node));
      const std::optional<std::int64_t> boundAt =
          busy.ranSeconds > 0 ? std::optional<std::int64_t>(unixNow() - busy.ranSeconds)
                              : std::nullopt;
      const auto add = [&](gte::PodInfo pod) {
        pod.boundAt = boundAt;  // as a cluster file item carries it
        pods.push_back({std::move(pod), boundAt});
      };
      if (busy.big) {
        const std::string pod = name + "-big";
        gte::PodInfo big = running(pod, name, "0,1,2,3,4,5,6,7", 8, busy.priority);
        big.deleting = name == nominatedOn;  // evicted for m0, still terminating
        add(big);
        if (name != nominatedOn) victims[name].push_back("uid-" + pod);
        continue;
      }
      for (int p = 0; p < 4; ++p) {
        const std::string pod = name + "-small-" + std::to_string(p);
        add(running(pod, name, std::to_string(2 * p) + "," + std::to_string(2 * p + 1), 2,
                    busy.priority));
        victims[name].push_back("uid-" + pod);
      }
    }
    backend = std::make_unique<gte::cluster::StaticClusterBackend>(
        gte::cluster::ClusterFileContents{std::move(nodes), std::move(pods), {}}, policy);
    service =
        std::make_unique<gte::ExtenderService>([this] { return policy; }, backend.get(), nullptr);
  }

  // A member of the group "job" of two 8-GPU pods, priority 100, pending.
  static gte::PodInfo memberPod(const std::string& name) {
    gte::PodInfo member = gte::testing::makeGpuPod(
        name, 8, {{"gputopo.dev/group", "job"}, {"gputopo.dev/group-size", "2"}});
    member.priority = 100;
    return member;
  }

  // The nodes preempt keeps for the member `name`, with the victims it keeps there.
  std::map<std::string, std::size_t> preempt(const std::string& name = "m0") const {
    const gte::PodInfo member = memberPod(name);
    json body;
    body["Pod"] = json::parse(gte::testing::podJson(member));
    body["NodeNameToVictims"] = nullptr;
    for (const auto& [node, uids] : victims) {
      json pods = json::array();
      for (const std::string& uid : uids)
        pods.push_back({{"UID", uid}});
      body["NodeNameToMetaVictims"][node] = {{"Pods", pods}, {"NumPDBViolations", 0}};
    }
    const gte::Reply reply = service->preempt(body.dump());
    REQUIRE(reply.status == 200);
    const json answer = json::parse(reply.body);
    std::map<std::string, std::size_t> kept;
    for (const auto& [node, entry] : answer["NodeNameToMetaVictims"].items())
      kept[node] = entry["Pods"].size();
    return kept;
  }
};

}  // namespace

TEST_CASE("a group's preemption frees the domain that evicts the fewest pods") {
  // Clique y: two evictions. Clique x (the planner's own pick on an emptied cluster, both cliques
  // being equally tight, x first by name) would take eight.
  const Cliques cluster(
      {{"x0", "x", false}, {"x1", "x", false}, {"y0", "y", true}, {"y1", "y", true}});
  CHECK(cluster.preempt() == std::map<std::string, std::size_t>{{"y0", 1}, {"y1", 1}});
}

TEST_CASE("inside the domain, a group's preemption empties the cheapest nodes") {
  // One clique of four: the planner on the emptied clique would take z0 and z1 (eight victims).
  const Cliques cluster(
      {{"z0", "z", false}, {"z1", "z", false}, {"z2", "z", true}, {"z3", "z", true}});
  CHECK(cluster.preempt() == std::map<std::string, std::size_t>{{"z2", 1}, {"z3", 1}});
}

TEST_CASE("as many victims either way, a group's preemption evicts the lower priorities") {
  const Cliques cluster({{"p0", "p", true, 50},
                         {"p1", "p", true, 50},
                         {"p2", "p", true, -10},
                         {"p3", "p", true, -10}});
  CHECK(cluster.preempt() == std::map<std::string, std::size_t>{{"p2", 1}, {"p3", 1}});
}

TEST_CASE("alike in victims and priorities, a group's preemption evicts the pods that ran least") {
  // Four 8-GPU pods of one priority in one clique: q0 and q1 have run two days, q2 and q3 ten
  // minutes. Emptying q2 and q3 evicts as many pods of the same priority and destroys the least
  // work; by name alone it would be q0 and q1.
  const Cliques cluster({{"q0", "q", true, 0, 2 * 86400},
                         {"q1", "q", true, 0, 2 * 86400},
                         {"q2", "q", true, 0, 600},
                         {"q3", "q", true, 0, 600}});
  CHECK(cluster.preempt() == std::map<std::string, std::size_t>{{"q2", 1}, {"q3", 1}});
}

TEST_CASE("a member's preemption stays in the domain a nominated member's preemption freed") {
  // m0 was nominated for y0, whose pod is still terminating. Planned afresh, the group of two
  // would go to clique x (two victims, against one on y1 plus four on y2 for clique y); m0 lands
  // on y0, so m1 takes y1 beside it.
  const Cliques cluster({{"y0", "y", true},
                         {"y1", "y", true},
                         {"y2", "y", false},
                         {"x0", "x", true},
                         {"x1", "x", true}},
                        "y0");
  CHECK(cluster.preempt("m1") == std::map<std::string, std::size_t>{{"y1", 1}});
}

namespace {

// Clique y frees the group at lower priorities than clique x (whose pods have priority 50), as
// long as both its nodes are candidates; without y0, clique y would take y1 and the four pods of
// y2 against x's two.
const std::vector<Busy> kAnsweredLayout = {{"y0", "y", true},
                                           {"y1", "y", true},
                                           {"y2", "y", false},
                                           {"x0", "x", true, 50},
                                           {"x1", "x", true, 50}};

}  // namespace

TEST_CASE("before the watch brings the nomination, a member's preemption follows the last answer") {
  Cliques cluster(kAnsweredLayout, "", /*firstWaiting=*/true);
  CHECK(cluster.preempt("m0") == std::map<std::string, std::size_t>{{"y0", 1}, {"y1", 1}});
  // kube-scheduler nominates m0 for y0 (no candidate there for m1 any more) and evicts y0's pod;
  // the cache has seen neither yet: m0 still waits, y0's pod still runs.
  cluster.victims.erase("y0");
  CHECK(cluster.preempt("m1") == std::map<std::string, std::size_t>{{"y1", 1}});
}

TEST_CASE("without the last answer, that member's preemption splits the group") {
  // The same moment on an extender that did not answer m0 (a new leader): planned afresh, the
  // group goes to clique x, away from m0's node.
  Cliques cluster(kAnsweredLayout, "", /*firstWaiting=*/true);
  cluster.victims.erase("y0");
  CHECK(cluster.preempt("m1") == std::map<std::string, std::size_t>{{"x0", 1}, {"x1", 1}});
}

TEST_CASE("an answered member the cache no longer shows waiting anchors nothing") {
  // m0 is not pending in the cache (deleted since): its answer does not hold m1 in clique y.
  Cliques cluster(kAnsweredLayout);
  CHECK(cluster.preempt("m0") == std::map<std::string, std::size_t>{{"y0", 1}, {"y1", 1}});
  cluster.victims.erase("y0");
  CHECK(cluster.preempt("m1") == std::map<std::string, std::size_t>{{"x0", 1}, {"x1", 1}});
}
