#include "service/explain_json.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>

#include "core/node_charges.h"
#include "core/replica_landing.h"
#include "dra_placement/dra_node_state.h"
#include "json/json_writer.h"
#include "policy/link_class.h"

namespace gte {
namespace {

using json::JsonWriter;

void writeBound(JsonWriter& w, const BoundPod& bound) {
  w.beginObject();
  w.key("node").string(bound.node);
  w.key("reserved").boolean(bound.reserved);
  w.key("gpus");
  if (bound.charged) {
    w.beginArray();
    for (const int gpu : bound.allocation.gpus)
      w.element().integer(gpu);
    w.endArray();
  } else {
    w.null();  // the cache holds no charge that names them
  }
  w.key("mig").beginArray();
  for (const MigAssignment& mig : bound.allocation.mig) {
    w.element().beginObject().key("gpu").integer(mig.gpu).key("profile").string(mig.profile);
    w.key("start").integer(mig.start).endObject();
  }
  w.endArray();
  w.key("devices").beginArray();
  for (const BoundDevice& device : bound.devices) {
    w.element().beginObject().key("claim").string(device.claim);
    w.key("request").string(device.request);
    w.key("pool").string(device.pool).key("device").string(device.device).endObject();
  }
  w.endArray().endObject();
}

void writePod(JsonWriter& w, const PodInfo& pod, const Result<PodDemand>& demand,
              const BoundPod* bound) {
  w.key("pod").beginObject();
  w.key("namespace").string(pod.ns).key("name").string(pod.name).key("uid").string(pod.uid);
  w.key("demand");
  if (demand) {
    writePodDemand(w, *demand);
  } else {
    w.null();
  }
  w.key("error").string(demand ? std::string_view() : std::string_view(demand.error().message));
  w.key("boundTo");
  if (bound != nullptr) {
    writeBound(w, *bound);
  } else {
    w.null();
  }
  w.endObject();
}

// A link class, or null for the single-GPU and no-set cases where "weakest link" means nothing.
void writeWeakest(JsonWriter& w, const std::optional<GpuPick>& pick) {
  if (pick && std::popcount(pick->gpus) > 1) {
    w.string(linkClassName(pick->weakest));
  } else {
    w.null();
  }
}

void writeNumaSpan(JsonWriter& w, const std::optional<GpuPick>& pick, const NodeState* state) {
  const int span = pick && state ? numaSpan(pick->gpus, *state) : 0;
  if (span > 0) {
    w.integer(span);
  } else {
    w.null();
  }
}

// What of the set the health policy avoids (health/degraded_hardware.h, docs/health.md): the class
// the set is scored as, its degraded GPUs and its degraded or down links; null when nothing.
void writeDegraded(JsonWriter& w, const std::optional<GpuPick>& pick, const NodeState* state) {
  if (!pick || state == nullptr || !state->avoided.holds(pick->gpus)) {
    w.null();
    return;
  }
  const GpuTopology& topo = state->topology;
  w.beginObject()
      .key("scoredAs")
      .string(linkClassName(scoredWeakest(state->avoided, topo, pick->gpus, pick->weakest)));
  w.key("gpus").beginArray();
  for (GpuMask rest = pick->gpus & state->avoided.gpus; rest != 0; rest &= rest - 1) {
    const int gpu = std::countr_zero(rest);
    if (state->gpuHealth(gpu) == GpuHealth::kDegraded) w.element().integer(gpu);
  }
  w.endArray().key("links").beginArray();
  forEachPair(pick->gpus, [&](int i, int j) {
    const LinkHealth mark = topo.linkHealthOf(i, j);
    if (mark != LinkHealth::kDegraded && mark != LinkHealth::kDown) return;
    if ((state->avoided.peers[static_cast<std::size_t>(i)] & bitOf(j)) == 0) return;
    w.element().beginObject().key("gpus").beginArray();
    w.element().integer(i);
    w.element().integer(j);
    w.endArray().key("state").string(linkHealthName(mark)).endObject();
  });
  w.endArray().endObject();
}

void writeTerm(JsonWriter& w, std::string_view name, int value, int weight) {
  if (value < 0) return;  // does not apply to this pod
  w.key(name).beginObject().key("value").integer(value).key("weight").integer(weight).endObject();
}

// The free all-NVLink sets the pod would break (core/scarce_sets.h): what it costs the score
// and, per size, how many nodes hold such a set. Only where it breaks one.
void writeScarceSets(JsonWriter& w, const ScoreTerms& terms, const ScarceSets& scarce) {
  if (terms.brokenSets == 0) return;
  w.key("scarceSets").beginObject().key("points").integer(terms.scarceSetPoints);
  w.key("broken").beginArray();
  for (std::size_t i = 0; i < kScarceSetSizes.size(); ++i) {
    if ((terms.brokenSets >> i & 1U) == 0) continue;
    w.element().beginObject().key("gpus").integer(kScarceSetSizes[i]);
    w.key("nodesHolding").integer(scarce.holders[i]).endObject();
  }
  w.endArray().endObject();
}

void writeTerms(JsonWriter& w, const ScoreTerms& terms, const ScoringWeights& weights,
                const ScarceSets& scarce) {
  w.beginObject();
  writeTerm(w, "linkQuality", terms.linkQuality, weights.linkQuality);
  writeTerm(w, "numaLocality", terms.numaLocality, weights.numaLocality);
  writeTerm(w, "packing", terms.packing, weights.packing);
  writeTerm(w, "migFit", terms.migFit, weights.migFit);
  writeScarceSets(w, terms, scarce);
  w.endObject();
}

void writeMig(JsonWriter& w, const Allocation& allocation) {
  w.beginArray();
  for (const MigAssignment& m : allocation.mig) {
    w.element().beginObject().key("gpu").integer(m.gpu).key("profile").string(m.profile);
    w.key("start").integer(m.start).key("createsInstance").boolean(m.createsInstance).endObject();
  }
  w.endArray();
}

const char* draOutcomeName(DraOutcome outcome) {
  switch (outcome) {
    case DraOutcome::kPlaced:
      return "allocated";
    case DraOutcome::kNoFit:
      return "noFit";
    case DraOutcome::kPassThrough:
      break;
  }
  return "passThrough";
}

// The claim a picked device is for: the pod's claims in order, the extended-resource claim last.
const dra::ClaimProgram* pickedClaim(const DraDemand& demand, std::size_t index) {
  if (index < demand.claims.size()) return &demand.claims[index];
  return index == demand.claims.size() ? &demand.extendedClaim : nullptr;
}

// {"outcome", "why", "devices": [{claim, request, driver, pool, device, gpu}]} in the order the
// allocator picks them; null for a pod without DRA demand.
void writeDra(JsonWriter& w, const NodeExplanation& node, const PodDemand* demand) {
  if (!node.dra || demand == nullptr || !demand->dra || node.state == nullptr) {
    w.null();
    return;
  }
  const DraPlacement& placed = *node.dra;
  w.beginObject().key("outcome").string(draOutcomeName(placed.outcome));
  w.key("why").string(placed.why);
  w.key("devices").beginArray();
  // Placed implies a DRA state (a node no slice serves has no device: noFit).
  if (placed.outcome == DraOutcome::kPlaced && node.state->dra) {
    const DraNodeState& state = *node.state->dra;
    for (const dra::PickedDevice& picked : placed.result.devices) {
      const dra::ClaimProgram* claim = pickedClaim(*demand->dra, picked.claim);
      const dra::NodeDevice& device = state.devices.devices[picked.position];
      const dra::NodePool& pool = state.devices.pools[device.pool];
      w.element().beginObject();
      w.key("claim").string(claim ? std::string_view(claim->id) : std::string_view());
      w.key("request").string(
          claim && picked.request < claim->requests.size() &&
                  picked.alternative < claim->requests[picked.request].alternatives.size()
              ? std::string_view(
                    claim->requests[picked.request].alternatives[picked.alternative].fullName)
              : std::string_view());
      w.key("driver").string(pool.driver).key("pool").string(pool.name);
      w.key("device").string(device.slice->deviceName(device.index));
      w.key("gpu");
      const int gpu = state.deviceGpus[picked.position].gpu;
      if (gpu >= 0) {
        w.integer(gpu);
      } else {
        w.null();
      }
      // A share of a device that allows multiple allocations: what it consumes of each capacity.
      w.key("consumedCapacity");
      if (picked.share < 0) {
        w.null();
      } else {
        const auto& consumed = placed.result.consumed[static_cast<std::size_t>(picked.share)];
        const dra::ResourceSlice& slice = *device.slice;
        const dra::Range capacity = slice.devices[device.index].capacity;
        w.beginObject();
        for (std::uint32_t i = 0; i < capacity.count && i < consumed.size(); ++i) {
          w.key(slice.view(slice.quantities[capacity.first + i].name))
              .string(consumed[i].decimalText());
        }
        w.endObject();
      }
      w.endObject();
    }
  }
  w.endArray().endObject();
}

// Where the pod's replicas of shared GPUs land (core/replica_landing.h): null unless the node
// shares its GPUs and fits the pod.
void writeReplicaGpus(JsonWriter& w, const NodeExplanation& node) {
  const int k = node.allocation.replicas;
  if (node.state == nullptr || !node.state->sharesGpus || !node.allocation.complete || k <= 0) {
    w.null();
    return;
  }
  const ReplicaLanding landing = landReplicas(*node.state, k);
  w.beginObject().key("count").integer(k).key("on").beginArray();
  for (int gpu = 0; gpu < kMaxGpus; ++gpu) {
    const int replicas = landing.certain[static_cast<std::size_t>(gpu)];
    if (replicas == 0) continue;
    w.element().beginObject().key("gpu").integer(gpu).key("replicas").integer(replicas);
    w.endObject();
  }
  w.endArray().key("undecided").integer(landing.undecided).key("tied");
  writeGpuList(w, landing.tied);
  w.endObject();
}

void writeNode(JsonWriter& w, const NodeExplanation& node, const Policy& policy,
               const PodDemand* demand, const ScarceSets& scarce) {
  w.element().beginObject();
  w.key("name").string(node.name).key("verdict").string(verdictName(node.verdict));
  w.key("reason").string(node.reason);
  w.key("score").integer(node.score).key("wireScore").integer(node.wireScore);
  // The same score, null for a node filter rejects (the field the explain table reads).
  w.key("wireScoreAfterFilter");
  if (node.verdict == Verdict::kFit) {
    w.integer(node.wireScore);
  } else {
    w.null();
  }
  w.key("terms");
  writeTerms(w, node.terms, policy.weights, scarce);
  w.key("gpus").beginArray();
  if (node.allocation.complete) {
    for (const int gpu : node.allocation.gpus)
      w.element().integer(gpu);
  }
  w.endArray();
  w.key("replicaGpus");
  writeReplicaGpus(w, node);
  w.key("mig");
  writeMig(w, node.allocation.complete ? node.allocation : Allocation{});
  w.key("weakestLink");
  writeWeakest(w, node.pick);
  w.key("numaSpan");
  writeNumaSpan(w, node.pick, node.state);
  w.key("degraded");
  writeDegraded(w, node.pick, node.state);
  w.key("best");
  if (node.best) {
    w.beginObject().key("gpus");
    writeGpuList(w, node.best->gpus);
    w.key("weakestLink");
    writeWeakest(w, node.best);
    w.key("numaSpan");
    writeNumaSpan(w, node.best, node.state);
    w.endObject();
  } else {
    w.null();
  }
  // GPUs held here for pod groups' planned members: taken for every other pod.
  w.key("groupHolds").beginArray();
  if (node.state != nullptr && node.state->charges) {
    for (const PodCharge& charge : node.state->charges->pods()) {
      const std::string_view group = heldFor(charge.uid);
      if (group.empty()) continue;
      w.element().beginObject().key("group").string(group).key("gpus").beginArray();
      for (const int gpu : charge.allocation.gpus)
        w.element().integer(gpu);
      w.endArray().endObject();
    }
  }
  w.endArray();
  w.key("dra");
  writeDra(w, node, demand);
  w.key("topology").string(topologyName(node.state));
  w.key("sharing");
  writeGpuSharing(w, node.state);
  w.key("usableGpus").integer(node.state ? node.state->usableCount : 0);
  w.key("freeGpus").integer(node.state ? node.state->freeCount : 0);
  w.endObject();
}

std::string_view slotState(const CommittedGroupPlan& plan, std::size_t slot) {
  if (plan.held(slot)) return "held";
  return plan.claimed(slot) ? "claimed" : "released";
}

void writePlan(JsonWriter& w, const CommittedGroupPlan& plan, bool committed,
               const GroupDomainNames* names, std::chrono::system_clock::time_point now) {
  const GroupPlan& p = plan.plan;
  w.beginObject().key("committed").boolean(committed);
  writePlanLevel(w, p, plan.levels, names);
  w.key("reason").string(p.reason);
  w.key("expiresInSeconds");
  if (committed) {
    // Rounded up from the exact remaining time: a hold committed for 60 s reads 60 until a full
    // second has passed, wherever the two clock reads fall inside their seconds.
    const auto remaining = std::chrono::ceil<std::chrono::seconds>(plan.expires - now).count();
    w.integer(std::max<std::int64_t>(0, remaining));
  } else {
    w.null();
  }
  w.key("anchors").beginArray();
  for (const std::string& node : plan.anchors)
    w.element().string(node);
  w.endArray();
  w.key("slots").beginArray();
  for (std::size_t i = 0; i < p.slots.size(); ++i) {
    const PlannedSlot& slot = p.slots[i];
    w.element().beginObject().key("node").string(slot.node).key("gpus").beginArray();
    for (const int gpu : slot.allocation.gpus)
      w.element().integer(gpu);
    w.endArray();
    w.key("memberGpus")
        .integer(slot.member < plan.demands.size() ? plan.demands[slot.member].gpus : 0);
    w.key("state").string(slotState(plan, i));
    w.key("claimedBy").string(plan.claimed(i) ? std::string_view(plan.claimedBy[i]) : "");
    w.key("pinnedTo").string(plan.pinnedUid(i));
    w.endObject();
  }
  w.endArray();
  w.endObject();
}

void writeGroup(JsonWriter& w, const GroupDecision* group, const GroupDomainNames* names,
                std::chrono::system_clock::time_point now) {
  w.key("group");
  if (group == nullptr || !group->ref) {
    w.null();
    return;
  }
  const PodGroupRef& ref = *group->ref;
  w.beginObject().key("key").string(ref.key).key("source").string(groupSourceName(ref.source));
  w.key("namespace").string(ref.ns).key("name").string(ref.name).key("size");
  if (ref.size) {
    w.integer(*ref.size);
  } else {
    w.null();
  }
  w.key("sizeFrom").string(ref.sizeFrom);
  w.key("levels");
  writeGroupLevels(w, ref.levels);
  // committed: answered from the group's plan; proposed: a plan this request made but did not
  // hold (explain, prioritize); refused: a required level cannot hold the group; perPod: placed
  // as a pod without a group (note says why).
  std::string_view status = "perPod";
  if (group->committed) {
    status = "committed";
  } else if (group->answers && group->proposal &&
             group->proposal->status != GroupPlanStatus::kPlanned) {
    status = "refused";
  } else if (group->uncommitted) {
    status = "proposed";
  }
  w.key("status").string(status);
  w.key("note").string(group->note);
  w.key("plan");
  const GroupPlan* verdictsOf = nullptr;
  if (group->committed) {
    writePlan(w, *group->committed, true, names, now);
    verdictsOf = &group->committed->plan;
  } else if (group->uncommitted) {
    writePlan(w, *group->uncommitted, false, names, now);
    verdictsOf = &group->uncommitted->plan;
  } else {
    w.null();
    if (group->proposal) verdictsOf = &*group->proposal;
  }
  w.key("refusal").string(status == "refused" ? std::string_view(group->proposal->reason) : "");
  // Why each domain the planner looked at was or was not chosen.
  w.key("domains");
  writeDomainVerdicts(w, verdictsOf, ref.levels, names);
  w.endObject();
}

// A set's quality: {"weakestLink": ..., "bandwidthGBps": ...}, or null when unknown.
void writeSetQuality(JsonWriter& w, const SetQuality& set) {
  if (!set.known()) {
    w.null();
    return;
  }
  w.beginObject().key("weakestLink").string(linkClassName(set.weakest));
  w.key("bandwidthGBps").integer(set.bandwidthGBps).endObject();
}

void writeRatio(JsonWriter& w, double ratio) {
  char text[16];
  const auto written = std::to_chars(text, text + sizeof(text), ratio, std::chars_format::fixed, 3);
  w.rawValue(std::string_view(text, static_cast<std::size_t>(written.ptr - text)));
}

void writePlacement(JsonWriter& w, const PlacementRecord& record) {
  const PlacementDecision& decided = record.decision;
  w.beginObject();
  w.key("requestedGpus").integer(decided.gpus);
  w.key("node");
  if (record.placed) {
    w.string(record.placement.node);
  } else {
    w.null();
  }
  w.key("gpus").beginArray();
  for (const int gpu : record.placement.indices)
    w.element().integer(gpu);
  w.endArray();
  w.key("got");
  writeSetQuality(w, record.placed ? record.placement.got : SetQuality{});
  w.key("best");
  writeSetQuality(w, decided.clusterBest);
  w.key("bestFeasible");
  writeSetQuality(w, decided.feasibleBest);
  w.key("bestFeasibleNode").string(decided.bestNode);
  w.key("topRankedNode").string(decided.topNode);
  w.key("topRankedWorst");
  writeSetQuality(w, decided.topWorst);
  const PlacementRegret& regret = record.regret;
  w.key("regret");
  if (regret.measured) {
    writeRatio(w, regret.ratio);
  } else {
    w.null();
  }
  w.key("reason").string(regretReasonName(regret.reason));
  w.key("belowBestClass").boolean(regret.belowBestClass);
  w.key("belowBestClassReason").string(regretReasonName(regret.classReason));
  w.endObject();
}

}  // namespace

void writeDomainName(JsonWriter& w, const GroupDomainNames* names, std::size_t level,
                     std::uint32_t id) {
  if (id == kNoDomain || id == kMixedDomain || names == nullptr) {
    w.null();
  } else {
    w.string(names->name(level, id));
  }
}

void writeGroupLevels(JsonWriter& w, std::span<const GroupLevel> levels) {
  w.beginArray();
  for (const GroupLevel& level : levels) {
    w.element().beginObject().key("label").string(level.label);
    w.key("mode").string(groupLevelModeName(level.mode)).endObject();
  }
  w.endArray();
}

void writePlanLevel(JsonWriter& w, const GroupPlan& plan, std::span<const GroupLevel> levels,
                    const GroupDomainNames* names) {
  w.key("level");
  if (plan.level >= 0 && static_cast<std::size_t>(plan.level) < levels.size()) {
    w.string(levels[static_cast<std::size_t>(plan.level)].label);
  } else {
    w.null();
  }
  // Per level of the policy: the one domain every member shares, or null.
  w.key("domains").beginObject();
  for (std::size_t level = 0; level < levels.size() && level < kMaxGroupLevels; ++level) {
    w.key(levels[level].label);
    writeDomainName(w, names, level, plan.domain[level]);
  }
  w.endObject();
}

void writeDomainVerdicts(JsonWriter& w, const GroupPlan* plan, std::span<const GroupLevel> levels,
                         const GroupDomainNames* names) {
  w.beginArray();
  if (plan != nullptr) {
    for (const DomainVerdict& verdict : plan->domains) {
      w.element().beginObject().key("level");
      w.string(verdict.level < levels.size() ? std::string_view(levels[verdict.level].label) : "");
      w.key("domain");
      writeDomainName(w, names, verdict.level, verdict.domain);
      w.key("slots").integer(verdict.slots).key("needed").integer(verdict.needed);
      w.key("verdict").string(domainVerdictText(verdict, names)).endObject();
    }
  }
  w.endArray();
}

void writePodDemand(JsonWriter& w, const PodDemand& demand) {
  w.beginObject().key("gpus").integer(demand.gpus).key("mig").beginArray();
  for (const MigRequest& m : demand.mig) {
    w.element().beginObject().key("profile").string(m.profile).key("count").integer(m.count);
    w.endObject();
  }
  w.endArray().key("minLink");
  if (demand.minLink) {
    w.string(linkClassName(*demand.minLink));
  } else {
    w.null();
  }
  w.key("singleNuma").boolean(demand.singleNuma);
  w.key("strategy").string(strategyName(demand.strategy));
  // DRA (docs/dra.md): the claims the scheduler will allocate, in its order, and why the
  // extender passes the pod through, if it does; null without DRA demand.
  w.key("dra");
  if (demand.dra) {
    w.beginObject().key("claims").beginArray();
    for (const dra::ClaimProgram& claim : demand.dra->claims)
      w.element().string(claim.id);
    w.endArray().key("allocatedClaims").integer(demand.dra->allocatedClaims);
    w.key("passThrough").string(demand.dra->passThrough).endObject();
  } else {
    w.null();
  }
  w.endObject();
}

void writeGpuList(JsonWriter& w, GpuMask gpus) {
  w.beginArray();
  for (GpuMask rest = gpus; rest != 0; rest &= rest - 1) {
    w.element().integer(std::countr_zero(rest));
  }
  w.endArray();
}

void writeGpuSharing(JsonWriter& w, const NodeState* state) {
  if (state == nullptr || !state->sharing.shared()) {
    w.null();
    return;
  }
  const GpuSharing& sharing = state->sharing;
  w.beginObject().key("strategy").string(sharingStrategyName(sharing.strategy));
  w.key("replicas");
  if (sharing.replicas > 0) {
    w.integer(sharing.replicas);
  } else {
    w.null();
  }
  // The device plugin admits one replica per container (MPS, or time-slicing with
  // failRequestsGreaterThanOne as the agent read it): pods with a container of more are refused.
  w.key("oneReplicaPerContainer").boolean(sharing.oneReplicaPerContainer());
  w.key("unreadable");
  if (sharing.unreadable.empty()) {
    w.null();
  } else {
    w.string(sharing.unreadable);
  }
  // Per GPU, the replicas pods hold: the agent's labels-v1 `tenants` plus the pods placed since
  // its last pass, as the device plugin lays them (NodeState::tenants); empty when none is held.
  w.key("tenants").beginArray();
  const bool held = std::any_of(state->tenants.begin(), state->tenants.end(),
                                [](std::uint8_t tenants) { return tenants > 0; });
  for (int gpu = 0; held && gpu < std::min(state->topology.gpuCount, kMaxGpus); ++gpu)
    w.element().integer(state->tenantsOf(gpu));
  w.endArray();
  w.endObject();
}

std::string_view topologyName(const NodeState* state) {
  if (state == nullptr) return "unresolved";
  switch (state->status) {
    case TopologyStatus::kKnown:
      return state->topology.linksKnown ? "known" : "linksUnknown";
    case TopologyStatus::kUnknown:
      return "unknown";
    case TopologyStatus::kMalformed:
      return "malformed";
  }
  return "unknown";
}

std::string_view verdictName(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::kFit:
      return "fit";
    case Verdict::kUnschedulable:
      return "unschedulable";
    case Verdict::kUnresolvable:
      return "unresolvable";
  }
  return "unresolvable";
}

std::string writeExplanation(const PodInfo& pod, const Result<PodDemand>& demand,
                             std::string_view mode, const Policy& policy,
                             const Explanation& explanation, const ExplainExtras& extras) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  writePod(w, pod, demand, extras.bound);
  w.key("mode").string(mode);
  writeGroup(w, extras.group, extras.domainNames, extras.now);
  w.key("placement");
  if (extras.placement != nullptr) {
    writePlacement(w, *extras.placement);
  } else {
    w.null();
  }
  w.key("nodes").beginArray();
  for (const NodeExplanation& node : explanation.nodes)
    writeNode(w, node, policy, demand ? &*demand : nullptr, explanation.scarceSets);
  w.endArray().endObject();
  return out;
}

}  // namespace gte
