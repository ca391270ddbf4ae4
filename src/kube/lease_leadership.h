#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, in one of two roles:
//
// - kHold: this process competes for the Lease itself, as client-go's leaderelection does. Every
//   retryPeriod it reads the Lease; it creates it when there is none, takes it over when the
//   holder is empty (released) or has not renewed it for the Lease's duration as timed on this
//   process's own clock since the record last changed, and renews it while it holds it. Every write
//   carries the resourceVersion it read, so two candidates can never both win (the API server
//   answers the loser 409). stop() releases a held Lease (holder "", duration 1 s), so a standby
//   takes over at its next read instead of waiting out the duration.
// - kFollow: this process never writes; it leads while another process of its own (the
//   kube-scheduler beside it in the same pod) holds the Lease: the holder is `identity`, or
//   `identity` + "_" + anything (kube-scheduler writes hostname_UUID, and a pod's hostname is its
//   name).
//
// Either way leadership is a fence in time, not a flag: holds(now) is true only until
// renewDeadline after the last moment the holder is known to have renewed. In kHold that is when
// the last successful renew was sent; in kFollow, when the read before the one that showed the
// latest renew was sent (the renew happened after that read, so no later). A successor can take
// the Lease only once it has seen the record unchanged for the Lease's duration, which starts no
// earlier than that renew: with renewDeadline < duration, this process stops acting at least
// (duration - renewDeadline) before anyone else can start, even when every read and write of its
// own fails. Clocks are never compared across machines; only their rates are assumed equal.
//
// A listener hears each change: leading with a new term number, or not leading. Terms number this
// process's periods of leadership (1, 2, ...); in kFollow a new holder identity or transition count
// starts a new term too (the scheduler beside it restarted and won again).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "kube/api_transport.h"
#include "kube/lease.h"

namespace gte::kube {

enum class LeaseRole { kHold, kFollow };

struct LeaseLeadershipOptions {
  LeaseRole role = LeaseRole::kHold;
  std::string ns;
  std::string name;
  // kHold: the holderIdentity written (the pod's name). kFollow: whose holding counts as ours.
  std::string identity;
  // kHold: written into the Lease; a candidate takes over a holder silent this long.
  std::chrono::milliseconds leaseDuration{10'000};
  // Acting stops this long after the last known renew. Must be under the Lease's duration (in
  // kFollow, the duration the followed holder writes, the chart's 10 s; a follower refuses to
  // lead while that is not above this).
  std::chrono::milliseconds renewDeadline{7'000};
  // Time between reads (a standby adds up to a fifth at random, so candidates spread out).
  std::chrono::milliseconds retryPeriod{1'000};
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
  std::function<std::chrono::system_clock::time_point()> wallNow = [] {
    return std::chrono::system_clock::now();
  };
};

// What an operator (and the metrics) see of the election.
struct LeadershipStatus {
  bool leading = false;
  std::uint64_t term = 0;            // the current or last term; 0: never led
  std::uint64_t startedLeading = 0;  // terms begun since start-up
  std::string holder;                // as last read; empty: none or unknown
  // When this process last saw the Lease's record change (any holder's renew, or its own): the
  // age of that is how long the holder has been silent. nullopt: never read.
  std::optional<std::chrono::steady_clock::time_point> lastChange;
  std::string lastError;  // the last failed read or write, for logs
};

class LeaseLeadership {
 public:
  using Listener = std::function<void(bool leading, std::uint64_t term)>;

  LeaseLeadership(std::shared_ptr<ApiTransport> transport, LeaseLeadershipOptions options,
                  Listener listener);
  ~LeaseLeadership();  // stop()
  LeaseLeadership(const LeaseLeadership&) = delete;
  LeaseLeadership& operator=(const LeaseLeadership&) = delete;

  // Ticks on a thread of its own: at once, then every retryPeriod.
  void start();
  // Stops the thread; in kHold releases a held Lease first. The listener hears "not leading".
  void stop();
  // One round: read the Lease and, in kHold, create, take over or renew it. Blocks on the API
  // server. The thread calls it; tests call it directly with their own clock.
  void tick();
  // Makes the thread tick now rather than at the end of its period (a caller saw a sign that
  // leadership may have changed).
  void nudge();

  // The fence: leading, and `now` before renewDeadline past the last known renew.
  bool holds(std::chrono::steady_clock::time_point now) const;
  bool holds() const { return holds(options_.now()); }
  LeadershipStatus status() const;
  const LeaseLeadershipOptions& options() const { return options_; }
  // "NAMESPACE/NAME", for logs and errors.
  std::string leaseName() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  void tickHold(TimePoint started);
  void tickFollow(TimePoint started);
  // Reads the Lease: the lease, nullopt when there is none (404), or an error.
  Result<std::optional<Lease>> read();
  // PUT (update) or POST (create) of `lease`; the Lease as written, nullopt on 409, or an error.
  Result<std::optional<Lease>> write(const Lease& lease, bool create);
  // Notes a read record: a changed spec restarts the silence timer.
  void observe(const Lease& lease, TimePoint readStarted);
  void lead(TimePoint validUntil, bool newTerm);
  void loseLeadership(const std::string& why);
  void fail(const std::string& what, const Error& error);
  // kFollow: the followed Lease makes the fence unsafe; leads nothing, logs `why` once.
  void refuseFollowing(const std::string& why);
  void release();
  bool followedHolder(const std::string& holder) const;
  void run();

  std::shared_ptr<ApiTransport> transport_;
  const LeaseLeadershipOptions options_;
  Listener listener_;
  Mutex tickMutex_;  // one tick at a time (the thread, stop(), a test)

  mutable Mutex mutex_;  // guards everything below but the thread's members
  bool leading_ GTE_GUARDED_BY(mutex_) = false;
  TimePoint validUntil_ GTE_GUARDED_BY(mutex_){};
  std::uint64_t term_ GTE_GUARDED_BY(mutex_) = 0;
  std::uint64_t startedLeading_ GTE_GUARDED_BY(mutex_) = 0;
  std::optional<Lease> last_ GTE_GUARDED_BY(mutex_);  // the Lease as last read or written
  std::optional<TimePoint> lastChange_ GTE_GUARDED_BY(mutex_);
  // kFollow: when the last successful read was sent
  std::optional<TimePoint> lastReadStarted_ GTE_GUARDED_BY(mutex_);
  // kFollow: the latest renew happened after this
  std::optional<TimePoint> renewedAfter_ GTE_GUARDED_BY(mutex_);
  std::string followedTerm_ GTE_GUARDED_BY(mutex_);  // kFollow: holder and transitions of this term
  std::string lastError_ GTE_GUARDED_BY(mutex_);

  Mutex wakeMutex_;
  std::condition_variable_any wake_;
  bool stopping_ GTE_GUARDED_BY(wakeMutex_) = false;
  bool nudged_ GTE_GUARDED_BY(wakeMutex_) = false;
  std::mt19937_64 random_{std::random_device{}()};
  std::thread thread_;
};

}  // namespace gte::kube
