#include "cluster/apiserver/api_server_backend.h"

#include <atomic>
#include <future>

#include "cluster/apiserver/cache_sinks.h"
#include "cluster/apiserver/pod_lookup.h"
#include "kube/resource_path.h"
#include "log/logger.h"

namespace gte::cluster {
namespace {

kube::ReflectorOptions reflectorOptions(const ApiServerBackendOptions& options,
                                        std::string resource, std::string path,
                                        std::string fieldSelector) {
  kube::ReflectorOptions out;
  out.resource = std::move(resource);
  out.path = std::move(path);
  out.fieldSelector = std::move(fieldSelector);
  out.pageSize = options.pageSize;
  out.minWatchTimeout = options.minWatchTimeout;
  out.backoff = options.backoff;
  out.failureGrace = options.failureGrace;
  out.stuckAfter = options.stuckAfter;
  return out;
}

// Terminal pods hold no devices: the server leaves them out (and reports a pod that becomes
// terminal as DELETED), which also keeps finished Jobs' pods out of the list.
constexpr const char* kLivePods = "status.phase!=Succeeded,status.phase!=Failed";

}  // namespace

ApiServerBackend::ApiServerBackend(std::shared_ptr<kube::ApiTransport> transport,
                                   PolicyConstSharedPtr policy, ApiServerBackendOptions options)
    : options_(std::move(options)),
      state_(std::make_shared<cluster::ClusterState>(std::move(policy), options_.state)),
      transport_(transport),
      binder_(std::make_shared<PodBinder>(transport, state_, options_.bind)) {
  // The callbacks own what they touch: a watch thread that misses stop()'s deadline and finishes
  // later must not reach into a destroyed backend.
  // Synced once nodes and pods are listed and the group-size owners discovered and listed: until
  // then a group's size may be unknown, and its members would be placed pod by pod.
  struct Listed {
    std::shared_ptr<cluster::ClusterState> state;
    std::atomic<bool> nodes{false};
    std::atomic<bool> pods{false};
    std::weak_ptr<GroupOwnerWatches> owners;
    std::mutex checking;
    void check() {
      std::lock_guard lock(checking);
      if (!nodes || !pods) return;
      const auto watches = owners.lock();
      if (watches && watches->synced()) state->setSynced(true);  // only ever turns on
    }
  };
  auto listed = std::make_shared<Listed>();
  listed->state = state_;
  auto nodes = std::make_shared<NodeCacheSink>(state_, [listed] {
    listed->nodes = true;
    listed->check();
  });
  auto pods = std::make_shared<PodCacheSink>(state_, [listed] {
    listed->pods = true;
    listed->check();
  });
  nodes_ = std::make_unique<kube::Reflector>(
      transport, kube::reflectorSink<NodeInfo>(readNodeJson, std::move(nodes)),
      reflectorOptions(options_, "nodes", kube::collectionPath(kube::kNodes), ""));
  pods_ = std::make_unique<kube::Reflector>(
      transport, kube::reflectorSink<PodInfo>(readPodJson, std::move(pods)),
      reflectorOptions(options_, "pods", kube::collectionPath(kube::kPods), kLivePods));
  owners_ = std::make_shared<GroupOwnerWatches>(
      transport, state_,
      [options = options_](std::string resource, std::string path) {
        return reflectorOptions(options, std::move(resource), std::move(path), "");
      },
      [listed] { listed->check(); });
  listed->owners = owners_;
}

ApiServerBackend::~ApiServerBackend() {
  stop();
}

void ApiServerBackend::start() {
  nodes_->start();
  pods_->start();
  // Discovery runs on the housekeeping thread (it blocks on the API server).
  if (!housekeeper_.joinable()) housekeeper_ = std::thread([this] { housekeeping(); });
}

void ApiServerBackend::stop(std::chrono::milliseconds deadline) {
  {
    std::lock_guard lock(housekeepingMutex_);
    stopping_ = true;
  }
  housekeepingWake_.notify_all();
  binder_->stop();
  nodes_->stop(deadline);
  pods_->stop(deadline);
  owners_->stop(deadline);
  if (housekeeper_.joinable()) housekeeper_.join();
}

void ApiServerBackend::housekeeping() {
  auto lastWarm = std::chrono::steady_clock::now();
  warmConnections();
  bool discovered = owners_->discover();
  auto lastDiscovery = std::chrono::steady_clock::now();
  std::unique_lock lock(housekeepingMutex_);
  while (!housekeepingWake_.wait_for(lock, options_.housekeepingInterval,
                                     [this] { return stopping_; })) {
    lock.unlock();
    if (const auto now = std::chrono::steady_clock::now();
        now - lastDiscovery >=
        (discovered ? options_.ownerDiscoveryInterval : options_.ownerDiscoveryRetry)) {
      lastDiscovery = now;
      discovered = owners_->discover();
    }
    if (const std::size_t expired = state_->expireReservations(); expired > 0) {
      log::warn("reservations expired without the pod being seen bound",
                {{"count", std::to_string(expired)}});
    }
    if (const auto now = std::chrono::steady_clock::now();
        now - lastWarm >= options_.warmInterval) {
      lastWarm = now;
      warmConnections();
    }
    lock.lock();
  }
}

// Concurrent requests make the client hold that many connections; the answers do not matter
// (any status keeps the connection), so they are dropped.
void ApiServerBackend::warmConnections() {
  for (std::size_t i = 0; i < options_.warmConnections; ++i) {
    transport_->sendAsync("GET", "/version", "", "application/json",
                          [](const Result<kube::HttpResponse>&) {});
  }
}

WatchCounts ApiServerBackend::nodeWatch() const {
  return WatchCounts{nodes_->lists(), nodes_->failures(), nodes_->skipped()};
}

WatchCounts ApiServerBackend::podWatch() const {
  return WatchCounts{pods_->lists(), pods_->failures(), pods_->skipped()};
}

bool ApiServerBackend::ready() const {
  return nodes_->synced() && pods_->synced() && owners_->synced();
}

bool ApiServerBackend::healthy(std::string* why) const {
  return nodes_->healthy(why) && pods_->healthy(why) && owners_->healthy(why);
}

Status ApiServerBackend::bind(const BindRequest& request) {
  std::promise<Status> result;
  auto answered = result.get_future();
  bindAsync(request, BindCaller{},
            [&result](BindOutcome outcome) { result.set_value(std::move(outcome.status)); });
  return answered.get();
}

void ApiServerBackend::bindAsync(BindRequest request, BindCaller caller,
                                 std::function<void(BindOutcome)> done) {
  binder_->bind(std::move(request), std::move(caller), std::move(done));
}

std::optional<PodInfo> ApiServerBackend::podByUid(const std::string& uid) const {
  return state_->podByUid(uid);
}

Result<PodInfo> ApiServerBackend::podByName(const std::string& ns, const std::string& name) const {
  return getPod(*transport_, ns, name);
}

std::vector<PodInfo> ApiServerBackend::podsOnNode(const std::string& node) const {
  return state_->podsOnNode(node);
}

Result<std::unique_ptr<ApiServerBackend>> makeApiServerBackend(const kube::KubeConfig& config,
                                                               PolicyConstSharedPtr policy,
                                                               ApiServerBackendOptions options) {
  auto client = kube::ApiClient::create(config, options.client);
  if (!client) return std::move(client).error();
  std::shared_ptr<kube::ApiTransport> transport = std::move(*client);
  log::info("watching the API server", {{"source", config.source}});
  return std::make_unique<ApiServerBackend>(std::move(transport), std::move(policy),
                                            std::move(options));
}

}  // namespace gte::cluster
