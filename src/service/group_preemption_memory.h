#pragma once
// The group members whose preempt this extender answered lately, each with a node its answer
// kept (docs/groups.md#preemption). After the answer kube-scheduler nominates the member for one
// of those nodes and evicts its victims; the cluster cache learns of the nomination through the
// watch, a moment later. A next member's preempt within that moment would plan its group afresh,
// and could free a second domain: it reads this memory instead, and counts such a member as
// nominated where its answer pointed (service/group_preemption.h). An entry lasts `kTtl`, enough
// to bridge a slow status write; the nomination, once seen, takes over from it.
//
// Thread-safe: preempt answers come on the decision threads. One mutex guards the entries, held
// for a map operation; never while calling out.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "service/group_preemption.h"

namespace gte {

class GroupPreemptionMemory {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kTtl{30};

  // `now`: the clock (empty: steady_clock::now).
  explicit GroupPreemptionMemory(std::function<Clock::time_point()> now = {});

  // The extender answered the preempt of `member` of `group` keeping `node` (among others):
  // replaces what it held for that member. Forgets entries older than kTtl.
  void remember(std::string_view group, std::string_view member, std::string_view node);
  // The members of `group` answered within kTtl, by UID.
  std::vector<AnsweredMember> recall(std::string_view group) const;
  std::size_t size() const;

 private:
  struct Entry {
    std::string node;
    Clock::time_point at;
  };
  using Members = std::map<std::string, Entry, std::less<>>;  // by member UID

  Clock::time_point now() const;
  void forgetOlderLocked(Clock::time_point at) GTE_REQUIRES(mutex_);

  std::function<Clock::time_point()> now_;
  mutable Mutex mutex_;
  std::map<std::string, Members, std::less<>> groups_ GTE_GUARDED_BY(mutex_);
};

}  // namespace gte
