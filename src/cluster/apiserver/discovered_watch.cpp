#include "cluster/apiserver/discovered_watch.h"

#include "kube/api_discovery.h"
#include "log/logger.h"

namespace gte::cluster {

DiscoveredWatch::DiscoveredWatch(std::shared_ptr<kube::ApiTransport> transport,
                                 kube::ResourceType type, MakeWatch make,
                                 std::function<void()> onListed)
    : transport_(std::move(transport)),
      type_(type),
      make_(std::move(make)),
      onListed_(std::move(onListed)),
      listed_(std::make_shared<std::atomic<bool>>(false)) {}

DiscoveredWatch::~DiscoveredWatch() {
  stop();
}

bool DiscoveredWatch::discover() {
  {
    MutexLock lock(mutex_);
    if (stopped_) return false;
    if (watch_) return true;
  }
  const std::string resource = std::string(type_.resource) + "." + std::string(type_.group) + "/" +
                               std::string(type_.version);
  const Result<bool> served = kube::servesResource(*transport_, type_);
  if (!served && served.error().code == ErrorCode::kUnavailable) {
    log::warn("discovery: cannot tell whether the API server serves a resource; asking again",
              {{"resource", resource}, {"error", served.error().message}});
    return false;
  }
  std::unique_ptr<kube::Reflector> watch;
  if (!served) {
    log::warn("discovery: not watching a resource the API server may not serve",
              {{"resource", resource}, {"error", served.error().message}});
  } else if (*served) {
    watch = make_([listed = listed_, onListed = onListed_] {
      *listed = true;
      onListed();
    });
  }
  {
    MutexLock lock(mutex_);
    if (stopped_) return false;
    answered_ = true;
    if (served && !*served && !saidNotServed_) {
      // Once, not at every discovery: an older API server is a steady state, not an event.
      saidNotServed_ = true;
      log::info(
          "discovery: the API server does not serve this resource; running without it until it "
          "does",
          {{"resource", resource}});
    }
    if (watch) {
      log::info("watching", {{"resource", resource}});
      watch->start();
      watch_ = std::move(watch);
    }
  }
  onListed_();
  return true;
}

bool DiscoveredWatch::synced() const {
  MutexLock lock(mutex_);
  return answered_ && (!watch_ || *listed_);
}

bool DiscoveredWatch::healthy(std::string* why) const {
  MutexLock lock(mutex_);
  return !watch_ || watch_->healthy(why);
}

void DiscoveredWatch::stop(std::chrono::milliseconds deadline) {
  kube::Reflector* watch = nullptr;
  {
    MutexLock lock(mutex_);
    stopped_ = true;
    watch = watch_.get();  // kept: its counts stay readable; only this thread resets watch_
  }
  if (watch != nullptr) watch->stop(deadline);
}

DiscoveredWatchCounts DiscoveredWatch::counts() const {
  MutexLock lock(mutex_);
  if (!watch_) {
    DiscoveredWatchCounts counts;
    if (answered_) counts.served = false;
    return counts;
  }
  return DiscoveredWatchCounts{true, true, watch_->lists(), watch_->failures(), watch_->skipped()};
}

}  // namespace gte::cluster
