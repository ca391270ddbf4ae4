// Preemption for a pod group (service/group_preemption.h; docs/placement-quality.md, "Preemption
// for a group"): a cluster of 8-GPU HGX H100 nodes in NVLink cliques (`nvidia.com/gpu.clique`,
// a required group level in the default policy), every node filled with GPU pods of mixed
// priorities, then a group of M members of 8 GPUs at a higher priority, which must land inside one
// clique. Members preempt one after another, as kube-scheduler preempts for each pod of a gang:
//   - scheduler alone: each member's dry run on every node (the node's lower-priority pods, all of
//     them for a whole-node member), the node kube-scheduler picks among them (lowest top victim
//     priority, then fewest victims, then the lowest sum of priorities, then the first in a seeded
//     random order, as pickOneNodeForPreemption with no PDBs); its victims evicted and the member
//     bound there;
//   - extender: the same dry run handed to the extender's preempt verb (ExtenderService over a
//     StaticClusterBackend holding the cluster as it is then, the members bound so far included),
//     kube-scheduler's pick among the nodes it keeps, with the victims it answers;
//   - extender, victims leaving: the same while the previous member's victims terminate (a
//     deleting pod keeps its GPUs for its grace period): the cache still holds them, and that
//     member as nominated for its node (status.nominatedNodeName), not bound;
//   - extender, cache behind: the same with the cache missing the previous member's evictions,
//     nomination and bind (a member's preempt that comes before the watch delivered any of
//     them: the race docs/groups.md, "Limits", describes), that member still waiting there;
//     the extender that answered it remembers its answer (service/group_preemption_memory.h);
//   - ideal: the fewest evictions with which the group fits in one clique (for whole-node members:
//     the M nodes of one clique that hold the fewest pods).
// Before each member the node agent's labels are rewritten (`used`, `gen`): outside the trailing
// row, the cache sees every eviction at once.
// A group is satisfied when all its members are bound inside one clique. Prints, as mean±sd over
// the seeds: the share of groups satisfied, evictions per satisfied group, evictions per group
// that satisfied nothing (members bound outside the group's clique, or members that got no node),
// and the GPU-hours the evictions destroy per group (each victim's GPUs times the hours it had
// run, an exponential time of mean --mean-hours, as bench_preemption models it).
//
//   build/bin/bench_group_preemption [--pods OPENB_CSV] [--cliques 4] [--clique-nodes 4]
//                                    [--members 2,3,4] [--fills 100] [--seeds 1,2,3,4,5]
//                                    [--mean-hours 24]
// With --pods, fill pods' GPU counts are drawn from the trace's GPU pods (1, 2, 4 or 8 GPUs; other
// counts are skipped), else from the openb multigpu50 mix.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_flags.h"
#include "cluster/gpu_annotation.h"
#include "cluster/static_cluster_backend.h"
#include "json/json_writer.h"
#include "log/logger.h"
#include "openb_gpu_counts.h"
#include "policy/default_policy.h"
#include "seed_stats.h"
#include "service/extender_service.h"
#include "service/group_preemption_memory.h"
#include "service/reply.h"
#include "sim/node_template.h"

namespace {

using namespace gte;

constexpr int kNodeGpus = 8;
constexpr std::int64_t kGroupPriority = 10;

struct RunningPod {
  std::string uid;
  int node = 0;
  int gpus = 0;
  int firstGpu = 0;  // the pod holds GPUs firstGpu .. firstGpu + gpus - 1
  std::int64_t priority = 0;
  double ranHours = 0;
  bool member = false;  // a member of the preempting group
  // A member kube-scheduler nominated for `node` and has not bound: pending, holding no GPU.
  bool nominated = false;
};

struct Cluster {
  std::vector<NodeInfo> nodes;
  std::vector<int> clique;  // per node
  std::vector<RunningPod> pods;
};

struct Tally {
  int groups = 0;
  int satisfied = 0;
  long evictions = 0;        // of satisfied groups
  long wastedEvictions = 0;  // of groups that did not land in one clique
  double gpuHoursDestroyed = 0;
};

// A node's candidate for one member: kube-scheduler's dry-run victims (indices into pods).
struct Candidate {
  int node = 0;
  std::vector<std::size_t> victims;
};

PodInfo runningPodInfo(const RunningPod& pod, const Cluster& cluster, int members,
                       const std::string& prefix) {
  PodInfo info;
  info.name = pod.uid;
  info.ns = "bench";
  info.uid = pod.uid;
  const std::string& node = cluster.nodes[static_cast<std::size_t>(pod.node)].name;
  info.priority = pod.priority;
  info.requests.set("nvidia.com/gpu", Quantity::fromUnits(pod.gpus));
  if (pod.nominated) {
    info.nominatedNodeName = node;
    info.phase = "Pending";
  } else {
    info.nodeName = node;
    info.phase = "Running";
    Allocation allocation;
    allocation.complete = true;
    for (int g = 0; g < pod.gpus; ++g)
      allocation.gpus.push_back(pod.firstGpu + g);
    info.annotations[prefix + std::string(gte::cluster::kGpusAnnotation)] =
        gte::cluster::formatGpuAnnotation(allocation);
  }
  if (pod.member) {
    info.annotations[prefix + "group"] = "job";
    info.annotations[prefix + "group-size"] = std::to_string(members);
  }
  return info;
}

// Member `index`, pending: as the cache holds a member kube-scheduler has not nominated yet.
PodInfo pendingMemberInfo(int index, int members, const std::string& prefix) {
  PodInfo info;
  info.name = "member-" + std::to_string(index);
  info.ns = "bench";
  info.uid = info.name;
  info.priority = kGroupPriority;
  info.phase = "Pending";
  info.requests.set("nvidia.com/gpu", Quantity::fromUnits(kNodeGpus));
  info.annotations[prefix + "group"] = "job";
  info.annotations[prefix + "group-size"] = std::to_string(members);
  return info;
}

std::string memberJson(int index, int members, const std::string& prefix) {
  std::string out;
  json::JsonWriter w(out);
  const std::string name = "member-" + std::to_string(index);
  w.beginObject().key("kind").string("Pod").key("metadata").beginObject();
  w.key("name").string(name).key("namespace").string("bench").key("uid").string(name);
  w.key("annotations").beginObject();
  w.key(prefix + "group").string("job");
  w.key(prefix + "group-size").string(std::to_string(members));
  w.endObject().endObject();
  w.key("spec").beginObject().key("priority").integer(kGroupPriority);
  w.key("containers").beginArray().element().beginObject();
  w.key("name").string("main").key("resources").beginObject();
  for (const char* side : {"requests", "limits"}) {
    w.key(side).beginObject().key("nvidia.com/gpu").string(std::to_string(kNodeGpus)).endObject();
  }
  w.endObject().endObject().endArray().endObject();
  w.key("status").beginObject().key("phase").string("Pending").endObject();
  w.endObject();
  return out;
}

// kube-scheduler's dry run for a whole-node member on every node: every pod of lower priority is
// a victim (none can be reprieved: the member needs all 8 GPUs); nodes holding a pod of the group's
// priority or above are no candidates.
std::vector<Candidate> dryRun(const Cluster& cluster) {
  std::vector<Candidate> out(cluster.nodes.size());
  std::vector<bool> blocked(cluster.nodes.size(), false);
  for (std::size_t n = 0; n < out.size(); ++n)
    out[n].node = static_cast<int>(n);
  for (std::size_t p = 0; p < cluster.pods.size(); ++p) {
    const RunningPod& pod = cluster.pods[p];
    const auto node = static_cast<std::size_t>(pod.node);
    if (pod.priority >= kGroupPriority) {
      blocked[node] = true;
    } else {
      out[node].victims.push_back(p);
    }
  }
  std::vector<Candidate> candidates;
  for (std::size_t n = 0; n < out.size(); ++n) {
    // A node with nothing to evict is free: the member needs no preemption there (not here: every
    // node is full after the fill).
    if (!blocked[n] && !out[n].victims.empty()) candidates.push_back(std::move(out[n]));
  }
  return candidates;
}

// pickOneNodeForPreemption without PDBs: the lowest top victim priority, then fewest victims
// (the sum of priorities each offset by 2^31 counts victims first), then the lowest sum of
// priorities, then the first in `order`.
const Candidate* kubeSchedulerPick(const Cluster& cluster, const std::vector<Candidate>& candidates,
                                   const std::vector<int>& order) {
  const Candidate* best = nullptr;
  std::tuple<std::int64_t, std::size_t, std::int64_t, int> bestKey{};
  for (const Candidate& c : candidates) {
    std::int64_t top = std::numeric_limits<std::int64_t>::min();
    std::int64_t sum = 0;
    for (const std::size_t v : c.victims) {
      top = std::max(top, cluster.pods[v].priority);
      sum += cluster.pods[v].priority;
    }
    const auto key =
        std::make_tuple(top, c.victims.size(), sum, order[static_cast<std::size_t>(c.node)]);
    if (best == nullptr || key < bestKey) {
      best = &c;
      bestKey = key;
    }
  }
  return best;
}

// Evicts `victims` and binds the member on `node`; returns the GPU-hours destroyed.
double evictAndBind(Cluster& cluster, int node, const std::vector<std::size_t>& victims,
                    int member) {
  double destroyed = 0;
  std::vector<bool> gone(cluster.pods.size(), false);
  for (const std::size_t v : victims) {
    gone[v] = true;
    destroyed += cluster.pods[v].gpus * cluster.pods[v].ranHours;
  }
  std::vector<RunningPod> kept;
  for (std::size_t p = 0; p < cluster.pods.size(); ++p) {
    if (!gone[p]) kept.push_back(std::move(cluster.pods[p]));
  }
  cluster.pods = std::move(kept);
  RunningPod bound;
  bound.uid = "member-" + std::to_string(member);
  bound.node = node;
  bound.gpus = kNodeGpus;
  bound.priority = kGroupPriority;
  bound.member = true;
  cluster.pods.push_back(std::move(bound));
  return destroyed;
}

// Whether every member is bound and all of them inside one clique.
bool oneClique(const Cluster& cluster, int members) {
  std::set<int> cliques;
  int bound = 0;
  for (const RunningPod& pod : cluster.pods) {
    if (!pod.member) continue;
    ++bound;
    cliques.insert(cluster.clique[static_cast<std::size_t>(pod.node)]);
  }
  return bound == members && cliques.size() == 1;
}

// What the extender's preempt verb keeps of the candidates for member `index` (kube-scheduler's,
// on `cluster`): per kept node, the victims it answers. Its cache holds `cached`: `cluster`, or
// the cluster before the last member's evictions and bind (a cache that trails them), and the
// members it holds neither bound nor nominated, pending. `answered` is the extender's memory of
// the group's preempt answers, kept across its members.
std::vector<Candidate> extenderAnswer(const Cluster& cached, const Cluster& cluster,
                                      const std::vector<Candidate>& asked, int index, int members,
                                      const PolicyConstSharedPtr& policy,
                                      const std::shared_ptr<GroupPreemptionMemory>& answered) {
  gte::cluster::ClusterFileContents contents;
  contents.nodes = cached.nodes;
  // Bound that long ago: what the preempt verb reads a victim's run time from.
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  // The agent's labels as a pass made now writes them: `used` holds every running pod's GPUs,
  // and `gen` tells the cache that the pods bound before it are in them (not charged again).
  for (NodeInfo& node : contents.nodes) {
    node.labels[policy->labelPrefix + "used"] = std::string(kNodeGpus, '0');
    node.labels[policy->labelPrefix + "gen"] = std::to_string(now);
  }
  for (const RunningPod& pod : cached.pods) {
    if (pod.nominated) continue;
    std::string& used =
        contents.nodes[static_cast<std::size_t>(pod.node)].labels[policy->labelPrefix + "used"];
    for (int g = 0; g < pod.gpus; ++g)
      used[static_cast<std::size_t>(pod.firstGpu + g)] = '1';
  }
  for (const RunningPod& pod : cached.pods) {
    const std::int64_t boundAt = now - static_cast<std::int64_t>(pod.ranHours * 3600);
    PodInfo info = runningPodInfo(pod, cached, members, policy->labelPrefix);
    info.boundAt = boundAt;
    contents.pods.push_back({std::move(info), boundAt});
  }
  for (int m = 0; m < members; ++m) {
    const std::string uid = "member-" + std::to_string(m);
    const bool held = std::any_of(cached.pods.begin(), cached.pods.end(),
                                  [&](const RunningPod& pod) { return pod.uid == uid; });
    if (!held) contents.pods.push_back({pendingMemberInfo(m, members, policy->labelPrefix), {}});
  }
  gte::cluster::StaticClusterBackend backend(std::move(contents), policy);
  ExtenderService service([&policy] { return policy; }, &backend, nullptr, {}, nullptr, answered);
  nlohmann::json body;
  body["Pod"] = nlohmann::json::parse(memberJson(index, members, policy->labelPrefix));
  body["NodeNameToVictims"] = nullptr;
  body["NodeNameToMetaVictims"] = nlohmann::json::object();
  for (const Candidate& c : asked) {
    nlohmann::json pods = nlohmann::json::array();
    for (const std::size_t v : c.victims)
      pods.push_back({{"UID", cluster.pods[v].uid}});
    body["NodeNameToMetaVictims"][cluster.nodes[static_cast<std::size_t>(c.node)].name] = {
        {"Pods", pods}, {"NumPDBViolations", 0}};
  }
  const Reply reply = service.preempt(body.dump());
  if (reply.status != 200) {
    std::fprintf(stderr, "bench_group_preemption: preempt answered %d: %s\n", reply.status,
                 reply.body.c_str());
    std::exit(1);
  }
  std::map<std::string, int> nodeIndex;
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n)
    nodeIndex[cluster.nodes[n].name] = static_cast<int>(n);
  std::map<std::string, std::size_t> podIndex;
  for (std::size_t p = 0; p < cluster.pods.size(); ++p)
    podIndex[cluster.pods[p].uid] = p;
  std::vector<Candidate> kept;
  const nlohmann::json answer = nlohmann::json::parse(reply.body);
  const nlohmann::json& victims = answer["NodeNameToMetaVictims"];
  if (!victims.is_object()) return kept;
  for (const auto& [node, entry] : victims.items()) {
    Candidate c;
    c.node = nodeIndex.at(node);
    for (const auto& pod : entry["Pods"]) {
      // A trailing cache may name a pod already evicted: nothing to evict again.
      const auto at = podIndex.find(pod["UID"].get<std::string>());
      if (at != podIndex.end()) c.victims.push_back(at->second);
    }
    kept.push_back(std::move(c));
  }
  std::sort(kept.begin(), kept.end(),
            [](const Candidate& a, const Candidate& b) { return a.node < b.node; });
  return kept;
}

// Who answers each member's preempt after kube-scheduler's dry run.
enum class Chooser : std::uint8_t {
  kScheduler,  // nobody: kube-scheduler alone
  kExtender,   // the preempt verb, its cache current
  // The preempt verb while the previous member's victims terminate: its cache holds them, and
  // the member as nominated for its node, not bound.
  kExtenderVictimsLeaving,
  kExtenderTrailing,  // the preempt verb, its cache missing the last member's evictions and bind
};

// The cluster as a cache trailing the last member's evictions and bind sees it: `before` them,
// with that member nominated for its node when `nominated`.
Cluster trailingView(const Cluster& before, const Cluster& now, int lastMember, bool nominated) {
  Cluster view = before;
  if (!nominated || lastMember < 0) return view;
  const std::string uid = "member-" + std::to_string(lastMember);
  for (const RunningPod& pod : now.pods) {
    if (pod.uid != uid) continue;
    RunningPod pending = pod;
    pending.nominated = true;
    view.pods.push_back(std::move(pending));
  }
  return view;
}

// Members preempt one after another.
void preemptGroup(Cluster cluster, int members, Chooser chooser, const PolicyConstSharedPtr& policy,
                  std::mt19937_64& rng, Tally& tally) {
  ++tally.groups;
  long evicted = 0;
  Cluster before = cluster;  // the cluster before the last member's evictions and bind
  // One extender answers the group's members: what it answered for one, the next one's preempt
  // recalls.
  const auto answered = std::make_shared<GroupPreemptionMemory>();
  for (int m = 0; m < members; ++m) {
    std::vector<Candidate> candidates = dryRun(cluster);
    if (chooser == Chooser::kExtender) {
      candidates = extenderAnswer(cluster, cluster, candidates, m, members, policy, answered);
    } else if (chooser != Chooser::kScheduler) {
      const Cluster cached =
          trailingView(before, cluster, m - 1, chooser == Chooser::kExtenderVictimsLeaving);
      candidates = extenderAnswer(cached, cluster, candidates, m, members, policy, answered);
    }
    std::vector<int> order(cluster.nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = static_cast<int>(i);
    std::shuffle(order.begin(), order.end(), rng);
    const Candidate* pick = kubeSchedulerPick(cluster, candidates, order);
    if (pick == nullptr) break;  // no node for this member: the group does not land
    evicted += static_cast<long>(pick->victims.size());
    const Candidate chosen = *pick;
    before = cluster;
    tally.gpuHoursDestroyed += evictAndBind(cluster, chosen.node, chosen.victims, m);
  }
  if (oneClique(cluster, members)) {
    ++tally.satisfied;
    tally.evictions += evicted;
  } else {
    tally.wastedEvictions += evicted;
  }
}

// The fewest evictions that fit the group in one clique: per clique, its `members` nodes holding
// the fewest pods (every pod is of lower priority), the fewest GPU-hours among equal counts.
void ideal(const Cluster& cluster, int members, Tally& tally) {
  ++tally.groups;
  std::vector<std::pair<long, double>> perNode(cluster.nodes.size(), {0, 0.0});
  for (const RunningPod& pod : cluster.pods) {
    auto& cost = perNode[static_cast<std::size_t>(pod.node)];
    ++cost.first;
    cost.second += pod.gpus * pod.ranHours;
  }
  std::map<int, std::vector<std::pair<long, double>>> byClique;
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n)
    byClique[cluster.clique[n]].push_back(perNode[n]);
  std::optional<std::pair<long, double>> best;
  for (auto& [clique, costs] : byClique) {
    if (static_cast<int>(costs.size()) < members) continue;
    std::sort(costs.begin(), costs.end());
    std::pair<long, double> sum{0, 0.0};
    for (int i = 0; i < members; ++i) {
      sum.first += costs[static_cast<std::size_t>(i)].first;
      sum.second += costs[static_cast<std::size_t>(i)].second;
    }
    if (!best || sum < *best) best = sum;
  }
  if (!best) return;
  ++tally.satisfied;
  tally.evictions += best->first;
  tally.gpuHoursDestroyed += best->second;
}

// Every node filled with pods of the drawn sizes until 64 draws found no room, priorities 0-3.
Cluster fill(const std::vector<NodeInfo>& nodes, const std::vector<int>& clique,
             const std::vector<int>& sizes, double meanHours, std::mt19937_64& rng) {
  Cluster cluster;
  cluster.nodes = nodes;
  cluster.clique = clique;
  std::exponential_distribution<double> runTime(1.0 / meanHours);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    int used = 0;
    for (int attempt = 0; attempt < 64 && used < kNodeGpus; ++attempt) {
      const int gpus = sizes[rng() % sizes.size()];
      if (used + gpus > kNodeGpus) continue;
      RunningPod pod;
      pod.uid = "fill-" + std::to_string(cluster.pods.size());
      pod.node = static_cast<int>(n);
      pod.gpus = gpus;
      pod.firstGpu = used;
      pod.priority = static_cast<std::int64_t>(rng() % 4);
      pod.ranHours = runTime(rng);
      used += gpus;
      cluster.pods.push_back(std::move(pod));
    }
  }
  return cluster;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace;
  int fills = 100;
  int cliques = 4;
  int cliqueNodes = 4;
  double meanHours = 24;
  std::vector<std::uint64_t> memberCounts = {2, 3, 4};
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5};
  const bench::Flag flags[] = {
      {"--pods", &trace},
      {"--fills", &fills, 1},
      {"--cliques", &cliques, 1},
      {"--clique-nodes", &cliqueNodes, 1},
      {"--mean-hours", &meanHours, 0.01},
      {"--members", &memberCounts, 1},
      {"--seeds", &seeds},
  };
  if (!bench::parseFlags(argc, argv, flags, "bench_group_preemption")) return 2;
  const std::vector<int> sizes = bench::openbGpuCounts(trace, "bench_group_preemption");
  log::setLevel(log::Level::kWarn);  // the preempt verb logs each candidate it vetoes
  const auto policy = std::make_shared<const Policy>(defaultPolicy());
  const sim::NodeTemplate* machine = sim::findNodeTemplate("hgx-h100");
  std::vector<NodeInfo> nodes;
  std::vector<int> clique;
  for (int c = 0; c < cliques; ++c) {
    for (int n = 0; n < cliqueNodes; ++n) {
      const std::string name = "c" + std::to_string(c) + "-n" + std::to_string(n);
      NodeInfo node = sim::makeTemplateNode(*machine, name, policy->labelPrefix);
      node.labels["nvidia.com/gpu.clique"] = "clique-" + std::to_string(c);
      nodes.push_back(std::move(node));
      clique.push_back(c);
    }
  }
  std::printf(
      "preemption for a group of M 8-GPU members, %d cliques x %d HGX H100 nodes, every node "
      "full, %d fills x %zu seeds, fill pods from %s, priorities 0-3 uniform, run times "
      "exponential of mean %.0f h\n",
      cliques, cliqueNodes, fills, seeds.size(), trace.empty() ? "the multigpu50 mix" : "the trace",
      meanHours);
  std::printf("%2s  %-25s %13s %12s %12s %14s\n", "M", "chooser", "satisfied", "evict/sat",
              "wasted/grp", "GPUh lost/grp");
  for (const std::uint64_t membersWide : memberCounts) {
    const int members = static_cast<int>(membersWide);
    std::vector<std::array<Tally, 5>> perSeed;
    for (const std::uint64_t seed : seeds) {
      std::array<Tally, 5> tallies{};
      std::mt19937_64 rng(seed * 1000003ULL + membersWide);
      for (int f = 0; f < fills; ++f) {
        const Cluster filled = fill(nodes, clique, sizes, meanHours, rng);
        // The same tie order for every chooser: kube-scheduler's pick differs only by what the
        // extender keeps.
        const std::uint64_t tieSeed = rng();
        const Chooser choosers[] = {Chooser::kScheduler, Chooser::kExtender,
                                    Chooser::kExtenderVictimsLeaving, Chooser::kExtenderTrailing};
        for (std::size_t c = 0; c < 4; ++c) {
          std::mt19937_64 ties(tieSeed);
          preemptGroup(filled, members, choosers[c], policy, ties, tallies[c]);
        }
        ideal(filled, members, tallies[4]);
      }
      perSeed.push_back(tallies);
    }
    const char* const choosers[] = {"scheduler alone", "extender", "extender, victims leaving",
                                    "extender, cache behind", "ideal"};
    for (std::size_t c = 0; c < 5; ++c) {
      std::vector<double> satisfied, perSatisfied, wasted, destroyed;
      for (const auto& seed : perSeed) {
        const Tally& t = seed[c];
        satisfied.push_back(t.groups ? 100.0 * t.satisfied / t.groups : 0.0);
        perSatisfied.push_back(t.satisfied ? static_cast<double>(t.evictions) / t.satisfied : 0.0);
        wasted.push_back(t.groups ? static_cast<double>(t.wastedEvictions) / t.groups : 0.0);
        destroyed.push_back(t.groups ? t.gpuHoursDestroyed / t.groups : 0.0);
      }
      std::printf("%2d  %-25s %6.1f±%-5.1f%% %6.2f±%-5.2f %6.2f±%-5.2f %7.0f±%-6.0f\n", members,
                  choosers[c], bench::mean(satisfied), bench::sd(satisfied),
                  bench::mean(perSatisfied), bench::sd(perSatisfied), bench::mean(wasted),
                  bench::sd(wasted), bench::mean(destroyed), bench::sd(destroyed));
    }
  }
  return 0;
}
