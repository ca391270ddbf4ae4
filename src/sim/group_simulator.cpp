#include "sim/group_simulator.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "sim/dra_cluster.h"
#include "sim/template_nodes.h"

namespace gte::sim {
namespace {

// How many more members of this shape the node could take, by counts: its free GPUs, CPU and
// memory (what kube-scheduler and Kueue see; which GPUs, the device plugin decides).
int memberSlots(const EngineNode& node, const SimPod& member) {
  std::int64_t slots = std::numeric_limits<int>::max();
  const auto bound = [&](std::int64_t free, std::int64_t each) {
    if (each > 0) {
      slots = std::min(slots, std::max<std::int64_t>(free, 0) / each);
    }
  };
  bound(node.state->freeCount, member.gpus);
  bound(node.cpuMilli - node.cpuRequested, member.cpuMilli);
  bound(node.memoryMib - node.memoryRequested, member.memoryMib);
  return static_cast<int>(slots);
}

struct DomainRoom {
  int domain = -1;
  std::int64_t slots = 0;     // members the domain's nodes could take
  std::int64_t freeGpus = 0;  // free GPUs on its nodes
};

class GroupReplay {
 public:
  GroupReplay(std::span<const SimNodeSpec> cluster, std::span<const TimedArrival> arrivals,
              const Policy& policy, const GroupSimOptions& options)
      : arrivals_(arrivals),
        policy_(policy),
        options_(options),
        dra_(options.pods.draOrder != DraDeviceOrder::kOff ? std::make_unique<SimDraCluster>()
                                                           : nullptr),
        built_(templateEngineNodes(cluster, policy, dra_.get(), options.pods)),
        engine_(std::move(built_.nodes), policy, options.pods, dra_.get()),
        domains_(cluster, options.levels.empty() ? policy.groups.levels : options.levels) {
    if (!options.faults.empty()) {
      faultLabels_.emplace(cluster, policy, options.faults, options.healthAware);
      changes_ = faultChanges(options.faults);
      nodeLabels_.resize(cluster.size());
    }
    run_.capacityGpus = built_.capacityGpus;
    run_.levels.assign(domains_.levels().begin(), domains_.levels().end());
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      nodeIndex_.emplace(cluster[n].name, n);
    }
  }

  GroupRun run() {
    double utilisation = 0;
    std::size_t sampled = 0;
    double measureStart = 0;
    for (std::size_t i = 0; i < arrivals_.size(); ++i) {
      const TimedArrival& arrival = arrivals_[i];
      advanceTo(arrival.at);
      if (i == options_.measureFrom) {
        measuring_ = true;
        measureStart = arrival.at;
        lastTime_ = arrival.at;
      }
      if (i >= options_.measureFrom) {
        utilisation += run_.capacityGpus == 0 ? 0
                                              : 100.0 * static_cast<double>(allocatedGpus_) /
                                                    static_cast<double>(run_.capacityGpus);
        ++sampled;
      }
      ArrivalOutcome outcome = arrival.members == 0 ? placeSingle(arrival) : placeGroup(arrival);
      if (outcome.placed) {
        departures_.emplace(arrival.at + arrival.duration, i);
      }
      run_.outcomes.push_back(std::move(outcome));
    }
    run_.utilisation = sampled == 0 ? 0 : utilisation / static_cast<double>(sampled);
    run_.measuredSpan = measuring_ ? lastTime_ - measureStart : 0;
    return std::move(run_);
  }

 private:
  // Departures and fault changes up to `time`, in time order (a departure first on a tie).
  void advanceTo(double time) {
    while (true) {
      const double departure =
          departures_.empty() ? std::numeric_limits<double>::infinity() : departures_.top().first;
      const double change = nextChange_ < changes_.size() ? changes_[nextChange_].at
                                                          : std::numeric_limits<double>::infinity();
      const double next = std::min(departure, change);
      if (next > time) {
        break;
      }
      accumulate(next);
      if (departure <= change) {
        depart(departures_.top().second);
        departures_.pop();
      } else {
        applyChange(changes_[nextChange_++]);
      }
    }
    accumulate(time);
  }

  // Free GPU-time on falsely marked GPUs since the last step.
  void accumulate(double time) {
    if (measuring_ && time > lastTime_) {
      int idle = 0;
      const std::span<const EngineNode> nodes = engine_.nodes();
      for (const std::size_t n : falselyMarkedNodes_) {
        idle += std::popcount(faultLabels_->falselyMarked(n) & nodes[n].state->freeMask);
      }
      run_.falselyMarkedIdle += static_cast<double>(idle) * (time - lastTime_);
    }
    lastTime_ = std::max(lastTime_, time);
  }

  void applyChange(const FaultChange& change) {
    const std::size_t node = faultLabels_->apply(change);
    nodeLabels_[node] = faultLabels_->labels(node);
    engine_.relabel(node, nodeLabels_[node].get());
    if (faultLabels_->falselyMarked(node) != 0) {
      falselyMarkedNodes_.insert(node);
    } else {
      falselyMarkedNodes_.erase(node);
    }
  }

  ArrivalOutcome placeSingle(const TimedArrival& arrival) {
    ArrivalOutcome outcome;
    const PodPlacement placement = engine_.place(arrival.pod, simPodDemand(arrival.pod, policy_));
    outcome.placed = placement.node >= 0;
    allocatedGpus_ += outcome.placed ? arrival.pod.gpus : 0;
    outcome.pods.push_back(placement);
    return outcome;
  }

  ArrivalOutcome placeGroup(const TimedArrival& arrival) {
    ArrivalOutcome outcome;
    const std::vector<std::uint8_t>& pool = poolOf(arrival.pod);
    noteOffer(arrival, pool, outcome);
    std::vector<std::uint8_t> allowed;
    if (options_.groups == GroupMode::kTasBestFit && !chooseDomains(arrival, pool, allowed)) {
      return outcome;
    }
    const bool placed = options_.groups == GroupMode::kPlanned
                            ? placePlanned(arrival, pool, outcome)
                            : placeMembers(arrival, allowed, outcome);
    if (!placed) {
      return outcome;
    }
    outcome.placed = true;
    allocatedGpus_ += static_cast<std::int64_t>(arrival.members) * arrival.pod.gpus;
    if (outcome.level >= 0) {
      std::vector<int> used;
      for (const PodPlacement& placement : outcome.pods) {
        used.push_back(domains_.domainOf(static_cast<std::size_t>(outcome.level),
                                         static_cast<std::size_t>(placement.node)));
      }
      std::sort(used.begin(), used.end());
      outcome.domainsUsed = static_cast<int>(std::unique(used.begin(), used.end()) - used.begin());
    }
    std::set<std::string_view> models;
    for (const PodPlacement& placement : outcome.pods) {
      models.insert(
          engine_.nodes()[static_cast<std::size_t>(placement.node)].state->topology.model);
    }
    outcome.modelsUsed = static_cast<int>(models.size());
    return outcome;
  }

  // Every member one by one by the pod chooser, on the `allowed` nodes (empty: any); false (and
  // nothing taken) when one finds no node.
  bool placeMembers(const TimedArrival& arrival, std::span<const std::uint8_t> allowed,
                    ArrivalOutcome& outcome) {
    const PodDemand demand = simPodDemand(arrival.pod, policy_);
    SimPod member = arrival.pod;
    for (int m = 0; m < arrival.members; ++m) {
      member.name = arrival.group + "-" + std::to_string(m);
      const PodPlacement placement = engine_.place(member, demand, allowed);
      if (placement.node < 0) {
        rollBack(arrival, outcome);
        return false;
      }
      outcome.pods.push_back(placement);
    }
    return true;
  }

  // The extender's planner over the group's nodes with room for a member; each member on its
  // planned node.
  bool placePlanned(const TimedArrival& arrival, std::span<const std::uint8_t> pool,
                    ArrivalOutcome& outcome) {
    const std::span<const EngineNode> nodes = engine_.nodes();
    std::vector<NodeGroupFacts> facts;
    std::vector<std::size_t> candidates;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (pool[n] != 0 && memberSlots(nodes[n], arrival.pod) > 0) {
        candidates.push_back(n);
        facts.push_back(nodeGroupFacts(*nodes[n].state, domains_.idsOf(n), policy_));
      }
    }
    std::vector<GroupPlanNode> planNodes;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      planNodes.push_back(
          GroupPlanNode{nodes[candidates[c]].name, nodes[candidates[c]].state.get(), &facts[c]});
    }
    const PodDemand demand = simPodDemand(arrival.pod, policy_);
    // Members that ask through the claim-template tiers are planned by their claims.
    const std::vector<PodDemand> members(static_cast<std::size_t>(arrival.members),
                                         engine_.askedDemand(arrival.pod, demand));
    const std::string group = "sim/" + arrival.group;
    GroupPlanInput input;
    input.group = group;
    input.levels = domains_.levels();
    input.domainNames = &domains_.names();
    input.nodes = planNodes;
    input.members = members;
    const GroupPlan plan = planGroup(input, policy_);
    outcome.plan = plan.status;
    if (plan.status == GroupPlanStatus::kUnplaced || plan.status == GroupPlanStatus::kUnsupported) {
      return placeMembers(arrival, {}, outcome);
    }
    if (plan.status != GroupPlanStatus::kPlanned) {
      return false;
    }
    std::vector<std::uint8_t> allowed(nodes.size(), 0);
    SimPod member = arrival.pod;
    for (const PlannedSlot& slot : plan.slots) {
      const std::size_t n = nodeIndex_.at(slot.node);
      member.name = arrival.group + "-" + std::to_string(slot.member);
      allowed[n] = 1;
      const PodPlacement placement = engine_.place(member, demand, allowed);
      allowed[n] = 0;
      if (placement.node < 0) {
        rollBack(arrival, outcome);
        return false;
      }
      GpuMask planned = 0;
      for (const int gpu : slot.allocation.gpus) {
        planned |= GpuMask{1} << gpu;
      }
      outcome.planMismatches += placement.gpus == planned ? 0 : 1;
      outcome.pods.push_back(placement);
    }
    return true;
  }

  void rollBack(const TimedArrival& arrival, ArrivalOutcome& outcome) {
    for (const PodPlacement& placement : outcome.pods) {
      engine_.release(arrival.pod, placement);
    }
    outcome.pods.clear();
  }

  void depart(std::size_t index) {
    const TimedArrival& arrival = arrivals_[index];
    for (const PodPlacement& placement : run_.outcomes[index].pods) {
      engine_.release(arrival.pod, placement);
      allocatedGpus_ -= arrival.pod.gpus;
    }
  }

  // The nodes the pod's selector admits, one entry per node.
  const std::vector<std::uint8_t>& poolOf(const SimPod& pod) {
    auto [entry, added] = pools_.try_emplace(pod.gpuProduct);
    if (added) {
      for (const EngineNode& node : engine_.nodes()) {
        entry->second.push_back(
            pod.gpuProduct.empty() || node.state->topology.model == pod.gpuProduct ? 1 : 0);
      }
    }
    return entry->second;
  }

  // Per domain of `level`: how many members its admitted nodes could take, and their free GPUs.
  std::vector<DomainRoom> rooms(std::size_t level, const SimPod& member,
                                std::span<const std::uint8_t> pool) const {
    std::vector<DomainRoom> out(domains_.domainCount(level));
    for (std::size_t d = 0; d < out.size(); ++d) {
      out[d].domain = static_cast<int>(d);
    }
    const std::span<const EngineNode> nodes = engine_.nodes();
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      const int domain = domains_.domainOf(level, n);
      if (pool[n] == 0 || domain < 0) {
        continue;
      }
      out[static_cast<std::size_t>(domain)].slots += memberSlots(nodes[n], member);
      out[static_cast<std::size_t>(domain)].freeGpus += nodes[n].state->freeCount;
    }
    return out;
  }

  void noteOffer(const TimedArrival& arrival, std::span<const std::uint8_t> pool,
                 ArrivalOutcome& outcome) const {
    std::int64_t total = 0;
    std::map<std::string_view, std::int64_t> byModel;
    const std::span<const EngineNode> nodes = engine_.nodes();
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      const std::int64_t slots = pool[n] != 0 ? memberSlots(nodes[n], arrival.pod) : 0;
      total += slots;
      byModel[nodes[n].state->topology.model] += slots;
    }
    outcome.fitsTotal = total >= arrival.members;
    outcome.fitsOneModel = std::any_of(byModel.begin(), byModel.end(), [&](const auto& model) {
      return model.second >= arrival.members;
    });
    outcome.level = domains_.innermostLevel(pool);
    if (outcome.level < 0) {
      return;
    }
    for (const DomainRoom& room :
         rooms(static_cast<std::size_t>(outcome.level), arrival.pod, pool)) {
      outcome.largestDomainSlots =
          std::max(outcome.largestDomainSlots, static_cast<int>(room.slots));
    }
    outcome.fitsOneDomain = outcome.largestDomainSlots >= arrival.members;
  }

  // The label-level best fit. False: the group is refused (a required level has no domain that
  // holds it, or the admitted nodes cannot).
  bool chooseDomains(const TimedArrival& arrival, std::span<const std::uint8_t> pool,
                     std::vector<std::uint8_t>& allowed) const {
    int innermost = -1;
    for (std::size_t level = 0; level < domains_.levels().size(); ++level) {
      const GroupLevelMode mode = domains_.levels()[level].mode;
      if (mode == GroupLevelMode::kIgnored || !domains_.carried(level, pool)) {
        continue;  // no admitted node has the label: the next level groups them
      }
      const std::vector<DomainRoom> found = rooms(level, arrival.pod, pool);
      innermost = innermost < 0 ? static_cast<int>(level) : innermost;
      const DomainRoom* best = nullptr;
      for (const DomainRoom& room : found) {
        if (room.slots < arrival.members) {
          continue;
        }
        if (best == nullptr || room.freeGpus < best->freeGpus ||
            (room.freeGpus == best->freeGpus &&
             domains_.domainName(level, room.domain) < domains_.domainName(level, best->domain))) {
          best = &room;
        }
      }
      if (best != nullptr) {
        admitDomains(level, {best->domain}, pool, allowed);
        return true;
      }
      if (mode == GroupLevelMode::kRequired) {
        return false;
      }
    }
    if (innermost < 0) {
      return true;  // no level: every admitted node
    }
    // No domain holds the group: the fewest domains of the innermost level, roomiest first.
    const auto level = static_cast<std::size_t>(innermost);
    std::vector<DomainRoom> found = rooms(level, arrival.pod, pool);
    std::sort(found.begin(), found.end(), [&](const DomainRoom& a, const DomainRoom& b) {
      return a.slots != b.slots
                 ? a.slots > b.slots
                 : domains_.domainName(level, a.domain) < domains_.domainName(level, b.domain);
    });
    std::vector<int> taken;
    std::int64_t slots = 0;
    for (const DomainRoom& room : found) {
      if (slots >= arrival.members || room.slots == 0) {
        break;
      }
      taken.push_back(room.domain);
      slots += room.slots;
    }
    if (slots < arrival.members) {
      return false;
    }
    admitDomains(level, taken, pool, allowed);
    return true;
  }

  void admitDomains(std::size_t level, const std::vector<int>& chosen,
                    std::span<const std::uint8_t> pool, std::vector<std::uint8_t>& allowed) const {
    allowed.assign(pool.size(), 0);
    for (std::size_t n = 0; n < pool.size(); ++n) {
      const int domain = domains_.domainOf(level, n);
      allowed[n] =
          pool[n] != 0 && std::find(chosen.begin(), chosen.end(), domain) != chosen.end() ? 1 : 0;
    }
  }

  std::span<const TimedArrival> arrivals_;
  const Policy& policy_;
  const GroupSimOptions& options_;
  std::unique_ptr<SimDraCluster> dra_;  // DRA mode: every node's slice and the claims' devices
  TemplateNodes built_;
  PlacementEngine engine_;
  TopologyDomains domains_;
  GroupRun run_;
  std::int64_t allocatedGpus_ = 0;
  std::map<std::string, std::vector<std::uint8_t>, std::less<>> pools_;
  std::unordered_map<std::string_view, std::size_t> nodeIndex_;
  // Faults: the nodes' marks, the changes still to come, each changed node's labels (kept alive
  // for the engine), the nodes with a false alarm's mark now, and the free-GPU-time clock.
  std::optional<FaultLabels> faultLabels_;
  std::vector<FaultChange> changes_;
  std::size_t nextChange_ = 0;
  std::vector<NodeStateConstSharedPtr> nodeLabels_;
  std::set<std::size_t> falselyMarkedNodes_;
  bool measuring_ = false;
  double lastTime_ = 0;
  using Departure = std::pair<double, std::size_t>;
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
};

}  // namespace

GroupRun simulateGroups(std::span<const SimNodeSpec> cluster,
                        std::span<const TimedArrival> arrivals, const Policy& policy,
                        const GroupSimOptions& options) {
  return GroupReplay(cluster, arrivals, policy, options).run();
}

}  // namespace gte::sim
