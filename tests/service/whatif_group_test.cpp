// The group what-if (`groupSize`) through ExtenderService on the golden groups cluster
// (tests/golden/groups-cluster.yaml: GB200 trays in cliques nvl-a (a0, a1) and nvl-b (b0, b1, b2
// with GPUs 0-1 in use), and an unlabelled DGX H100 h0): the group planner's answer, the same plan
// filter commits for a real group, read-only, what it strands adding up, a group that fits no
// clique, a proposed policy side by side, and the group-only refusals.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"
#include "whatif_cluster.h"

using nlohmann::json;

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/groups-cluster.yaml";

struct Groups : gte::testing::WhatifCluster {
  explicit Groups(gte::WhatifLimits limits = {}) : WhatifCluster(kClusterFile, limits) {}
};

std::string podJson(const std::string& name, int gpus, const std::string& annotations = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","annotations":)" + annotations +
         R"(},"spec":{"containers":[{"name":"m","resources":{"limits":{)" +
         R"("nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}}]}})";
}

std::string groupBody(const std::string& name, int gpus, int size, const std::string& extra = "") {
  return R"({"pod":)" + podJson(name, gpus) + R"(,"groupSize":)" + std::to_string(size) + extra +
         "}";
}

json whatif(const gte::ExtenderService& service, const std::string& body) {
  const gte::Reply reply = service.whatif(body);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

std::vector<int> sets(const json& object) {
  return {object["1"], object["2"], object["4"], object["8"]};
}

}  // namespace

TEST_CASE("a group what-if answers the plan filter commits for the same group", "[groups]") {
  Groups g;
  const json answer = whatif(*g.service, groupBody("llm", 4, 2));
  CHECK(answer["mode"] == "group");
  CHECK(answer["pods"] == 2);
  const json& run = answer["policies"][0];
  CHECK(run["placed"] == 2);
  // 4-GPU slots: nvl-a 2 (a0, a1), nvl-b 2 (b0, b1); free GPUs 8 against 10: nvl-a, nothing left.
  CHECK(run["group"]["status"] == "planned");
  CHECK(run["group"]["level"] == "nvidia.com/gpu.clique");
  CHECK(run["group"]["domains"]["nvidia.com/gpu.clique"] == "nvl-a");
  CHECK(run["group"]["reason"] == "nvidia.com/gpu.clique=nvl-a: best fit, 0 free GPUs left over");
  REQUIRE(run["group"]["verdicts"].size() == 2);
  CHECK(run["group"]["verdicts"][1]["verdict"] ==
        "best fit prefers nvl-a (0 free GPUs left over there, 2 here)");

  // The real group llm (llm-0, llm-1 in the file, 2 x 4 GPUs): its first member's filter commits
  // the same nodes and GPU sets, in the same order.
  const std::string filterBody =
      R"({"Pod":{"metadata":{"name":"llm-0","namespace":"ml","uid":"llm-0-uid","annotations":)"
      R"({"gputopo.dev/group":"llm","gputopo.dev/group-size":"2"}},"spec":{"containers":)"
      R"([{"name":"m","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}},"Nodes":null,)"
      R"("NodeNames":["a0","a1","b0","b1","b2","h0"]})";
  REQUIRE(g.service->filter(filterBody).status == 200);
  const auto committed = g.cluster->snapshot()->groupPlan("ml/annotation/llm");
  REQUIRE(committed != nullptr);
  REQUIRE(committed->plan.slots.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const json& member = run["placements"][i];
    CHECK(member["node"] == committed->plan.slots[i].node);
    CHECK(member["gpus"].get<std::vector<int>>() == committed->plan.slots[i].allocation.gpus);
    CHECK(member["weakestLink"] == "nvlink");
  }

  // With llm holding nvl-a now, the same what-if goes to nvl-b: holds count as taken.
  const json after = whatif(*g.service, groupBody("llm", 4, 2));
  CHECK(after["policies"][0]["group"]["domains"]["nvidia.com/gpu.clique"] == "nvl-b");
  CHECK(after["policies"][0]["placements"][0]["node"] == "b0");
  CHECK(after["policies"][0]["placements"][1]["node"] == "b1");
}

TEST_CASE("a group what-if holds nothing and changes nothing", "[groups]") {
  Groups g;
  const auto before = g.cluster->snapshot();
  const json answer = whatif(*g.service, groupBody("job", 4, 2));
  CHECK(g.cluster->snapshot() == before);
  CHECK(g.cluster->snapshot()->generation == before->generation);
  CHECK(g.cluster->state().heldSlotCount() == 0);
  CHECK(g.cluster->snapshot()->groupPlan("ml/annotation/job") == nullptr);

  // What each member strands adds up: the cluster's sets before, less each member's node before,
  // plus its node after, are the cluster's after that member.
  const json& run = answer["policies"][0];
  std::vector<int> cluster = sets(run["clusterFreeSetsBefore"]);
  for (const json& member : run["placements"]) {
    const std::vector<int> nodeBefore = sets(member["nodeFreeSetsBefore"]);
    const std::vector<int> nodeAfter = sets(member["nodeFreeSetsAfter"]);
    for (std::size_t k = 0; k < 4; ++k)
      cluster[k] += nodeAfter[k] - nodeBefore[k];
    CHECK(sets(member["clusterFreeSetsAfter"]) == cluster);
    // A whole GB200 tray taken: its 4/2/1/0 sets go to 0/0/0/0.
    CHECK(nodeBefore == std::vector<int>{4, 2, 1, 0});
    CHECK(nodeAfter == std::vector<int>{0, 0, 0, 0});
  }
  CHECK(sets(run["clusterFreeSetsAfter"]) == cluster);
}

TEST_CASE("a group no clique can hold is refused with the planner's reason", "[groups]") {
  Groups g;
  const json answer = whatif(*g.service, groupBody("big", 4, 3));
  const json& run = answer["policies"][0];
  CHECK(run["placed"] == 0);
  CHECK(run["group"]["status"] == "no-room");
  CHECK(run["group"]["level"].is_null());
  const std::string reason =
      "no nvidia.com/gpu.clique domain can hold group ml/big: 3 pods x 4 GPUs now; largest free: "
      "2 of 3 slots in nvidia.com/gpu.clique=nvl-a";
  CHECK(run["group"]["reason"] == reason);
  REQUIRE(run["placements"].size() == 3);
  for (const json& member : run["placements"]) {
    CHECK(member["node"].is_null());
    CHECK(member["reason"] == reason);
  }
  // Spanning cliques on purpose (the pod's own modes): planned by per-node GPU sets.
  const std::string wide =
      R"({"pod":)" +
      podJson("wide", 4,
              R"({"gputopo.dev/group":"wide","gputopo.dev/group-size":"3",)"
              R"("gputopo.dev/group-levels":"nvidia.com/gpu.clique=preferred"})") +
      R"(,"groupSize":3})";
  const json spanning = whatif(*g.service, wide);
  CHECK(spanning["policies"][0]["group"]["status"] == "planned");
  CHECK(spanning["policies"][0]["placed"] == 3);
}

TEST_CASE("a group what-if under a proposed policy runs beside the running one", "[groups]") {
  Groups g;
  // The clique level only preferred: the three-member group no clique can hold is planned.
  const std::string policy =
      R"(groups:\n  levels:\n    - {label: nvidia.com/gpu.clique, mode: preferred}\n)"
      R"(    - {label: network.topology.nvidia.com/accelerator, mode: preferred}\n)"
      R"(    - {label: network.topology.nvidia.com/block, mode: preferred}\n)"
      R"(    - {label: network.topology.nvidia.com/spine, mode: preferred}\n)";
  const json answer =
      whatif(*g.service, groupBody("big", 4, 3, R"(,"policy":")" + policy + R"(")"));
  REQUIRE(answer["policies"].size() == 2);
  CHECK(answer["policies"][0]["group"]["status"] == "no-room");
  CHECK(answer["policies"][1]["name"] == "proposed");
  CHECK(answer["policies"][1]["group"]["status"] == "planned");
  CHECK(answer["policies"][1]["placed"] == 3);
}

TEST_CASE("group what-if input errors", "[groups]") {
  Groups g(gte::WhatifLimits{5, std::chrono::seconds(10)});
  const std::string pod = podJson("job", 4);
  struct Case {
    std::string body;
    int status;
    std::string says;
  };
  const Case cases[] = {
      {R"({"pod":)" + pod + R"(,"groupSize":0})", 400, "groupSize: must be at least 1"},
      {R"({"pod":)" + pod + R"(,"groupSize":"2"})", 400,
       "groupSize: expected a whole number of members"},
      {R"({"pod":)" + pod + R"(,"groupSize":6})", 413,
       "groupSize: 6 pods exceed the what-if limit of 5 (--whatif-max-pods)"},
      {R"({"pod":)" + pod + R"(,"groupSize":2,"count":2})", 400,
       "groupSize: give either \"count\""},
      {R"({"csv":"name,cpu_milli,memory_mib,num_gpu\na,1,1,1\n","groupSize":2})", 400,
       "groupSize: goes with \"pod\""},
      {R"({"pod":)" + pod +
           R"(,"groupSize":2,"policy":"groups:\n  levels:\n    - {label: rack, mode: required}\n"})",
       400, "policy: groups.levels name other labels than the running policy's"},
      {R"({"pod":)" + podJson("job", 4, R"({"gputopo.dev/group":"job"})") + R"(,"groupSize":2})",
       400, "pod: annotation gputopo.dev/group-size: required"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    const gte::Reply reply = g.service->whatif(c.body);
    CHECK(reply.status == c.status);
    CHECK(json::parse(reply.body)["Error"].get<std::string>().find(c.says) != std::string::npos);
  }
  // Past the deadline before the planner runs: 413, nothing partial.
  Groups late(gte::WhatifLimits{100, std::chrono::milliseconds(0)});
  const gte::Reply stopped = late.service->whatif(groupBody("job", 4, 2));
  CHECK(stopped.status == 413);
  CHECK(stopped.body.find("ran past its deadline of 0 ms") != std::string::npos);
}

// A group the planner leaves to per-pod placement ("placed one by one") showed none placed: the
// what-if now places its members as the extender then would, one after another.
TEST_CASE("a group placed one by one is shown placed one by one", "[groups]") {
  gte::testing::WhatifCluster golden(std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml",
                                     {});
  const std::string mig =
      R"({"metadata":{"name":"m","namespace":"ml"},"spec":{"containers":[{"name":"m",)"
      R"("resources":{"limits":{"nvidia.com/mig-1g.10gb":"1"}}}]}})";
  const json answer = whatif(*golden.service, R"({"pod":)" + mig + R"(,"groupSize":2})");
  const json& run = answer["policies"][0];
  CHECK(run["group"]["status"] == "unsupported");
  CHECK(run["group"]["reason"].get<std::string>().find("placed one by one") != std::string::npos);
  CHECK(run["placed"] == 2);
  for (const json& placement : run["placements"]) {
    CHECK(placement["node"] == "a100");
    CHECK(placement["mig"].is_object());
  }
}
