#pragma once
// The GPU pods the cache saw pending (neither bound nor nominated), by UID, with how many of them
// ask for each number of whole GPUs kept up to date as they come and go: the pending-pods gauge
// (and the alert on 8-GPU pods waiting while no 8-GPU NVLink set is free) reads the counts
// without walking the pods. Bind reads the pod it binds from here. Not thread-safe: ClusterState
// holds it under its writer lock.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/pod_info.h"

namespace gte::cluster {

// Index k: pending pods asking for k whole GPUs (16: 16 or more; 0: none, MIG only, or a request
// that does not parse).
inline constexpr std::size_t kPendingGpuBuckets = 17;
using PendingByGpus = std::array<std::int64_t, kPendingGpuBuckets>;

class PendingPods {
 public:
  void put(const std::string& uid, PodInfo pod);
  // True when it was pending.
  bool erase(const std::string& uid);
  const PodInfo* find(std::string_view uid) const;
  // Keeps only the pods whose UID `keep` accepts.
  template <class Keep>
  void keepOnly(Keep&& keep) {
    for (auto it = pods_.begin(); it != pods_.end();) {
      if (keep(it->first)) {
        ++it;
        continue;
      }
      --byGpus_[it->second.bucket];
      it = pods_.erase(it);
    }
  }
  template <class Visit>
  void forEach(Visit&& visit) const {
    for (const auto& [uid, pending] : pods_)
      visit(uid, pending.pod);
  }
  std::size_t size() const noexcept { return pods_.size(); }
  const PendingByGpus& byGpus() const noexcept { return byGpus_; }

 private:
  struct Pending {
    PodInfo pod;
    std::size_t bucket = 0;
  };
  std::unordered_map<std::string, Pending> pods_;
  PendingByGpus byGpus_{};
};

}  // namespace gte::cluster
