// Pins (group/member_pin.h): a member keeps the held slot its filter recorded; the members not
// pinned yet, sorted by name, take the held slots of their shape not pinned yet, in plan order;
// each member is kept on its own slot's node only.
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
  out.pinnedTo.assign(nodes.size(), std::string());
  return out;
}

// Members named `names`, each with the UID "uid-" + its name.
struct Members {
  explicit Members(std::vector<std::string> given) : names(std::move(given)) {
    for (const std::string& name : names)
      uids.push_back("uid-" + name);
    for (std::size_t i = 0; i < names.size(); ++i)
      list.push_back(gte::PinCandidate{uids[i], names[i]});
  }
  std::vector<std::string> names;
  std::vector<std::string> uids;
  std::vector<gte::PinCandidate> list;
};

std::optional<std::size_t> slotOf(const gte::CommittedGroupPlan& p, std::int64_t gpuCount,
                                  const std::string& name, const Members& waiting) {
  const std::string uid = "uid-" + name;
  return gte::pinnedSlot(p, gpus(gpuCount), gte::PinCandidate{uid, name}, waiting.list);
}

}  // namespace

TEST_CASE("members sorted by name take the held slots in plan order", "[groups]") {
  const auto p = plan({"a", "a", "b"}, {gpus(4), gpus(4), gpus(4)});
  const Members waiting({"w-2", "w-0", "w-1"});
  // Sorted: w-0, w-1, w-2 -> slots 0 (a), 1 (a), 2 (b).
  CHECK(slotOf(p, 4, "w-0", waiting) == std::optional<std::size_t>(0));
  CHECK(slotOf(p, 4, "w-1", waiting) == std::optional<std::size_t>(1));
  CHECK(slotOf(p, 4, "w-2", waiting) == std::optional<std::size_t>(2));
  // The member itself need not be among the waiting names, and counts once if it is.
  CHECK(slotOf(p, 4, "w-2", Members({"w-0", "w-1"})) == std::optional<std::size_t>(2));
  CHECK(slotOf(p, 4, "w-1", Members({"w-1", "w-1", "w-0"})) == std::optional<std::size_t>(1));
}

TEST_CASE("a member binding into its slot leaves the other pins where they were", "[groups]") {
  auto p = plan({"a", "b", "c"}, {gpus(4), gpus(4), gpus(4)});
  // w-1 binds into slot 1 (b): it no longer waits, and slot 1 is no longer held.
  p.claimedBy[1] = "uid-w-1";
  const Members waiting({"w-0", "w-2"});
  // Sorted w-0, w-2 -> held slots 0 (a), 2 (c): the same nodes as before the bind.
  CHECK(slotOf(p, 4, "w-0", waiting) == std::optional<std::size_t>(0));
  CHECK(slotOf(p, 4, "w-2", waiting) == std::optional<std::size_t>(2));
  // A released slot is not held either.
  p.claimedBy[2] = std::string(gte::kReleasedSlot);
  CHECK(slotOf(p, 4, "w-2", waiting) == std::nullopt);
}

TEST_CASE("pins rank members among their own shape only", "[groups]") {
  // Slots: 0 big (8 GPUs, x0), 1 small (4, x1), 2 small (4, x2).
  const auto p = plan({"x0", "x1", "x2"}, {gpus(8), gpus(4), gpus(4)});
  // The small members, sorted: s-a, s-b -> the held small slots 1 and 2; the big one slot 0.
  const Members small({"s-b", "s-a"});
  CHECK(slotOf(p, 4, "s-a", small) == std::optional<std::size_t>(1));
  CHECK(slotOf(p, 4, "s-b", small) == std::optional<std::size_t>(2));
  CHECK(slotOf(p, 8, "a-big", Members({})) == std::optional<std::size_t>(0));
  // A third small member ranks past the two small slots: no slot, decided as any pod.
  CHECK(slotOf(p, 4, "s-c", small) == std::nullopt);
  // A shape the plan has no slot for.
  CHECK(slotOf(p, 2, "t", Members({})) == std::nullopt);
}

// The failure this prevents: members t-0, t-1, t-2 created together; t-2 is filtered first, plans
// the group and is answered with slot 0 while the watch has delivered none of the others. t-1's
// filter comes before the watch delivers t-1 itself: ranking alone puts t-1 (sorted before t-2)
// on slot 0 too, its filter keeps slot 0's node, which t-2 is binding into, and t-1 lands wherever
// kube-scheduler likes (an end-to-end run bound it to a V100 beside two H100 members).
TEST_CASE("a member keeps the slot its filter recorded, and no other member is given it",
          "[groups]") {
  auto p = plan({"b", "a", "a"}, {gpus(4), gpus(4), gpus(4)});
  const Members onlyT2({"t-2"});
  REQUIRE(slotOf(p, 4, "t-2", Members({})) == std::optional<std::size_t>(0));
  p.pinnedTo[0] = "uid-t-2";  // t-2's filter recorded it
  // t-1 sorts before t-2 but does not take its slot: the unpinned slots are 1 and 2.
  CHECK(slotOf(p, 4, "t-1", onlyT2) == std::optional<std::size_t>(1));
  CHECK(slotOf(p, 4, "t-2", Members({"t-0", "t-1"})) == std::optional<std::size_t>(0));
  p.pinnedTo[1] = "uid-t-1";
  // t-0 sorts first of all, and still gets the one slot left.
  CHECK(slotOf(p, 4, "t-0", Members({"t-1", "t-2"})) == std::optional<std::size_t>(2));
  // Once every slot is pinned, a member with no pin has none: decided as any pod.
  p.pinnedTo[2] = "uid-t-0";
  CHECK(slotOf(p, 4, "t-3", Members({"t-0", "t-1", "t-2"})) == std::nullopt);
  // A pinned slot no longer held (released) pins no one: its member ranks again.
  p.claimedBy[1] = std::string(gte::kReleasedSlot);
  CHECK(slotOf(p, 4, "t-1", Members({"t-0", "t-2"})) == std::nullopt);
  p.claimedBy[1].clear();
  p.pinnedTo[1].clear();
  CHECK(slotOf(p, 4, "t-1", Members({"t-0", "t-2"})) == std::optional<std::size_t>(1));
}
