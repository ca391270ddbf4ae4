#include "cluster/pending_pods.h"

#include <algorithm>

#include "model/gpu_request.h"

namespace gte::cluster {
namespace {

std::size_t bucketOf(const PodInfo& pod) {
  const Result<GpuRequest> request = gpuRequestFrom(pod.requests);
  if (!request || request->gpus <= 0) return 0;
  return static_cast<std::size_t>(
      std::min<std::int64_t>(request->gpus, static_cast<std::int64_t>(kPendingGpuBuckets - 1)));
}

}  // namespace

void PendingPods::put(const std::string& uid, PodInfo pod) {
  const std::size_t bucket = bucketOf(pod);
  auto [it, added] = pods_.try_emplace(uid);
  if (!added) --byGpus_[it->second.bucket];
  it->second = Pending{std::move(pod), bucket};
  ++byGpus_[bucket];
}

bool PendingPods::erase(const std::string& uid) {
  const auto it = pods_.find(uid);
  if (it == pods_.end()) return false;
  --byGpus_[it->second.bucket];
  pods_.erase(it);
  return true;
}

const PodInfo* PendingPods::find(std::string_view uid) const {
  const auto it = pods_.find(std::string(uid));
  return it == pods_.end() ? nullptr : &it->second.pod;
}

}  // namespace gte::cluster
