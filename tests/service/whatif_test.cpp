// The what-if through ExtenderService on the golden cluster (tests/golden/cluster.yaml): the pod
// goes where filter and prioritize rank it first, with the GPUs explain predicts; N pods land one
// after another on the evolving copy; what each strands adds up; a proposed policy runs beside
// the running one; the live cache (snapshot, charges, reservations) is exactly as before; and
// every bad input is a clear error through the error table, within the limits.
#include <catch2/catch_test_macros.hpp>
#include <condition_variable>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"
#include "whatif_cluster.h"

using nlohmann::json;

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";

struct Golden : gte::testing::WhatifCluster {
  explicit Golden(gte::WhatifLimits limits = {}) : WhatifCluster(kClusterFile, limits) {}
};

std::string podJson(int gpus, const std::string& annotations = "{}") {
  return R"({"metadata":{"name":"probe","namespace":"ml","annotations":)" + annotations +
         R"(},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]}})";
}

std::string whatifBody(int gpus, int count, const std::string& extra = "") {
  return R"({"pod":)" + podJson(gpus) + R"(,"count":)" + std::to_string(count) + extra + "}";
}

json whatif(const gte::ExtenderService& service, const std::string& body) {
  const gte::Reply reply = service.whatif(body);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

std::string explainBody(int gpus) {
  return R"({"Pod":)" + podJson(gpus) +
         R"(,"Nodes":null,"NodeNames":["a100","broken","dgx1","gfd","pcie4"]})";
}

std::vector<int> sets(const json& object) {
  return {object["1"], object["2"], object["4"], object["8"]};
}

}  // namespace

TEST_CASE("a what-if of one pod picks a node filter and prioritize rank first, with its GPUs") {
  Golden golden;
  for (int gpus : {1, 2, 4}) {
    CAPTURE(gpus);
    const json doc = whatif(*golden.service, whatifBody(gpus, 1));
    const json explained = json::parse(golden.service->explain(explainBody(gpus)).body);
    int best = -1;
    std::map<std::string, json> byName;
    for (const json& node : explained["nodes"]) {
      byName[node["name"]] = node;
      if (node["verdict"] == "fit") best = std::max(best, node["wireScore"].get<int>());
    }
    const json& placement = doc["policies"][0]["placements"][0];
    const std::string node = placement["node"];
    CHECK(byName[node]["verdict"] == "fit");
    CHECK(byName[node]["wireScore"] == best);
    CHECK(placement["wireScore"] == best);
    CHECK(placement["score"] == byName[node]["score"]);
    CHECK(placement["gpus"] == byName[node]["gpus"]);
    CHECK(placement["weakestLink"] == byName[node]["weakestLink"]);
  }
}

TEST_CASE("N pods land one after another; what each strands adds up") {
  Golden golden;
  const json run = whatif(*golden.service, whatifBody(2, 6))["policies"][0];
  const json& placements = run["placements"];
  REQUIRE(placements.size() == 6);
  // The golden cluster before: a100 5/2/1/0, broken 4/0/0/0 (links unreadable), dgx1 6/3/0/0,
  // gfd 2/0/0/0 (links unknown), pcie4 4/0/0/0 (no NVLink).
  CHECK(sets(run["clusterFreeSetsBefore"]) == std::vector<int>{21, 5, 1, 0});
  std::map<std::string, std::set<int>> taken;
  std::map<std::string, std::vector<int>> nodeSets;
  std::vector<int> cluster = sets(run["clusterFreeSetsBefore"]);
  int placed = 0;
  for (const json& p : placements) {
    CAPTURE(p.dump());
    if (p["node"].is_null()) {
      // Six 2-GPU pods: some fit now; the pods placed before took the room.
      CHECK(p["reason"] ==
            "no node fits it now: the pods placed before it in this what-if took the room");
      CHECK(sets(p["clusterFreeSetsAfter"]) == cluster);
      continue;
    }
    ++placed;
    const std::string node = p["node"];
    for (int gpu : p["gpus"])
      CHECK(taken[node].insert(gpu).second);  // never a GPU twice
    if (nodeSets.contains(node)) CHECK(sets(p["nodeFreeSetsBefore"]) == nodeSets[node]);
    nodeSets[node] = sets(p["nodeFreeSetsAfter"]);
    const std::vector<int> before = sets(p["nodeFreeSetsBefore"]), after = nodeSets[node];
    CHECK(before[0] - after[0] == 2);  // two free GPUs fewer on that node
    for (std::size_t i = 0; i < cluster.size(); ++i)
      cluster[i] += after[i] - before[i];
    CHECK(sets(p["clusterFreeSetsAfter"]) == cluster);
  }
  CHECK(run["placed"] == placed);
  CHECK(sets(run["clusterFreeSetsAfter"]) == cluster);
  // GPUs used by the labels (dgx1 2 and 5, the resnet pod's) are never handed out.
  CHECK_FALSE(taken["dgx1"].contains(2));
  CHECK_FALSE(taken["dgx1"].contains(5));
  // 21 free GPUs, but pairs only where two free GPUs share a node: all six fit.
  CHECK(placed == 6);
}

TEST_CASE("the live cache is exactly as before a what-if: snapshot, charges, reservations") {
  Golden golden;
  // A reservation in flight: bind ml/train (2 GPUs) to dgx1.
  REQUIRE(golden.cluster->bind({"train", "ml", "train-uid", "dgx1"}).ok());
  const gte::ClusterSnapshotConstSharedPtr before = golden.cluster->snapshot();
  const std::string filterBefore = golden.service->filter(explainBody(4)).body;
  const auto podsBefore = golden.cluster->podsOnNode("dgx1");
  whatif(*golden.service, whatifBody(2, 8));
  whatif(*golden.service, whatifBody(1, 5, R"(,"policy":"strategy: spread\n")"));
  CHECK(golden.cluster->snapshot() == before);  // the same published object, not rebuilt
  CHECK(golden.cluster->snapshot()->generation == before->generation);
  CHECK(golden.service->filter(explainBody(4)).body == filterBefore);
  const auto podsAfter = golden.cluster->podsOnNode("dgx1");
  REQUIRE(podsAfter.size() == podsBefore.size());
  for (std::size_t i = 0; i < podsAfter.size(); ++i)
    CHECK(podsAfter[i].uid == podsBefore[i].uid);
  // dgx1 still has the same free GPUs: 6 free by the labels, minus the reservation's 2.
  CHECK(golden.cluster->snapshot()->find("dgx1")->freeCount == 4);
}

TEST_CASE("a proposed policy runs the same pods on another copy, side by side") {
  Golden golden;
  const json doc = whatif(*golden.service, whatifBody(1, 4, R"(,"policy":"strategy: spread\n")"));
  REQUIRE(doc["policies"].size() == 2);
  const json& running = doc["policies"][0];
  const json& proposed = doc["policies"][1];
  CHECK(running["name"] == "running");
  CHECK(proposed["name"] == "proposed");
  CHECK(running["demand"]["strategy"] == "binpack");
  CHECK(proposed["demand"]["strategy"] == "spread");
  CHECK(running["hash"] != proposed["hash"]);
  CHECK(running["clusterFreeSetsBefore"] == proposed["clusterFreeSetsBefore"]);
  // Binpack takes the a100's odd GPU 2 first, then keeps its free NVLink quad (the cluster's
  // only one: scarce sets) whole and fills dgx1; spread starts on an emptier node.
  std::set<std::string> packed, spread;
  for (const json& p : running["placements"])
    packed.insert(p["node"].get<std::string>());
  for (const json& p : proposed["placements"])
    spread.insert(p["node"].get<std::string>());
  CHECK(running["placements"][0]["node"] == "a100");
  CHECK(running["placements"][0]["gpus"] == json::array({2}));
  CHECK(packed == std::set<std::string>{"a100", "dgx1"});
  CHECK(running["clusterFreeSetsAfter"]["4"] == 1);
  CHECK(spread.size() > 1);
  CHECK(spread != packed);
}

TEST_CASE("a CSV of pods replays row by row; rows without GPUs are not placed") {
  Golden golden;
  const json doc = whatif(
      *golden.service,
      R"({"csv":"name,cpu_milli,memory_mib,num_gpu\nweb,2000,4096,0\ntrain-a,32000,65536,4\n)"
      R"(train-b,32000,65536,8\n"})");
  CHECK(doc["mode"] == "csv");
  const json& placements = doc["policies"][0]["placements"];
  REQUIRE(placements.size() == 3);
  CHECK(placements[0]["pod"] == "web");
  CHECK(placements[0]["node"].is_null());
  CHECK(placements[0]["reason"] ==
        "asks for no GPUs: kube-scheduler places it without asking the extender");
  CHECK(placements[1]["pod"] == "train-a");
  CHECK(placements[1]["gpusRequested"] == 4);
  CHECK_FALSE(placements[1]["node"].is_null());  // CPU and memory are not modelled
  // No node has 8 free GPUs (dgx1 6, a100 5).
  CHECK(placements[2]["node"].is_null());
  // No node could take 8 GPUs even now: filter's refusals say why, node by node.
  CHECK(placements[2]["reason"] ==
        "no node fits it: node has fewer than 8 usable GPUs (4 nodes); insufficient free GPUs "
        "(1 node)");
}

TEST_CASE("bad what-if input answers a clear error through the error table") {
  Golden golden(gte::WhatifLimits{5, std::chrono::seconds(10)});
  const std::string pod = podJson(2);
  struct Case {
    std::string body;
    int status;
    std::string says;
  };
  const std::string bigPolicy(300 * 1024, '#');
  const Case cases[] = {
      {"{", 400, "malformed request body"},
      {"[]", 400, "malformed request body"},
      {"{}", 400, "give either \\\"pod\\\""},
      {R"({"pod":)" + pod + R"(,"csv":"name,cpu_milli,memory_mib,num_gpu\na,1,1,1\n"})", 400,
       "give either"},
      {R"({"pod":)" + pod + R"(,"count":0})", 400, "count: must be at least 1"},
      {R"({"pod":)" + pod + R"(,"count":-3})", 400, "count: must be at least 1"},
      {R"({"pod":)" + pod + R"(,"count":"3"})", 400, "count: expected a whole number"},
      {R"({"pod":)" + pod + R"(,"count":)", 400, "malformed request body: unexpected end"},
      {R"({"pod":)" + pod + R"(,"count":?})", 400, "malformed request body: unexpected char"},
      {R"({"pod":)" + pod + R"(,"count":1000000000})", 413,
       "count: 1000000000 pods exceed the what-if limit of 5 (--whatif-max-pods)"},
      {R"({"pod":)" + pod + R"(,"count":99999999999999999999})", 400,
       "expected an integer in int64 range"},
      {R"({"csv":"name,cpu_milli,memory_mib,num_gpu\na,1,1,1\nb,1,1,1\nc,1,1,1\nd,1,1,1\n)"
       R"(e,1,1,1\nf,1,1,1\n"})",
       413, "csv: 6 pods exceed the what-if limit of 5"},
      {R"({"csv":"name,gpus\na,1\n"})", 400, "csv: CSV header lacks column"},
      {R"({"csv":"name,cpu_milli,memory_mib,num_gpu\n"})", 400, "csv: no pods after the header"},
      {R"({"csv":"name,cpu_milli,memory_mib,num_gpu\na,1,1,lots\n"})", 400, "csv: line 2"},
      {R"({"csv":7})", 400, "csv: expected a string"},
      {R"({"pod":)" + pod + R"(,"policy":"weights: {linkQuality: -1}"})", 400,
       "policy: weights.linkQuality: must be >= 0"},
      {R"({"pod":)" + pod + R"(,"policy":"strategy: [unclosed"})", 400, "policy: "},
      {R"({"pod":)" + pod + R"(,"policy":"labelPrefix: other.io/"})", 400,
       "labelPrefix 'other.io/' differs from the running policy's"},
      {R"({"pod":)" + pod + R"(,"policy":")" + bigPolicy + R"("})", 413,
       "policy: 307200 bytes exceed the limit of 262144"},
      {R"({"pod":)" + pod + R"(,"policy":{}})", 400, "policy: expected a string"},
      {R"({"pod":)" + podJson(0) + "}", 400, "pod: asks for no GPU or MIG devices"},
      {R"({"pod":)" + podJson(2, R"({"gputopo.dev/min-link":"fast"})") + "}", 400,
       "pod: annotation gputopo.dev/min-link: want one of"},
      {R"({"pod":[]})", 400, "pod: expected a v1.Pod object"},
      {R"({"pod":)" + pod + R"(,"gpus":8})", 400, "unknown field \\\"gpus\\\""},
      {R"({"pod":)" + pod + R"(} trailing)", 400, "malformed request body"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body.substr(0, 200));
    const gte::Reply reply = golden.service->whatif(c.body);
    CHECK(reply.status == c.status);
    CHECK(reply.body.find(c.says) != std::string::npos);
    CHECK(reply.body.starts_with(R"({"Error":"gpu-topology: )"));
  }
}

TEST_CASE("a what-if needs a synced cluster cache and stops at its deadline") {
  const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const gte::ExtenderService noCluster([policy] { return policy; }, nullptr, nullptr);
  const gte::Reply without = noCluster.whatif(whatifBody(2, 1));
  CHECK(without.status == 400);
  CHECK(without.body.find("a what-if needs a cluster cache") != std::string::npos);

  // A deadline already past when the first pod comes: nothing is placed, the answer says why.
  Golden late(gte::WhatifLimits{100, std::chrono::milliseconds(0)});
  const gte::Reply stopped = late.service->whatif(whatifBody(1, 50));
  CHECK(stopped.status == 413);
  CHECK(stopped.body.find("ran past its deadline of 0 ms (--whatif-deadline) with 50 pods on 5 "
                          "nodes; ask for fewer pods") != std::string::npos);
}

TEST_CASE("the node listing: every node by name, one node, a limit") {
  Golden golden;
  const gte::Reply all = golden.service->nodes({});
  REQUIRE(all.status == 200);
  const json doc = json::parse(all.body);
  std::vector<std::string> names;
  for (const json& node : doc["nodes"])
    names.push_back(node["name"]);
  CHECK(names == std::vector<std::string>{"a100", "broken", "dgx1", "gfd", "pcie4"});
  CHECK(doc["listed"] == 5);
  CHECK(doc["cached"] == 5);
  CHECK(doc["freeGpus"] == 21);
  CHECK(sets(doc["freeSets"]) == std::vector<int>{21, 5, 1, 0});
  const json& dgx1 = doc["nodes"][2];
  // Used 2 and 5 by the labels: free 0,1,3,4,6,7, three NVLink pairs, no quad left.
  CHECK(dgx1["free"] == json::array({0, 1, 3, 4, 6, 7}));
  CHECK(sets(dgx1["freeSets"]) == std::vector<int>{6, 3, 0, 0});
  // 16 of the 28 pairs are NVLink (the cube mesh); the other 12 cross the CPUs.
  CHECK(dgx1["links"] == json{{"nvlink", 16}, {"sys", 12}});

  const json one = json::parse(golden.service->nodes({"pcie4", 10}).body);
  REQUIRE(one["nodes"].size() == 1);
  CHECK(one["nodes"][0]["links"] == json{{"pix", 2}, {"sys", 4}});
  CHECK(one["listed"] == 1);

  const json two = json::parse(golden.service->nodes({"", 2}).body);
  CHECK(two["nodes"].size() == 2);
  CHECK(two["listed"] == 2);
  CHECK(two["cached"] == 5);

  const gte::Reply unknown = golden.service->nodes({"nope", 10});
  CHECK(unknown.status == 404);
  CHECK(unknown.body.find("node \\\"nope\\\" is not in the cache") != std::string::npos);
}

namespace {

// The golden cluster, except that a snapshot is handed out only once the test says so: a what-if
// loads it after taking its slot, so one can be held in the middle of its run.
class GatedCluster final : public gte::ClusterBackend {
 public:
  explicit GatedCluster(gte::ClusterBackend& inner) : inner_(inner) {}
  gte::ClusterSnapshotConstSharedPtr snapshot() const override {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    return inner_.snapshot();
  }
  bool ready() const override { return true; }
  bool healthy(std::string* /*why*/) const override { return true; }
  gte::Status bind(const gte::BindRequest& request) override { return inner_.bind(request); }
  std::optional<gte::PodInfo> podByUid(const std::string& uid) const override {
    return inner_.podByUid(uid);
  }
  gte::Result<gte::PodInfo> podByName(const std::string& ns,
                                      const std::string& name) const override {
    return inner_.podByName(ns, name);
  }
  std::vector<gte::PodInfo> podsOnNode(const std::string& node) const override {
    return inner_.podsOnNode(node);
  }

  void awaitWaiter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return waiting_ > 0; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  gte::ClusterBackend& inner_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable int waiting_ = 0;
  bool open_ = false;
};

}  // namespace

TEST_CASE("one what-if at a time: a second one meanwhile is answered 503 at once") {
  Golden golden;
  GatedCluster gated(*golden.cluster);
  const gte::ExtenderService service([p = golden.policy] { return p; }, &gated, nullptr);
  gte::Reply first;
  std::thread running([&] { first = service.whatif(whatifBody(2, 1)); });
  gated.awaitWaiter();  // the first holds the slot, waiting for its snapshot
  const gte::Reply second = service.whatif(whatifBody(2, 1));
  CHECK(second.status == 503);
  CHECK(second.body.find("another what-if is running (one at a time)") != std::string::npos);
  gated.open();
  running.join();
  CHECK(first.status == 200);
  // The slot is free again.
  CHECK(service.whatif(whatifBody(2, 1)).status == 200);
}

// A mistyped MIG profile was "no node fits it now", where filter says the profile is not offered.
TEST_CASE("a what-if pod no node can take says why, in filter's words") {
  Golden golden;
  const std::string mig =
      R"({"pod":{"metadata":{"name":"m","namespace":"ml"},"spec":{"containers":[{"name":"m",)"
      R"("resources":{"limits":{"nvidia.com/mig-9g.99gb":"1"}}}]}}})";
  const json run = whatif(*golden.service, mig)["policies"][0];
  const std::string reason = run["placements"][0]["reason"];
  CHECK(reason.starts_with("no node fits it: "));
  CHECK(reason.find("9g.99gb") != std::string::npos);
}
