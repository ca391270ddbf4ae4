// Bind through the API server, against a scripted transport: one Binding that carries the UID
// precondition and the gpus annotation, the pod read from the cache, idempotence, release on
// failure, the concurrency bound, and binds dropped when their caller gave up or their deadline
// passed.
#include "cluster/apiserver/pod_binder.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "cluster/cluster_test_support.h"
#include "core/fit.h"
#include "core/pod_demand.h"
#include "kube/fake_transport.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::BindAbandon;
using gte::BindCaller;
using gte::BindOutcome;
using gte::BindRequest;
using gte::Error;
using gte::ErrorCode;
using gte::Result;
using gte::cluster::ClusterState;
using gte::cluster::ObservedPod;
using gte::testing::FakeTransport;
using gte::testing::freeGpus;
using gte::testing::gpuPod;
using gte::testing::h100;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using gte::testing::testPolicy;
using std::chrono::milliseconds;

namespace {

std::string podJson(const std::string& nodeName, const std::string& uid = "u1", int gpus = 2,
                    const std::string& name = "train") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + uid +
         R"("},"spec":{"nodeName":")" + nodeName +
         R"(","containers":[{"resources":{"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) +
         R"("}}}]},"status":{"phase":"Pending"}})";
}

const BindRequest kRequest{"train", "ml", "u1", "a"};
const std::string kPodPath = "/api/v1/namespaces/ml/pods/train";

// A steady clock the tests move by hand.
struct TestClock {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
};

struct Fixture {
  explicit Fixture(std::size_t concurrency = 64) {
    state->replaceNodes({h100("a")});
    state->setSynced(true);
    PodBinderOptions options;
    options.concurrency = concurrency;
    options.deadline = milliseconds(2500);
    options.now = [this] { return clock.now; };
    binder = std::make_shared<PodBinder>(transport, state, options);
  }

  // The pending pod as the watch delivered it.
  void watchSeesPending(const std::string& uid = "u1", std::int64_t gpus = 2,
                        const std::string& name = "train") {
    gte::PodInfo pod = gpuPod(uid, gpus);
    pod.name = name;
    state->upsertPod(ObservedPod{pod, std::nullopt});
  }

  BindCaller caller() const { return BindCaller{clock.now, nullptr}; }

  // Binds and returns the outcome, which must be known by then (nothing held).
  BindOutcome bindNow(const BindRequest& request) {
    std::optional<BindOutcome> outcome;
    binder->bind(request, caller(), [&outcome](BindOutcome o) { outcome = std::move(o); });
    REQUIRE(outcome.has_value());
    return std::move(*outcome);
  }

  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    for (const auto& r : transport->requests())
      out.push_back(r.method + " " + r.path);
    return out;
  }

  TestClock clock;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::shared_ptr<ClusterState> state = std::make_shared<ClusterState>(testPolicy());
  std::shared_ptr<PodBinder> binder;
};

Result<HttpResponse> created(const RecordedRequest&) {
  return HttpResponse{201, R"({"kind":"Status","status":"Success"})"};
}

}  // namespace

TEST_CASE("bind: one Binding carrying the UID precondition and the predicted GPUs annotation") {
  Fixture f;
  f.watchSeesPending();
  f.transport->onSend = created;
  const BindOutcome outcome = f.bindNow(kRequest);
  REQUIRE(outcome.status.ok());
  CHECK(outcome.abandoned == BindAbandon::kNone);
  // No read of the pod, no separate annotation patch: the API server copies the Binding's
  // annotations onto the pod in the write that binds it.
  CHECK(f.calls() == std::vector<std::string>{"POST " + kPodPath + "/binding"});
  CHECK(f.transport->requests()[0].body ==
        R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"train","namespace":"ml",)"
        R"("uid":"u1","annotations":{"gputopo.dev/gpus":"0,1"}},)"
        R"("target":{"apiVersion":"v1","kind":"Node","name":"a"}})");
  CHECK(freeGpus(*f.state, "a") == 6);  // reserved until the watch shows the pod bound
  CHECK(f.state->reservationCount() == 1);
}

TEST_CASE(
    "bind: a pod the watch has not delivered yet is read, then bound under the scheduler's UID") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(""));
    return created(r);
  };
  REQUIRE(f.bindNow(kRequest).status.ok());
  CHECK(f.calls() == std::vector<std::string>{"GET " + kPodPath, "POST " + kPodPath + "/binding"});
  CHECK(f.transport->requests()[1].body.find(R"("uid":"u1")") != std::string::npos);
  CHECK(f.state->reservationCount() == 1);
}

TEST_CASE("bind: a pod the watch shows bound already needs no request") {
  Fixture f;
  f.transport->onSend = created;
  SECTION("to the requested node: a success (a retried bind)") {
    f.state->upsertPod(gte::testing::bound("u1", 2, "a", 10'000));
    CHECK(f.bindNow(kRequest).status.ok());
  }
  SECTION("to another node: an error") {
    f.state->replaceNodes({h100("a"), h100("b")});
    f.state->upsertPod(gte::testing::bound("u1", 2, "b", 10'000));
    const auto outcome = f.bindNow(kRequest);
    REQUIRE_FALSE(outcome.status.ok());
    CHECK(outcome.status.error().message.find("already bound to node b") != std::string::npos);
  }
  CHECK(f.transport->requests().empty());
}

TEST_CASE("bind: a retry elsewhere before the watch shows the landed bind keeps its GPUs") {
  // kube-scheduler retries on another node after its bind timeout; the first Binding landed and
  // the watch still shows the pod pending. Moving the reservation would free GPUs the pod holds.
  Fixture f;
  f.state->replaceNodes({h100("a"), h100("b")});
  f.watchSeesPending();
  f.transport->onSend = created;
  REQUIRE(f.bindNow(kRequest).status.ok());
  CHECK(freeGpus(*f.state, "a") == 6);
  const auto elsewhere = f.bindNow(BindRequest{"train", "ml", "u1", "b"});
  REQUIRE_FALSE(elsewhere.status.ok());
  CHECK(elsewhere.status.error().message.find("being bound to node a") != std::string::npos);
  CHECK(freeGpus(*f.state, "a") == 6);
  CHECK(freeGpus(*f.state, "b") == 8);
  CHECK(f.state->reservationCount() == 1);
  CHECK(f.calls() == std::vector<std::string>{"POST " + kPodPath + "/binding"});
}

TEST_CASE("bind: a refused Binding whose pod is bound to the node under its UID is a success") {
  Fixture f;
  f.watchSeesPending();
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "POST") {
      return HttpResponse{409, R"({"message":"pod train is already assigned to node \"a\""})"};
    }
    return ok(podJson("a"));
  };
  REQUIRE(f.bindNow(kRequest).status.ok());
  CHECK(f.calls() == std::vector<std::string>{"POST " + kPodPath + "/binding", "GET " + kPodPath});
  CHECK(f.state->reservationCount() == 1);
}

TEST_CASE("bind: a failed Binding releases the reservation and says why") {
  Fixture f;
  f.watchSeesPending();
  const bool transportFailure = GENERATE(true, false);
  f.transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(""));
    if (transportFailure) return Error{ErrorCode::kUnavailable, "connection reset"};
    return HttpResponse{500, "etcdserver: request timed out"};
  };
  const auto outcome = f.bindNow(kRequest);
  REQUIRE_FALSE(outcome.status.ok());
  CHECK(outcome.status.error().code == ErrorCode::kUnavailable);
  CHECK(freeGpus(*f.state, "a") == 8);
  CHECK(f.state->reservationCount() == 0);
}

TEST_CASE("bind: a pod re-created under the same name is refused by the UID precondition") {
  Fixture f;
  // The scheduler decided for u1; the pod now named train is u2. The Binding carries u1, and the
  // API server answers as it does for a failed precondition.
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson("", "u2"));
    return HttpResponse{409, R"({"kind":"Status","reason":"Conflict","message":"Operation )"
                             R"(cannot be fulfilled on pods/binding \"train\": Precondition )"
                             R"(failed: UID in precondition: u1, UID in object meta: u2"})"};
  };
  const auto outcome = f.bindNow(kRequest);
  REQUIRE_FALSE(outcome.status.ok());
  CHECK(outcome.status.error().code == ErrorCode::kFailedPrecondition);
  CHECK(outcome.status.error().message.find("HTTP 409") != std::string::npos);
  CHECK(outcome.status.error().message.find("Precondition failed") != std::string::npos);
  CHECK(f.transport->requests()[1].body.find(R"("uid":"u1")") != std::string::npos);
  CHECK(f.state->reservationCount() == 0);
  CHECK(freeGpus(*f.state, "a") == 8);
}

TEST_CASE("bind: refused before any request, with filter's reason, when the pod no longer fits") {
  Fixture f;
  f.state->replaceNodes({h100("a", 1000, "11111100")});  // two GPUs free
  f.watchSeesPending("u1", 4);
  f.transport->onSend = created;
  const auto outcome = f.bindNow(kRequest);
  REQUIRE_FALSE(outcome.status.ok());
  CHECK(outcome.status.error().code == ErrorCode::kFailedPrecondition);
  // Word for word the fit check filter runs on the node now.
  const auto snapshot = f.state->snapshot();
  const auto demand = gte::parsePodDemand(gpuPod("u1", 4), *snapshot->policy);
  REQUIRE(demand.ok());
  const gte::FitOutcome fit = gte::checkFit(*demand, *snapshot->find("a"), *snapshot->policy);
  CHECK(fit.reason == gte::FitReason::kInsufficientFreeGpus);
  CHECK(outcome.status.error().message == gte::fitReasonText(fit, *demand));
  CHECK(f.transport->requests().empty());
  CHECK(f.state->reservationCount() == 0);
}

TEST_CASE("bind: at most --bind-concurrency Bindings are in flight; the rest wait their turn") {
  Fixture f(2);
  f.transport->onSend = created;
  f.transport->holdAsync = [](const RecordedRequest& r) { return r.method == "POST"; };
  std::vector<std::optional<BindOutcome>> outcomes(3);
  for (int i = 0; i < 3; ++i) {
    const std::string name = gte::testing::numbered("train", i);
    const std::string uid = gte::testing::numbered("u", i);
    f.watchSeesPending(uid, 1, name);
    f.binder->bind(BindRequest{name, "ml", uid, "a"}, f.caller(),
                   [&outcomes, i](BindOutcome o) { outcomes[i] = std::move(o); });
  }
  // All three reserved at once, in arrival order; two Bindings sent, one waiting.
  CHECK(f.state->reservationCount() == 3);
  CHECK(f.transport->heldCount() == 2);
  CHECK(f.binder->inFlight() == 2);
  CHECK(f.binder->waiting() == 1);
  f.transport->answerHeld();
  REQUIRE(outcomes[0].has_value());
  CHECK(outcomes[0]->status.ok());
  CHECK(f.transport->heldCount() == 2);  // the third went out as the first came back
  CHECK(f.binder->waiting() == 0);
  f.transport->answerHeld();
  f.transport->answerHeld();
  CHECK(outcomes[1]->status.ok());
  CHECK(outcomes[2]->status.ok());
  CHECK(f.binder->inFlight() == 0);
  CHECK(f.calls().size() == 3);
}

TEST_CASE("bind: a bind kube-scheduler gave up on is not sent and its GPUs are released") {
  Fixture f(1);
  f.transport->onSend = created;
  f.transport->holdAsync = [](const RecordedRequest& r) { return r.method == "POST"; };
  f.watchSeesPending("u0", 1, "first");
  f.watchSeesPending("u1", 2, "train");
  std::optional<BindOutcome> first;
  std::optional<BindOutcome> second;
  f.binder->bind(BindRequest{"first", "ml", "u0", "a"}, f.caller(),
                 [&first](BindOutcome o) { first = std::move(o); });
  auto gone = std::make_shared<std::atomic<bool>>(false);
  BindCaller caller = f.caller();
  const bool hangUp = GENERATE(true, false);
  if (hangUp) caller.gone = gone;
  f.binder->bind(kRequest, caller, [&second](BindOutcome o) { second = std::move(o); });
  CHECK(f.state->reservationCount() == 2);  // reserved while it waits for the slot
  CHECK(freeGpus(*f.state, "a") == 5);

  // While the first Binding is in flight, the second's caller hangs up, or its deadline passes.
  if (hangUp) {
    gone->store(true);
  } else {
    f.clock.now += milliseconds(2501);
  }
  f.transport->answerHeld();
  REQUIRE(first.has_value());
  CHECK(first->status.ok());
  REQUIRE(second.has_value());
  REQUIRE_FALSE(second->status.ok());
  CHECK(second->abandoned == (hangUp ? BindAbandon::kCallerGone : BindAbandon::kDeadline));
  CHECK(second->status.error().message.find("abandoned before it was sent") != std::string::npos);
  CHECK(f.calls() == std::vector<std::string>{"POST /api/v1/namespaces/ml/pods/first/binding"});
  CHECK(f.state->reservationCount() == 1);  // only the first's
  CHECK(freeGpus(*f.state, "a") == 7);
  CHECK(f.binder->inFlight() == 0);
}

TEST_CASE("bind: binds waiting for a slot at shutdown are answered and released") {
  Fixture f(1);
  f.transport->onSend = created;
  f.transport->holdAsync = [](const RecordedRequest& r) { return r.method == "POST"; };
  f.watchSeesPending("u0", 1, "first");
  f.watchSeesPending();
  std::optional<BindOutcome> waiting;
  f.binder->bind(BindRequest{"first", "ml", "u0", "a"}, f.caller(), [](BindOutcome) {});
  f.binder->bind(kRequest, f.caller(), [&waiting](BindOutcome o) { waiting = std::move(o); });
  f.binder->stop();
  REQUIRE(waiting.has_value());
  CHECK_FALSE(waiting->status.ok());
  CHECK(f.state->reservationCount() == 1);
  f.transport->answerHeld();
}

// A path traversal as a namespace, spelled so the repository's reference guard does not read it as
// a path of the repository.
const std::string kTraversal = std::string(2, '.') + "/" + std::string(2, '.') + "/nodes";

TEST_CASE("bind: a namespace or name that is not a Kubernetes object name never reaches the API") {
  Fixture f;
  const auto bad = GENERATE(
      BindRequest{"train", kTraversal, "u1", "a"}, BindRequest{"train/binding", "ml", "u1", "a"},
      BindRequest{"train?dryRun=All", "ml", "u1", "a"}, BindRequest{"Train", "ml", "u1", "a"},
      BindRequest{"", "ml", "u1", "a"}, BindRequest{"train", std::string(64, 'a'), "u1", "a"});
  CAPTURE(bad.podName, bad.podNamespace);
  const auto outcome = f.bindNow(bad);
  REQUIRE_FALSE(outcome.status.ok());
  CHECK(outcome.status.error().code == ErrorCode::kInvalidArgument);
  CHECK(f.transport->requests().empty());
}

TEST_CASE("bind: dotted pod names (DNS-1123 subdomains) are accepted") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson("a", "u1", 2, "train.v2-0"));
    return created(r);
  };
  CHECK(f.bindNow(BindRequest{"train.v2-0", "ml", "u1", "a"}).status.ok());
  CHECK(f.calls().front() == "GET /api/v1/namespaces/ml/pods/train.v2-0");
}

TEST_CASE("bind: a pod read from the API server bound under another UID is refused unsent") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson("a", "u2"));
    return created(r);
  };
  const auto outcome = f.bindNow(kRequest);
  REQUIRE_FALSE(outcome.status.ok());
  CHECK(outcome.status.error().message.find("UID u2") != std::string::npos);
  CHECK(f.calls() == std::vector<std::string>{"GET " + kPodPath});
  CHECK(f.state->reservationCount() == 0);
}
