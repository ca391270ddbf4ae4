// A pod group through the verbs as kube-scheduler v1.37 drives them, against the cluster-file
// backend: with gang scheduling on, every member is filtered and prioritized in one cycle while the
// earlier members are assumed only in the scheduler's snapshot (the extender is never told), the
// cycle is rolled back silently, retried, and the members are then bound concurrently in any
// order; with it off, each member is filtered, prioritized and bound before the next. Either way
// the group lands whole in one clique, no GPU is booked twice, explain agrees with filter and
// prioritize, and a rolled-back group leaves no hold behind once its TTL passes.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/snapshot_backend.h"

using nlohmann::json;

namespace {

using gte::NodeInfo;
using gte::PodInfo;

// Two cliques of DGX H100s: x (x0, x1) and y (y0, y1, y2), y0 half used; one node without a
// clique (free). A group of 4 members x 4 GPUs fits x exactly (4 slots) and y (5 slots): best fit
// is x.
std::vector<NodeInfo> nodes() {
  std::vector<NodeInfo> out;
  const auto add = [&out](const char* name, const char* clique, const char* used) {
    NodeInfo node =
        gte::testing::makeDgxH100(gte::testing::FixtureState().withName(name).withUsed(used));
    if (clique[0] != '\0') node.labels["nvidia.com/gpu.clique"] = clique;
    out.push_back(std::move(node));
  };
  add("x0", "x", "00000000");
  add("x1", "x", "00000000");
  add("y0", "y", "11110000");
  add("y1", "y", "00000000");
  add("y2", "y", "00000000");
  add("free", "", "00000000");
  return out;
}

PodInfo member(int i) {
  std::string name = std::to_string(i);
  name.insert(0, "m");
  return gte::testing::makeGpuPod(name, 4,
                                  {{"gputopo.dev/group", "job"}, {"gputopo.dev/group-size", "4"}});
}

class Clock {
 public:
  gte::cluster::WallClock wall() {
    return [this] { return std::chrono::system_clock::time_point(std::chrono::seconds(now)); };
  }
  std::int64_t now = 1'800'000'000;
};

struct Harness {
  explicit Harness(Clock& clock) {
    std::vector<gte::cluster::FilePod> pods;
    for (int i = 0; i < 4; ++i)
      pods.push_back(gte::cluster::FilePod{member(i), std::nullopt});
    pods.push_back(gte::cluster::FilePod{gte::testing::makeGpuPod("solo", 8), std::nullopt});
    gte::cluster::ClusterStateOptions options;
    options.now = clock.wall();
    backend = std::make_unique<gte::cluster::StaticClusterBackend>(
        gte::cluster::ClusterFileContents{nodes(), std::move(pods), {}}, policy, options);
    service =
        std::make_unique<gte::ExtenderService>([this] { return policy; }, backend.get(), nullptr);
  }

  static std::string args(const PodInfo& pod, const std::vector<std::string>& names) {
    json body;
    body["Pod"] = json::parse(gte::testing::podJson(pod));
    body["Nodes"] = nullptr;
    body["NodeNames"] = names;
    return body.dump();
  }

  std::vector<std::string> filter(const PodInfo& pod, const std::vector<std::string>& names) {
    const gte::Reply reply = service->filter(args(pod, names));
    REQUIRE(reply.status == 200);
    const json out = json::parse(reply.body);
    REQUIRE(out["Error"] == "");
    return out["NodeNames"].get<std::vector<std::string>>();
  }

  std::map<std::string, int> prioritize(const PodInfo& pod, const std::vector<std::string>& names) {
    const gte::Reply reply = service->prioritize(args(pod, names));
    REQUIRE(reply.status == 200);
    std::map<std::string, int> out;
    for (const json& host : json::parse(reply.body))
      out[host["Host"]] = host["Score"];
    return out;
  }

  bool bind(const PodInfo& pod, const std::string& node) {
    json body{{"PodName", pod.name}, {"PodNamespace", pod.ns}, {"PodUID", pod.uid}, {"Node", node}};
    std::optional<gte::Reply> reply;
    service->bind(body.dump(), [&reply](gte::Reply r) { reply = std::move(r); });
    REQUIRE(reply.has_value());
    return json::parse(reply->body)["Error"] == "";
  }

  // One scheduling cycle of the gang: each member filtered and prioritized on the nodes the
  // in-tree plugins leave (whole-GPU counts, with the earlier members assumed), the best node
  // taken (ties by name). Nothing is bound.
  std::map<std::string, std::string> cycle() {
    std::map<std::string, int> assumedGpus;  // the scheduler's snapshot, not the extender's
    std::map<std::string, std::string> placed;
    for (int i = 0; i < 4; ++i) {
      const PodInfo pod = member(i);
      std::vector<std::string> inTree;
      for (const NodeInfo& node : nodes()) {
        const auto snapshot = backend->snapshot();
        const int usable = 8 - assumedGpus[node.name];
        if (usable >= 4) inTree.push_back(node.name);
      }
      const std::vector<std::string> feasible = filter(pod, inTree);
      if (feasible.empty()) return placed;  // the member is unschedulable: the cycle fails
      const std::map<std::string, int> scores = prioritize(pod, feasible);
      std::string best = feasible.front();
      for (const std::string& node : feasible) {
        if (scores.at(node) > scores.at(best)) best = node;
      }
      placed[pod.uid] = best;
      assumedGpus[best] += 4;
    }
    return placed;
  }

  std::size_t held() const { return backend->state().heldSlotCount(); }

  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::unique_ptr<gte::cluster::StaticClusterBackend> backend;
  std::unique_ptr<gte::ExtenderService> service;
};

std::vector<std::string> allNames() {
  std::vector<std::string> out;
  for (const NodeInfo& node : nodes())
    out.push_back(node.name);
  return out;
}

// Every bound or reserved pod's GPUs, per node: none twice.
// `source`: anything with snapshot() (a backend, a ClusterState).
template <typename Source>
void checkNoDoubleBooking(const Source& source) {
  const auto snapshot = source.snapshot();
  snapshot->nodes.forEach([](const std::string& name, const gte::NodeStateConstSharedPtr& s) {
    if (!s->charges) return;
    std::set<int> taken;
    for (const gte::PodCharge& charge : s->charges->pods()) {
      for (const int gpu : charge.allocation.gpus) {
        INFO(name << " gpu " << gpu << " " << charge.uid);
        CHECK(taken.insert(gpu).second);
      }
    }
  });
}

}  // namespace

TEST_CASE("gang on: a cycle rolled back and retried lands the group whole, bound in any order",
          "[groups]") {
  Clock clock;
  Harness h(clock);
  const std::map<std::string, std::string> first = h.cycle();
  REQUIRE(first.size() == 4);
  for (const auto& [uid, node] : first)
    CHECK(node.substr(0, 1) == "x");
  CHECK(h.held() == 4);
  const auto plan = h.backend->snapshot()->groupPlan("default/annotation/job");
  REQUIRE(plan != nullptr);
  const std::uint64_t sequence = plan->sequence;

  // kube-scheduler rolls the cycle back (a member failed Permit elsewhere) and tells no one; the
  // retry some seconds later is answered from the same plan, and nothing is held twice.
  clock.now += 5;
  const std::map<std::string, std::string> retry = h.cycle();
  CHECK(retry == first);
  CHECK(h.backend->snapshot()->groupPlan("default/annotation/job")->sequence == sequence);
  CHECK(h.held() == 4);

  // Committed: the binding cycles run concurrently, in any order.
  for (int i = 3; i >= 0; --i) {
    const PodInfo pod = member(i);
    CHECK(h.bind(pod, retry.at(pod.uid)));
  }
  CHECK(h.held() == 0);
  CHECK(h.backend->snapshot()->groupPlan("default/annotation/job") == nullptr);
  checkNoDoubleBooking(*h.backend);
  // The clique is full; a pod of no group finds room elsewhere only.
  const std::vector<std::string> solo = h.filter(gte::testing::makeGpuPod("solo", 8), allNames());
  CHECK(std::find(solo.begin(), solo.end(), "x0") == solo.end());
}

TEST_CASE("gang off: members filtered, prioritized and bound one by one land whole", "[groups]") {
  Clock clock;
  Harness h(clock);
  std::set<std::string> cliques;
  for (int i = 0; i < 4; ++i) {
    const PodInfo pod = member(i);
    const std::vector<std::string> feasible = h.filter(pod, allNames());
    REQUIRE_FALSE(feasible.empty());
    const std::map<std::string, int> scores = h.prioritize(pod, feasible);
    std::string best = feasible.front();
    for (const std::string& node : feasible) {
      if (scores.at(node) > scores.at(best)) best = node;
    }
    REQUIRE(h.bind(pod, best));
    cliques.insert(best.substr(0, 1));
    // While members are still to come, a pod of no group cannot take their GPUs.
    const std::vector<std::string> solo = h.filter(gte::testing::makeGpuPod("solo", 8), allNames());
    if (i < 3) CHECK(std::find(solo.begin(), solo.end(), "x1") == solo.end());
  }
  CHECK(cliques == std::set<std::string>{"x"});
  CHECK(h.held() == 0);
  checkNoDoubleBooking(*h.backend);
}

TEST_CASE("a rolled-back group that never returns leaves no hold after its TTL", "[groups]") {
  Clock clock;
  Harness h(clock);
  REQUIRE(h.cycle().size() == 4);
  CHECK(h.held() == 4);
  const std::vector<std::string> before = h.filter(gte::testing::makeGpuPod("solo", 8), allNames());
  CHECK(std::find(before.begin(), before.end(), "x0") == before.end());
  clock.now += 61;
  // The housekeeping tick (the API-server backend's housekeeping thread, the observer's sample
  // for a cluster file).
  CHECK(h.backend->expireHolds() == 4);
  CHECK(h.held() == 0);
  const std::vector<std::string> after = h.filter(gte::testing::makeGpuPod("solo", 8), allNames());
  CHECK(std::find(after.begin(), after.end(), "x0") != after.end());
}

TEST_CASE("explain tells a member what filter and prioritize answer it", "[groups]") {
  Clock clock;
  Harness h(clock);
  REQUIRE_FALSE(h.filter(member(0), allNames()).empty());  // plans the group
  const PodInfo pod = member(1);
  const std::vector<std::string> kept = h.filter(pod, allNames());
  const std::map<std::string, int> scores = h.prioritize(pod, kept);
  const gte::Reply reply = h.service->explain(Harness::args(pod, allNames()));
  REQUIRE(reply.status == 200);
  const json explained = json::parse(reply.body);
  CHECK(explained["group"]["status"] == "committed");
  CHECK(explained["group"]["plan"]["level"] == "nvidia.com/gpu.clique");
  std::set<std::string> fit;
  for (const json& node : explained["nodes"]) {
    if (node["verdict"] != "fit") continue;
    fit.insert(node["name"]);
    CHECK(node["wireScoreAfterFilter"] == scores.at(node["name"]));
  }
  CHECK(fit == std::set<std::string>(kept.begin(), kept.end()));
}

TEST_CASE("a member of a two-size group binds wherever its filter let it through", "[groups]") {
  // Clique x: x0 free (8 GPUs), x1 with GPUs 0-3 in use (4 free). Group mix of two: big (8 GPUs)
  // and small (4). Largest first: big's slot on x0 (the only node with 8 free), small's on x1.
  // Each member's filter passes only the node of a slot of its own size: x1 kept for big would
  // leave it 4 GPUs at bind (a refused member bind, kube-scheduler retrying at once, the gang
  // half bound), x0 kept for small would take half of big's slot.
  const auto pod = [](const char* name, int gpus) {
    return gte::testing::makeGpuPod(
        name, gpus, {{"gputopo.dev/group", "mix"}, {"gputopo.dev/group-size", "2"}});
  };
  const PodInfo big = pod("big", 8);
  const PodInfo small = pod("small", 4);
  const auto node = [](const char* name, const char* used) {
    NodeInfo out =
        gte::testing::makeDgxH100(gte::testing::FixtureState().withName(name).withUsed(used));
    out.labels["nvidia.com/gpu.clique"] = "x";
    return out;
  };
  const std::vector<std::string> names{"x0", "x1"};
  struct Case {
    const PodInfo* first;   // whose filter commits the plan
    const PodInfo* member;  // filtered, then bound on each node its filter kept
    std::vector<std::string> kept;
  };
  for (const Case& c : std::vector<Case>{{&big, &big, {"x0"}},
                                         {&big, &small, {"x1"}},
                                         {&small, &big, {"x0"}},
                                         {&small, &small, {"x1"}}}) {
    CAPTURE(c.first->name, c.member->name);
    const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
    const auto fresh = [&] {
      return std::make_unique<gte::cluster::StaticClusterBackend>(
          gte::cluster::ClusterFileContents{{node("x0", "00000000"), node("x1", "11110000")},
                                            {{big, std::nullopt}, {small, std::nullopt}},
                                            {}},
          policy);
    };
    const auto filter = [&](gte::ExtenderService& service, const PodInfo& p) {
      const json out = json::parse(service.filter(Harness::args(p, names)).body);
      return out["NodeNames"].get<std::vector<std::string>>();
    };
    std::vector<std::string> kept;
    {
      auto backend = fresh();
      gte::ExtenderService service([policy] { return policy; }, backend.get(), nullptr);
      filter(service, *c.first);
      kept = filter(service, *c.member);
      CHECK(kept == c.kept);
    }
    for (const std::string& target : kept) {
      CAPTURE(target);
      auto backend = fresh();
      gte::ExtenderService service([policy] { return policy; }, backend.get(), nullptr);
      filter(service, *c.first);
      filter(service, *c.member);
      const json body{{"PodName", c.member->name},
                      {"PodNamespace", c.member->ns},
                      {"PodUID", c.member->uid},
                      {"Node", target}};
      std::optional<gte::Reply> reply;
      service.bind(body.dump(), [&reply](gte::Reply r) { reply = std::move(r); });
      REQUIRE(reply.has_value());
      CHECK(json::parse(reply->body)["Error"] == "");
      checkNoDoubleBooking(*backend);
    }
  }
}

TEST_CASE("gang on: two members never share a node that holds one slot of their group",
          "[groups]") {
  // Clique x: x0 free (8 GPUs), x1 with GPUs 0-3 in use (4 free). Group job (2 x 4 GPUs) is
  // planned first: nodes with the fewest slots first, one slot on x1 (GPUs 4-7) and one on x0.
  // Group other (1 x 4 GPUs) is planned next and holds x0's remaining four GPUs. In one gang cycle
  // kube-scheduler never tells the extender where it assumed job-0, and its own count still sees
  // 4 GPUs free on x0 after it; had each member been kept on every node with a held slot of the
  // group, both would go to x0 (ties by name) and job-1's bind would find x0's other GPUs held for
  // `other`: refused, a no-backoff retry, half the gang bound. Each waiting member is pinned to one
  // slot (members sorted by name take the held slots in plan order), so filter keeps one node for
  // each and both binds succeed.
  const auto pod = [](const char* name, const char* group, const char* size) {
    return gte::testing::makeGpuPod(
        name, 4, {{"gputopo.dev/group", group}, {"gputopo.dev/group-size", size}});
  };
  const PodInfo job0 = pod("job-0", "job", "2");
  const PodInfo job1 = pod("job-1", "job", "2");
  const PodInfo other = pod("other-0", "other", "1");
  const auto node = [](const char* name, const char* used) {
    NodeInfo out =
        gte::testing::makeDgxH100(gte::testing::FixtureState().withName(name).withUsed(used));
    out.labels["nvidia.com/gpu.clique"] = "x";
    return out;
  };
  const std::map<std::string, int> usedGpus{{"x0", 0}, {"x1", 4}};
  const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::StaticClusterBackend backend(
      gte::cluster::ClusterFileContents{
          {node("x0", "00000000"), node("x1", "11110000")},
          {{job0, std::nullopt}, {job1, std::nullopt}, {other, std::nullopt}},
          {}},
      policy);
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  const auto filter = [&](const PodInfo& p, const std::vector<std::string>& names) {
    const json out = json::parse(service.filter(Harness::args(p, names)).body);
    return out["NodeNames"].get<std::vector<std::string>>();
  };
  const std::vector<std::string> both{"x0", "x1"};
  REQUIRE_FALSE(filter(job0, both).empty());  // plans job: a slot on each node
  const auto jobPlan = backend.snapshot()->groupPlan("default/annotation/job");
  REQUIRE(jobPlan != nullptr);
  REQUIRE(jobPlan->plan.slots.size() == 2);
  CHECK(jobPlan->plan.slots[0].node != jobPlan->plan.slots[1].node);
  REQUIRE(filter(other, both) == std::vector<std::string>{"x0"});  // holds x0's other four
  CHECK(backend.state().heldSlotCount() == 3);

  // The gang cycle: kube-scheduler's own count of whole GPUs, the earlier member assumed.
  std::map<std::string, int> assumed;
  std::map<std::string, std::string> placed;
  for (const PodInfo* member : {&job0, &job1}) {
    std::vector<std::string> inTree;
    for (const std::string& name : both) {
      if (8 - usedGpus.at(name) - assumed[name] >= 4) inTree.push_back(name);
    }
    const std::vector<std::string> feasible = filter(*member, inTree);
    REQUIRE_FALSE(feasible.empty());
    CHECK(feasible.size() == 1);  // its own slot's node, and no other
    const gte::Reply scored = service.prioritize(Harness::args(*member, feasible));
    REQUIRE(scored.status == 200);
    std::string best;  // the best score, ties by name
    int bestScore = -1;
    for (const json& host : json::parse(scored.body)) {
      const std::string name = host["Host"];
      const int score = host["Score"];
      if (score > bestScore || (score == bestScore && name < best)) {
        best = name;
        bestScore = score;
      }
    }
    placed[member->name] = best;
    assumed[best] += 4;
  }
  CHECK(placed.at("job-0") != placed.at("job-1"));
  for (const PodInfo* member : {&job1, &job0}) {
    const json body{{"PodName", member->name},
                    {"PodNamespace", member->ns},
                    {"PodUID", member->uid},
                    {"Node", placed.at(member->name)}};
    std::optional<gte::Reply> reply;
    service.bind(body.dump(), [&reply](gte::Reply r) { reply = std::move(r); });
    REQUIRE(reply.has_value());
    CHECK(json::parse(reply->body)["Error"] == "");
  }
  checkNoDoubleBooking(backend);
  CHECK(backend.state().heldSlotCount() == 1);  // other's slot on x0, still kept for it
}

TEST_CASE("members filtered before the watch delivered them keep one slot each", "[groups]") {
  // Node a: an H100 board with GPUs 0-3 in use (room for one 4-GPU member); b: a free one (two).
  // Group t, 3 x 4 GPUs, created together. kube-scheduler filters t-2 first, when the cache has
  // seen t-2 only: it plans the group and is kept on its slot's node. t-1 and t-0 are filtered
  // before the watch delivers them. Ranked by name alone, t-1 (sorted before t-2) was kept on
  // t-2's node too, which t-2 was binding into, and went wherever kube-scheduler liked (an
  // end-to-end run bound it to a V100 beside two H100 members). Each member's filter records its
  // slot, so no other member is given it.
  const auto pod = [](const char* name) {
    return gte::testing::makeGpuPod(name, 4,
                                    {{"gputopo.dev/group", "t"}, {"gputopo.dev/group-size", "3"}});
  };
  const PodInfo t0 = pod("t-0");
  const PodInfo t1 = pod("t-1");
  const PodInfo t2 = pod("t-2");
  const auto node = [](const char* name, const char* used) {
    return gte::testing::makeDgxH100(gte::testing::FixtureState().withName(name).withUsed(used));
  };
  const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::ClusterState state(policy);
  state.replaceNodes({node("a", "11110000"), node("b", "00000000")});
  state.upsertPod(gte::cluster::ObservedPod{t2, std::nullopt});  // the watch has delivered t-2
  state.setSynced(true);
  auto backend = gte::testing::SnapshotBackend::of(state);
  backend.setGroupPlans(&state);
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  const std::vector<std::string> both{"a", "b"};

  std::map<std::string, int> kept;  // node -> members ranked first there
  std::map<std::string, std::string> placed;
  for (const PodInfo* member : {&t2, &t1, &t0}) {
    CAPTURE(member->name);
    const json filtered = json::parse(service.filter(Harness::args(*member, both)).body);
    const auto feasible = filtered["NodeNames"].get<std::vector<std::string>>();
    const json scored = json::parse(service.prioritize(Harness::args(*member, feasible)).body);
    std::vector<std::string> planned;  // ranked as its planned node: the top wire score
    for (const json& host : scored) {
      if (host["Score"] == 10) planned.push_back(host["Host"]);
    }
    REQUIRE(planned.size() == 1);
    ++kept[planned.front()];
    placed[member->name] = planned.front();
  }
  const auto plan = backend.snapshot()->groupPlan("default/annotation/t");
  REQUIRE(plan != nullptr);
  std::map<std::string, int> slots;
  for (const gte::PlannedSlot& slot : plan->plan.slots)
    ++slots[slot.node];
  CHECK(slots == std::map<std::string, int>{{"a", 1}, {"b", 2}});
  CHECK(kept == slots);  // no node is sent more members than it holds slots for
  for (const PodInfo* member : {&t0, &t1, &t2})
    CHECK(plan->pinOf(member->uid).has_value());

  // The watch delivers t-1 and t-0; the binds (reservations, as bind makes them) all land on
  // the plan.
  for (const PodInfo* member : {&t1, &t0})
    state.upsertPod(gte::cluster::ObservedPod{*member, std::nullopt});
  for (const PodInfo* member : {&t1, &t2, &t0}) {
    CAPTURE(member->name);
    const auto reserved = state.reserve(*member, placed.at(member->name));
    REQUIRE(reserved.ok());
    state.markBound(member->uid);
  }
  checkNoDoubleBooking(state);
  CHECK(state.heldSlotCount() == 0);
}
