// Planning a pod group at cluster scale: 5,040 GB200 trays (4 GPUs each) in 280 NVLink cliques of
// 18 (nvidia.com/gpu.clique; topograph's block label over 28 cliques), some GPUs in use. Times,
// through ExtenderService with the cluster-file backend (everything but the socket), alternating:
//   - filter of a pod of no group (today's filter: the baseline),
//   - filter of a group's first member: identity, planning over every candidate, commit (holds
//     charged, a snapshot published) and the member's answers,
//   - filter of the group's second member: answered from the committed plan,
// then the planner alone, and what the per-node precompute costs (time and bytes per node).
// Each group's holds are released (the TTL passed) before the next round, untimed, so every round
// plans on the same cluster. Then a gang's whole cycle as kube-scheduler's gang scheduling drives
// it: every member of a group whose pods all wait in the cache, filtered and prioritized in turn
// (the first member's filter plans and commits; the pod of no group's filter + prioritize is
// alternated with it as the baseline). Prints medians; see docs/performance.md.
//
//   build/bin/bench_group_plan [cliques] [rounds] [members] [later|cycle]
// With `later`, only a later member's filter is repeated, `rounds` times, after one plan: the form
// to profile (`perf record -g build/bin/bench_group_plan 280 3000 16 later`). With `cycle`, only
// the gang's whole cycle, `rounds` times (`perf record -g build/bin/bench_group_plan 280 300 16
// cycle`).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/static_cluster_backend.h"
#include "core/node_state.h"
#include "group/group_plan.h"
#include "model/pod_info.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"
#include "topology/device_plugin_pick.h"
#include "topology/gpu_graph.h"
#include "topology/pair_table.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTraysPerClique = 18;
constexpr int kCliquesPerBlock = 28;

// prefix + number, built so that GCC 12 -O3 raises no false -Wrestrict (PR 105329).
std::string numbered(std::string prefix, int number) {
  prefix += std::to_string(number);
  return prefix;
}

gte::NodeInfo tray(int clique, int index, std::mt19937& rng) {
  gte::NodeInfo node;
  node.name = numbered("gb200-", clique) + numbered("-", index);
  std::string used(4, '0');
  // A third of the trays have a GPU or two in use.
  if (rng() % 3 == 0) used[rng() % 4] = '1';
  if (rng() % 6 == 0) used[rng() % 4] = '1';
  const std::pair<const char*, std::string> labels[] = {
      {"gputopo.dev/v", "1"},
      {"gputopo.dev/n", "4"},
      {"gputopo.dev/model", "NVIDIA-GB200"},
      {"gputopo.dev/fabric", "nvsw"},
      {"gputopo.dev/nvl", "iiiiii"},
      {"gputopo.dev/pci", "NSSSSN"},
      {"gputopo.dev/numa", "0011"},
      {"gputopo.dev/health", "1111"},
      {"gputopo.dev/used", used},
      {"gputopo.dev/mig", "nnnn"},
      {"gputopo.dev/gen", "1764670000"},
      {"nvidia.com/gpu.clique", "6f1c2d3e-0000-4000-8000-00000000" + std::to_string(1000 + clique) +
                                    "." + std::to_string(clique % 4)},
      {"network.topology.nvidia.com/block", numbered("block-", clique / kCliquesPerBlock)},
      {"kubernetes.io/hostname", node.name},
  };
  for (const auto& [key, value] : labels)
    node.labels[key] = value;
  node.allocatable.set("nvidia.com/gpu", gte::Quantity::fromUnits(4));
  return node;
}

std::string podJson(const std::string& name, int gpus, const std::string& group, int size) {
  std::string annotations;
  if (!group.empty()) {
    annotations = R"(,"annotations":{"gputopo.dev/group":")" + group +
                  R"(","gputopo.dev/group-size":")" + std::to_string(size) + R"("})";
  }
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + name + "-uid\"" +
         annotations + R"(},"spec":{"containers":[{"name":"m","resources":{"limits":)" +
         R"({"nvidia.com/gpu":")" + std::to_string(gpus) + R"("},"requests":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]},"status":{"phase":"Pending"}})";
}

double threadCpuMillis() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Sample {
  std::vector<double> wall;
  std::vector<double> cpu;
  template <typename F>
  void time(F&& f) {
    const double c0 = threadCpuMillis();
    const auto t0 = Clock::now();
    f();
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    cpu.push_back(threadCpuMillis() - c0);
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  void report(const char* what) const {
    std::printf("%-48s median %7.3f ms   cpu median %7.3f ms\n", what, median(wall), median(cpu));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int cliques = argc > 1 ? std::atoi(argv[1]) : 280;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 41;
  const int members = argc > 3 ? std::atoi(argv[3]) : 16;
  std::mt19937 rng(7);
  std::vector<gte::NodeInfo> nodes;
  for (int c = 0; c < cliques; ++c) {
    for (int t = 0; t < kTraysPerClique; ++t)
      nodes.push_back(tray(c, t, rng));
  }
  const int n = static_cast<int>(nodes.size());
  std::string names = R"(,"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < n; ++i)
    names += std::string(i ? "," : "") + "\"" + nodes[static_cast<std::size_t>(i)].name + "\"";
  names += "]}";

  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::int64_t now = 1'800'000'000;
  gte::cluster::ClusterStateOptions options;
  options.now = [&now] { return std::chrono::system_clock::time_point(std::chrono::seconds(now)); };
  const auto built = Clock::now();
  // The gangs of the cycle measurement wait in the cache, as a gang's pods do before its cycle.
  std::vector<gte::cluster::FilePod> waiting;
  for (int round = 0; round < rounds; ++round) {
    for (int m = 0; m < members; ++m) {
      auto pod = gte::parsePodJson(
          podJson(numbered("c", round) + numbered("-", m), 4, numbered("c", round), members));
      if (!pod) std::abort();
      waiting.push_back(gte::cluster::FilePod{std::move(*pod), std::nullopt});
    }
  }
  gte::cluster::StaticClusterBackend backend(
      gte::cluster::ClusterFileContents{nodes, std::move(waiting), {}}, policy, options);
  const double buildMs = std::chrono::duration<double, std::milli>(Clock::now() - built).count();
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  std::printf("%d nodes in %d cliques, groups of %d members x 4 GPUs, %d rounds\n", n, cliques,
              members, rounds);
  std::printf("%-48s %7.1f ms\n", "cache built from the nodes (every state)", buildMs);

  const std::string plain = R"({"Pod":)" + podJson("solo", 4, "", 0) + names;
  if (argc > 4 && std::string(argv[4]) == "later") {
    (void)service.filter(R"({"Pod":)" + podJson("p-0", 4, "p", members) + names);
    const std::string later = R"({"Pod":)" + podJson("p-1", 4, "p", members) + names;
    Sample sample;
    for (int round = 0; round < rounds; ++round)
      sample.time([&] { (void)service.filter(later); });
    sample.report("filter, a later member (from plan)");
    return 0;
  }
  if (argc > 4 && std::string(argv[4]) == "cycle") {
    Sample cycle;
    for (int round = 0; round < rounds; ++round) {
      const std::string group = numbered("c", round);
      std::vector<std::string> bodies;
      for (int m = 0; m < members; ++m)
        bodies.push_back(R"({"Pod":)" + podJson(group + numbered("-", m), 4, group, members) +
                         names);
      cycle.time([&] {
        for (const std::string& body : bodies)
          (void)service.filter(body);
        for (const std::string& body : bodies)
          (void)service.prioritize(body);
      });
      now += 3600;
      backend.expireHolds();
    }
    cycle.report("gang cycle (filters + prioritizes)");
    return 0;
  }
  Sample today;
  Sample first;
  Sample second;
  for (int round = 0; round < rounds; ++round) {
    const std::string group = numbered("g", round);
    const std::string firstBody = R"({"Pod":)" + podJson(group + "-0", 4, group, members) + names;
    const std::string secondBody = R"({"Pod":)" + podJson(group + "-1", 4, group, members) + names;
    today.time([&] { (void)service.filter(plain); });
    first.time([&] {
      const gte::Reply reply = service.filter(firstBody);
      if (reply.body.find("NodeNames\":[\"") == std::string::npos) std::abort();  // planned
    });
    second.time([&] { (void)service.filter(secondBody); });
    if (backend.state().heldSlotCount() == 0) std::abort();
    now += 3600;  // the TTL passes: the next round plans on the same free GPUs
    backend.expireHolds();
  }
  today.report("filter, pod of no group (today)");
  first.report("filter, a group's first member (plan + commit)");
  second.report("filter, the group's second member (from plan)");
  std::printf("%-48s %7.2f x (wall)   %7.2f x (cpu)\n", "first member / today",
              Sample::median(first.wall) / Sample::median(today.wall),
              Sample::median(first.cpu) / Sample::median(today.cpu));
  std::printf("%-48s %7.2f x (wall)   %7.2f x (cpu)\n", "second member / today",
              Sample::median(second.wall) / Sample::median(today.wall),
              Sample::median(second.cpu) / Sample::median(today.cpu));

  // A gang's whole cycle: `members` filters and prioritizes of the members waiting in the cache.
  Sample plainPair;
  Sample cycle;
  for (int round = 0; round < rounds; ++round) {
    const std::string group = numbered("c", round);
    std::vector<std::string> bodies;
    for (int m = 0; m < members; ++m)
      bodies.push_back(R"({"Pod":)" + podJson(group + numbered("-", m), 4, group, members) + names);
    plainPair.time([&] {
      (void)service.filter(plain);
      (void)service.prioritize(plain);
    });
    cycle.time([&] {
      for (const std::string& body : bodies)
        (void)service.filter(body);
      for (const std::string& body : bodies)
        (void)service.prioritize(body);
    });
    if (backend.state().heldSlotCount() == 0) std::abort();
    now += 3600;
    backend.expireHolds();
  }
  plainPair.report("filter + prioritize, pod of no group");
  std::printf("%-48s median %7.3f ms   cpu median %7.3f ms\n",
              (std::to_string(members) + "-member gang cycle (filters + prioritizes)").c_str(),
              Sample::median(cycle.wall), Sample::median(cycle.cpu));
  std::printf("%-48s %7.3f ms (wall)   %7.3f ms (cpu)\n", "  per member (filter + prioritize)",
              Sample::median(cycle.wall) / members, Sample::median(cycle.cpu) / members);

  // The planner alone, on every node of the snapshot.
  const auto snapshot = backend.snapshot();
  std::vector<gte::GroupPlanNode> candidates;
  snapshot->nodes.forEach([&](const std::string& name, const gte::NodeStateConstSharedPtr& s) {
    candidates.push_back(gte::GroupPlanNode{name, s.get(), snapshot->nodes.groupFacts(name)});
  });
  gte::PodDemand four;
  four.gpus = 4;
  const std::vector<gte::PodDemand> demands(static_cast<std::size_t>(members), four);
  gte::GroupPlanInput in;
  in.group = "ml/bench";
  in.levels = policy->groups.levels;
  in.domainNames = snapshot->groupDomains.get();
  in.nodes = candidates;
  in.members = demands;
  in.explain = true;
  Sample planner;
  for (int round = 0; round < rounds; ++round) {
    planner.time([&] {
      if (gte::planGroup(in, *policy).status != gte::GroupPlanStatus::kPlanned) std::abort();
    });
  }
  planner.report("planGroup alone (every node a candidate)");

  // The per-node precompute: the chain and slot counts of every state, timed against building the
  // pair table alone (which the state builder does anyway).
  Sample tableOnly;
  Sample withChain;
  std::size_t chainBytes = 0;
  for (const auto& candidate : candidates) {
    const gte::NodeState& state = *candidate.state;
    chainBytes += sizeof(gte::AllocatorChain) + sizeof(gte::GroupSlots) +
                  state.groupChain.picks.capacity() * sizeof(gte::ChainPick);
  }
  std::size_t sink = 0;
  for (int round = 0; round < rounds; ++round) {
    tableOnly.time([&] {
      for (const auto& candidate : candidates) {
        const gte::NodeState& state = *candidate.state;
        sink += static_cast<std::size_t>(
            gte::GpuGraph(state.topology, policy->linkScores).pairTable().maxScore);
      }
    });
    withChain.time([&] {
      for (const auto& candidate : candidates) {
        const gte::NodeState& state = *candidate.state;
        const gte::PairTable table = gte::GpuGraph(state.topology, policy->linkScores).pairTable();
        gte::PickBudget budget{.groups = 10'000};
        const std::array<gte::GpuMask, 9> firstPicks{};
        const gte::AllocatorChain c = gte::computeAllocatorChain(
            table, state.freeMask, state.topology.linksKnown, firstPicks, &budget);
        sink += c.picks.size() + gte::countGroupSlots(state, *policy).any[0];
      }
    });
  }
  const double perNode = 1000.0 / static_cast<double>(candidates.size());
  std::printf("%-48s %7.3f us per node (pair table alone %.3f us)\n",
              "group chain + slot counts, added per state",
              (Sample::median(withChain.wall) - Sample::median(tableOnly.wall)) * perNode,
              Sample::median(tableOnly.wall) * perNode);
  if (sink == 0) std::abort();
  std::printf("%-48s %7.1f bytes per node in the state, %zu per node in the shard\n",
              "group precompute memory",
              static_cast<double>(chainBytes) / static_cast<double>(candidates.size()),
              sizeof(gte::NodeGroupFacts));
  return 0;
}
