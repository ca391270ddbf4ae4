#include "cluster/apiserver/leader_gate.h"

#include <algorithm>

#include "log/logger.h"

namespace gte::cluster {

const char* leaderRoleName(LeaderGate::Role role) noexcept {
  switch (role) {
    case LeaderGate::Role::kStandby:
      return "standby";
    case LeaderGate::Role::kTakingOver:
      return "taking-over";
    case LeaderGate::Role::kActive:
      return "active";
  }
  return "standby";
}

LeaderGate::LeaderGate(Options options) : options_(std::move(options)) {}

Error LeaderGate::standbyError() const {
  return Error{ErrorCode::kUnavailable,
               "this extender replica is a standby: it does not hold lease " + options_.lease +
                   " and sends no Binding (kube-scheduler retries the pod)"};
}

void LeaderGate::leadership(bool leading, std::uint64_t term) {
  std::vector<Waiter> refused;
  {
    MutexLock lock(mutex_);
    if (!leading) {
      role_ = Role::kStandby;
      if (!options_.waitWhileStandby) refused.swap(waiting_);
    } else {
      role_ = Role::kTakingOver;
      term_ = term;
      takeoverStarted_ = options_.now();
      // Under the lock: a list completing on the watch thread cannot slip between the ticket
      // and its record.
      ticket_ = options_.relist ? options_.relist() : listedThrough_;
      log::info("takeover: listing pods afresh before binding",
                {{"term", std::to_string(term)}, {"lease", options_.lease}});
    }
  }
  for (auto& w : refused)
    w.then(standbyError());
  if (leading) podsListed(0);  // the ticket may be covered already (no relist wired: tests)
}

void LeaderGate::podsListed(std::uint64_t covered) {
  std::vector<Waiter> ready;
  std::chrono::milliseconds took{0};
  {
    MutexLock lock(mutex_);
    listedThrough_ = std::max(listedThrough_, covered);
    if (role_ != Role::kTakingOver || listedThrough_ < ticket_) return;
    role_ = Role::kActive;
    took = std::chrono::duration_cast<std::chrono::milliseconds>(options_.now() - takeoverStarted_);
    lastTakeover_ = took;
    ready.swap(waiting_);
    log::info("takeover: active", {{"term", std::to_string(term_)},
                                   {"takeover_ms", std::to_string(took.count())},
                                   {"binds_waiting", std::to_string(ready.size())}});
  }
  if (options_.activated) options_.activated(took);
  for (auto& w : ready)
    w.then(Ok{});
}

void LeaderGate::whenActive(Clock::time_point deadline, Then then) {
  bool nudge = false;
  {
    UniqueLock lock(mutex_);
    if (stopped_) {
      lock.unlock();
      return then(Error{ErrorCode::kUnavailable, "the extender is shutting down"});
    }
    if (role_ == Role::kActive) {
      lock.unlock();
      return then(Ok{});
    }
    if (role_ == Role::kStandby && !options_.waitWhileStandby) {
      lock.unlock();
      return then(standbyError());
    }
    nudge = role_ == Role::kStandby;
    waiting_.push_back(Waiter{deadline, std::move(then)});
  }
  if (nudge && options_.nudge) options_.nudge();
}

Status LeaderGate::mayBind(Clock::time_point now) const {
  {
    MutexLock lock(mutex_);
    if (role_ != Role::kActive) return standbyError();
  }
  if (options_.holds && !options_.holds(now)) {
    return Error{ErrorCode::kUnavailable,
                 "this extender replica can no longer prove it holds lease " + options_.lease +
                     " (no renew within the renew deadline): Binding not sent (kube-scheduler "
                     "retries the pod)"};
  }
  return Ok{};
}

std::size_t LeaderGate::expire(Clock::time_point now) {
  std::vector<Waiter> late;
  {
    MutexLock lock(mutex_);
    std::erase_if(waiting_, [&](Waiter& w) {
      if (w.deadline > now) return false;
      late.push_back(std::move(w));
      return true;
    });
  }
  for (auto& w : late) {
    w.then(Error{ErrorCode::kUnavailable,
                 "this extender replica did not become active within the bind deadline (lease " +
                     options_.lease + "): Binding not sent (kube-scheduler retries the pod)"});
  }
  return late.size();
}

void LeaderGate::stop() {
  std::vector<Waiter> all;
  {
    MutexLock lock(mutex_);
    stopped_ = true;
    all.swap(waiting_);
  }
  for (auto& w : all)
    w.then(Error{ErrorCode::kUnavailable, "the extender is shutting down"});
}

LeaderGate::Role LeaderGate::role() const {
  MutexLock lock(mutex_);
  return role_;
}

bool LeaderGate::redirectsCallers() const {
  MutexLock lock(mutex_);
  return !options_.waitWhileStandby && role_ != Role::kActive;
}

std::optional<std::chrono::milliseconds> LeaderGate::lastTakeover() const {
  MutexLock lock(mutex_);
  return lastTakeover_;
}

}  // namespace gte::cluster
