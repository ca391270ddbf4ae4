// Leader election on a Lease, tick by tick, against a scripted API server that keeps one Lease
// (GET, POST refused when it exists, PUT refused unless the resourceVersion matches) and a clock
// the test moves. Timings as the chart's defaults for the standalone layout: lease 10 s, renew
// deadline 7 s, reads every 1 s.
#include "kube/lease_leadership.h"

#include <catch2/catch_test_macros.hpp>

#include <optional>
#include <vector>

#include "kube/fake_transport.h"

using namespace gte::kube;
using gte::Error;
using gte::ErrorCode;
using gte::Result;
using gte::testing::FakeTransport;
using gte::testing::RecordedRequest;
using std::chrono::milliseconds;
using std::chrono::seconds;
using TimePoint = std::chrono::steady_clock::time_point;

namespace {

constexpr const char* kPath = "/apis/coordination.k8s.io/v1/namespaces/gpu-system/leases/gte";
constexpr const char* kCollection = "/apis/coordination.k8s.io/v1/namespaces/gpu-system/leases";

// One Lease as the API server keeps it.
class LeaseServer {
 public:
  std::optional<Lease> lease;
  int version = 0;
  bool down = false;                // every request fails as an unreachable server
  std::vector<std::string> writes;  // "PUT <holder>", "POST <holder>"

  Result<HttpResponse> handle(const RecordedRequest& r) {
    if (down) return Error{ErrorCode::kUnavailable, "connection refused"};
    if (r.method == "GET" && r.path == kPath) {
      if (!lease) return HttpResponse{404, R"({"kind":"Status","code":404})"};
      return HttpResponse{200, leaseJson(*lease)};
    }
    if (r.method != "PUT" && r.method != "POST") return HttpResponse{405, ""};
    auto sent = parseLeaseJson(r.body);
    REQUIRE(sent.ok());
    if (r.method == "POST") {
      REQUIRE(r.path == kCollection);
      if (lease) return HttpResponse{409, R"({"kind":"Status","reason":"AlreadyExists"})"};
    } else {
      REQUIRE(r.path == kPath);
      if (!lease || sent->resourceVersion != lease->resourceVersion) {
        return HttpResponse{409, R"({"kind":"Status","reason":"Conflict"})"};
      }
    }
    writes.push_back(r.method + " " + sent->spec.holderIdentity);
    lease = *sent;
    lease->resourceVersion = std::to_string(++version);
    return HttpResponse{r.method == "POST" ? 201 : 200, leaseJson(*lease)};
  }

  // Another process (a rival, or the kube-scheduler a follower follows) writes the Lease.
  void writeAs(const std::string& holder, std::int64_t transitions, const std::string& renewTime,
               std::int64_t durationSeconds = 15) {
    if (!lease) {
      lease = Lease{};
      lease->name = "gte";
      lease->ns = "gpu-system";
    }
    lease->spec.holderIdentity = holder;
    lease->spec.leaseDurationSeconds = durationSeconds;
    lease->spec.leaseTransitions = transitions;
    lease->spec.renewTime = renewTime;
    lease->resourceVersion = std::to_string(++version);
  }
};

struct Transition {
  bool leading;
  std::uint64_t term;
  bool operator==(const Transition&) const = default;
};

// One process's election: its options, the transitions its listener heard, and the clock.
struct Candidate {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::vector<Transition> heard;
  std::unique_ptr<LeaseLeadership> election;
};

struct World {
  LeaseServer server;
  TimePoint now{seconds(1000)};

  Candidate candidate(LeaseRole role, const std::string& identity) {
    Candidate c;
    c.transport->onSend = [this](const RecordedRequest& r) { return server.handle(r); };
    LeaseLeadershipOptions o;
    o.role = role;
    o.ns = "gpu-system";
    o.name = "gte";
    o.identity = identity;
    o.leaseDuration = seconds(10);
    o.renewDeadline = seconds(7);
    o.retryPeriod = seconds(1);
    o.now = [this] { return now; };
    // The wall clock moves with the steady one: t=1000 is 2026-12-03T10:04:01Z.
    o.wallNow = [this] {
      return std::chrono::system_clock::time_point{seconds(1796292241) +
                                                   (now - TimePoint{seconds(1000)})};
    };
    auto* heard = &c.heard;
    c.election = std::make_unique<LeaseLeadership>(c.transport, o,
                                                   [heard](bool leading, std::uint64_t term) {
                                                     heard->push_back({leading, term});
                                                   });
    return c;
  }
};

std::size_t writesBy(const FakeTransport& t) {
  std::size_t n = 0;
  for (const auto& r : t.requests())
    n += r.method == "GET" ? 0 : 1;
  return n;
}

}  // namespace

TEST_CASE("holding: the first candidate creates the Lease and leads; renews keep the fence ahead") {
  World w;
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  a.election->tick();
  REQUIRE(w.server.lease.has_value());
  CHECK(w.server.lease->spec.holderIdentity == "a");
  CHECK(w.server.lease->spec.leaseDurationSeconds == 10);
  CHECK(w.server.lease->spec.acquireTime == "2026-12-03T10:04:01.000000Z");
  CHECK(w.server.writes == std::vector<std::string>{"POST a"});
  CHECK(a.heard == std::vector<Transition>{{true, 1}});
  // Fenced at renew deadline (7 s) after the create was sent.
  CHECK(a.election->holds(w.now + seconds(6)));
  CHECK_FALSE(a.election->holds(w.now + seconds(7)));

  // A renew is one PUT (no read), with the resourceVersion last written, and moves the fence.
  w.now += seconds(1);
  const auto before = a.transport->requests().size();
  a.election->tick();
  const auto after = a.transport->requests();
  REQUIRE(after.size() == before + 1);
  CHECK(after.back().method == "PUT");
  CHECK(w.server.writes.back() == "PUT a");
  CHECK(a.election->holds(w.now + seconds(6)));
  CHECK(a.heard.size() == 1);  // the same term
  CHECK(a.election->status().term == 1);
}

TEST_CASE(
    "holding: a standby takes over only after the Lease's duration of silence, and the "
    "silent leader's fence ends first") {
  World w;
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  Candidate b = w.candidate(LeaseRole::kHold, "b");
  a.election->tick();  // t=1000: a leads
  const TimePoint lastRenew = w.now;
  w.now += seconds(1);
  b.election->tick();  // t=1001: b first sees a's record
  CHECK(b.heard.empty());
  CHECK(b.election->status().holder == "a");
  // a dies: it never renews again. b reads every second.
  std::optional<TimePoint> takeover;
  for (int i = 0; i < 20 && !takeover; ++i) {
    w.now += seconds(1);
    b.election->tick();
    if (!b.heard.empty()) takeover = w.now;
  }
  REQUIRE(takeover.has_value());
  // b's silence timer started when it first saw the record (t=1001): 10 s later, t=1011.
  CHECK(*takeover == TimePoint{seconds(1011)});
  CHECK(b.heard == std::vector<Transition>{{true, 1}});
  CHECK(w.server.lease->spec.holderIdentity == "b");
  CHECK(w.server.lease->spec.leaseTransitions == 1);
  // a would have stopped binding at its last renew + 7 s = t=1007, four seconds before b started.
  CHECK_FALSE(a.election->holds(lastRenew + seconds(7)));
  CHECK(lastRenew + seconds(7) < *takeover);

  // a comes back: its renew is refused (the Lease moved on), it reads b's fresh record and steps
  // down.
  a.election->tick();
  CHECK(a.heard == std::vector<Transition>{{true, 1}, {false, 1}});
  CHECK_FALSE(a.election->holds(w.now));
  CHECK(w.server.lease->spec.holderIdentity == "b");
}

TEST_CASE("holding: a renewed Lease keeps the standby out however long it waits") {
  World w;
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  Candidate b = w.candidate(LeaseRole::kHold, "b");
  a.election->tick();
  for (int i = 0; i < 30; ++i) {
    w.now += seconds(1);
    a.election->tick();
    b.election->tick();
  }
  CHECK(b.heard.empty());
  CHECK(a.heard.size() == 1);
  CHECK(w.server.lease->spec.leaseTransitions == 0);
}

TEST_CASE("holding: a released Lease is taken at the standby's next read") {
  World w;
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  Candidate b = w.candidate(LeaseRole::kHold, "b");
  a.election->tick();
  w.now += seconds(1);
  b.election->tick();
  a.election->stop();  // graceful shutdown: releases
  CHECK(a.heard == std::vector<Transition>{{true, 1}, {false, 1}});
  CHECK(w.server.lease->spec.holderIdentity.empty());
  CHECK(w.server.lease->spec.leaseDurationSeconds == 1);
  w.now += seconds(1);
  b.election->tick();
  CHECK(b.heard == std::vector<Transition>{{true, 1}});
  CHECK(w.server.lease->spec.holderIdentity == "b");
}

TEST_CASE("holding: a leader that cannot reach the API server stops at its renew deadline") {
  World w;
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  a.election->tick();  // t=1000
  w.server.down = true;
  for (int i = 1; i <= 6; ++i) {
    w.now = TimePoint{seconds(1000 + i)};
    a.election->tick();
    CHECK(a.election->holds(w.now));
  }
  CHECK(a.election->status().lastError.find("connection refused") != std::string::npos);
  w.now = TimePoint{seconds(1007)};
  CHECK_FALSE(a.election->holds(w.now));  // the fence, before any tick says so
  a.election->tick();
  CHECK(a.heard == std::vector<Transition>{{true, 1}, {false, 1}});
  // Back online with its own record still there: it renews as a new term (its cache is listed
  // afresh by whoever listens).
  w.server.down = false;
  w.now += seconds(1);
  a.election->tick();
  CHECK(a.heard.back() == Transition{true, 2});
}

TEST_CASE("holding: two candidates taking over the same expired Lease: one wins") {
  World w;
  w.server.writeAs("dead", 4, "2026-12-03T09:00:00.000000Z");
  Candidate a = w.candidate(LeaseRole::kHold, "a");
  Candidate b = w.candidate(LeaseRole::kHold, "b");
  a.election->tick();
  b.election->tick();
  w.now += seconds(16);  // the dead holder's 15 s are over for both
  // b reads the expired record; just before its write lands, a takes the Lease over. b's write
  // carries the resourceVersion it read, and the server refuses it.
  bool raced = false;
  b.transport->onSend = [&](const RecordedRequest& r) {
    if (r.method == "PUT" && !raced) {
      raced = true;
      a.election->tick();
    }
    return w.server.handle(r);
  };
  b.election->tick();
  REQUIRE(raced);
  CHECK(a.heard == std::vector<Transition>{{true, 1}});
  CHECK(b.heard.empty());
  CHECK(w.server.lease->spec.holderIdentity == "a");
  CHECK(w.server.lease->spec.leaseTransitions == 5);
  CHECK(w.server.writes == std::vector<std::string>{"PUT a"});
}

TEST_CASE("following: leads once a renew by its own scheduler is seen, never writes") {
  World w;
  w.server.writeAs("pod-a_1b4e", 0, "r1");
  Candidate f = w.candidate(LeaseRole::kFollow, "pod-a");
  f.election->tick();  // t=1000: the first record read proves no recent renew
  CHECK(f.heard.empty());
  w.now += seconds(1);
  f.election->tick();  // unchanged: still nothing
  CHECK(f.heard.empty());
  w.server.writeAs("pod-a_1b4e", 0, "r2");  // the scheduler renews between two reads
  w.now += seconds(1);
  f.election->tick();  // t=1002
  CHECK(f.heard == std::vector<Transition>{{true, 1}});
  // The renew happened after the read at t=1001: binding stops at t=1001 + 7 s unless another
  // renew is seen.
  CHECK(f.election->holds(TimePoint{seconds(1007)}));
  CHECK_FALSE(f.election->holds(TimePoint{seconds(1008)}));
  for (int i = 3; i <= 8; ++i) {
    w.now = TimePoint{seconds(1000 + i)};
    f.election->tick();
  }
  CHECK_FALSE(f.election->holds(w.now));
  CHECK(f.heard == std::vector<Transition>{{true, 1}, {false, 1}});
  CHECK(writesBy(*f.transport) == 0);
}

TEST_CASE(
    "following: a scheduler lease not longer than the renew deadline is never led (a successor "
    "could start while this process still binds)") {
  struct Case {
    std::int64_t durationSeconds;
    bool leads;
  };
  // The follower's renew deadline is 7 s; the fence ends 7 s after the renew, a successor may
  // start the lease's duration after it.
  const Case cases[] = {
      {10, true},  // 7 < 10: stops 3 s before anyone else may start (the chart's defaults)
      {8, true},   // 7 < 8: 1 s apart
      {7, false},  // 7 = 7: could bind up to the instant a successor starts
      {5, false},  // 7 > 5: could bind for 2 s alongside a successor
  };
  for (const Case& c : cases) {
    World w;
    w.server.writeAs("pod-a_1b4e", 0, "r1", c.durationSeconds);
    Candidate f = w.candidate(LeaseRole::kFollow, "pod-a");
    f.election->tick();
    w.server.writeAs("pod-a_1b4e", 0, "r2", c.durationSeconds);
    w.now += seconds(1);
    f.election->tick();
    INFO(c.durationSeconds);
    CHECK(f.election->holds(w.now) == c.leads);
    CHECK(f.heard.empty() == !c.leads);
    CHECK(f.election->status().lastError.empty() == c.leads);
  }

  // Leading, then the scheduler's lease is rewritten shorter: binding stops at the next read.
  World w;
  w.server.writeAs("pod-a_1b4e", 0, "r1", 10);
  Candidate f = w.candidate(LeaseRole::kFollow, "pod-a");
  f.election->tick();
  w.server.writeAs("pod-a_1b4e", 0, "r2", 10);
  w.now += seconds(1);
  f.election->tick();
  REQUIRE(f.election->holds(w.now));
  w.server.writeAs("pod-a_1b4e", 0, "r3", 5);
  w.now += seconds(1);
  f.election->tick();
  CHECK_FALSE(f.election->holds(w.now));
  CHECK(f.heard == std::vector<Transition>{{true, 1}, {false, 1}});
}

TEST_CASE(
    "following: only its own scheduler's holding counts; a new scheduler process is a new "
    "term") {
  struct Case {
    const char* holder;
    bool ours;
  };
  const Case cases[] = {
      {"pod-a_1b4e", true},                 // kube-scheduler: hostname_UUID
      {"pod-a", true},                      // exactly the identity
      {"pod-ab_1b4e", false},               // another pod whose name starts the same
      {"pod-a_", false},                    // nothing after the separator
      {"pod-b_1b4e", false},  {"", false},  // released
  };
  for (const Case& c : cases) {
    World w;
    w.server.writeAs(c.holder, 0, "r1");
    Candidate f = w.candidate(LeaseRole::kFollow, "pod-a");
    f.election->tick();
    w.server.writeAs(c.holder, 0, "r2");
    w.now += seconds(1);
    f.election->tick();
    INFO(c.holder);
    CHECK(f.election->holds(w.now) == c.ours);
  }

  World w;
  w.server.writeAs("pod-a_1111", 0, "r1");
  Candidate f = w.candidate(LeaseRole::kFollow, "pod-a");
  f.election->tick();
  w.server.writeAs("pod-a_1111", 0, "r2");
  w.now += seconds(1);
  f.election->tick();
  CHECK(f.heard == std::vector<Transition>{{true, 1}});
  w.server.writeAs("pod-b_2222", 1, "r3");  // another pod's scheduler takes over
  w.now += seconds(1);
  f.election->tick();
  CHECK(f.heard.back() == Transition{false, 1});
  w.server.writeAs("pod-a_3333", 2, "r4");  // this pod's scheduler, restarted, wins again
  w.now += seconds(1);
  f.election->tick();
  CHECK(f.heard.back() == Transition{true, 2});
  CHECK(f.election->status().startedLeading == 2);
}
