#include "cluster/pod_ledger.h"

#include <algorithm>

namespace gte::cluster {
namespace {

const NodeCharges kNoCharges;

void eraseUid(std::vector<std::string>& uids, const std::string& uid) {
  const auto it = std::find(uids.begin(), uids.end(), uid);
  if (it != uids.end()) uids.erase(it);
}

}  // namespace

const LedgerPod* PodLedger::pod(std::string_view uid) const {
  const auto it = pods_.find(std::string(uid));
  return it == pods_.end() ? nullptr : &it->second;
}

const LedgerReservation* PodLedger::reservation(std::string_view uid) const {
  const auto it = reservations_.find(std::string(uid));
  return it == reservations_.end() ? nullptr : &it->second;
}

void PodLedger::charge(const std::string& uid, const LedgerPod& entry) {
  const std::string& node = entry.pod.nodeName;
  if (node.empty()) return;
  Book& onNode = book(node);
  if (!entry.allocation) {
    onNode.charges.erase(uid);
    return;
  }
  onNode.charges.put(PodCharge{uid, entry.counted, *entry.allocation, entry.unplacedGpus});
}

void PodLedger::dropBookIfEmpty(const std::string& node) {
  const auto it = books_.find(node);
  if (it != books_.end() && it->second.pods.empty() && it->second.charges.empty()) {
    books_.erase(it);
  }
}

std::optional<std::string> PodLedger::putPod(const std::string& uid, LedgerPod pod) {
  std::optional<std::string> left;
  const auto it = pods_.find(uid);
  if (it != pods_.end() && it->second.pod.nodeName != pod.pod.nodeName) {
    left = erasePod(uid);
  }
  const std::string node = pod.pod.nodeName;
  auto [at, inserted] = pods_.insert_or_assign(uid, std::move(pod));
  if (!node.empty()) {
    Book& onNode = book(node);
    if (std::find(onNode.pods.begin(), onNode.pods.end(), uid) == onNode.pods.end()) {
      onNode.pods.push_back(uid);
    }
    charge(uid, at->second);
  }
  return left;
}

std::optional<std::string> PodLedger::erasePod(const std::string& uid) {
  const auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  std::string node = it->second.pod.nodeName;
  pods_.erase(it);
  if (!node.empty()) {
    Book& onNode = book(node);
    eraseUid(onNode.pods, uid);
    onNode.charges.erase(uid);
    dropBookIfEmpty(node);
  }
  return node;
}

void PodLedger::putReservation(const std::string& uid, LedgerReservation reservation) {
  eraseReservation(uid);
  book(reservation.node).charges.put(PodCharge{uid, true, reservation.allocation, 0});
  reservations_.insert_or_assign(uid, std::move(reservation));
}

std::optional<std::string> PodLedger::eraseReservation(const std::string& uid) {
  const auto it = reservations_.find(uid);
  if (it == reservations_.end()) return std::nullopt;
  std::string node = std::move(it->second.node);
  reservations_.erase(it);
  // A bound record of the same pod keeps its own charge.
  if (pods_.count(uid) == 0 || pods_.at(uid).pod.nodeName != node) {
    book(node).charges.erase(uid);
    dropBookIfEmpty(node);
  }
  return node;
}

std::size_t PodLedger::expire(std::chrono::system_clock::time_point now,
                              std::vector<std::string>& nodes, std::vector<std::string>* uids) {
  std::vector<std::string> expired;
  for (const auto& [uid, reservation] : reservations_) {
    if (reservation.expires <= now) expired.push_back(uid);
  }
  for (const std::string& uid : expired) {
    if (auto node = eraseReservation(uid)) nodes.push_back(std::move(*node));
  }
  if (uids != nullptr) uids->insert(uids->end(), expired.begin(), expired.end());
  return expired.size();
}

void PodLedger::setAllocation(const std::string& uid, Allocation allocation,
                              std::int64_t unplacedGpus) {
  const auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  it->second.allocation = std::move(allocation);
  it->second.unplacedGpus = unplacedGpus;
  charge(uid, it->second);
}

std::vector<std::string> PodLedger::unpredicted(const std::string& node) const {
  std::vector<const std::pair<const std::string, LedgerPod>*> waiting;
  if (const auto book = books_.find(node); book != books_.end()) {
    for (const std::string& uid : book->second.pods) {
      const auto& entry = *pods_.find(uid);
      if (entry.second.counted && !entry.second.allocation) waiting.push_back(&entry);
    }
  }
  std::sort(waiting.begin(), waiting.end(), [](const auto* a, const auto* b) {
    return a->second.boundAt != b->second.boundAt ? a->second.boundAt < b->second.boundAt
                                                  : a->first < b->first;
  });
  std::vector<std::string> out;
  out.reserve(waiting.size());
  for (const auto* entry : waiting)
    out.push_back(entry->first);
  return out;
}

const NodeCharges& PodLedger::charges(const std::string& node) const {
  const auto it = books_.find(node);
  return it == books_.end() ? kNoCharges : it->second.charges;
}

std::vector<PodInfo> PodLedger::podsOn(std::string_view node) const {
  std::vector<PodInfo> out;
  if (const auto book = books_.find(std::string(node)); book != books_.end()) {
    for (const std::string& uid : book->second.pods)
      out.push_back(pods_.at(uid).pod);
  }
  for (const auto& [uid, reservation] : reservations_) {
    if (reservation.node != node) continue;
    out.push_back(reservation.pod);
    out.back().nodeName = reservation.node;
  }
  return out;
}

std::vector<std::string> PodLedger::podUids() const {
  std::vector<std::string> out;
  out.reserve(pods_.size());
  for (const auto& [uid, entry] : pods_)
    out.push_back(uid);
  return out;
}

}  // namespace gte::cluster
