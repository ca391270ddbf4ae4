#include "cluster/apiserver/api_server_backend.h"

#include <array>
#include <atomic>
#include <future>
#include <mutex>
#include <type_traits>

#include "cluster/apiserver/cache_sinks.h"
#include "cluster/apiserver/dra_sinks.h"
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

std::shared_ptr<LeaderGate> ApiServerBackend::makeLeaderGate() {
  if (!options_.leadership) return nullptr;
  const kube::LeaseLeadershipOptions& lease = *options_.leadership;
  LeaderGate::Options gate;
  gate.waitWhileStandby = lease.role == kube::LeaseRole::kFollow;
  gate.lease = lease.ns + "/" + lease.name;
  gate.now = lease.now;
  // The lease and the pod watch belong to this backend and are stopped before it goes.
  gate.holds = [this](LeaderGate::Clock::time_point now) { return leadership_->holds(now); };
  gate.relist = [this] { return pods_->relist(); };
  gate.nudge = [this] { leadership_->nudge(); };
  gate.activated = [this](std::chrono::milliseconds) {
    {
      MutexLock lock(housekeepingMutex_);
      ++activations_;
    }
    housekeepingWake_.notify_all();
  };
  return std::make_shared<LeaderGate>(std::move(gate));
}

ApiServerBackend::ApiServerBackend(std::shared_ptr<kube::ApiTransport> transport,
                                   PolicyConstSharedPtr policy, ApiServerBackendOptions options)
    : options_(std::move(options)),
      state_(std::make_shared<cluster::ClusterState>(std::move(policy), options_.state)),
      transport_(transport),
      leader_(makeLeaderGate()),
      binder_(std::make_shared<PodBinder>(transport, state_, options_.bind, leader_)) {
  setGroupPlans(state_.get());  // the watch-fed state plans pod groups as the file's does
  // The callbacks own what they touch: a watch thread that misses stop()'s deadline and finishes
  // later must not reach into a destroyed backend.
  // Synced once nodes and pods are listed and the group-size owners discovered and listed: until
  // then a group's size may be unknown, and its members would be placed pod by pod.
  struct Listed {
    std::shared_ptr<cluster::ClusterState> state;
    std::atomic<bool> nodes{false};
    std::atomic<bool> pods{false};
    std::atomic<int> draKinds{0};  // DRA kinds still to list (0 when DRA is off)
    std::array<std::atomic<bool>, 3> dra{};
    std::weak_ptr<GroupOwnerWatches> owners;
    std::weak_ptr<DiscoveredWatch> taintRules;  // unset without --dra
    bool draOn = false;
    std::mutex checking;
    void listedDra(std::size_t kind) {
      if (!dra[kind].exchange(true)) --draKinds;
      check();
    }
    void check() {
      std::lock_guard lock(checking);
      if (!nodes || !pods || draKinds != 0) return;
      const auto watches = owners.lock();
      if (!watches || !watches->synced()) return;
      const auto rules = taintRules.lock();
      if (draOn && (!rules || !rules->synced())) return;
      state->setSynced(true);  // only ever turns on
    }
  };
  auto listed = std::make_shared<Listed>();
  listed->state = state_;
  if (options_.watchDra) {
    listed->draKinds = 3;
    listed->draOn = true;
    state_->enableDra();
  }
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
  auto podOptions =
      reflectorOptions(options_, "pods", kube::collectionPath(kube::kPods), kLivePods);
  if (leader_) {
    podOptions.onListed = [gate = leader_](std::uint64_t covered) { gate->podsListed(covered); };
  }
  pods_ = std::make_unique<kube::Reflector>(
      transport, kube::reflectorSink<PodInfo>(readPodJson, std::move(pods)), std::move(podOptions));
  if (options_.leadership) {
    leadership_ = std::make_unique<kube::LeaseLeadership>(
        transport, *options_.leadership,
        [gate = leader_](bool leading, std::uint64_t term) { gate->leadership(leading, term); });
  }
  owners_ = std::make_shared<GroupOwnerWatches>(
      transport, state_,
      [options = options_](std::string resource, std::string path) {
        return reflectorOptions(options, std::move(resource), std::move(path), "");
      },
      [listed] { listed->check(); });
  listed->owners = owners_;
  state_->setGroupSizes(owners_->sizes());
  if (!options_.watchDra) return;
  const auto onListed = [listed](std::size_t kind) {
    return [listed, kind] { listed->listedDra(kind); };
  };
  const auto watch = [&]<typename Object>(const kube::ResourceType& type,
                                          std::type_identity_t<kube::ObjectReader<Object>> read,
                                          std::shared_ptr<kube::ObjectSink<Object>> sink) {
    dra_.push_back(std::make_unique<kube::Reflector>(
        transport, kube::reflectorSink<Object>(std::move(read), std::move(sink)),
        reflectorOptions(options_, std::string(type.resource), kube::collectionPath(type), "")));
  };
  watch(kube::kResourceSlices, readWatchedSlice, makeSliceSink(state_, onListed(0)));
  watch(kube::kDeviceClasses, readWatchedClass, makeClassSink(state_, onListed(1)));
  watch(kube::kResourceClaims, readWatchedClaim, makeClaimSink(state_, onListed(2)));
  taintRules_ = std::make_shared<DiscoveredWatch>(
      transport, kube::kDeviceTaintRules,
      [transport, state = state_, options = options_](std::function<void()> markListed) {
        return std::make_unique<kube::Reflector>(
            transport,
            kube::reflectorSink<WatchedTaintRule>(readWatchedTaintRule,
                                                  makeTaintRuleSink(state, std::move(markListed))),
            reflectorOptions(options, std::string(kube::kDeviceTaintRules.resource),
                             kube::collectionPath(kube::kDeviceTaintRules), ""));
      },
      [listed] { listed->check(); });
  listed->taintRules = taintRules_;
}

ApiServerBackend::~ApiServerBackend() {
  stop();
}

void ApiServerBackend::start() {
  nodes_->start();
  pods_->start();
  for (const auto& watch : dra_)
    watch->start();
  // Discovery runs on the housekeeping thread (it blocks on the API server).
  if (!housekeeper_.joinable()) housekeeper_ = std::thread([this] { housekeeping(); });
  if (leadership_) leadership_->start();
}

void ApiServerBackend::stepDown() {
  if (leadership_) leadership_->stop();
}

void ApiServerBackend::stop(std::chrono::milliseconds deadline) {
  stepDown();
  if (leader_) leader_->stop();
  {
    MutexLock lock(housekeepingMutex_);
    stopping_ = true;
  }
  housekeepingWake_.notify_all();
  binder_->stop();
  nodes_->stop(deadline);
  pods_->stop(deadline);
  for (const auto& watch : dra_)
    watch->stop(deadline);
  if (taintRules_) taintRules_->stop(deadline);
  owners_->stop(deadline);
  if (housekeeper_.joinable()) housekeeper_.join();
}

void ApiServerBackend::housekeeping() {
  auto lastWarm = std::chrono::steady_clock::now();
  warmConnections();
  bool discovered = discoverOptional();
  auto lastDiscovery = std::chrono::steady_clock::now();
  UniqueLock lock(housekeepingMutex_);
  std::uint64_t activationsSeen = 0;
  for (;;) {
    // A takeover completing wakes it early: the Service should follow the new leader at once.
    housekeepingWake_.wait_for(lock, options_.housekeepingInterval,
                               [&]() GTE_REQUIRES(housekeepingMutex_) {
                                 return stopping_ || activations_ != activationsSeen;
                               });
    if (stopping_) return;
    const bool activated = activations_ != activationsSeen;
    activationsSeen = activations_;
    lock.unlock();
    publishEndpoint(activated);
    if (const auto now = std::chrono::steady_clock::now();
        now - lastDiscovery >=
        (discovered ? options_.ownerDiscoveryInterval : options_.ownerDiscoveryRetry)) {
      lastDiscovery = now;
      discovered = discoverOptional();
    }
    if (const std::size_t expired = state_->expireReservations(); expired > 0) {
      log::warn("reservations expired without the pod being seen bound",
                {{"count", std::to_string(expired)}});
    }
    if (leader_) leader_->expire(std::chrono::steady_clock::now());
    if (const auto now = std::chrono::steady_clock::now();
        now - lastWarm >= options_.warmInterval) {
      lastWarm = now;
      warmConnections();
    }
    lock.lock();
  }
}

bool ApiServerBackend::discoverOptional() {
  const bool owners = owners_->discover();
  const bool rules = !taintRules_ || taintRules_->discover();
  return owners && rules;
}

void ApiServerBackend::publishEndpoint(bool activated) {
  if (activated) endpointStale_ = true;
  if (!leader_ || !options_.endpoint || leader_->role() != LeaderGate::Role::kActive) return;
  const auto now = std::chrono::steady_clock::now();
  if (!endpointStale_ && now - lastPublish_ < options_.endpointRefresh) return;
  // Only a replica that can prove its leadership moves the Service: a deposed one writing late
  // would route callers to a standby (which would only refuse their binds, but still).
  if (!leadership_->holds(now)) return;
  const kube::ServiceEndpoint& endpoint = *options_.endpoint;
  const std::string slice = endpoint.ns + "/" + endpoint.slice;
  if (auto published = kube::publishEndpoint(*transport_, endpoint); !published) {
    log::warn("could not publish this replica as the Service's endpoint; retrying",
              {{"endpointslice", slice}, {"error", published.error().message}});
    endpointStale_ = true;
    return;
  }
  if (endpointStale_) {
    log::info("published as the Service's endpoint",
              {{"endpointslice", slice}, {"address", endpoint.address}});
  }
  endpointStale_ = false;
  lastPublish_ = now;
}

LeadershipReport ApiServerBackend::leadership() const {
  LeadershipReport report;
  if (!leader_) return report;
  report.elected = true;
  report.role = leader_->role();
  report.lease = leadership_->status();
  report.active = report.role == LeaderGate::Role::kActive && leadership_->holds();
  report.lastTakeover = leader_->lastTakeover();
  return report;
}

// Concurrent requests make the client hold that many connections; the answers do not matter
// (any status keeps the connection), so they are dropped.
void ApiServerBackend::warmConnections() {
  for (std::size_t i = 0; i < options_.warmConnections; ++i) {
    transport_->sendAsync("GET", "/version", "", "application/json",
                          [](const Result<kube::HttpResponse>&) {});
  }
}

namespace {

WatchCounts countsOf(const kube::Reflector& watch) {
  return WatchCounts{watch.lists(), watch.failures(), watch.skipped(), true};
}

}  // namespace

WatchCounts ApiServerBackend::nodeWatch() const {
  return countsOf(*nodes_);
}

WatchCounts ApiServerBackend::podWatch() const {
  return countsOf(*pods_);
}

DraWatchCounts ApiServerBackend::draWatches() const {
  if (dra_.size() != 3) return {};
  const DiscoveredWatchCounts rules = taintRules_ ? taintRules_->counts() : DiscoveredWatchCounts{};
  return DraWatchCounts{countsOf(*dra_[0]), countsOf(*dra_[1]), countsOf(*dra_[2]),
                        WatchCounts{rules.lists, rules.failures, rules.skipped, rules.served}};
}

bool ApiServerBackend::ready() const {
  for (const auto& watch : dra_) {
    if (!watch->synced()) return false;
  }
  if (taintRules_ && !taintRules_->synced()) return false;
  return nodes_->synced() && pods_->synced() && owners_->synced();
}

bool ApiServerBackend::healthy(std::string* why) const {
  for (const auto& watch : dra_) {
    if (!watch->healthy(why)) return false;
  }
  if (taintRules_ && !taintRules_->healthy(why)) return false;
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
