// The groups simulation: the label-level best fit on situations worked out by hand, gang
// all-or-nothing, departures, and on a short random run the invariants: no GPU handed out twice
// at any moment, a pod only on nodes of its pool, a group "whole" only when every member shares
// the domain's label, the best fit whole whenever one domain could hold the group, seeds
// reproducible.
#include <bit>
#include <catch2/catch_test_macros.hpp>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/group_simulator.h"
#include "sim/group_workload.h"
#include "sim/placement_metrics.h"
#include "sim/rack_labels.h"
#include "sim/run_report.h"

using namespace gte;
using namespace gte::sim;

namespace {

const std::string kClique(kCliqueLabel);
const std::string kBlock(kBlockLabel);

// A group of `members` GB200 members of `gpus` GPUs arriving at `at`, running long.
TimedArrival gb200Group(const std::string& name, double at, int members, int gpus = 4) {
  TimedArrival arrival;
  arrival.at = at;
  arrival.duration = 1000;
  arrival.members = members;
  arrival.group = name;
  arrival.pod = SimPod{name, 4000 * gpus, 16384 * gpus, gpus};
  arrival.pod.gpuProduct = "NVIDIA-GB200";
  return arrival;
}

TimedArrival single(double at, double duration, int gpus) {
  TimedArrival arrival;
  arrival.at = at;
  arrival.duration = duration;
  arrival.pod = SimPod{"p", 4000 * gpus, 16384 * gpus, gpus};
  return arrival;
}

GroupSimOptions optionsFor(GroupMode mode, Chooser chooser, std::uint64_t seed = 42) {
  GroupSimOptions options;
  options.groups = mode;
  options.pods.chooser = chooser;
  options.pods.inTree = InTree::kMostAllocated;
  options.pods.seed = seed;
  return options;
}

// The clique (rack) every member of a placed group landed in: rack index = node / 18.
std::set<std::size_t> racksOf(const ArrivalOutcome& outcome) {
  std::set<std::size_t> racks;
  for (const PodPlacement& member : outcome.pods) {
    racks.insert(static_cast<std::size_t>(member.node) / 18);
  }
  return racks;
}

}  // namespace

TEST_CASE("label-level best fit: the fitting clique with the fewest free GPUs, else refused") {
  // Three NVL72 racks of 18 trays, 72 GPUs each; 4-GPU members take a whole tray.
  const auto nodes = parseClusterSpec("gb200:54");
  REQUIRE(nodes.ok());
  const std::vector<TimedArrival> arrivals = {
      gb200Group("a", 1, 12),  // all three racks hold 18: a tie, broken by name -> rack 0 (6 left)
      gb200Group("b", 2, 8),   // rack 0 holds 6 < 8; racks 1 and 2 tie -> rack 1 (10 left)
      gb200Group("c", 3, 5),   // racks 0 (6 slots, 24 GPUs free), 1 (10, 40), 2 (18, 72) -> 0
      gb200Group("d", 4, 10),  // racks 1 (10) and 2 (18) fit; rack 1 has fewer free -> 1 (0 left)
      gb200Group("e", 5, 19),  // racks hold 1 + 0 + 18 = 19 in all, no one rack: refused
      gb200Group("f", 6, 18),  // rack 2 exactly
  };
  const GroupRun run = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                      optionsFor(GroupMode::kTasBestFit, Chooser::kLeastAllocated));
  REQUIRE(run.outcomes.size() == 6);
  const std::vector<std::size_t> rack = {0, 1, 0, 1, 99, 2};
  for (std::size_t i = 0; i < 6; ++i) {
    INFO("group " << arrivals[i].group);
    const ArrivalOutcome& outcome = run.outcomes[i];
    CHECK(outcome.level == 0);  // the clique level
    if (i == 4) {
      CHECK_FALSE(outcome.placed);
      CHECK(outcome.fitsTotal);
      CHECK_FALSE(outcome.fitsOneDomain);
      CHECK(outcome.largestDomainSlots == 18);
      continue;
    }
    REQUIRE(outcome.placed);
    CHECK(outcome.fitsOneDomain);
    CHECK(outcome.domainsUsed == 1);
    CHECK(racksOf(outcome) == std::set<std::size_t>{rack[i]});
  }
  // Per pod, nothing keeps a group together: the extender (packing) spreads `e` over the two
  // racks with room.
  const GroupRun perPod = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                         optionsFor(GroupMode::kPerPod, Chooser::kExtender));
  CHECK(perPod.outcomes[4].placed);
  CHECK(perPod.outcomes[4].domainsUsed >= 2);
}

TEST_CASE("label-level best fit: a preferred level takes the fewest domains when none holds all") {
  // HGX H100 racks of 4 nodes: 8 members of 8 GPUs need two racks (block is preferred).
  const auto nodes = parseClusterSpec("hgx-h100:12/4");
  REQUIRE(nodes.ok());
  TimedArrival group = gb200Group("g", 1, 8, 8);
  group.pod.gpuProduct = "NVIDIA-H100-80GB-HBM3";
  const std::vector<TimedArrival> arrivals = {group};
  const GroupRun run = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                      optionsFor(GroupMode::kTasBestFit, Chooser::kLeastAllocated));
  const ArrivalOutcome& outcome = run.outcomes[0];
  CHECK(outcome.level == 2);  // no clique, no accelerator label: block
  REQUIRE(outcome.placed);
  CHECK_FALSE(outcome.fitsOneDomain);
  CHECK(outcome.domainsUsed == 2);
}

TEST_CASE("a gang is all or nothing: members placed before one fails are given back") {
  // Two trays (8 GPUs). Three 4-GPU members: two land, the third finds nothing, both come back;
  // then a group of two takes both trays, which it could not if anything had stayed taken.
  const auto nodes = parseClusterSpec("gb200:2");
  REQUIRE(nodes.ok());
  const std::vector<TimedArrival> arrivals = {gb200Group("three", 1, 3), gb200Group("two", 2, 2)};
  for (const GroupMode mode : {GroupMode::kPerPod, GroupMode::kTasBestFit}) {
    const GroupRun run = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                        optionsFor(mode, Chooser::kLeastAllocated));
    CHECK_FALSE(run.outcomes[0].placed);
    CHECK(run.outcomes[0].pods.empty());
    CHECK(run.outcomes[1].placed);
    CHECK(run.outcomes[1].pods.size() == 2);
  }
}

TEST_CASE("a pod that ends gives its GPUs back to later arrivals") {
  // One tray: a 4-GPU pod runs from 0 to 1; another at 0.5 finds no room; a third at 2 does.
  const auto nodes = parseClusterSpec("gb200:1/0");
  REQUIRE(nodes.ok());
  const std::vector<TimedArrival> arrivals = {single(0, 1, 4), single(0.5, 1, 4), single(2, 1, 4)};
  const GroupRun run = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                      optionsFor(GroupMode::kPerPod, Chooser::kExtender));
  CHECK(run.outcomes[0].placed);
  CHECK_FALSE(run.outcomes[1].placed);
  CHECK(run.outcomes[1].pods.at(0).node == -1);
  CHECK(run.outcomes[2].placed);
  CHECK(run.outcomes[2].pods.at(0).gpus == 0xf);
}

TEST_CASE("groups metrics: whole when one domain could hold it, split, refused with room") {
  GroupRun run;
  run.levels = defaultGroupsPolicy().levels;
  ArrivalOutcome whole;  // fit one clique and stayed in it
  whole.placed = true;
  whole.level = 0;
  whole.fitsOneDomain = whole.fitsTotal = true;
  whole.domainsUsed = 1;
  ArrivalOutcome split = whole;  // could have stayed in one, did not
  split.domainsUsed = 3;
  ArrivalOutcome refused;  // room in total, no clique
  refused.level = 0;
  refused.fitsTotal = true;
  ArrivalOutcome block = whole;  // HGX racks
  block.level = 2;
  ArrivalOutcome singlePod;
  singlePod.placed = true;
  singlePod.pods.push_back(PodPlacement{});
  ArrivalOutcome failedPod;
  failedPod.pods.push_back(PodPlacement{});
  run.outcomes = {whole, split, refused, block, singlePod, failedPod, whole};
  std::vector<TimedArrival> arrivals(7, gb200Group("g", 0, 4));
  arrivals[4] = single(0, 1, 2);
  arrivals[5] = single(0, 1, 4);
  // The first arrival warms up: not counted.
  const RunMetrics m = summariseGroups(run, arrivals, 1);
  REQUIRE(m.groups.byLevel.size() == 2);
  const LevelGroupMetrics& clique = m.groups.byLevel[0];
  CHECK(clique.level == "clique");
  CHECK(clique.arrived == 3);  // split, refused, whole
  CHECK(clique.fitOne == 2);
  CHECK(clique.wholeOfFitOne == 1);
  CHECK(clique.split == 1);
  CHECK(clique.refusedWithRoom == 1);
  CHECK(clique.refusedFitOne == 0);
  CHECK(m.groups.byLevel[1].level == "block");
  CHECK(m.groups.singlePods == 2);
  CHECK(m.groups.singleGpusAsked == 6);
  CHECK(m.groups.singleGpusPlaced == 2);
  std::map<std::string, double> flat;
  for (const auto& [name, value] : flattenMetrics(m)) {
    flat[name] = value;
  }
  CHECK(flat.at("clique.whole_when_fit") == 50.0);  // 1 of the 2 that fit one clique
  CHECK(flat.at("clique.split_rate") == 50.0);      // 1 of 2 placed
  CHECK(flat.at("single.accepted") == 100.0 * 2 / 6);
  CHECK(flat.count("ar100") == 0);  // the fill protocol's figures do not apply
}

// A group of `members` members of 8 GPUs that selects no GPU product (any model may run it).
TimedArrival anyModelGroup(const std::string& name, double at, int members) {
  TimedArrival arrival = gb200Group(name, at, members, 8);
  arrival.pod.gpuProduct.clear();
  return arrival;
}

TEST_CASE(
    "a mixed-generation cluster: the planner keeps a group on one GPU model when one holds it") {
  // Two DGX H100 and two DGX-1V boards, 8 GPUs each, unracked: every member takes a whole node.
  const auto nodes = parseClusterSpec("hgx-h100:2,dgx1v:2");
  REQUIRE(nodes.ok());
  const std::vector<TimedArrival> arrivals = {
      anyModelGroup("a", 1, 2),  // either model holds both members: one model
      anyModelGroup("b", 2, 2),  // the other model's two boards are left: one model again
      anyModelGroup("c", 3, 1),  // nothing free: refused
  };
  const GroupRun run = simulateGroups(*nodes, arrivals, defaultPolicy(),
                                      optionsFor(GroupMode::kPlanned, Chooser::kExtender));
  REQUIRE(run.outcomes[0].placed);
  REQUIRE(run.outcomes[1].placed);
  CHECK_FALSE(run.outcomes[2].placed);
  for (std::size_t g = 0; g < 2; ++g) {
    CHECK(run.outcomes[g].fitsOneModel);
    CHECK(run.outcomes[g].modelsUsed == 1);
  }
  const auto modelOf = [&](const PodPlacement& member) {
    return (*nodes)[static_cast<std::size_t>(member.node)].machine->model;
  };
  CHECK(modelOf(run.outcomes[0].pods[0]) != modelOf(run.outcomes[1].pods[0]));

  // Three members: no model holds them, so they are placed across both, and counted mixed.
  const std::vector<TimedArrival> threeMembers = {anyModelGroup("d", 1, 3)};
  const GroupRun three = simulateGroups(*nodes, threeMembers, defaultPolicy(),
                                        optionsFor(GroupMode::kPlanned, Chooser::kExtender));
  REQUIRE(three.outcomes[0].placed);
  CHECK_FALSE(three.outcomes[0].fitsOneModel);
  CHECK(three.outcomes[0].modelsUsed == 2);
}

TEST_CASE("groups metrics: one model when one could hold the group, placed across models") {
  GroupRun run;
  run.levels = defaultGroupsPolicy().levels;
  ArrivalOutcome oneModel;
  oneModel.placed = true;
  oneModel.fitsOneModel = true;
  oneModel.modelsUsed = 1;
  ArrivalOutcome mixedWithRoom = oneModel;  // one model could have held it
  mixedWithRoom.modelsUsed = 2;
  ArrivalOutcome mixedNoRoom = mixedWithRoom;  // no model could
  mixedNoRoom.fitsOneModel = false;
  ArrivalOutcome refused;
  refused.fitsOneModel = true;
  run.outcomes = {oneModel, mixedWithRoom, mixedNoRoom, refused};
  std::vector<TimedArrival> arrivals = {anyModelGroup("a", 0, 2), anyModelGroup("b", 0, 2),
                                        anyModelGroup("c", 0, 2), anyModelGroup("d", 0, 2)};
  const RunMetrics m = summariseGroups(run, arrivals, 0);
  CHECK(m.groups.anyModel);
  std::map<std::string, double> flat;
  for (const auto& [name, value] : flattenMetrics(m)) {
    flat[name] = value;
  }
  CHECK(flat.at("model.fit_one") == 3);
  CHECK(flat.at("model.one_when_fit") == 100.0 / 3);  // 1 of 3, the refused one counts against
  CHECK(flat.at("model.mixed") == 2);
  CHECK(flat.at("model.mixed_rate") == 100.0 * 2 / 3);  // 2 of 3 placed
  std::ostringstream table;
  writeTable(table, std::vector<LabelledRun>{LabelledRun{"s", "c", 42, m, {}}});
  CHECK(table.str().find("oneModel%") != std::string::npos);
}

namespace {

struct Replay {
  std::vector<SimNodeSpec> nodes;
  std::vector<TimedArrival> arrivals;
  GroupRun run;
};

// `dra`: every node hands GPUs out through DRA (shuffled device order), and racked DGX-1V nodes
// join, where first-fit sets differ from the device plugin's.
Replay shortRun(GroupMode mode, Chooser chooser, std::uint64_t seed, bool dra = false) {
  Replay out;
  out.nodes =
      *parseClusterSpec(dra ? "gb200:72/18,hgx-h100:16/4,dgx1v:16/8" : "gb200:72/18,hgx-h100:16/4");
  GroupWorkloadSpec spec;
  spec.singleGpus = *parseWeightedValues(kMultigpu50Mix, 0, 8, "gpus");
  spec.groupSizes = *parseWeightedValues(kGroupSizeMix, 2, 18, "members");
  spec.pools = defaultGroupPools(out.nodes);
  spec.groupShare = 0.1;
  spec.load = 0.9;
  spec.arrivals = 1200;
  out.arrivals = groupWorkload(spec, 288 + 128 + (dra ? 128 : 0), seed);
  GroupSimOptions options = optionsFor(mode, chooser, seed);
  if (dra) options.pods.draOrder = DraDeviceOrder::kShuffled;
  out.run = simulateGroups(out.nodes, out.arrivals, defaultPolicy(), options);
  return out;
}

struct Case {
  GroupMode mode;
  Chooser chooser;
  bool dra = false;
};
const Case kCases[] = {{GroupMode::kPerPod, Chooser::kExtender},
                       {GroupMode::kPerPod, Chooser::kLeastAllocated},
                       {GroupMode::kTasBestFit, Chooser::kLeastAllocated},
                       {GroupMode::kPlanned, Chooser::kExtender},
                       // DRA nodes: the planner's sets are the first-fit chain, so the members'
                       // first-fit sets match the plan; ended pods release their claims.
                       {GroupMode::kPerPod, Chooser::kLeastAllocated, true},
                       {GroupMode::kPlanned, Chooser::kExtender, true}};

}  // namespace

TEST_CASE("groups run: no GPU twice at any moment, pools kept, whole means one domain") {
  for (const Case& c : kCases) {
    INFO("mode " << static_cast<int>(c.mode) << " chooser " << chooserName(c.chooser) << " dra "
                 << c.dra);
    const Replay r = shortRun(c.mode, c.chooser, 42, c.dra);
    REQUIRE(r.run.outcomes.size() == r.arrivals.size());
    std::vector<GpuMask> taken(r.nodes.size(), 0);
    std::vector<std::int64_t> cpu(r.nodes.size(), 0);
    using Ending = std::pair<double, std::size_t>;
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> endings;
    int groupsPlaced = 0;
    int groupsRefused = 0;
    for (std::size_t i = 0; i < r.arrivals.size(); ++i) {
      const TimedArrival& a = r.arrivals[i];
      while (!endings.empty() && endings.top().first <= a.at) {
        for (const PodPlacement& p : r.run.outcomes[endings.top().second].pods) {
          taken[static_cast<std::size_t>(p.node)] &= ~p.gpus;
          cpu[static_cast<std::size_t>(p.node)] -= r.arrivals[endings.top().second].pod.cpuMilli;
        }
        endings.pop();
      }
      const ArrivalOutcome& o = r.run.outcomes[i];
      if (!o.placed) {
        groupsRefused += a.members > 0 ? 1 : 0;
        // The planner refuses a group only when no domain of a required level holds it.
        if (c.mode == GroupMode::kPlanned && a.members > 0) {
          CHECK_FALSE(o.fitsOneDomain);
        }
        CHECK((a.members > 0 ? o.pods.empty() : o.pods.size() == 1));
        continue;
      }
      CHECK(o.pods.size() == static_cast<std::size_t>(std::max(a.members, 1)));
      std::set<std::string> cliques;
      std::set<std::string> blocks;
      for (const PodPlacement& p : o.pods) {
        REQUIRE(p.node >= 0);
        const auto n = static_cast<std::size_t>(p.node);
        const SimNodeSpec& node = r.nodes[n];
        CHECK(std::popcount(p.gpus) == a.pod.gpus);
        CHECK((taken[n] & p.gpus) == 0);
        CHECK(p.gpus >> node.machine->gpus == 0);
        taken[n] |= p.gpus;
        cpu[n] += a.pod.cpuMilli;
        CHECK(cpu[n] <= node.cpuMilli);
        if (!a.pod.gpuProduct.empty()) {
          CHECK(node.machine->model == a.pod.gpuProduct);
        }
        cliques.insert(node.labels.count(kClique) ? node.labels.at(kClique) : "");
        blocks.insert(node.labels.count(kBlock) ? node.labels.at(kBlock) : "");
      }
      endings.emplace(a.at + a.duration, i);
      if (a.members == 0) {
        continue;
      }
      ++groupsPlaced;
      // "Whole" is checked against the labels themselves: one clique (GB200), one block (HGX).
      const std::set<std::string>& domains = o.level == 0 ? cliques : blocks;
      CHECK((o.domainsUsed == 1) == (domains.size() == 1));
      CHECK(domains.count("") == 0);
      // The best fit and the planner keep a group whole whenever one domain could hold it, and
      // the planner's GPU sets are what the node's allocator hands out (the device plugin's
      // picks, or on DRA nodes the first-fit sets one after another).
      if (c.mode != GroupMode::kPerPod && o.fitsOneDomain) {
        CHECK(o.domainsUsed == 1);
      }
      if (c.mode == GroupMode::kPlanned) {
        CHECK(o.plan == GroupPlanStatus::kPlanned);
        CHECK(o.planMismatches == 0);
      }
    }
    // The run is long and full enough that groups both land and are refused.
    CHECK(groupsPlaced > 20);
    CHECK(groupsRefused > 0);
  }
}

TEST_CASE("groups run: the same seed gives the same run, another seed another") {
  for (const Case& c : kCases) {
    INFO("mode " << static_cast<int>(c.mode) << " chooser " << chooserName(c.chooser) << " dra "
                 << c.dra);
    const Replay first = shortRun(c.mode, c.chooser, 42, c.dra);
    const Replay again = shortRun(c.mode, c.chooser, 42, c.dra);
    const Replay other = shortRun(c.mode, c.chooser, 43, c.dra);
    REQUIRE(first.run.outcomes.size() == again.run.outcomes.size());
    for (std::size_t i = 0; i < first.run.outcomes.size(); ++i) {
      REQUIRE(first.run.outcomes[i].pods.size() == again.run.outcomes[i].pods.size());
      for (std::size_t p = 0; p < first.run.outcomes[i].pods.size(); ++p) {
        CHECK(first.run.outcomes[i].pods[p].node == again.run.outcomes[i].pods[p].node);
        CHECK(first.run.outcomes[i].pods[p].gpus == again.run.outcomes[i].pods[p].gpus);
      }
    }
    CHECK(first.run.utilisation == again.run.utilisation);
    CHECK(first.run.utilisation != other.run.utilisation);
  }
}
