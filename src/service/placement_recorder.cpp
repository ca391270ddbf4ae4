#include "service/placement_recorder.h"

#include <utility>

#include "metrics/metrics.h"

namespace gte {
namespace {

metrics::PlacementReason metricReason(RegretReason reason) {
  switch (reason) {
    case RegretReason::kPolicyTradeoff:
      return metrics::PlacementReason::kPolicyTradeoff;
    case RegretReason::kSchedulerOverride:
      return metrics::PlacementReason::kSchedulerOverride;
    case RegretReason::kAvoidedDegraded:
      return metrics::PlacementReason::kAvoidedDegraded;
    case RegretReason::kNoBetterFit:
    case RegretReason::kNone:
      break;
  }
  return metrics::PlacementReason::kNoBetterFit;
}

// Heap bytes of a string beyond its own object (none while it fits the small-string buffer).
std::size_t heapOf(const std::string& text) {
  return text.capacity() > std::string().capacity() ? text.capacity() + 1 : 0;
}

}  // namespace

PlacementRecorder::PlacementRecorder(metrics::Metrics* metrics, Options options)
    : metrics_(metrics), options_(std::move(options)) {}

PlacementRecorder::Clock::time_point PlacementRecorder::now() const {
  return options_.now ? options_.now() : Clock::now();
}

void PlacementRecorder::touchLocked(Entries::iterator entry, Clock::time_point at) {
  entry->touched = at;
  entries_.splice(entries_.begin(), entries_, entry);
}

void PlacementRecorder::evictLocked(Clock::time_point at) {
  while (!entries_.empty() &&
         (entries_.size() > options_.capacity || at - entries_.back().touched > options_.maxAge)) {
    by_.erase(entries_.back().uid);
    entries_.pop_back();
  }
}

void PlacementRecorder::decided(const std::string& uid, PlacementDecision decision) {
  const Clock::time_point at = now();
  MutexLock lock(mutex_);
  if (const auto known = by_.find(uid); known != by_.end()) {
    known->second->record = PlacementRecord{std::move(decision), false, {}, {}};
    touchLocked(known->second, at);
  } else {
    entries_.push_front(Entry{uid, PlacementRecord{std::move(decision), false, {}, {}}, at});
    by_.emplace(entries_.front().uid, entries_.begin());
  }
  evictLocked(at);
}

void PlacementRecorder::placed(const PodPlacement& placement) {
  if (placement.gpus < 2) return;  // one GPU has no pair to regret
  std::optional<PlacementRecord> record;
  {
    const Clock::time_point at = now();
    MutexLock lock(mutex_);
    const auto known = by_.find(placement.uid);
    if (known != by_.end()) {
      PlacementRecord& kept = known->second->record;
      if (kept.placed && kept.placement.node == placement.node) return;  // seen before
      kept.placed = true;
      kept.placement = placement;
      kept.regret = placementRegret(kept.decision, placement.got);
      record = kept;
      touchLocked(known->second, at);
    }
  }
  if (!record) {
    if (metrics_) metrics_->countPlacementUnmeasured(metrics::UnmeasuredReason::kNoDecision);
    return;
  }
  report(*record);
}

void PlacementRecorder::report(const PlacementRecord& record) const {
  if (!metrics_) return;
  const PlacementRegret& regret = record.regret;
  if (!regret.measured) {
    metrics_->countPlacementUnmeasured(metrics::UnmeasuredReason::kSetUnknown);
    return;
  }
  const std::int64_t gpus = record.placement.gpus;
  metrics_->observePlacementRegret(gpus, regret.ratio);
  if (regret.belowBestClass) {
    metrics_->countPlacementBelowBestClass(gpus, metricReason(regret.classReason));
  }
}

void PlacementRecorder::forget(const std::string& uid) {
  MutexLock lock(mutex_);
  const auto known = by_.find(uid);
  if (known == by_.end()) return;
  const Entries::iterator entry = known->second;
  by_.erase(known);
  entries_.erase(entry);
}

std::optional<PlacementRecord> PlacementRecorder::find(std::string_view uid) const {
  MutexLock lock(mutex_);
  const auto known = by_.find(uid);
  if (known == by_.end()) return std::nullopt;
  return known->second->record;
}

std::size_t PlacementRecorder::size() const {
  MutexLock lock(mutex_);
  return entries_.size();
}

std::size_t PlacementRecorder::bytes() const {
  // A list node: the entry and two links; an index node: the key, the iterator, a link and the
  // cached hash, plus a bucket pointer.
  constexpr std::size_t kListNode = sizeof(Entry) + 2 * sizeof(void*);
  constexpr std::size_t kIndexNode =
      sizeof(std::string_view) + sizeof(Entries::iterator) + sizeof(void*) + sizeof(std::size_t);
  MutexLock lock(mutex_);
  std::size_t total = by_.bucket_count() * sizeof(void*);
  for (const Entry& entry : entries_) {
    const PlacementRecord& r = entry.record;
    total += kListNode + kIndexNode + heapOf(entry.uid) + heapOf(r.decision.bestNode) +
             heapOf(r.decision.topNode) + heapOf(r.placement.uid) + heapOf(r.placement.ns) +
             heapOf(r.placement.name) + heapOf(r.placement.node) +
             r.placement.indices.capacity() * sizeof(int);
  }
  return total;
}

}  // namespace gte
