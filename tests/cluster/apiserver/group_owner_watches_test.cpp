// Group sizes from the API server: PodGroups, indexed Jobs and JobSets are watched only where
// discovery lists them (a JobSet CRD installed later is picked up), their sizes answer the
// requests' lookups, bad objects are skipped and counted, the cache is synced only once they are
// listed, and a PodGroup that kube-scheduler gave up on releases its group's holds.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <map>
#include <thread>

#include "cluster/apiserver/api_server_backend.h"
#include "cluster/apiserver/group_owner_sink.h"
#include "cluster/cluster_test_support.h"
#include "cluster/group_plan_support.h"
#include "kube/fake_transport.h"
#include "support/cluster_events_fixture.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::GroupOwnerKind;
using gte::PodInfo;
using gte::Result;
using gte::testing::blockUntilCancelled;
using gte::testing::FakeTransport;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using gte::testing::testPolicy;
using std::chrono::milliseconds;

namespace {

std::string resourceList(const std::string& groupVersion, const std::string& resource) {
  return R"({"kind":"APIResourceList","groupVersion":")" + groupVersion +
         R"(","resources":[{"name":")" + resource + R"(","namespaced":true}]})";
}

std::string list(const std::string& items) {
  return R"({"metadata":{"resourceVersion":"7"},"items":[)" + items + "]}";
}

std::string podGroup(const std::string& name, const std::string& minCount,
                     const std::string& condition = "") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","resourceVersion":"3"},)" +
         R"("spec":{"schedulingPolicy":{"gang":{"minCount":)" + minCount + "}}}" +
         (condition.empty() ? "" : R"(,"status":{"conditions":[)" + condition + "]}") + "}";
}

constexpr const char* kGaveUp =
    R"({"type":"PodGroupInitiallyScheduled","status":"False","reason":"Unschedulable",)"
    R"("message":"minCount (2) cannot be satisfied"})";
constexpr const char* kScheduled =
    R"({"type":"PodGroupInitiallyScheduled","status":"True","reason":"Scheduled"})";

bool waitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return condition();
}

}  // namespace

TEST_CASE("API-server backend: group sizes from the PodGroups, indexed Jobs and JobSets served") {
  auto transport = std::make_shared<FakeTransport>();
  std::atomic<bool> jobSetsInstalled{false};
  std::atomic<bool> podGroupsListed{false};
  transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    const auto at = [&r](const char* prefix) { return r.path.rfind(prefix, 0) == 0; };
    if (r.path == "/apis/scheduling.k8s.io/v1beta1") {
      return ok(resourceList("scheduling.k8s.io/v1beta1", "podgroups"));
    }
    if (r.path == "/apis/batch/v1") return ok(resourceList("batch/v1", "jobs"));
    if (r.path == "/apis/jobset.x-k8s.io/v1alpha2") {
      if (!jobSetsInstalled) return HttpResponse{404, R"({"kind":"Status","code":404})"};
      return ok(resourceList("jobset.x-k8s.io/v1alpha2", "jobsets"));
    }
    if (at("/apis/scheduling.k8s.io/v1beta1/podgroups?")) {
      if (!podGroupsListed) return HttpResponse{500, "etcd is slow"};
      // The second item does not read (minCount is text): skipped and counted.
      return ok(list(podGroup("llm", "4") + "," + podGroup("bad", R"("four")") + "," +
                     podGroup("basic-like", "0")));
    }
    if (at("/apis/batch/v1/jobs?")) {
      return ok(list(R"({"metadata":{"name":"idx","namespace":"ml","resourceVersion":"1"},)"
                     R"("spec":{"completionMode":"Indexed","parallelism":3,"completions":8}},)"
                     R"({"metadata":{"name":"plain","namespace":"ml","resourceVersion":"1"},)"
                     R"("spec":{"parallelism":2}})"));
    }
    if (at("/apis/jobset.x-k8s.io/v1alpha2/jobsets?")) {
      return ok(list(R"({"metadata":{"name":"js","namespace":"ml","resourceVersion":"1"},)"
                     R"("spec":{"replicatedJobs":[{"replicas":2,"template":{"spec":)"
                     R"({"parallelism":2,"completions":2}}},{"name":"driver"}]}})"));
    }
    return ok(list(""));  // nodes, pods
  };
  transport->onStream = [](int, const std::string&, const auto&,
                           Cancellation& cancel) -> Result<HttpResponse> {
    return blockUntilCancelled(cancel);
  };
  ApiServerBackendOptions options;
  options.housekeepingInterval = milliseconds(10);
  options.ownerDiscoveryInterval = milliseconds(50);
  options.backoff.initial = milliseconds(5);
  options.backoff.max = milliseconds(20);
  ApiServerBackend backend(transport, testPolicy(), options);
  backend.start();

  // Nodes and pods are listed, but the PodGroup list fails: not ready, not synced (a PodGroup's
  // members would be placed pod by pod for want of its size).
  REQUIRE(waitFor([&] { return backend.ownerWatch(GroupOwnerKind::kPodGroup).failures > 0; }));
  CHECK_FALSE(backend.ready());
  CHECK_FALSE(backend.snapshot()->synced);
  podGroupsListed = true;
  REQUIRE(waitFor([&] { return backend.ready() && backend.snapshot()->synced; }));

  const gte::GroupSizeLookup* sizes = backend.groupSizes();
  REQUIRE(sizes != nullptr);
  CHECK(sizes->groupSize(GroupOwnerKind::kPodGroup, "ml", "llm") == 4);
  CHECK_FALSE(sizes->groupSize(GroupOwnerKind::kPodGroup, "ml", "bad").has_value());
  CHECK_FALSE(sizes->groupSize(GroupOwnerKind::kPodGroup, "ml", "basic-like").has_value());
  CHECK(sizes->groupSize(GroupOwnerKind::kJob, "ml", "idx") == 3);  // min(3, 8)
  // A Job that is not indexed names no group: not kept.
  CHECK_FALSE(sizes->groupSize(GroupOwnerKind::kJob, "ml", "plain").has_value());
  CHECK(backend.ownerWatch(GroupOwnerKind::kPodGroup).skipped == 1);
  CHECK(backend.ownerWatch(GroupOwnerKind::kJob).watched);
  CHECK_FALSE(backend.ownerWatch(GroupOwnerKind::kJobSet).watched);
  CHECK_FALSE(sizes->groupSize(GroupOwnerKind::kJobSet, "ml", "js").has_value());

  // The JobSet CRD is installed: the next discovery starts its watch.
  jobSetsInstalled = true;
  REQUIRE(waitFor([&] { return sizes->groupSize(GroupOwnerKind::kJobSet, "ml", "js") == 5; }));
  // 2 Jobs x 2 pods, plus the driver (1 replica x parallelism 1).
  // (The Reflector counts the list just after handing it to the sink.)
  CHECK(waitFor([&] { return backend.ownerWatch(GroupOwnerKind::kJobSet).lists == 1; }));
  std::string why;
  CHECK(backend.healthy(&why));

  // Only what is needed: nothing but discovery, lists and watches of the three kinds (and nodes
  // and pods) was asked.
  for (const auto& r : transport->requests()) {
    INFO(r.path);
    CHECK(r.method == "GET");
  }
  backend.stop(milliseconds(2000));
}

TEST_CASE("API-server backend: a cluster that serves no owner kind runs as before") {
  auto transport = std::make_shared<FakeTransport>();
  // Discovery answers 503 at first: not synced until it has answered.
  std::atomic<bool> discoveryUp{false};
  transport->onSend = [&discoveryUp](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.path.rfind("/apis/", 0) == 0 && r.path.find('?') == std::string::npos) {
      if (!discoveryUp) return HttpResponse{503, "{}"};
      return HttpResponse{404, "{}"};  // no group version is served beyond the core one
    }
    if (r.path.rfind("/apis/", 0) == 0) {
      FAIL_CHECK("a watch of a resource that is not served: " << r.path);
    }
    return ok(list(""));
  };
  transport->onStream = [](int, const std::string&, const auto&,
                           Cancellation& cancel) -> Result<HttpResponse> {
    return blockUntilCancelled(cancel);
  };
  ApiServerBackendOptions options;
  options.housekeepingInterval = milliseconds(10);
  options.ownerDiscoveryRetry = milliseconds(20);
  ApiServerBackend backend(transport, testPolicy(), options);
  backend.start();
  const auto discoveries = [&] {
    std::size_t n = 0;
    for (const auto& r : transport->requests())
      n += r.path == "/apis/scheduling.k8s.io/v1beta1" ? 1 : 0;
    return n;
  };
  REQUIRE(waitFor([&] { return discoveries() >= 3; }));  // asked again after each 503
  CHECK_FALSE(backend.ready());
  CHECK_FALSE(backend.snapshot()->synced);
  discoveryUp = true;
  REQUIRE(waitFor([&] { return backend.ready() && backend.snapshot()->synced; }));
  CHECK_FALSE(backend.ownerWatch(GroupOwnerKind::kPodGroup).watched);
  CHECK_FALSE(backend.groupSizes()->groupSize(GroupOwnerKind::kJob, "ml", "idx").has_value());
  backend.stop(milliseconds(2000));
}

TEST_CASE("PodGroup sink: the gang cycle giving up releases the group's holds once") {
  gte::testing::ManualClock clock;
  std::map<HoldRelease, std::size_t> released;
  ClusterStateOptions stateOptions = gte::testing::clockedOptions(clock);
  auto events = gte::testing::functionEvents();
  events->onHoldsReleased = [&](HoldRelease reason, std::size_t n) { released[reason] += n; };
  stateOptions.events = events;
  auto state = std::make_shared<ClusterState>(testPolicy(), stateOptions);
  state->replaceNodes({gte::testing::h100("a"), gte::testing::h100("b")});
  const auto commit = [&] {
    REQUIRE(
        state->commitGroupPlan(gte::testing::planFourGpuGroup(*state, 2, "ml/podgroup/llm")).ok());
  };
  auto sizes = std::make_shared<GroupOwnerSizes>();
  int listedCount = 0;
  GroupOwnerSink sink(GroupOwnerKind::kPodGroup, sizes, state, [&] { ++listedCount; });
  const auto object = [](const std::string& condition) {
    return *parseGroupOwner(podGroup("llm", "2", condition), GroupOwnerKind::kPodGroup);
  };

  sink.beginList();
  REQUIRE(sink.listItem(object("")).ok());
  sink.endList();
  CHECK(listedCount == 1);
  CHECK(sizes->groupSize(GroupOwnerKind::kPodGroup, "ml", "llm") == 2);

  commit();
  REQUIRE(state->heldSlotCount() == 2);
  // Scheduled: the holds stay (the members are binding into them).
  REQUIRE(sink.apply(WatchEventType::kModified, object(kScheduled)).ok());
  CHECK(state->heldSlotCount() == 2);
  // The gang cycle gave up: released, counted as such.
  REQUIRE(sink.apply(WatchEventType::kModified, object(kGaveUp)).ok());
  CHECK(state->heldSlotCount() == 0);
  CHECK(released[HoldRelease::kUnschedulable] == 2);

  // The retry plans again; kube-scheduler does not re-patch an unchanged condition, and an event
  // that repeats it (a spec change, a re-list) is no new signal: the new plan stays.
  commit();
  REQUIRE(sink.apply(WatchEventType::kModified, object(kGaveUp)).ok());
  sink.beginList();
  REQUIRE(sink.listItem(object(kGaveUp)).ok());
  sink.endList();
  CHECK(state->heldSlotCount() == 2);

  // Deleted: its size is gone.
  REQUIRE(sink.apply(WatchEventType::kDeleted, object(kGaveUp)).ok());
  CHECK_FALSE(sizes->groupSize(GroupOwnerKind::kPodGroup, "ml", "llm").has_value());

  // A Job handed to the PodGroup sink is refused (and the reflector counts it as skipped).
  auto job = parseGroupOwner(R"({"metadata":{"name":"j"}})", GroupOwnerKind::kJob);
  CHECK_FALSE(sink.apply(WatchEventType::kAdded, *job).ok());
}
