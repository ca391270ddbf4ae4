// The pod-group planner, table by table: which domain (innermost level that can hold every member,
// counted in slots of the member's link class; among those, fewest nodes with every GPU free
// needed, then best fit: fewest free GPUs left after placing, then fewest spare slots), the
// required/preferred modes, levels that constrain only the nodes carrying their label, members
// already placed pinning the domain, the order nodes are filled in and the GPU sets each member
// gets.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/predict_allocation.h"
#include "group/group_plan.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;
using testing::FixtureState;

constexpr const char* kClique = "nvidia.com/gpu.clique";
constexpr const char* kBlock = "network.topology.nvidia.com/block";

// A GB200 NVL72 compute tray: 4 GPUs, all pairs NV18 through the NVLink switch trays.
NodeInfo tray(const std::string& name, const std::string& used = "0000") {
  testing::MachineLabels machine{
      4,
      "NVIDIA-GB200",
      "nvsw18",
      testing::pairString(4, [](int, int) { return 'i'; }),
      testing::pairString(4, [](int i, int j) { return i / 2 == j / 2 ? 'N' : 'S'; }),
      "0011",
      'n',
      {}};
  return testing::makeLabelsV1Node(machine, FixtureState().withName(name).withUsed(used));
}

struct Spec {
  NodeInfo node;
  std::string clique;  // "" = no clique label
  std::string block;   // "" = no block label
};

// A cluster as the planner sees it: states, interned domains, facts.
class Cluster {
 public:
  explicit Cluster(std::vector<Spec> specs, Policy policy = defaultPolicy())
      : policy_(std::move(policy)) {
    interner_.setLevels(policy_.groups.levels);
    for (Spec& spec : specs) {
      if (!spec.clique.empty()) spec.node.labels[kClique] = spec.clique;
      if (!spec.block.empty()) spec.node.labels[kBlock] = spec.block;
      states_.push_back(buildNodeState(spec.node, {}, policy_));
      facts_.push_back(nodeGroupFacts(*states_.back(), interner_.idsOf(spec.node.labels), policy_));
      names_.push_back(spec.node.name);
    }
    names = interner_.names();
    for (std::size_t i = 0; i < states_.size(); ++i) {
      nodes.push_back(GroupPlanNode{names_[i], states_[i].get(), &facts_[i]});
    }
  }

  GroupPlan plan(const std::vector<PodDemand>& members,
                 const std::vector<GroupDomainIds>& anchors = {},
                 const std::vector<GroupLevel>* levels = nullptr) const {
    GroupPlanInput in;
    in.group = "train/job";
    in.levels = levels ? *levels : policy_.groups.levels;
    in.domainNames = names.get();
    in.nodes = nodes;
    in.members = members;
    in.anchors = anchors;
    in.explain = true;
    return planGroup(in, policy_);
  }

  GroupDomainIds idsOf(const std::string& node) const {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == node) return facts_[i].domain;
    }
    FAIL("no node " << node);
    return {};
  }
  // The explain text of the clique of `node`, which `plan` passed over for a tighter-ranked one
  // ("" when the plan has no such verdict for it).
  std::string passedOver(const GroupPlan& plan, const std::string& node) const {
    for (const DomainVerdict& verdict : plan.domains) {
      if (verdict.level == 0 && verdict.domain == idsOf(node)[0] &&
          verdict.outcome == DomainVerdict::Outcome::kLessTight) {
        return domainVerdictText(verdict, names.get());
      }
    }
    return "";
  }
  const NodeState& state(const std::string& node) const {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == node) return *states_[i];
    }
    FAIL("no node " << node);
    return *states_[0];
  }

  std::vector<GroupPlanNode> nodes;
  GroupDomainNamesConstSharedPtr names;

 private:
  Policy policy_;
  GroupDomainInterner interner_;
  std::vector<NodeStateConstSharedPtr> states_;
  std::vector<NodeGroupFacts> facts_;
  std::vector<std::string> names_;
};

std::vector<PodDemand> members(int n, std::int64_t gpus,
                               std::optional<LinkClass> minLink = std::nullopt) {
  PodDemand demand;
  demand.gpus = gpus;
  demand.minLink = minLink;
  return std::vector<PodDemand>(static_cast<std::size_t>(n), demand);
}

std::map<std::string, int> perNode(const GroupPlan& plan) {
  std::map<std::string, int> out;
  for (const PlannedSlot& slot : plan.slots)
    ++out[slot.node];
  return out;
}

// "a0", "b2", ...: built by insertion (GCC 12 misreads "a" + std::to_string(i) as an overlapping
// copy under -Wrestrict).
std::string trayName(char clique, int i) {
  std::string out = std::to_string(i);
  out.insert(out.begin(), clique);
  return out;
}

// Three cliques of free trays: a (4 trays), b (3), c (2), all in block b1; and two more trays of
// clique c with one GPU in use each (3 free GPUs: no 4-GPU slot, three 1-GPU ones).
std::vector<Spec> threeCliques() {
  std::vector<Spec> specs;
  for (int i = 0; i < 4; ++i)
    specs.push_back({tray(trayName('a', i)), "a", "b1"});
  for (int i = 0; i < 3; ++i)
    specs.push_back({tray(trayName('b', i)), "b", "b1"});
  for (int i = 0; i < 2; ++i)
    specs.push_back({tray(trayName('c', i)), "c", "b1"});
  for (int i = 2; i < 4; ++i)
    specs.push_back({tray(trayName('c', i), "1000"), "c", "b1"});
  return specs;
}

TEST_CASE("the domain is the best fit among the cliques that hold the group",
          "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  struct Case {
    int members;
    std::string clique;
  };
  // Ranked by free GPUs left after placing, then spare 4-GPU slots. Free GPUs: a 16, b 12,
  // c 14 (4 + 4 + 3 + 3); 4-GPU slots: a 4, b 3, c 2 (the two trays with a GPU in use have none).
  //   2 members (8 GPUs):  left a 16-8 = 8, b 12-8 = 4, c 14-8 = 6      -> b
  //     (c's slots fit exactly, but its 6 left over are kept for smaller pods)
  //   3 members (12 GPUs): left a 4, b 0; c holds 2 of the 3 members    -> b
  //   4 members (16 GPUs): only a                                        -> a
  for (const Case& c : std::vector<Case>{{2, "b"}, {3, "b"}, {4, "a"}}) {
    CAPTURE(c.members);
    const GroupPlan plan = cluster.plan(members(c.members, 4));
    REQUIRE(plan.status == GroupPlanStatus::kPlanned);
    CHECK(plan.level == 0);
    CHECK(cluster.names->name(0, plan.domain[0]) == c.clique);
    CHECK(plan.slots.size() == static_cast<std::size_t>(c.members));
    for (const PlannedSlot& slot : plan.slots) {
      CHECK(slot.node.substr(0, 1) == c.clique);
      CHECK(slot.allocation.gpus == std::vector<int>{0, 1, 2, 3});
    }
    CHECK_THAT(plan.reason, ContainsSubstring(std::string(kClique) + "=" + c.clique));
  }
}

TEST_CASE("domains are counted in slots, not free GPUs", "[core][group-plan]") {
  // Clique p: two 4x L40S nodes (8 free GPUs, no NVLink); clique q: one free GB200 tray.
  const Cluster cluster({{testing::make4xPcieL40s(FixtureState().withName("p0")), "p", ""},
                         {testing::make4xPcieL40s(FixtureState().withName("p1")), "p", ""},
                         {tray("q0"), "q", ""}});
  // Two 2-GPU members with min-link nvlink: p has 8 free GPUs but no NVLink pair; q's tray holds
  // two NVLink pairs.
  const GroupPlan nvlink = cluster.plan(members(2, 2, LinkClass::kNvlink));
  REQUIRE(nvlink.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(nvlink) == std::map<std::string, int>{{"q0", 2}});
  // Without the link demand p holds them too, but 4 GPUs are left over on p (8 - 4) and none on
  // q (4 - 4): the best fit is q again.
  CHECK(perNode(cluster.plan(members(2, 2))) == std::map<std::string, int>{{"q0", 2}});
  // Four plain 2-GPU members: only p holds four.
  CHECK(perNode(cluster.plan(members(4, 2))) == std::map<std::string, int>{{"p0", 2}, {"p1", 2}});
}

TEST_CASE("members smaller than a node keep another domain's whole nodes free",
          "[core][group-plan]") {
  // Clique a: one free tray (4 free GPUs). Clique b: three trays with two GPUs in use each (2 free
  // GPUs and one NVLink pair per tray, 6 free in all).
  const Cluster cluster({{tray("a0"), "a", ""},
                         {tray("b0", "1100"), "b", ""},
                         {tray("b1", "1100"), "b", ""},
                         {tray("b2", "1100"), "b", ""}});
  struct Case {
    int members;
    std::int64_t gpus;
    std::map<std::string, int> nodes;
  };
  // Best fit by free GPUs alone would take a (4 - 4 = 0 left over against 6 - 4 = 2) and break
  // the only tray a 4-GPU pod can still get. Trays with every GPU free the group needs:
  //   2 x 2 GPUs: a 1 (its only tray), b 0 (three pairs on partly used trays)  -> b, one per tray
  //   3 x 1 GPU:  a 1, b 0 (six free GPUs on partly used trays)                -> b, fewest slots
  //                 first: all three trays have 2, so by name: b0 takes 2, b1 1
  //   1 x 4 GPUs: b has no 4-GPU slot, so only a holds it                       -> a
  for (const Case& c : std::vector<Case>{
           {2, 2, {{"b0", 1}, {"b1", 1}}}, {3, 1, {{"b0", 2}, {"b1", 1}}}, {1, 4, {{"a0", 1}}}}) {
    CAPTURE(c.members, c.gpus);
    const GroupPlan plan = cluster.plan(members(c.members, c.gpus));
    REQUIRE(plan.status == GroupPlanStatus::kPlanned);
    CHECK(perNode(plan) == c.nodes);
  }
  // Explain says why the tighter clique was passed over.
  CHECK(cluster.passedOver(cluster.plan(members(2, 2)), "a0") ==
        "best fit prefers b (it needs 0 nodes with every GPU free there, 1 here)");
}

TEST_CASE("as many free GPUs left over: the fewer spare slots win", "[core][group-plan]") {
  // Clique e: two trays with two GPUs in use each (2 free GPUs and one NVLink pair each). Clique
  // f: a tray with one GPU in use (3 free, one pair) and one with three in use (1 free, no pair).
  // Both have 4 free GPUs, all on partly used trays.
  const Cluster cluster({{tray("e0", "1100"), "e", ""},
                         {tray("e1", "1100"), "e", ""},
                         {tray("f0", "1000"), "f", ""},
                         {tray("f1", "1110"), "f", ""}});
  // One 2-GPU member: no member on a free tray in either; 4 - 2 = 2 free GPUs left over in both;
  // spare pairs e 2 - 1 = 1, f 1 - 1 = 0 -> f, on the tray with the pair.
  const GroupPlan plan = cluster.plan(members(1, 2));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(cluster.names->name(0, plan.domain[0]) == "f");
  CHECK(perNode(plan) == std::map<std::string, int>{{"f0", 1}});
}

TEST_CASE("a required level refuses a group no domain can hold", "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  // Five 4-GPU members need 20 GPUs; the largest clique has 16 even with every GPU free.
  const GroupPlan never = cluster.plan(members(5, 4));
  CHECK(never.status == GroupPlanStatus::kNeverFits);
  CHECK_THAT(never.reason,
             ContainsSubstring("no nvidia.com/gpu.clique domain can ever hold group train/job: "
                               "5 pods x 4 GPUs (20 GPUs; the largest has 16)"));
  CHECK_THAT(never.reason, ContainsSubstring("gputopo.dev/group-levels: nvidia.com/gpu.clique="
                                             "preferred"));
  const Cluster onlyC({{tray("c0"), "c", ""}, {tray("c1", "1110"), "c", ""}});
  // 4-GPU slots now: c0 only (c1 has one free GPU). Two members need two: none now, but the
  // clique has 8 usable GPUs: preemption may help.
  const GroupPlan noRoom = onlyC.plan(members(2, 4));
  CHECK(noRoom.status == GroupPlanStatus::kNoRoom);
  CHECK(noRoom.reason ==
        "no nvidia.com/gpu.clique domain can hold group train/job: 2 pods x 4 GPUs now; largest "
        "free: 1 of 2 slots in nvidia.com/gpu.clique=c");
}

TEST_CASE("a preferred level hands over to the next one", "[core][group-plan]") {
  Policy policy = defaultPolicy();
  policy.groups.levels[0].mode = GroupLevelMode::kPreferred;
  const Cluster cluster(threeCliques(), policy);
  // Five 4-GPU members: no clique holds them; block b1 holds 4 + 3 + 2 = 9 slots.
  const GroupPlan plan = cluster.plan(members(5, 4));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(plan.level == 2);
  CHECK(cluster.names->name(2, plan.domain[2]) == "b1");
  CHECK(plan.domain[0] == kMixedDomain);  // split over cliques, as allowed
  // Filled fewest slots first: every tray has one slot, so by free GPUs then name: a0..a3, b0.
  CHECK(perNode(plan) ==
        std::map<std::string, int>{{"a0", 1}, {"a1", 1}, {"a2", 1}, {"a3", 1}, {"b0", 1}});
}

TEST_CASE("a level constrains only the nodes that carry its label", "[core][group-plan]") {
  // Clique x (one tray) cannot hold two 4-GPU members; the unlabelled DGX H100 can (8 GPUs).
  const Cluster cluster(
      {{tray("x0"), "x", ""}, {testing::makeDgxH100(FixtureState().withName("h0")), "", ""}});
  const GroupPlan plan = cluster.plan(members(2, 4));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(plan.level == -1);  // no level applies to h0: per-node GPU sets
  CHECK(perNode(plan) == std::map<std::string, int>{{"h0", 2}});
  CHECK(plan.domain[0] == kNoDomain);
  // Nodes without any level label at all: per-node GPU sets alone.
  const Cluster bare(
      {{testing::makeDgxH100(FixtureState().withName("h0")), "", ""},
       {testing::makeDgxH100(FixtureState().withName("h1").withUsed("11110000")), "", ""}});
  const GroupPlan perNodeOnly = bare.plan(members(3, 4));
  REQUIRE(perNodeOnly.status == GroupPlanStatus::kPlanned);
  CHECK(perNodeOnly.reason == "no level applies to the candidates: placed by per-node GPU sets");
  // Fewest slots first: h1 (1 slot) before h0 (2).
  CHECK(perNode(perNodeOnly) == std::map<std::string, int>{{"h0", 2}, {"h1", 1}});
  // Too big for the candidates, and no level demands it: placed one by one.
  const GroupPlan unplaced = bare.plan(members(4, 4));
  CHECK(unplaced.status == GroupPlanStatus::kUnplaced);
}

TEST_CASE("members already placed pin the domain", "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  // Two members remain; one is bound in clique a. Best fit alone would pick b (4 free GPUs left
  // over, a 8); the anchor pins a.
  const GroupPlan pinned = cluster.plan(members(2, 4), {cluster.idsOf("a0")});
  REQUIRE(pinned.status == GroupPlanStatus::kPlanned);
  CHECK(cluster.names->name(0, pinned.domain[0]) == "a");
  // Anchored in c (2 free 4-GPU slots), three more do not fit there: refused, not split.
  const GroupPlan full = cluster.plan(members(3, 4), {cluster.idsOf("c0")});
  CHECK(full.status == GroupPlanStatus::kNoRoom);
  // Anchors already in two cliques: the clique level has nothing left to keep together, the
  // block level takes over.
  const GroupPlan split = cluster.plan(members(2, 4), {cluster.idsOf("a0"), cluster.idsOf("b0")});
  REQUIRE(split.status == GroupPlanStatus::kPlanned);
  CHECK(split.level == 2);  // the block (the accelerator level has no labels here)
}

TEST_CASE("per-pod modes change the levels of one group", "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  std::vector<GroupLevel> levels = defaultPolicy().groups.levels;
  levels[0].mode = GroupLevelMode::kIgnored;
  // Cliques ignored: the block decides, spanning cliques.
  const GroupPlan plan = cluster.plan(members(6, 4), {}, &levels);
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(plan.level == 2);
}

TEST_CASE("members of different sizes are packed largest first", "[core][group-plan]") {
  const Cluster cluster(
      {{testing::makeDgxH100(FixtureState().withName("h0")), "k", ""},
       {testing::makeDgxH100(FixtureState().withName("h1").withUsed("11111100")), "k", ""}});
  PodDemand four;
  four.gpus = 4;
  PodDemand two;
  two.gpus = 2;
  PodDemand one;
  one.gpus = 1;
  const std::vector<PodDemand> mixed = {two, four, one, four};
  // 11 GPUs: 4 + 4 on h0 (8 free), then 2 on h1 (2 free), then 1 ... h1 is full, h0 is full:
  // largest first: 4 -> h0 (fewest free that fits: h1 has 2), 4 -> h0, 2 -> h1, 1 does not fit.
  CHECK(cluster.plan(mixed).status == GroupPlanStatus::kNoRoom);
  const std::vector<PodDemand> fits = {two, four, four};
  const GroupPlan plan = cluster.plan(fits);
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  std::map<std::uint32_t, std::string> byMember;
  for (const PlannedSlot& slot : plan.slots)
    byMember[slot.member] = slot.node;
  CHECK(byMember == std::map<std::uint32_t, std::string>{{0, "h1"}, {1, "h0"}, {2, "h0"}});
  // h0's two 4-GPU sets are disjoint, h1's pair is its two free GPUs.
  GpuMask h0 = 0;
  for (const PlannedSlot& slot : plan.slots) {
    if (slot.node != "h0") {
      CHECK(slot.allocation.gpus == std::vector<int>{6, 7});
      continue;
    }
    for (const int gpu : slot.allocation.gpus) {
      CHECK((h0 & bitOf(gpu)) == 0);
      h0 |= bitOf(gpu);
    }
  }
  CHECK(h0 == 0xffu);
  CHECK(describeMembers(fits) == "3 pods, 10 GPUs");
}

TEST_CASE("MIG members are not planned", "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  PodDemand mig;
  mig.mig = {{"3g.40gb", 1}};
  CHECK(cluster.plan({mig, mig}).status == GroupPlanStatus::kUnsupported);
}

TEST_CASE("explain keeps why each other domain was refused", "[core][group-plan]") {
  const Cluster cluster(threeCliques());
  const GroupPlan plan = cluster.plan(members(3, 4));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  std::map<std::string, std::string> verdicts;
  for (const DomainVerdict& v : plan.domains) {
    if (v.level == 0) {
      verdicts[std::string(cluster.names->name(0, v.domain))] =
          domainVerdictText(v, cluster.names.get());
    }
  }
  // 3 members x 4 GPUs = 12: b has 12 free GPUs (0 left over), a 16 (4 left over).
  CHECK(verdicts["b"] == "chosen: 0 free GPUs left over");
  CHECK(verdicts["a"] == "best fit prefers b (0 free GPUs left over there, 4 here)");
  CHECK(verdicts["c"] == "holds 2 of the 3 members");
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

// The new user's mixed-generation cluster, no level labels: an empty H100 NVSwitch board, one
// with 2 GPUs used (one per NUMA node), an empty DGX-1V, an A100 with 2 used.
std::vector<Spec> mixedGenerations() {
  return {
      {testing::makeDgxH100(FixtureState().withName("h100-empty")), "", ""},
      {testing::makeDgxH100(FixtureState().withName("h100-busy").withUsed("10001000")), "", ""},
      {testing::makeDgx1Volta(FixtureState().withName("dgx1v")), "", ""},
      {testing::makeDgxA100(FixtureState().withName("a100-busy").withUsed("10001000")), "", ""}};
}

TEST_CASE("a group lands on one GPU model whenever one model can hold it", "[core][group-plan]") {
  const Cluster cluster(mixedGenerations());
  // Three 4-GPU members: only the two H100 boards hold three quads (the DGX-1V two, the A100
  // one); across models the tightest nodes would have mixed all three generations.
  const GroupPlan three = cluster.plan(members(3, 4));
  REQUIRE(three.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(three) == std::map<std::string, int>{{"h100-busy", 1}, {"h100-empty", 2}});
  CHECK_THAT(three.reason, ContainsSubstring("one GPU model, NVIDIA-H100-80GB-HBM3"));
  CHECK_THAT(three.reason, ContainsSubstring("Tesla-V100-SXM2-16GB holds 2 of 3"));
  // Two members: the models that hold them are the H100s and the DGX-1V; best fit takes the
  // model with the fewest free GPUs, the DGX-1V's two quads, and leaves the H100 boards alone.
  CHECK(perNode(cluster.plan(members(2, 4))) == std::map<std::string, int>{{"dgx1v", 2}});
  // No one model holds two 8-GPU members: they mix, and the plan says why.
  const GroupPlan eights = cluster.plan(members(2, 8));
  REQUIRE(eights.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(eights).size() == 2);
  CHECK_THAT(eights.reason, ContainsSubstring("GPU models mixed: no one model can hold the group"));
}

TEST_CASE("among GPU models, one whose nodes give every member an NVLink set comes first",
          "[core][group-plan]") {
  // Two 2-GPU members that accept any link: the 4x L40S node (4 free GPUs, PCIe only) is the
  // tighter model, the A100 board (6 free, NVSwitch) the one whose pairs are NVLink.
  const Cluster cluster(
      {{testing::make4xPcieL40s(FixtureState().withName("l40s")), "", ""},
       {testing::makeDgxA100(FixtureState().withName("a100").withUsed("11000000")), "", ""}});
  const GroupPlan plan = cluster.plan(members(2, 2));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(plan) == std::map<std::string, int>{{"a100", 2}});
  CHECK_THAT(plan.reason, ContainsSubstring("one GPU model, NVIDIA-A100-SXM4-80GB"));
  // 1-GPU members have no pair: best fit takes the tighter model.
  CHECK(perNode(cluster.plan(members(2, 1))) == std::map<std::string, int>{{"l40s", 2}});
  // As free GPUs tie, the model whose largest free NVLink set is smaller: two pairs go to the
  // DGX-1V (quads) and leave the H100 board's 8-GPU set whole.
  const Cluster equal({{testing::makeDgxH100(FixtureState().withName("h100")), "", ""},
                       {testing::makeDgx1Volta(FixtureState().withName("v100")), "", ""}});
  CHECK(perNode(equal.plan(members(2, 2))) == std::map<std::string, int>{{"v100", 2}});
}

TEST_CASE("one GPU model is relaxed by the policy or the pod", "[core][group-plan]") {
  Policy mixed = defaultPolicy();
  mixed.groups.sameModel = GroupLevelMode::kIgnored;
  const Cluster relaxed(mixedGenerations(), mixed);
  const GroupPlan plan = relaxed.plan(members(3, 4));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  std::set<std::string> models;
  for (const PlannedSlot& slot : plan.slots)
    models.insert(relaxed.state(slot.node).topology.model);
  CHECK(models.size() > 1);  // the tightest nodes, whatever their generation
  CHECK_THAT(plan.reason, !ContainsSubstring("GPU model"));
  // The pod's own mode wins over the policy's, both ways.
  const Cluster strict(mixedGenerations());
  GroupPlanInput in;
  in.group = "train/job";
  in.nodes = strict.nodes;
  const std::vector<PodDemand> three = members(3, 4);
  in.members = three;
  in.sameModel = GroupLevelMode::kIgnored;
  std::set<std::string> podModels;
  for (const PlannedSlot& slot : planGroup(in, defaultPolicy()).slots)
    podModels.insert(strict.state(slot.node).topology.model);
  CHECK(podModels.size() > 1);
  GroupPlanInput back = in;
  back.nodes = relaxed.nodes;
  back.sameModel = GroupLevelMode::kPreferred;
  CHECK(perNode(planGroup(back, mixed)) ==
        std::map<std::string, int>{{"h100-busy", 1}, {"h100-empty", 2}});
}

TEST_CASE("inside a domain, a looser domain of one model beats a tighter mixed one",
          "[core][group-plan]") {
  // Block b1: an A100 board and an H100 board (mixed, 16 free GPUs); block b2: two H100 boards
  // (one model, 16 free too but named later). Every board gives an 8-GPU member an NVLink set.
  // Two 8-GPU members fit b1 only across models.
  std::vector<Spec> specs = {{testing::makeDgxA100(FixtureState().withName("a100")), "", "b1"},
                             {testing::makeDgxH100(FixtureState().withName("h100-x")), "", "b1"},
                             {testing::makeDgxH100(FixtureState().withName("h100-a")), "", "b2"},
                             {testing::makeDgxH100(FixtureState().withName("h100-b")), "", "b2"}};
  const Cluster cluster(std::move(specs));
  const GroupPlan plan = cluster.plan(members(2, 8));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(plan) == std::map<std::string, int>{{"h100-a", 1}, {"h100-b", 1}});
  bool mixedNoted = false;
  for (const DomainVerdict& verdict : plan.domains) {
    if (verdict.outcome == DomainVerdict::Outcome::kMixesModels) {
      mixedNoted = true;
      CHECK_THAT(domainVerdictText(verdict, cluster.names.get()),
                 ContainsSubstring("cannot hold the group on one GPU model; b2 can"));
    }
  }
  CHECK(mixedNoted);
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

TEST_CASE("inside the domain, members go to trays whose slots hold nothing degraded first",
          "[core][group-plan][health]") {
  // Clique h: three free trays; on h0 GPU 0 is degraded, on h1 the NVLink pair 0-1 is degraded.
  NodeInfo worn = tray("h0");
  worn.labels["gputopo.dev/health"] = "d111";
  NodeInfo link = tray("h1");
  link.labels["gputopo.dev/nvlh"] = "d11111";
  const Cluster cluster({{worn, "h", ""}, {link, "h", ""}, {tray("h2"), "h", ""}});
  // Two 2-GPU members: the trays tie on every count; h2's pairs are healthy, then h0's second
  // pair (2-3) and h1's (2-3) are too, but their first slots are not.
  const GroupPlan pairs = cluster.plan(members(2, 2));
  REQUIRE(pairs.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(pairs) == std::map<std::string, int>{{"h2", 2}});
  // 1-GPU members: a degraded link does not matter to one GPU, so h1 ties with h2 (and wins by
  // name); h0, whose first slot is its degraded GPU 0, comes last.
  const GroupPlan singles = cluster.plan(members(4, 1));
  REQUIRE(singles.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(singles) == std::map<std::string, int>{{"h1", 4}});
  const GroupPlan eight = cluster.plan(members(8, 1));
  REQUIRE(eight.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(eight) == std::map<std::string, int>{{"h1", 4}, {"h2", 4}});
}

TEST_CASE("a domain that holds the group on healthy trays beats a tighter one that does not",
          "[core][group-plan][health]") {
  // Clique t: two free trays, one with a degraded GPU. Clique u: three free trays, all healthy.
  NodeInfo worn = tray("t0");
  worn.labels["gputopo.dev/health"] = "1d11";
  const Cluster cluster({{worn, "t", ""},
                         {tray("t1"), "t", ""},
                         {tray("u0"), "u", ""},
                         {tray("u1"), "u", ""},
                         {tray("u2"), "u", ""}});
  // Two 4-GPU members: t is the best fit by free GPUs (8 against 12), but one of its two trays is
  // degraded; u holds both members on healthy trays.
  const GroupPlan plan = cluster.plan(members(2, 4));
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  CHECK(cluster.names->name(0, plan.domain[0]) == "u");
  // Explain names the key that decided, not the free GPUs (t is the tighter clique).
  CHECK(cluster.passedOver(plan, "t1") ==
        "best fit prefers u (it holds the group on sets without degraded GPUs or links; here it "
        "does not)");
  // One member fits t's healthy tray: t, the tighter one, again.
  const GroupPlan one = cluster.plan(members(1, 4));
  REQUIRE(one.status == GroupPlanStatus::kPlanned);
  CHECK(perNode(one) == std::map<std::string, int>{{"t1", 1}});
}

}  // namespace
}  // namespace gte
