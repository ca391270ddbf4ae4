#include "service/group_preemption_memory.h"

#include <iterator>
#include <utility>

namespace gte {

GroupPreemptionMemory::GroupPreemptionMemory(std::function<Clock::time_point()> now)
    : now_(std::move(now)) {}

GroupPreemptionMemory::Clock::time_point GroupPreemptionMemory::now() const {
  return now_ ? now_() : Clock::now();
}

void GroupPreemptionMemory::remember(std::string_view group, std::string_view member,
                                     std::string_view node) {
  const Clock::time_point at = now();
  MutexLock lock(mutex_);
  forgetOlderLocked(at);
  auto g = groups_.find(group);
  if (g == groups_.end()) g = groups_.emplace(std::string(group), Members{}).first;
  g->second.insert_or_assign(std::string(member), Entry{std::string(node), at});
}

std::vector<AnsweredMember> GroupPreemptionMemory::recall(std::string_view group) const {
  const Clock::time_point at = now();
  std::vector<AnsweredMember> out;
  MutexLock lock(mutex_);
  const auto g = groups_.find(group);
  if (g == groups_.end()) return out;
  for (const auto& [uid, entry] : g->second) {
    if (at - entry.at <= kTtl) out.push_back(AnsweredMember{uid, entry.node});
  }
  return out;
}

std::size_t GroupPreemptionMemory::size() const {
  MutexLock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [group, members] : groups_)
    n += members.size();
  return n;
}

// Entries go only here, on a new answer: without answers the memory holds what the last ones
// left, at most a few entries per group that preempted within kTtl.
void GroupPreemptionMemory::forgetOlderLocked(Clock::time_point at) {
  for (auto g = groups_.begin(); g != groups_.end();) {
    Members& members = g->second;
    for (auto m = members.begin(); m != members.end();) {
      m = at - m->second.at > kTtl ? members.erase(m) : std::next(m);
    }
    g = members.empty() ? groups_.erase(g) : std::next(g);
  }
}

}  // namespace gte
