#include "group/group_plan.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "core/claims_as_gpus.h"
#include "core/dra_decision.h"
#include "core/pod_route.h"
#include "dra/claim_program.h"
#include "group/group_slots.h"
#include "topology/gpu_topology.h"

namespace gte {
namespace {

std::string linkSuffix(const PodDemand& demand) {
  std::string out;
  if (demand.minLink) out += "min-link " + std::string(linkClassName(*demand.minLink));
  if (demand.singleNuma) out += std::string(out.empty() ? "" : ", ") + "numa single";
  return out.empty() ? out : " (" + out + ")";
}

// Whether two members' claims ask the same devices (both without claims: true).
bool sameClaims(const PodDemand& a, const PodDemand& b) {
  if (!a.draClaims() || !b.draClaims()) return a.draClaims() == b.draClaims();
  const auto& x = a.dra->claims;
  const auto& y = b.dra->claims;
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!dra::asksTheSame(x[i], y[i])) return false;
  }
  return true;
}

// One domain of one level, as the candidates (and anchors) fill it.
struct DomainTally {
  std::int64_t slots = 0;  // members of the counted shape it can take
  // ... on sets that hold nothing the health policy avoids (GroupSlots::healthy)
  std::int64_t healthySlots = 0;
  // ... on all-NVLink sets, for members that accept any link (Planner::prefersNvlinkSets)
  std::int64_t nvlinkSlots = 0;
  std::int64_t freeGpus = 0;
  std::int64_t usableGpus = 0;
  std::int64_t partlyUsedSlots = 0;  // ... on nodes with a usable GPU in use
  // Nodes with every usable GPU free, by their slots (a node has at most one per GPU).
  std::array<std::uint32_t, kMaxGpus + 1> freeNodesBySlots{};
  // The fewest nodes with every usable GPU free that the members the partly used nodes cannot
  // take need (the roomiest such nodes first).
  std::int64_t freeNodesNeeded = 0;
  std::uint32_t nodes = 0;
};

class Planner {
 public:
  Planner(const GroupPlanInput& in, const Policy& policy)
      : in_(in),
        policy_(policy),
        sameModel_(in.sameModel.value_or(policy.groups.sameModel) == GroupLevelMode::kPreferred) {
    // Members with DRA claims count as the whole GPUs their claims amount to (they have slots
    // only on DRA nodes that decide them so: slotDemand); members whose claims ask N devices in
    // tiers as N GPUs, their sets the first-fit's on each node (plannedByFirstFit); other claim
    // members are not planned.
    gpus_.reserve(in.members.size());
    firstFit_.reserve(in.members.size());
    for (const PodDemand& member : in.members) {
      std::optional<PodDemand> gpus = member.draClaims() ? claimsAsGpus(member) : member;
      const bool firstFit = !gpus && plannedByFirstFit(member);
      if (firstFit) {
        gpus = member;
        gpus->dra = nullptr;
        gpus->gpus = member.dra->tieredDevices;
      }
      if (!gpus) unplannableClaims_ = true;
      gpus_.push_back(gpus ? std::move(*gpus) : member);
      firstFit_.push_back(firstFit);
    }
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      neededGpus_ += gpus_[i].gpus;
      if (!sameShape(gpus_[i], gpus_.front()) || !sameClaims(in.members[i], in.members.front())) {
        homogeneous_ = false;
      }
      if (gpus_[i].gpus > gpus_[largest_].gpus) largest_ = i;
    }
    largestCount_ = static_cast<std::int64_t>(
        std::count_if(gpus_.begin(), gpus_.end(),
                      [&](const PodDemand& d) { return sameShape(d, gpus_[largest_]); }));
  }

  GroupPlan run() {
    GroupPlan plan;
    if (in_.members.empty()) {
      plan.status = GroupPlanStatus::kPlanned;
      plan.reason = "every member is placed";
      return plan;
    }
    for (const PodDemand& member : in_.members) {
      if (!member.mig.empty()) {
        plan.status = GroupPlanStatus::kUnsupported;
        plan.reason = "members asking for MIG devices are not planned: placed one by one";
        return plan;
      }
    }
    if (unplannableClaims_) {
      plan.status = GroupPlanStatus::kUnsupported;
      plan.reason =
          "members whose DRA claims are not N devices of one class (in tiers or not) are not "
          "planned: placed one by one";
      return plan;
    }
    if (takesOtherDevices()) {
      plan.status = GroupPlanStatus::kUnsupported;
      plan.reason =
          "members whose DRA claims take MIG or other devices than whole GPUs are not planned: "
          "placed one by one";
      return plan;
    }
    numberModels();
    std::vector<std::uint32_t> pool(in_.nodes.size());
    std::iota(pool.begin(), pool.end(), 0u);
    std::optional<GroupPlan> refusal;  // the first required level that could not hold the group
    for (std::size_t level = 0; level < in_.levels.size() && level < kMaxGroupLevels; ++level) {
      const GroupLevelMode mode = in_.levels[level].mode;
      if (mode == GroupLevelMode::kIgnored) continue;
      // Members already placed in several domains of this level: nothing left to keep together.
      if (anchorDomain(level) == kMixedDomain) continue;
      if (tryLevel(level, pool, plan)) return plan;
      if (mode == GroupLevelMode::kRequired && applies_) {
        if (!refusal) refusal = refuse(level);
        // Nodes without the label are not constrained by it: the next levels place the group there.
        std::erase_if(pool, [&](std::uint32_t n) { return domainOf(n, level) != kNoDomain; });
      }
    }
    for (const bool oneModel : passes(pool)) {
      if (!place(pool, plan.slots, oneModel)) continue;
      plan.status = GroupPlanStatus::kPlanned;
      plan.level = -1;
      plan.domain = sharedDomains(plan.slots);
      if (violatesRequired(plan.domain)) {
        plan.slots.clear();
        break;
      }
      plan.reason = anyLevelApplied_ ? "no domain of any level can hold the group: placed by "
                                       "per-node GPU sets"
                                     : "no level applies to the candidates: placed by per-node "
                                       "GPU sets";
      plan.reason += modelNote(pool, oneModel);
      return plan;
    }
    plan.slots.clear();
    if (refusal) {
      refusal->domains = std::move(plan.domains);
      return std::move(*refusal);
    }
    plan.status = GroupPlanStatus::kUnplaced;
    plan.reason = "the candidate nodes cannot hold the whole group " + std::string(in_.group) +
                  " (" + describeMembers(gpus_) + ") now: its members are placed one by one";
    return plan;
  }

 private:
  std::uint32_t domainOf(std::uint32_t node, std::size_t level) const {
    return in_.nodes[node].facts->domain[level];
  }

  std::string domainName(std::size_t level, std::uint32_t id) const {
    if (id == kNoDomain) return "(none)";
    if (in_.domainNames != nullptr) {
      const std::string_view name = in_.domainNames->name(level, id);
      if (!name.empty()) return std::string(name);
    }
    return "#" + std::to_string(id);
  }

  std::string labelled(std::size_t level, std::uint32_t id) const {
    return in_.levels[level].label + "=" + domainName(level, id);
  }

  // Members like member `m` node `n` can take one after another, at most `limit`: the
  // precomputed counts for plain and NVLink members of up to eight GPUs, the node's chain for
  // other link classes, and free GPUs / k as a bound for the rest (the assignment then checks
  // exactly). A member with claims has none on a node that does not decide them as GPUs.
  int slotsOn(std::uint32_t n, std::size_t m, int limit) const {
    const GroupPlanNode& node = in_.nodes[n];
    const PodDemand& member = in_.members[m];
    if (firstFit_[m]) {
      return routeOn(member, *node.state) == PodRoute::kDraFirstFit
                 ? groupSlotCount(member, *node.state, policy_, limit)
                 : 0;
    }
    if (member.draClaims() && routeOn(member, *node.state) != PodRoute::kClaimsAsGpus) return 0;
    const PodDemand& demand = gpus_[m];
    if (chainCovers(demand)) {
      const auto k = static_cast<std::size_t>(demand.gpus - 1);
      if (!demand.minLink) return std::min<int>(limit, node.facts->slots.any[k]);
      if (*demand.minLink == LinkClass::kNvlink)
        return std::min<int>(limit, node.facts->slots.nvlink[k]);
      return groupSlotCount(member, *node.state, policy_, limit);
    }
    return std::min<int>(
        limit, static_cast<int>(node.facts->freeGpus / std::max<std::int64_t>(1, demand.gpus)));
  }

  // Whether a tiered claim member's first-fit, on the first candidate that could place it with
  // every device free, takes other devices than its count of mapped whole GPUs (MIG devices, a
  // class of other devices, an unmapped GPU): no node would then have a slot for it, and the
  // member is left to be placed one by one, as before tiers were planned, rather than refused.
  bool takesOtherDevices() const {
    for (std::size_t m = 0; m < in_.members.size(); ++m) {
      if (!firstFit_[m] ||
          (m > 0 && firstFit_[m - 1] && sameClaims(in_.members[m], in_.members[m - 1]))) {
        continue;  // members alike: the first one tells
      }
      const PodDemand& member = in_.members[m];
      DraDecider decider(*member.dra);
      for (const GroupPlanNode& node : in_.nodes) {
        if (routeOn(member, *node.state) != PodRoute::kDraFirstFit) continue;
        const DraPlacement placed = decider.place(*node.state, true);
        if (placed.outcome != DraOutcome::kPlaced) continue;
        if (!wholeGpuSet(placed, member)) return true;
        break;
      }
    }
    return false;
  }

  // The counted shape: every member when they are alike, else the largest ones.
  std::size_t countedShape() const { return largest_; }
  std::int64_t countedNeed() const {
    return homogeneous_ ? static_cast<std::int64_t>(in_.members.size()) : largestCount_;
  }

  bool holds(const DomainTally& tally) const {
    return tally.slots >= countedNeed() && tally.freeGpus >= neededGpus_;
  }
  // Key 1 of the domain order (tryLevel): the domain holds the group on healthy sets.
  bool holdsHealthy(const DomainTally& tally) const { return tally.healthySlots >= countedNeed(); }
  // Key 2: members it holds on all-NVLink sets (tallied only when that counts,
  // prefersNvlinkSets, so 0 otherwise).
  std::int64_t nvlinkMembers(const DomainTally& tally) const {
    return std::min(tally.nvlinkSlots, countedNeed());
  }
  // DomainTally::freeNodesNeeded from its partly used slots and free nodes.
  std::int64_t freeNodesNeeded(const DomainTally& tally) const {
    std::int64_t left = countedNeed() - tally.partlyUsedSlots;
    std::int64_t used = 0;
    for (std::size_t slots = kMaxGpus; slots > 0 && left > 0; --slots) {
      const std::int64_t free = tally.freeNodesBySlots[slots];
      if (free == 0) continue;
      const auto size = static_cast<std::int64_t>(slots);
      const std::int64_t nodes = std::min(free, (left + size - 1) / size);
      used += nodes;
      left -= nodes * size;
    }
    return used;
  }
  std::int64_t spare(const DomainTally& tally) const {
    return homogeneous_ ? tally.slots - countedNeed() : tally.freeGpus - neededGpus_;
  }

  // The anchors' domain at `level`: nullopt without anchors, kMixedDomain when they disagree.
  std::optional<std::uint32_t> anchorDomain(std::size_t level) const {
    if (in_.anchors.empty()) return std::nullopt;
    const std::uint32_t first = in_.anchors.front()[level];
    for (const GroupDomainIds& anchor : in_.anchors) {
      if (anchor[level] != first) return kMixedDomain;
    }
    return first;
  }

  bool tryLevel(std::size_t level, const std::vector<std::uint32_t>& pool, GroupPlan& plan) {
    applies_ = false;
    std::vector<DomainTally> tallies;
    const std::size_t shape = countedShape();
    const bool nvlinkFirst = prefersNvlinkSets();
    for (const std::uint32_t n : pool) {
      const std::uint32_t id = domainOf(n, level);
      if (id == kNoDomain) continue;
      if (id >= tallies.size()) tallies.resize(id + 1);
      DomainTally& tally = tallies[id];
      const int slots = slotsOn(n, shape, kMaxCountedSlots);
      tally.slots += slots;
      tally.healthySlots += healthySlotsOf(slots, n);
      if (nvlinkFirst) tally.nvlinkSlots += std::min(slots, nvlinkSlotsOn(n));
      tally.freeGpus += in_.nodes[n].facts->freeGpus;
      tally.usableGpus += in_.nodes[n].facts->usableGpus;
      if (slots > 0 && in_.nodes[n].facts->freeGpus == in_.nodes[n].facts->usableGpus) {
        ++tally.freeNodesBySlots[static_cast<std::size_t>(std::min(slots, kMaxGpus))];
      } else {
        tally.partlyUsedSlots += slots;
      }
      ++tally.nodes;
    }
    for (DomainTally& tally : tallies)
      tally.freeNodesNeeded = freeNodesNeeded(tally);
    const std::optional<std::uint32_t> anchored = anchorDomain(level);
    const bool anchorsLabelled = anchored && *anchored != kNoDomain;
    applies_ = anchorsLabelled || std::any_of(tallies.begin(), tallies.end(),
                                              [](const DomainTally& t) { return t.nodes > 0; });
    if (!applies_) return false;
    anyLevelApplied_ = true;
    tallies_ = tallies;
    std::vector<std::uint32_t> order;
    for (std::uint32_t id = 0; id < tallies.size(); ++id) {
      if (tallies[id].nodes == 0) continue;
      if (anchored && *anchored != id) {
        note(plan, level, id, tallies[id], DomainVerdict::Outcome::kAnchoredElsewhere, *anchored);
        continue;
      }
      if (!holds(tallies[id])) {
        note(plan, level, id, tallies[id], DomainVerdict::Outcome::kTooSmall);
        continue;
      }
      order.push_back(id);
    }
    // The order, key by key:
    // 1. A domain that holds the group on healthy sets (nothing degraded, docs/health.md): a
    //    group stops when any member's GPU or link fails.
    // 2. For members of 2+ GPUs that accept any link, the domain that holds more of them on
    //    all-NVLink sets (all of them at best): where the sets are first-fit's (DRA nodes), a
    //    tighter domain would hand more members PCIe pairs, and a data-parallel group runs at its
    //    slowest member's pace.
    // 3. Fewer nodes with every GPU free needed: members smaller than a node that fit on partly
    //    used nodes of one domain leave another domain's free nodes whole for the groups and pods
    //    that need whole nodes (a label-level best fit, blind to GPUs, cannot tell them apart).
    // 4. Best fit: the fewest free GPUs left after placing (every fitting domain takes the same
    //    GPUs, so this is the fewest free GPUs now), then the fewest spare slots, then the name.
    //    Free GPUs before spare slots, so leftovers of other shapes count too: a domain whose free
    //    GPUs are stranded in slots the group cannot use is kept for the smaller pods they serve.
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const bool ha = holdsHealthy(tallies[a]);
      const bool hb = holdsHealthy(tallies[b]);
      if (ha != hb) return ha;
      const std::int64_t na = nvlinkMembers(tallies[a]);
      const std::int64_t nb = nvlinkMembers(tallies[b]);
      if (na != nb) return na > nb;
      if (tallies[a].freeNodesNeeded != tallies[b].freeNodesNeeded) {
        return tallies[a].freeNodesNeeded < tallies[b].freeNodesNeeded;
      }
      if (tallies[a].freeGpus != tallies[b].freeGpus) {
        return tallies[a].freeGpus < tallies[b].freeGpus;
      }
      const std::int64_t sa = spare(tallies[a]);
      const std::int64_t sb = spare(tallies[b]);
      if (sa != sb) return sa < sb;
      return domainName(level, a) < domainName(level, b);
    });
    // With one GPU model preferred, a first pass keeps the members on one model's nodes in a
    // domain; only when no domain of the level can, a second pass lets them mix.
    const std::vector<bool> modelPasses = passes(pool);
    for (const bool oneModel : modelPasses) {
      const bool lastPass = oneModel == modelPasses.back();
      for (std::size_t i = 0; i < order.size(); ++i) {
        const std::uint32_t id = order[i];
        std::vector<std::uint32_t> members;
        for (const std::uint32_t n : pool) {
          if (domainOf(n, level) == id) members.push_back(n);
        }
        std::vector<PlannedSlot> slots;
        if (!place(members, slots, oneModel)) {
          if (lastPass) note(plan, level, id, tallies[id], DomainVerdict::Outcome::kNoGpuSets);
          continue;
        }
        const GroupDomainIds shared = sharedDomains(slots);
        if (violatesRequired(shared)) {
          if (lastPass) note(plan, level, id, tallies[id], DomainVerdict::Outcome::kSpansRequired);
          continue;
        }
        plan.status = GroupPlanStatus::kPlanned;
        plan.level = static_cast<int>(level);
        plan.domain = shared;
        plan.slots = std::move(slots);
        plan.reason = labelled(level, id) + ": best fit, " +
                      std::to_string(tallies[id].freeGpus - neededGpus_) + " free GPUs left over" +
                      modelNote(members, oneModel);
        note(plan, level, id, tallies[id], DomainVerdict::Outcome::kChosen);
        for (std::size_t j = 0; j < order.size(); ++j) {
          // Tighter domains passed over in the one-model pass cannot hold it on one model (in the
          // mixed pass they were noted as they failed).
          if (j == i || (j < i && !oneModel)) continue;
          const DomainVerdict::Outcome outcome =
              j < i ? DomainVerdict::Outcome::kMixesModels : DomainVerdict::Outcome::kLessTight;
          note(plan, level, order[j], tallies[order[j]], outcome, id, &tallies[id]);
        }
        return true;
      }
    }
    return false;
  }

  // The GPU model and fabric of a node: what "one model" compares.
  std::pair<std::string_view, std::string_view> modelOf(std::uint32_t n) const {
    const GpuTopology& topology = in_.nodes[n].state->topology;
    return {topology.model, topology.fabric};
  }

  // Numbers the candidates' GPU models once per plan, so the passes compare integers: the
  // levels and the fallback ask again and again over thousands of nodes.
  void numberModels() {
    if (!sameModel_) return;
    modelId_.resize(in_.nodes.size());
    std::vector<std::uint64_t> keys;
    for (std::uint32_t n = 0; n < in_.nodes.size(); ++n) {
      const std::uint64_t key = in_.nodes[n].facts->modelKey;
      const auto at = std::find(keys.begin(), keys.end(), key);
      modelId_[n] = static_cast<std::uint32_t>(at - keys.begin());
      if (at == keys.end()) {
        keys.push_back(key);
        models_.push_back(modelOf(n));  // the names, read from the first node of each model
      }
    }
  }

  // The planning passes over `nodes`: one model first, then mixed, when one model is preferred
  // and the nodes hold several; else one pass.
  std::vector<bool> passes(const std::vector<std::uint32_t>& nodes) const {
    if (!sameModel_ || models_.size() < 2 || nodes.empty()) return {false};
    const std::uint32_t first = modelId_[nodes.front()];
    const bool several = std::any_of(nodes.begin(), nodes.end(),
                                     [&](std::uint32_t n) { return modelId_[n] != first; });
    return several ? std::vector<bool>{true, false} : std::vector<bool>{false};
  }

  struct ModelPool {
    std::string_view model;
    std::string_view fabric;
    std::vector<std::uint32_t> nodes;
    std::int64_t freeGpus = 0;
    std::int64_t slots = 0;        // members of the counted shape its nodes take
    std::int64_t nvlinkSlots = 0;  // ... of them on all-NVLink sets
    int largestClique = 0;         // the largest free all-NVLink set of its nodes
  };

  // Members of 2+ GPUs that accept any link, counted on the precomputed chain: a model whose
  // nodes hold them all on NVLink sets beats a tighter one that would give them PCIe sets (as
  // the node order inside a domain does, assignAlike).
  bool prefersNvlinkSets() const {
    const PodDemand& shape = gpus_[countedShape()];
    return !shape.minLink && shape.gpus >= 2 && chainCovers(shape) && !firstFit_[countedShape()];
  }
  // Members of the counted shape node `n` holds on all-NVLink sets (prefersNvlinkSets only).
  int nvlinkSlotsOn(std::uint32_t n) const {
    const auto k = static_cast<std::size_t>(gpus_[countedShape()].gpus - 1);
    return in_.nodes[n].facts->slots.nvlink[k];
  }

  // Of `count` slots of the counted shape on node `n`, those whose sets hold nothing degraded
  // (GroupSlots::healthy: the first ones of the chain); members the precomputed chain does not
  // cover: all of them.
  int healthySlotsOf(int count, std::uint32_t n) const {
    const PodDemand& demand = gpus_[countedShape()];
    if (!chainCovers(demand) || firstFit_[countedShape()]) return count;
    const auto k = static_cast<std::size_t>(demand.gpus - 1);
    return std::min<int>(count, in_.nodes[n].facts->slots.healthy[k]);
  }
  bool sickSlots(int count, std::uint32_t n) const { return healthySlotsOf(count, n) < count; }

  // `nodes` by GPU model: with prefersNvlinkSets, the models that hold every member on NVLink
  // sets first; then best fit: the fewest free GPUs, then the smaller largest free NVLink set
  // (so an equal model is used before the one that holds a bigger set whole), then the name.
  std::vector<ModelPool> modelPools(const std::vector<std::uint32_t>& nodes) const {
    std::vector<ModelPool> pools(models_.size());
    for (std::size_t m = 0; m < models_.size(); ++m) {
      pools[m].model = models_[m].first;
      pools[m].fabric = models_[m].second;
    }
    const bool nvlinkFirst = prefersNvlinkSets();
    for (const std::uint32_t n : nodes) {
      ModelPool& pool = pools[modelId_[n]];
      pool.nodes.push_back(n);
      pool.freeGpus += in_.nodes[n].facts->freeGpus;
      pool.slots += slotsOn(n, countedShape(), kMaxCountedSlots);
      pool.largestClique =
          std::max<int>(pool.largestClique, in_.nodes[n].facts->largestNvlinkClique);
      if (nvlinkFirst) pool.nvlinkSlots += nvlinkSlotsOn(n);
    }
    std::erase_if(pools, [](const ModelPool& pool) { return pool.nodes.empty(); });
    const std::int64_t need = countedNeed();
    std::sort(pools.begin(), pools.end(), [&](const ModelPool& a, const ModelPool& b) {
      const bool na = nvlinkFirst && a.nvlinkSlots >= need;
      const bool nb = nvlinkFirst && b.nvlinkSlots >= need;
      if (na != nb) return na;
      if (a.freeGpus != b.freeGpus) return a.freeGpus < b.freeGpus;
      if (a.largestClique != b.largestClique) return a.largestClique < b.largestClique;
      return std::tie(a.model, a.fabric) < std::tie(b.model, b.fabric);
    });
    return pools;
  }

  // Places every member on `nodes`; with `oneModel`, all on the nodes of one GPU model (the best
  // fit among the models that can hold the group).
  bool place(const std::vector<std::uint32_t>& nodes, std::vector<PlannedSlot>& slots,
             bool oneModel) {
    if (!oneModel) return assign(nodes, slots);
    for (const ModelPool& pool : modelPools(nodes)) {
      if (pool.freeGpus < neededGpus_ || pool.slots < countedNeed()) continue;
      if (assign(pool.nodes, slots)) return true;
    }
    slots.clear();
    return false;
  }

  // What the plan says of GPU models where the candidates hold several: the model chosen and
  // what each other one could hold, or that no one model could hold the group.
  std::string modelNote(const std::vector<std::uint32_t>& nodes, bool oneModel) const {
    if (!sameModel_ || passes(nodes).size() < 2) return {};
    const std::vector<ModelPool> pools = modelPools(nodes);
    std::string chosen;
    std::string others;
    const std::string_view planned = slotNodes_.empty() ? "" : modelOf(slotNodes_.front()).first;
    for (const ModelPool& pool : pools) {
      const std::string name =
          pool.model.empty() ? std::string("unknown model") : std::string(pool.model);
      if (oneModel && pool.model == planned && chosen.empty()) {
        chosen = name;
        continue;
      }
      others += (others.empty() ? "" : ", ") + name + " holds " +
                std::to_string(std::min(pool.slots, countedNeed())) + " of " +
                std::to_string(countedNeed());
    }
    if (oneModel) return "; one GPU model, " + chosen + (others.empty() ? "" : " (" + others + ")");
    return "; GPU models mixed: no one model can hold the group (" + others + ")";
  }

  // `chosen`: the tally of the domain `other` (kLessTight, kMixesModels).
  void note(GroupPlan& plan, std::size_t level, std::uint32_t id, const DomainTally& tally,
            DomainVerdict::Outcome outcome, std::uint32_t other = kNoDomain,
            const DomainTally* chosen = nullptr) const {
    if (!in_.explain) return;
    DomainVerdict verdict{level, id, tally.slots, countedNeed(), spare(tally), outcome, other};
    verdict.freeGpus = tally.freeGpus;
    verdict.neededGpus = neededGpus_;
    verdict.freeNodesNeeded = tally.freeNodesNeeded;
    verdict.healthy = holdsHealthy(tally);
    verdict.nvlinkMembers = nvlinkMembers(tally);
    if (chosen != nullptr) {
      verdict.otherHealthy = holdsHealthy(*chosen);
      verdict.otherNvlinkMembers = nvlinkMembers(*chosen);
      verdict.otherSpare = spare(*chosen);
      verdict.otherFreeGpus = chosen->freeGpus;
      verdict.otherFreeNodesNeeded = chosen->freeNodesNeeded;
    }
    plan.domains.push_back(verdict);
  }

  // The refusal of a required level no domain could satisfy (tallies_ is that level's).
  GroupPlan refuse(std::size_t level) const {
    GroupPlan plan;
    std::uint32_t best = kNoDomain;
    std::uint32_t roomiest = kNoDomain;
    for (std::uint32_t id = 0; id < tallies_.size(); ++id) {
      if (tallies_[id].nodes == 0) continue;
      if (best == kNoDomain || tallies_[id].slots > tallies_[best].slots) best = id;
      if (roomiest == kNoDomain || tallies_[id].usableGpus > tallies_[roomiest].usableGpus) {
        roomiest = id;
      }
    }
    const std::string& label = in_.levels[level].label;
    const std::string what = std::string(in_.group) + ": " + describeMembers(gpus_);
    const std::int64_t largest = roomiest == kNoDomain ? 0 : tallies_[roomiest].usableGpus;
    if (largest < neededGpus_) {
      plan.status = GroupPlanStatus::kNeverFits;
      plan.reason = "no " + label + " domain can ever hold group " + what + " (" +
                    std::to_string(neededGpus_) + " GPUs; the largest has " +
                    std::to_string(largest) + "); annotate " + policy_.labelPrefix +
                    "group-levels: " + label + "=preferred to let it span domains";
      return plan;
    }
    plan.status = GroupPlanStatus::kNoRoom;
    plan.reason = "no " + label + " domain can hold group " + what + " now; largest free: " +
                  std::to_string(best == kNoDomain ? 0 : tallies_[best].slots) + " of " +
                  std::to_string(countedNeed()) + " slots in " + labelled(level, best);
    return plan;
  }

  // Per level, the domain the slots and anchors share.
  GroupDomainIds sharedDomains(const std::vector<PlannedSlot>& slots) const {
    GroupDomainIds out{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
    for (std::size_t level = 0; level < kMaxGroupLevels; ++level) {
      bool first = true;
      const auto add = [&](std::uint32_t id) {
        if (first) {
          out[level] = id;
          first = false;
        } else if (out[level] != id) {
          out[level] = kMixedDomain;
        }
      };
      for (const GroupDomainIds& anchor : in_.anchors)
        add(anchor[level]);
      for (std::size_t i = 0; i < slots.size() && i < slotNodes_.size(); ++i)
        add(domainOf(slotNodes_[i], level));
    }
    return out;
  }

  bool violatesRequired(const GroupDomainIds& shared) const {
    for (std::size_t level = 0; level < in_.levels.size() && level < kMaxGroupLevels; ++level) {
      if (in_.levels[level].mode == GroupLevelMode::kRequired && shared[level] == kMixedDomain) {
        const std::optional<std::uint32_t> anchored = anchorDomain(level);
        // Anchors already split at this level: nothing left to keep together there.
        if (!(anchored && *anchored == kMixedDomain)) return true;
      }
    }
    return false;
  }

  // Places every member on `nodes` (fewest slots first; for multi-GPU members, nodes whose
  // slots are NVLink sets before the others), filling `slots`. False when they do not all fit.
  bool assign(const std::vector<std::uint32_t>& nodes, std::vector<PlannedSlot>& slots) {
    slots.clear();
    slotNodes_.clear();
    return homogeneous_ ? assignAlike(nodes, slots) : assignMixed(nodes, slots);
  }

  bool assignAlike(const std::vector<std::uint32_t>& nodes, std::vector<PlannedSlot>& slots) {
    const PodDemand& demand = in_.members.front();
    const int need = static_cast<int>(in_.members.size());
    std::vector<std::pair<int, std::uint32_t>> open;  // (slots, node)
    int total = 0;
    for (const std::uint32_t n : nodes) {
      const int count = slotsOn(n, 0, std::min(need, 255));
      if (count > 0) {
        open.emplace_back(count, n);
        total += count;
      }
    }
    if (total < need) return false;
    // Members of 2+ GPUs that accept any link: nodes whose slots they would use are all NVLink
    // sets come first. It matters where the chain is the DRA allocator's first-fit (docs/groups.md,
    // "DRA nodes"): the sets it hands out are NVLink on some nodes and PCIe pairs on others.
    // (Members alike: the counted shape is theirs.)
    const bool nvlinkFirst = prefersNvlinkSets();
    const auto weak = [&](int count, std::uint32_t n) {
      return nvlinkFirst && count > nvlinkSlotsOn(n);
    };
    // Then nodes whose slots hold nothing degraded (docs/health.md): a group stops when any
    // member's GPU or link fails, so degraded hardware is used only when healthy slots run out.
    std::sort(open.begin(), open.end(), [&](const auto& a, const auto& b) {
      const bool wa = weak(a.first, a.second);
      const bool wb = weak(b.first, b.second);
      if (wa != wb) return wb;
      const bool sa = sickSlots(a.first, a.second);
      const bool sb = sickSlots(b.first, b.second);
      if (sa != sb) return sb;
      if (a.first != b.first) return a.first < b.first;
      const auto& fa = *in_.nodes[a.second].facts;
      const auto& fb = *in_.nodes[b.second].facts;
      if (fa.freeGpus != fb.freeGpus) return fa.freeGpus < fb.freeGpus;
      return in_.nodes[a.second].name < in_.nodes[b.second].name;
    });
    std::uint32_t member = 0;
    for (const auto& [count, n] : open) {
      if (static_cast<int>(member) >= need) break;
      const int want = std::min(count, need - static_cast<int>(member));
      const std::vector<PodDemand> demands(static_cast<std::size_t>(want), demand);
      std::vector<Allocation> sets = groupSlotSets(*in_.nodes[n].state, demands, policy_);
      for (Allocation& allocation : sets) {
        slots.push_back(PlannedSlot{std::string(in_.nodes[n].name), std::move(allocation), member});
        slotNodes_.push_back(n);
        ++member;
      }
    }
    return static_cast<int>(member) == need;
  }

  bool assignMixed(const std::vector<std::uint32_t>& nodes, std::vector<PlannedSlot>& slots) {
    std::vector<std::uint32_t> order(in_.members.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return gpus_[a].gpus > gpus_[b].gpus;
    });
    // Per node: the members placed so far and the free GPUs they leave.
    std::vector<std::vector<std::uint32_t>> placed(nodes.size());
    std::vector<std::int64_t> left(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
      left[i] = in_.nodes[nodes[i]].facts->freeGpus;
    std::vector<std::size_t> byLeft(nodes.size());
    for (const std::uint32_t member : order) {
      const PodDemand& demand = gpus_[member];
      std::iota(byLeft.begin(), byLeft.end(), std::size_t{0});
      std::sort(byLeft.begin(), byLeft.end(), [&](std::size_t a, std::size_t b) {
        if (left[a] != left[b]) return left[a] < left[b];
        return in_.nodes[nodes[a]].name < in_.nodes[nodes[b]].name;
      });
      bool done = false;
      for (const std::size_t i : byLeft) {
        if (left[i] < demand.gpus) continue;
        std::vector<PodDemand> demands;
        for (const std::uint32_t m : placed[i])
          demands.push_back(in_.members[m]);
        demands.push_back(demand);
        if (groupSlotSets(*in_.nodes[nodes[i]].state, demands, policy_).size() == demands.size()) {
          placed[i].push_back(member);
          left[i] -= demand.gpus;
          done = true;
          break;
        }
      }
      if (!done) return false;
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (placed[i].empty()) continue;
      std::vector<PodDemand> demands;
      for (const std::uint32_t m : placed[i])
        demands.push_back(in_.members[m]);
      std::vector<Allocation> sets = groupSlotSets(*in_.nodes[nodes[i]].state, demands, policy_);
      for (std::size_t j = 0; j < sets.size(); ++j) {
        slots.push_back(
            PlannedSlot{std::string(in_.nodes[nodes[i]].name), std::move(sets[j]), placed[i][j]});
        slotNodes_.push_back(nodes[i]);
      }
    }
    return true;
  }

  static constexpr int kMaxCountedSlots = 255;

  const GroupPlanInput& in_;
  const Policy& policy_;
  std::vector<PodDemand> gpus_;  // per member: as whole GPUs (claims read as GPUs)
  std::vector<bool> firstFit_;   // per member: its tiered claims planned by the first-fit
  bool unplannableClaims_ = false;
  bool homogeneous_ = true;
  std::size_t largest_ = 0;
  std::int64_t largestCount_ = 0;
  std::int64_t neededGpus_ = 0;
  bool sameModel_ = true;  // members on one GPU model's nodes when one can hold the group
  // With sameModel_: the candidates' distinct (model, fabric) and each candidate's index there.
  std::vector<std::pair<std::string_view, std::string_view>> models_;
  std::vector<std::uint32_t> modelId_;
  bool applies_ = false;
  bool anyLevelApplied_ = false;
  std::vector<DomainTally> tallies_;      // the last level tried
  std::vector<std::uint32_t> slotNodes_;  // the node of each slot of the last assignment
};

}  // namespace

std::string_view groupPlanStatusName(GroupPlanStatus status) noexcept {
  switch (status) {
    case GroupPlanStatus::kPlanned:
      return "planned";
    case GroupPlanStatus::kUnplaced:
      return "unplaced";
    case GroupPlanStatus::kNoRoom:
      return "no-room";
    case GroupPlanStatus::kNeverFits:
      return "never-fits";
    case GroupPlanStatus::kUnsupported:
      return "unsupported";
  }
  return "unplaced";
}

std::string describeMembers(std::span<const PodDemand> members) {
  if (members.empty()) return "0 pods";
  const bool alike = std::all_of(members.begin(), members.end(),
                                 [&](const PodDemand& d) { return sameShape(d, members.front()); });
  const std::string pods =
      std::to_string(members.size()) + (members.size() == 1 ? " pod" : " pods");
  if (alike) {
    const std::int64_t k = members.front().gpus;
    return pods + " x " + std::to_string(k) + (k == 1 ? " GPU" : " GPUs") +
           linkSuffix(members.front());
  }
  std::int64_t total = 0;
  for (const PodDemand& d : members)
    total += d.gpus;
  return pods + ", " + std::to_string(total) + " GPUs";
}

std::string domainVerdictText(const DomainVerdict& verdict, const GroupDomainNames* names) {
  const auto name = [&](std::uint32_t id) {
    const std::string_view known = names != nullptr ? names->name(verdict.level, id) : "";
    return known.empty() ? "#" + std::to_string(id) : std::string(known);
  };
  switch (verdict.outcome) {
    case DomainVerdict::Outcome::kChosen:
      return "chosen: " + std::to_string(verdict.freeGpus - verdict.neededGpus) +
             " free GPUs left over";
    case DomainVerdict::Outcome::kTooSmall:
      return "holds " + std::to_string(verdict.slots) + " of the " +
             std::to_string(verdict.needed) + " members";
    case DomainVerdict::Outcome::kAnchoredElsewhere:
      return verdict.other == kMixedDomain
                 ? "members already placed span several domains of this level"
                 : "members already placed are in " + (verdict.other == kNoDomain
                                                           ? std::string("nodes without the label")
                                                           : name(verdict.other));
    case DomainVerdict::Outcome::kLessTight:
      // The first key of the domain order (tryLevel) on which the two differ.
      if (verdict.healthy != verdict.otherHealthy) {
        return "best fit prefers " + name(verdict.other) +
               " (it holds the group on sets without degraded GPUs or links; here it does not)";
      }
      if (verdict.nvlinkMembers != verdict.otherNvlinkMembers) {
        return "best fit prefers " + name(verdict.other) + " (" +
               std::to_string(verdict.otherNvlinkMembers) + " members on NVLink sets there, " +
               std::to_string(verdict.nvlinkMembers) + " here)";
      }
      if (verdict.freeNodesNeeded != verdict.otherFreeNodesNeeded) {
        return "best fit prefers " + name(verdict.other) + " (it needs " +
               std::to_string(verdict.otherFreeNodesNeeded) + " nodes with every GPU free there, " +
               std::to_string(verdict.freeNodesNeeded) + " here)";
      }
      if (verdict.freeGpus != verdict.otherFreeGpus) {
        return "best fit prefers " + name(verdict.other) + " (" +
               std::to_string(verdict.otherFreeGpus - verdict.neededGpus) +
               " free GPUs left over there, " +
               std::to_string(verdict.freeGpus - verdict.neededGpus) + " here)";
      }
      if (verdict.spare != verdict.otherSpare) {
        return "best fit prefers " + name(verdict.other) + " (as many free GPUs; " +
               std::to_string(verdict.otherSpare) + " left over there, " +
               std::to_string(verdict.spare) + " here)";
      }
      return "best fit prefers " + name(verdict.other) + " (as tight; first by name)";
    case DomainVerdict::Outcome::kNoGpuSets:
      return "its nodes cannot hold every member's GPU set";
    case DomainVerdict::Outcome::kSpansRequired:
      return "its nodes lie in several domains of a required level";
    case DomainVerdict::Outcome::kMixesModels:
      return "cannot hold the group on one GPU model; " + name(verdict.other) + " can";
  }
  return "";
}

GroupPlan planGroup(const GroupPlanInput& input, const Policy& policy) {
  return Planner(input, policy).run();
}

}  // namespace gte
