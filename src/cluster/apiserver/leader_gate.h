#pragma once
// Whether this replica may bind now, and the takeover that comes first when it starts to lead.
//
// Roles: kStandby (warm: its cache follows the watches, it answers filter and prioritize, it
// sends no Binding), kTakingOver (it leads, and the pods are being listed afresh), kActive (it
// leads and that list is in). A takeover asks the pod watch for a fresh, consistent list
// (kube::Reflector::relist) and waits for a list that started after the leadership did: that list
// goes through ClusterState::replacePods, the path every full list takes, so everything the old
// leader bound up to the moment of the takeover is counted, from each pod's `gpus` annotation,
// before this replica reserves a GPU.
//
// Binds meet the gate twice: before their reservation (whenActive: a bind waits while a takeover
// is under way, and in kFollow also while the lease beside it has not been seen to change hands
// yet) and just before their Binding is sent (mayBind: the lease's fence, so a replica that can no
// longer prove it holds the lease sends nothing).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"

namespace gte::cluster {

class LeaderGate {
 public:
  enum class Role : std::uint8_t { kStandby, kTakingOver, kActive };
  using Clock = std::chrono::steady_clock;
  using Then = std::function<void(Status)>;

  struct Options {
    // A bind asked of a standby waits for leadership (true: the extender follows the lease of the
    // kube-scheduler beside it, which calls it only once it leads, so leadership is on its way),
    // or is refused at once (false: the extender holds its own lease, and a caller reaching a
    // standby was routed by a Service that has not caught up).
    bool waitWhileStandby = false;
    // The lease's fence (kube::LeaseLeadership::holds).
    std::function<bool(Clock::time_point)> holds;
    // Asks the pod watch for a fresh list; returns the ticket that list will cover.
    std::function<std::uint64_t()> relist;
    // A bind arrived while standby: look at the lease now.
    std::function<void()> nudge;
    // The replica became active (after its takeover list), with the takeover's duration. Runs on
    // the thread that delivered the list; must not block.
    std::function<void(std::chrono::milliseconds)> activated;
    std::function<Clock::time_point()> now = [] { return Clock::now(); };
    std::string lease;  // "NAMESPACE/NAME", for messages
  };

  explicit LeaderGate(Options options);
  LeaderGate(const LeaderGate&) = delete;
  LeaderGate& operator=(const LeaderGate&) = delete;

  // The lease's listener: leading with a new term starts a takeover; not leading makes this
  // replica a standby (in kHold, binds waiting are refused).
  void leadership(bool leading, std::uint64_t term);
  // The pod watch delivered a full list covering relist tickets up to `covered`.
  void podsListed(std::uint64_t covered);
  // Runs `then(Ok)` once this replica is active (at once when it is), or `then(error)`: a standby
  // that does not wait, `deadline` passed (expire()), or the gate stopped. `then` runs on the
  // calling thread or on the one that ends the wait; it must not block.
  void whenActive(Clock::time_point deadline, Then then);
  // Just before a Binding is sent: active, and the lease's fence still holds.
  Status mayBind(Clock::time_point now) const;
  // Answers waiting binds past their deadline; returns how many.
  std::size_t expire(Clock::time_point now);
  // Answers every waiting bind with an error; later ones are refused at once.
  void stop();

  Role role() const;
  // A standby whose callers should reconnect elsewhere: kHold mode and not active.
  bool redirectsCallers() const;
  // How long the last takeover took (leadership to the list being in); nullopt before the first.
  std::optional<std::chrono::milliseconds> lastTakeover() const;

 private:
  struct Waiter {
    Clock::time_point deadline;
    Then then;
  };
  Error standbyError() const;

  const Options options_;
  mutable Mutex mutex_;
  Role role_ GTE_GUARDED_BY(mutex_) = Role::kStandby;
  std::uint64_t term_ GTE_GUARDED_BY(mutex_) = 0;
  std::uint64_t ticket_ GTE_GUARDED_BY(mutex_) = 0;  // the list the takeover waits for
  std::uint64_t listedThrough_ GTE_GUARDED_BY(mutex_) = 0;
  Clock::time_point takeoverStarted_ GTE_GUARDED_BY(mutex_){};
  std::optional<std::chrono::milliseconds> lastTakeover_ GTE_GUARDED_BY(mutex_);
  std::vector<Waiter> waiting_ GTE_GUARDED_BY(mutex_);
  bool stopped_ GTE_GUARDED_BY(mutex_) = false;
};

const char* leaderRoleName(LeaderGate::Role role) noexcept;

}  // namespace gte::cluster
