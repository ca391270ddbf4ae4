#include "service/explain_json.h"

#include <bit>
#include <charconv>

#include "json/json_writer.h"
#include "policy/link_class.h"

namespace gte {
namespace {

using json::JsonWriter;

void writePod(JsonWriter& w, const PodInfo& pod, const Result<PodDemand>& demand) {
  w.key("pod").beginObject();
  w.key("namespace").string(pod.ns).key("name").string(pod.name).key("uid").string(pod.uid);
  w.key("demand");
  if (demand) {
    writePodDemand(w, *demand);
  } else {
    w.null();
  }
  w.key("error").string(demand ? std::string_view() : std::string_view(demand.error().message));
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

void writeTerm(JsonWriter& w, std::string_view name, int value, int weight) {
  if (value < 0) return;  // does not apply to this pod
  w.key(name).beginObject().key("value").integer(value).key("weight").integer(weight).endObject();
}

void writeTerms(JsonWriter& w, const ScoreTerms& terms, const ScoringWeights& weights) {
  w.beginObject();
  writeTerm(w, "linkQuality", terms.linkQuality, weights.linkQuality);
  writeTerm(w, "numaLocality", terms.numaLocality, weights.numaLocality);
  writeTerm(w, "packing", terms.packing, weights.packing);
  writeTerm(w, "migFit", terms.migFit, weights.migFit);
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

void writeNode(JsonWriter& w, const NodeExplanation& node, const Policy& policy) {
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
  writeTerms(w, node.terms, policy.weights);
  w.key("gpus").beginArray();
  if (node.allocation.complete) {
    for (const int gpu : node.allocation.gpus)
      w.element().integer(gpu);
  }
  w.endArray();
  w.key("mig");
  writeMig(w, node.allocation.complete ? node.allocation : Allocation{});
  w.key("weakestLink");
  writeWeakest(w, node.pick);
  w.key("numaSpan");
  writeNumaSpan(w, node.pick, node.state);
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
  w.key("topology").string(topologyName(node.state));
  w.key("usableGpus").integer(node.state ? node.state->usableCount : 0);
  w.key("freeGpus").integer(node.state ? node.state->freeCount : 0);
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
  w.endObject();
}

void writeGpuList(JsonWriter& w, GpuMask gpus) {
  w.beginArray();
  for (GpuMask rest = gpus; rest != 0; rest &= rest - 1) {
    w.element().integer(std::countr_zero(rest));
  }
  w.endArray();
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
                             const Explanation& explanation, const PlacementRecord* placement) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  writePod(w, pod, demand);
  w.key("mode").string(mode);
  w.key("placement");
  if (placement != nullptr) {
    writePlacement(w, *placement);
  } else {
    w.null();
  }
  w.key("nodes").beginArray();
  for (const NodeExplanation& node : explanation.nodes)
    writeNode(w, node, policy);
  w.endArray().endObject();
  return out;
}

}  // namespace gte
