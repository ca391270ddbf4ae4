#pragma once
// The GPU pods the cluster cache accounts: bound pods by UID, reservations of binds in flight, and
// per node the charges (who holds which devices) kept up to date on every add and remove, as
// kube-scheduler's NodeInfo.AddPod/RemovePod keep its requested resources. Pods that request no GPU
// or MIG device hold nothing the extender accounts and are not kept. Not thread-safe: the
// ClusterState owns it under its writer lock.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/allocation.h"
#include "core/node_charges.h"
#include "model/pod_info.h"

namespace gte::cluster {

struct LedgerPod {
  PodInfo pod;               // trimmed: the extender's annotations and GPU requests only
  std::int64_t boundAt = 0;  // unix seconds
  bool counted = true;       // the node's labels do not show its devices yet: it adds usage
  // The devices it holds on pod.nodeName: from its annotation, its reservation, or predicted when
  // first counted. nullopt: counted but not predicted yet (no charge until it is).
  std::optional<Allocation> allocation;
  std::int64_t unplacedGpus = 0;  // whole GPUs counted by number only
};

struct LedgerReservation {
  PodInfo pod;
  std::string node;
  Allocation allocation;
  std::int64_t reservedAt = 0;  // unix seconds
  std::chrono::system_clock::time_point expires;
};

class PodLedger {
 public:
  const LedgerPod* pod(std::string_view uid) const;
  const LedgerReservation* reservation(std::string_view uid) const;

  // Adds or replaces the pod (its node may change); returns the node it left, if any.
  std::optional<std::string> putPod(const std::string& uid, LedgerPod pod);
  // Returns the node the pod was on ("" for a nominated pod); nullopt when unknown.
  std::optional<std::string> erasePod(const std::string& uid);
  void putReservation(const std::string& uid, LedgerReservation reservation);
  // Returns the node it was on; nullopt when unknown.
  std::optional<std::string> eraseReservation(const std::string& uid);
  // Erases reservations that expired by `now`, adding their nodes to `nodes` (and their UIDs to
  // `uids` when given).
  std::size_t expire(std::chrono::system_clock::time_point now, std::vector<std::string>& nodes,
                     std::vector<std::string>* uids = nullptr);

  // Records a counted pod's predicted devices.
  void setAllocation(const std::string& uid, Allocation allocation, std::int64_t unplacedGpus);
  // Re-decides which of the node's pods add usage (the node's labels changed).
  template <class Counted>
  void recount(const std::string& node, Counted&& counted) {
    const auto book = books_.find(node);
    if (book == books_.end()) return;
    for (const std::string& uid : book->second.pods) {
      LedgerPod& entry = pods_.at(uid);
      const bool now = counted(entry);
      if (now != entry.counted) {
        entry.counted = now;
        charge(uid, entry);
      }
    }
  }
  // UIDs of the node's counted pods that still need a predicted allocation, in bind order.
  std::vector<std::string> unpredicted(const std::string& node) const;

  // The node's charges; empty for a node without pods.
  const NodeCharges& charges(const std::string& node) const;
  // Bound and reserved pods on the node (reserved ones with nodeName filled in).
  std::vector<PodInfo> podsOn(std::string_view node) const;
  std::vector<std::string> podUids() const;
  std::size_t podCount() const noexcept { return pods_.size(); }
  std::size_t reservationCount() const noexcept { return reservations_.size(); }

 private:
  struct Book {
    std::vector<std::string> pods;  // UIDs of bound pods
    NodeCharges charges;            // bound pods with known devices, and reservations
  };

  // Puts or removes the pod's charge on its node after its record changed.
  void charge(const std::string& uid, const LedgerPod& entry);
  Book& book(const std::string& node) { return books_[node]; }
  void dropBookIfEmpty(const std::string& node);

  std::unordered_map<std::string, LedgerPod> pods_;                  // by UID
  std::unordered_map<std::string, LedgerReservation> reservations_;  // by UID
  std::unordered_map<std::string, Book> books_;                      // by node name
};

}  // namespace gte::cluster
