// The memory of answered group preemptions (service/group_preemption_memory.h): what a member's
// answer kept, recalled per group until the TTL passes.
#include "service/group_preemption_memory.h"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace {

using gte::AnsweredMember;
using gte::GroupPreemptionMemory;

struct FakeClock {
  GroupPreemptionMemory::Clock::time_point at{};
  void advance(std::chrono::seconds by) { at += by; }
};

std::vector<std::string> uids(const std::vector<AnsweredMember>& members) {
  std::vector<std::string> out;
  for (const AnsweredMember& m : members)
    out.push_back(m.uid + "@" + m.node);
  return out;
}

}  // namespace

TEST_CASE("the memory recalls a group's answered members, each with its latest node") {
  FakeClock clock;
  GroupPreemptionMemory memory([&clock] { return clock.at; });
  memory.remember("ns/a/job", "m0", "y0");
  memory.remember("ns/a/job", "m1", "y1");
  memory.remember("ns/a/other", "o0", "x0");
  memory.remember("ns/a/job", "m0", "y2");  // m0 asked again: the new answer replaces the old
  CHECK(uids(memory.recall("ns/a/job")) == std::vector<std::string>{"m0@y2", "m1@y1"});
  CHECK(uids(memory.recall("ns/a/other")) == std::vector<std::string>{"o0@x0"});
  CHECK(memory.recall("ns/a/none").empty());
}

TEST_CASE("an answer older than the TTL is neither recalled nor kept") {
  FakeClock clock;
  GroupPreemptionMemory memory([&clock] { return clock.at; });
  memory.remember("ns/a/job", "m0", "y0");
  clock.advance(GroupPreemptionMemory::kTtl);
  CHECK(uids(memory.recall("ns/a/job")) == std::vector<std::string>{"m0@y0"});  // at the TTL
  clock.advance(std::chrono::seconds(1));
  CHECK(memory.recall("ns/a/job").empty());
  CHECK(memory.size() == 1);  // forgotten on the next answer
  memory.remember("ns/a/other", "o0", "x0");
  CHECK(memory.size() == 1);
  CHECK(uids(memory.recall("ns/a/other")) == std::vector<std::string>{"o0@x0"});
}
