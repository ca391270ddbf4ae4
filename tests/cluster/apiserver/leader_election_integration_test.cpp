// Leader election of the API-server backend against a real etcd + kube-apiserver, with short
// timings (lease 2 s, renew deadline 1.4 s, reads every 200 ms): of two replicas holding their own
// lease one binds and publishes itself as the Service's endpoint, the standby refuses binds and
// sends callers back; a step-down hands over within a few reads (not the lease's duration), the
// successor lists afresh and counts what the old leader bound; a leader cut off from the API
// server stops binding before its successor starts; a replica following another process's lease
// (the kube-scheduler beside it) binds only while that process's identity holds it. Skipped when
// the control-plane binaries are not built (tests/e2e/hack/build-control-plane.sh).
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/apiserver/api_server_backend.h"
#include "cluster/apiserver/control_plane.h"
#include "cluster/apiserver/integration_support.h"
#include "cluster/cluster_test_support.h"
#include "kube/api_client.h"
#include "kube/kubeconfig_file.h"
#include "kube/lease.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::BindRequest;
using gte::Result;
using gte::testing::ControlPlane;
using gte::testing::eventually;
using gte::testing::field;
using gte::testing::freeOn;
using gte::testing::nodeJson;
using gte::testing::podJson;
using std::chrono::milliseconds;

namespace {

using Clock = std::chrono::steady_clock;

// Passes everything through until cut(): then every request fails as an unreachable server would
// (a leader partitioned from the API server). Watches already open keep running.
class CuttableTransport final : public ApiTransport {
 public:
  explicit CuttableTransport(std::shared_ptr<ApiTransport> inner) : inner_(std::move(inner)) {}
  void cut() { cut_ = true; }
  Result<HttpResponse> send(std::string_view method, const std::string& path,
                            const std::string& body, std::string_view contentType) override {
    if (cut_) return gte::Error{gte::ErrorCode::kUnavailable, "cut off"};
    return inner_->send(method, path, body, contentType);
  }
  void sendAsync(std::string method, std::string path, std::string body, std::string contentType,
                 ResponseCallback done) override {
    if (cut_) return done(gte::Error{gte::ErrorCode::kUnavailable, "cut off"});
    inner_->sendAsync(std::move(method), std::move(path), std::move(body), std::move(contentType),
                      std::move(done));
  }
  Result<HttpResponse> stream(const std::string& path,
                              const std::function<bool(std::string_view)>& onChunk,
                              Cancellation& cancel) override {
    if (cut_) return gte::Error{gte::ErrorCode::kUnavailable, "cut off"};
    return inner_->stream(path, onChunk, cancel);
  }

 private:
  std::shared_ptr<ApiTransport> inner_;
  std::atomic<bool> cut_{false};
};

struct Replica {
  std::shared_ptr<CuttableTransport> transport;
  std::unique_ptr<ApiServerBackend> backend;
};

LeaseLeadershipOptions shortLease(LeaseRole role, const std::string& name,
                                  const std::string& identity) {
  LeaseLeadershipOptions lease;
  lease.role = role;
  lease.ns = "default";
  lease.name = name;
  lease.identity = identity;
  lease.leaseDuration = milliseconds(2000);
  lease.renewDeadline = milliseconds(1400);
  lease.retryPeriod = milliseconds(200);
  return lease;
}

Replica startReplica(const std::string& kubeconfig, LeaseLeadershipOptions lease,
                     const std::string& address) {
  auto config = loadKubeconfigFile(kubeconfig);
  REQUIRE(config.ok());
  auto client = ApiClient::create(*config);
  REQUIRE(client.ok());
  Replica r;
  r.transport =
      std::make_shared<CuttableTransport>(std::shared_ptr<ApiTransport>(std::move(*client)));
  ApiServerBackendOptions options;
  options.housekeepingInterval = milliseconds(100);
  options.bind.deadline = milliseconds(1500);
  options.leadership = std::move(lease);
  if (!address.empty()) {
    options.endpoint = ServiceEndpoint{"default", "gte-leader", "gte", address, "", "", {}};
    options.endpoint->ports.push_back(EndpointPort{"http", 8888});
  }
  r.backend = std::make_unique<ApiServerBackend>(r.transport, gte::testing::testPolicy(), options);
  r.backend->start();
  REQUIRE(eventually([&] { return r.backend->ready(); }));
  return r;
}

bool active(const Replica& r) {
  return r.backend->leadership().active;
}

std::string sliceAddress(ApiClient& api) {
  auto slice = api.send("GET",
                        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/"
                        "gte-leader");
  if (!slice || !slice->success()) return "";
  const auto at = slice->body.find("\"addresses\":[\"");
  if (at == std::string::npos) return "";
  const auto begin = at + 14;
  return slice->body.substr(begin, slice->body.find('"', begin) - begin);
}

// The time `condition` first held, polling every 5 ms (or nullopt past `timeout`).
std::optional<Clock::time_point> whenTrue(const std::function<bool()>& condition,
                                          milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return Clock::now();
    std::this_thread::sleep_for(milliseconds(5));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("leader election against a real kube-apiserver", "[apiserver][leader]") {
  if (ControlPlane::binDir().empty()) {
    SKIP("control-plane binaries not built (tests/e2e/hack/build-control-plane.sh)");
  }
  gte::testing::AdminSession session;
  session.start();
  ControlPlane& plane = session.plane;
  ApiClient& api = *session.api;
  auto created = [&](const std::string& path, const std::string& body) {
    return session.created(path, body);
  };
  auto pendingPod = [&](const std::string& name) {
    const std::string pod = created("/api/v1/namespaces/default/pods", podJson(name, "", 1));
    return BindRequest{name, "default", field(pod, "uid"), "n1"};
  };
  auto nodeOf = [&](const std::string& name) {
    auto pod = api.send("GET", "/api/v1/namespaces/default/pods/" + name);
    REQUIRE(pod.ok());
    return field(pod->body, "nodeName");
  };
  created("/api/v1/nodes", nodeJson("n1", 1000, "00000000"));

  SECTION("replicas holding their own lease") {
    Replica a =
        startReplica(plane.kubeconfig(), shortLease(LeaseRole::kHold, "gte", "a"), "10.0.0.1");
    REQUIRE(eventually([&] { return active(a); }));
    Replica b =
        startReplica(plane.kubeconfig(), shortLease(LeaseRole::kHold, "gte", "b"), "10.0.0.2");
    REQUIRE(eventually([&] { return sliceAddress(api) == "10.0.0.1"; }));
    CHECK_FALSE(active(b));
    CHECK(b.backend->redirectsCallers());
    CHECK_FALSE(a.backend->redirectsCallers());

    // The standby sends no Binding; the leader does.
    const BindRequest first = pendingPod("first");
    auto refused = b.backend->bind(first);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("standby") != std::string::npos);
    CHECK(nodeOf("first").empty());
    REQUIRE(a.backend->bind(first).ok());
    CHECK(nodeOf("first") == "n1");

    // A step-down releases the lease: the standby takes it at its next read, well within the
    // lease's 2 s, lists afresh (counting the pod the old leader bound) and publishes itself.
    const auto handOver = Clock::now();
    a.backend->stepDown();
    REQUIRE(eventually([&] { return active(b); }));
    CHECK(Clock::now() - handOver < milliseconds(1500));
    CHECK(b.backend->leadership().lastTakeover.has_value());
    CHECK(freeOn(*b.backend, "n1") == 7);
    REQUIRE(eventually([&] { return sliceAddress(api) == "10.0.0.2"; }));
    const BindRequest second = pendingPod("second");
    CHECK_FALSE(a.backend->bind(second).ok());
    REQUIRE(b.backend->bind(second).ok());

    // The leader is cut off from the API server: it stops binding at its renew deadline, and a
    // third replica takes over only after the lease's duration of silence, so there is no moment
    // at which both would bind.
    Replica c =
        startReplica(plane.kubeconfig(), shortLease(LeaseRole::kHold, "gte", "c"), "10.0.0.3");
    CHECK_FALSE(active(c));
    const auto cut = Clock::now();
    b.transport->cut();
    const auto fenced = whenTrue([&] { return !active(b); }, milliseconds(5000));
    const auto successor =
        whenTrue([&] { return c.backend->leadership().role != LeaderGate::Role::kStandby; },
                 milliseconds(10'000));
    REQUIRE(fenced.has_value());
    REQUIRE(successor.has_value());
    CHECK(*fenced - cut <= milliseconds(1400 + 200));  // renew deadline after the last renew
    CHECK(*fenced < *successor);
    INFO("fenced after " << (*fenced - cut) / milliseconds(1) << " ms, successor after "
                         << (*successor - cut) / milliseconds(1) << " ms");
    CHECK(*successor - *fenced >= milliseconds(300));
    const BindRequest third = pendingPod("third");
    CHECK_FALSE(b.backend->bind(third).ok());
    REQUIRE(eventually([&] { return active(c); }));
    REQUIRE(c.backend->bind(third).ok());
    CHECK(freeOn(*c.backend, "n1") == 5);
    REQUIRE(eventually([&] { return sliceAddress(api) == "10.0.0.3"; }));
    c.backend->stop(milliseconds(3000));
    b.backend->stop(milliseconds(3000));
    a.backend->stop(milliseconds(3000));
  }

  SECTION("a replica following the lease of the kube-scheduler beside it") {
    // The test plays kube-scheduler: it creates and renews the lease as hostname_UUID.
    Lease lease;
    lease.name = "scheduler";
    lease.ns = "default";
    lease.spec.holderIdentity = "pod-a_1b4e";
    lease.spec.leaseDurationSeconds = 15;
    std::mutex leaseMutex;
    auto write = [&](bool create) {
      std::lock_guard lock(leaseMutex);
      lease.spec.renewTime = formatMicroTime(std::chrono::system_clock::now());
      auto response =
          create ? api.send("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                            leaseJson(lease))
                 : api.send("PUT",
                            "/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                            "scheduler",
                            leaseJson(lease));
      REQUIRE(response.ok());
      REQUIRE(response->success());
      lease = *parseLeaseJson(response->body);
    };
    write(true);
    std::atomic<bool> renewing{true};
    std::thread scheduler([&] {
      while (renewing) {
        std::this_thread::sleep_for(milliseconds(300));
        write(false);
      }
    });
    Replica follower =
        startReplica(plane.kubeconfig(), shortLease(LeaseRole::kFollow, "scheduler", "pod-a"), "");
    // Active once it has seen a renew (the first read proves no recent one).
    REQUIRE(eventually([&] { return active(follower); }));
    CHECK_FALSE(follower.backend->redirectsCallers());
    REQUIRE(follower.backend->bind(pendingPod("sidecar-one")).ok());

    // Another pod's scheduler takes the lease: the follower is a standby, and a bind asked of it
    // waits for leadership (its own scheduler calls only once it leads) until its deadline.
    {
      std::lock_guard lock(leaseMutex);
      lease.spec.holderIdentity = "pod-b_77aa";
      ++lease.spec.leaseTransitions;
    }
    REQUIRE(eventually([&] { return !active(follower); }));
    const BindRequest waiting = pendingPod("sidecar-two");
    const auto asked = Clock::now();
    auto late = follower.backend->bind(waiting);
    REQUIRE_FALSE(late.ok());
    CHECK(Clock::now() - asked >= milliseconds(1400));
    CHECK(nodeOf("sidecar-two").empty());

    // Its own scheduler wins again (a new process: a new UUID): a bind asked meanwhile waits for
    // the takeover and then binds.
    std::thread bindWhileTakingOver([&] {
      std::this_thread::sleep_for(milliseconds(100));
      std::lock_guard lock(leaseMutex);
      lease.spec.holderIdentity = "pod-a_c0ff";
      ++lease.spec.leaseTransitions;
    });
    auto waited = follower.backend->bind(waiting);
    bindWhileTakingOver.join();
    INFO((waited.ok() ? std::string() : waited.error().message));
    CHECK(waited.ok());
    CHECK(nodeOf("sidecar-two") == "n1");
    CHECK(follower.backend->leadership().lease.startedLeading == 2);

    // Its scheduler stops renewing: binds stop at the renew deadline.
    renewing = false;
    scheduler.join();
    REQUIRE(eventually([&] { return !active(follower); }, milliseconds(3000)));
    follower.backend->stop(milliseconds(3000));
  }
}
