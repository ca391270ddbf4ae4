// Pins (group/member_pin.h): the waiting members of one shape, sorted by name, take the group's
// held slots of that shape in plan order; each member is kept on its own slot's node only.
#include <catch2/catch_test_macros.hpp>

#include <optional>
#include <string>
#include <vector>

#include "group/member_pin.h"

namespace {

gte::PodDemand gpus(std::int64_t n) {
  gte::PodDemand demand;
  demand.gpus = n;
  return demand;
}

// Slots on `nodes` in plan order, slot i planned for member i; `demands[i]` is member i's.
gte::CommittedGroupPlan plan(const std::vector<std::string>& nodes,
                             const std::vector<gte::PodDemand>& demands) {
  gte::CommittedGroupPlan out;
  out.demands = demands;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out.plan.slots.push_back(gte::PlannedSlot{nodes[i], {}, static_cast<std::uint32_t>(i)});
  }
  out.claimedBy.assign(nodes.size(), std::string());
  return out;
}

}  // namespace

TEST_CASE("members sorted by name take the held slots in plan order", "[groups]") {
  const auto p = plan({"a", "a", "b"}, {gpus(4), gpus(4), gpus(4)});
  const std::vector<std::string> waiting{"w-2", "w-0", "w-1"};
  // Sorted: w-0, w-1, w-2 -> slots 0 (a), 1 (a), 2 (b).
  CHECK(gte::pinnedSlot(p, gpus(4), "w-0", waiting) == std::optional<std::size_t>(0));
  CHECK(gte::pinnedSlot(p, gpus(4), "w-1", waiting) == std::optional<std::size_t>(1));
  CHECK(gte::pinnedSlot(p, gpus(4), "w-2", waiting) == std::optional<std::size_t>(2));
  // The member itself need not be among the waiting names, and counts once if it is.
  CHECK(gte::pinnedSlot(p, gpus(4), "w-2", std::vector<std::string>{"w-0", "w-1"}) ==
        std::optional<std::size_t>(2));
  CHECK(gte::pinnedSlot(p, gpus(4), "w-1", std::vector<std::string>{"w-1", "w-1", "w-0"}) ==
        std::optional<std::size_t>(1));
}

TEST_CASE("a member binding into its slot leaves the other pins where they were", "[groups]") {
  auto p = plan({"a", "b", "c"}, {gpus(4), gpus(4), gpus(4)});
  // w-1 binds into slot 1 (b): it no longer waits, and slot 1 is no longer held.
  p.claimedBy[1] = "uid-w-1";
  const std::vector<std::string> waiting{"w-0", "w-2"};
  // Sorted w-0, w-2 -> held slots 0 (a), 2 (c): the same nodes as before the bind.
  CHECK(gte::pinnedSlot(p, gpus(4), "w-0", waiting) == std::optional<std::size_t>(0));
  CHECK(gte::pinnedSlot(p, gpus(4), "w-2", waiting) == std::optional<std::size_t>(2));
  // A released slot is not held either.
  p.claimedBy[2] = std::string(gte::kReleasedSlot);
  CHECK(gte::pinnedSlot(p, gpus(4), "w-2", waiting) == std::nullopt);
}

TEST_CASE("pins rank members among their own shape only", "[groups]") {
  // Slots: 0 big (8 GPUs, x0), 1 small (4, x1), 2 small (4, x2).
  const auto p = plan({"x0", "x1", "x2"}, {gpus(8), gpus(4), gpus(4)});
  // The small members, sorted: s-a, s-b -> the held small slots 1 and 2; the big one slot 0.
  const std::vector<std::string> small{"s-b", "s-a"};
  CHECK(gte::pinnedSlot(p, gpus(4), "s-a", small) == std::optional<std::size_t>(1));
  CHECK(gte::pinnedSlot(p, gpus(4), "s-b", small) == std::optional<std::size_t>(2));
  CHECK(gte::pinnedSlot(p, gpus(8), "a-big", {}) == std::optional<std::size_t>(0));
  // A third small member ranks past the two small slots: no slot, decided as any pod.
  CHECK(gte::pinnedSlot(p, gpus(4), "s-c", small) == std::nullopt);
  // A shape the plan has no slot for.
  CHECK(gte::pinnedSlot(p, gpus(2), "t", {}) == std::nullopt);
}
