// gte_simulate: replays a pod sequence on a simulated cluster through the extender's decision code
// (checkFit, scoreNode, predictAllocation; no HTTP) next to the baseline schedulers, and prints the
// placement-quality metrics (docs/placement-quality.md).
//
//   gte_simulate [--cluster SPEC | --openb-nodes PATH [--eight hgx-a100,dgx1v]]
//                [--pods PATH | --synthetic MIX] [--choosers LIST] [--seeds 42,43,44]
//                [--target 130] [--extender-weight 12] [--policy FILE]
//                [--csv PATH] [--json PATH] [--curve PATH] [--label TEXT]
//                [--cpu-pods least-allocated|most-allocated] [--dra shuffled|index
//                [--dra-pods extended-resource|claim-template]]
//                [--mig-share 0.3 [--mig-mix
//                1g.10gb:40,2g.20gb:20,3g.40gb:20,4g.40gb:10,7g.80gb:10]]
//   gte_simulate --mode groups [--cluster SPEC] [--pods PATH | --synthetic MIX] [--loads 0.85]
//                [--arrivals 8000] [--group-share 0.1] [--group-sizes MIX] [--group-duration 2]
//                [--group-any-model MIX] [--nvlink-members 2,4]
//                [--single-duration 3] [--warmup 0.25] [--choosers LIST] [--seeds ...] [--csv ...]
//                [--json ...]
//   gte_simulate --mode faults [groups options] [--gpu-fail-rate 0.0028]
//                [--link-fail-rate 0.0008]
//                [--lead 5] [--no-precursor 0] [--false-alarms 1] [--false-alarm-duration 5]
//                [--repair-time 3]
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "policy/default_policy.h"
#include "policy/policy_yaml.h"
#include "sim/cluster_spec.h"
#include "sim/comma_items.h"
#include "sim/fault_model.h"
#include "sim/fault_report.h"
#include "sim/group_simulator.h"
#include "sim/group_workload.h"
#include "sim/openb_csv.h"
#include "sim/placement_metrics.h"
#include "sim/run_report.h"
#include "sim/sharing_report.h"
#include "sim/simulator.h"
#include "sim/weighted_values.h"
#include "sim/workload.h"

namespace {

using namespace gte;
using namespace gte::sim;

constexpr std::string_view kUsage =
    "usage: gte_simulate [--mode fill|groups|faults|sharing]\n"
    "                    [--cluster SPEC | --openb-nodes PATH [--eight hgx-a100,dgx1v]]\n"
    "                    [--pods PATH | --synthetic MIX] [--choosers LIST] [--seeds 42,43,44]\n"
    "                    [--target 130] [--extender-weight 12] [--policy FILE]\n"
    "                    [--csv PATH] [--json PATH] [--curve PATH] [--label TEXT]\n"
    "                    [--cpu-pods least-allocated|most-allocated] [--dra shuffled|index\n"
    "                    [--dra-pods extended-resource|claim-template]]\n"
    "                    [--mig-share 0.3 [--mig-mix PROFILES]]\n"
    "  SPEC     built-in templates and counts, e.g. hgx-a100:16,dgx1v:16,pcie4:8,pcie2:32\n"
    "           (MIG: hgx-a100-mig, hgx-a100-mig4, a100-pcie-mig; static layout:\n"
    "           hgx-a100-mig-balanced)\n"
    "  MIX      share of pods per GPU count, e.g. 0:10,1:50,2:15,4:10,8:15\n"
    "  LIST     extender[+least-allocated|+most-allocated|+none], least-allocated,\n"
    "           most-allocated-gpu, best-fit, random (comma-separated)\n"
    "  --cpu-pods  under the extender choosers, place pods without GPUs by this in-tree strategy\n"
    "           (the default scheduler's) instead of the extender scheduler's profile\n"
    "  --dra    every node's GPUs published by the NVIDIA DRA driver (one ResourceSlice, devices\n"
    "           in a seeded random order per node, or by index), nvidia.com/gpu a DRA-backed\n"
    "           extended resource: the GPUs inside a node are the DRA allocator's first-fit\n"
    "           (fill mode, whole GPUs only: no MIG templates or --mig-share)\n"
    "  --dra-pods  how pods of 2+ GPUs ask in DRA mode: nvidia.com/gpu (default), or a claim\n"
    "           from `gpu-topology-extender claim-template --gpus N` (firstAvailable tiers:\n"
    "           same pcieRoot, same numaNode, any; kube-scheduler's DRA score prefers earlier);\n"
    "           in --mode groups, group members of 2+ GPUs too (the planner plans their claims)\n"
    "  --mig-share  share of synthetic pods asking for one A100-80GB MIG instance, profiles\n"
    "           drawn from --mig-mix; turns the policy's mig.dynamic on (MIG templates without\n"
    "           a layout have no instances: the MIG manager creates the one the scheduler "
    "places)\n"
    "  --mode groups  a timed run with departures and pod groups\n"
    "           (docs/placement-quality.md#groups): --cluster with racks\n"
    "           (<template>:<count>[/<per rack>], default\n"
    "           gb200:144/18,hgx-h100:64/8,dgx1v:16,pcie4:16), single pods from --synthetic\n"
    "           (default the openb multigpu50 mix) or --pods, --loads offered GPU load(s)\n"
    "           (0.85), --arrivals (8000), --group-share share of arrivals that are groups\n"
    "           (0.1), --group-sizes members mix, --group-duration and --single-duration\n"
    "           mean run times (2 and 3), --group-any-model MIX (groups select no GPU\n"
    "           product, any node; MIX = GPUs per member, e.g. 8:60,4:20,2:20),\n"
    "           --nvlink-members COUNTS (members of these GPU counts, e.g. 2 or 2,4, annotated\n"
    "           min-link: nvlink; default none),\n"
    "           --warmup share of arrivals not measured (0.25); --choosers also take\n"
    "           tas-best-fit[:CHOOSER] (Kueue-like domain choice by counts; members inside and\n"
    "           single pods by least-allocated or CHOOSER) and\n"
    "           extender-groups[+least-allocated|+most-allocated|+none] (the extender's group\n"
    "           planner)\n"
    "  --mode faults  the groups run on failing hardware (docs/placement-quality.md\n"
    "           #failing-hardware), health-blind and health-aware on the same arrivals and\n"
    "           faults, per chooser (default extender+most-allocated,\n"
    "           extender-groups+most-allocated); groups options, and --gpu-fail-rate and\n"
    "           --link-fail-rate (real failures per GPU / NVLink pair per time unit, 0.0028 / "
    "0.0008),\n"
    "           --lead (precursor mark before a failure, 5), --no-precursor (share of failures\n"
    "           without one, 0), --false-alarms (false alarms per real failure, 1),\n"
    "           --false-alarm-duration (5), --repair-time (3)\n"
    "  --mode sharing  a fill of a cluster with shared inference pools\n"
    "           (docs/placement-quality.md#shared-gpus): --cluster (default\n"
    "           hgx-h100:8,hgx-h100-ts4:4,pcie4-mps2:8; hgx-h100-ts4 time-slices 4 ways,\n"
    "           pcie4-mps2 runs MPS 2 ways), --synthetic (default 1:85,2:6,4:5,8:4): 1-GPU\n"
    "           pods are shared services, pods of 2+ GPUs exclusive jobs; --target % of the\n"
    "           advertised nvidia.com/gpu (replicas counted) arriving (130); --choosers\n"
    "           (default extender,least-allocated,best-fit); --seeds (42..46)\n";

// Defaults that differ by mode are empty here and filled in by applyModeDefaults.
struct Options {
  std::string mode = "fill";
  std::string cluster;
  std::string openbNodes;
  std::string eight = "hgx-a100,dgx1v";
  std::string pods;
  std::string synthetic;
  std::string choosers;
  std::string seeds;
  int target = 130;
  int extenderWeight = 12;
  std::string policy;
  std::string csv;
  std::string json;
  std::string curve;
  std::string label;
  std::string cpuPods;
  double migShare = 0;
  std::string dra = "off";
  std::string draPods = "extended-resource";
  std::string migMix = "1g.10gb:40,2g.20gb:20,3g.40gb:20,4g.40gb:10,7g.80gb:10";
  // --mode groups
  std::string loads = "0.85";
  int arrivals = 8000;
  double groupShare = 0.1;
  std::string groupSizes = std::string(kGroupSizeMix);
  std::string groupAnyModel;  // MIX of GPUs per member: groups select no GPU product
  std::string nvlinkMembers;  // GPU counts whose members ask min-link: nvlink, e.g. "2,4"
  double singleDuration = 3;
  double groupDuration = 2;
  double warmup = 0.25;
  // --mode faults
  FaultModelOptions faults;
};

bool applyModeDefaults(Options& options) {
  const bool groups = options.mode == "groups" || options.mode == "faults";
  if (options.mode == "sharing") {
    const auto fill = [](std::string& value, std::string_view sharing) {
      if (value.empty()) value = sharing;
    };
    fill(options.cluster, "hgx-h100:8,hgx-h100-ts4:4,pcie4-mps2:8");
    fill(options.synthetic, "1:85,2:6,4:5,8:4");
    fill(options.choosers, "extender,least-allocated,best-fit");
    fill(options.seeds, "42,43,44,45,46");
    return true;
  }
  if (!groups && options.mode != "fill") {
    return false;
  }
  if (options.mode == "faults" && options.choosers.empty()) {
    options.choosers = "extender+most-allocated,extender-groups+most-allocated";
  }
  const auto fill = [](std::string& value, std::string_view fillMode, std::string_view groupMode,
                       bool isGroups) {
    if (value.empty()) {
      value = isGroups ? groupMode : fillMode;
    }
  };
  fill(options.cluster, "hgx-a100:12,dgx1v:12,pcie4:8,pcie2:24,pcie1:4",
       "gb200:144/18,hgx-h100:64/8,dgx1v:16,pcie4:16", groups);
  fill(options.synthetic, "0:10,1:50,2:15,4:10,8:15", kMultigpu50Mix, groups);
  fill(options.choosers,
       "extender,extender+most-allocated,least-allocated,most-allocated-gpu,best-fit,random",
       "extender+most-allocated,least-allocated,tas-best-fit,tas-best-fit:extender+most-allocated,"
       "extender-groups+most-allocated",
       groups);
  fill(options.seeds, "42,43,44", "42,43,44,45,46", groups);
  return true;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) {
      items.push_back(item);
    }
  }
  return items;
}

// `text` as a whole number in [low, high]; 0 when it is not one.
int wholeIn(std::string_view text, int low, int high) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    return 0;
  }
  return value;
}

bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

// Every option takes one value, written into one field of Options.
using FaultField = double FaultModelOptions::*;
using OptionField =
    std::variant<std::string Options::*, int Options::*, double Options::*, FaultField>;
const std::pair<std::string_view, OptionField> kOptionFields[] = {
    {"--cluster", &Options::cluster},
    {"--openb-nodes", &Options::openbNodes},
    {"--eight", &Options::eight},
    {"--pods", &Options::pods},
    {"--synthetic", &Options::synthetic},
    {"--choosers", &Options::choosers},
    {"--seeds", &Options::seeds},
    {"--target", &Options::target},
    {"--extender-weight", &Options::extenderWeight},
    {"--policy", &Options::policy},
    {"--csv", &Options::csv},
    {"--json", &Options::json},
    {"--curve", &Options::curve},
    {"--label", &Options::label},
    {"--cpu-pods", &Options::cpuPods},
    {"--mig-share", &Options::migShare},
    {"--mig-mix", &Options::migMix},
    {"--dra", &Options::dra},
    {"--dra-pods", &Options::draPods},
    {"--mode", &Options::mode},
    {"--loads", &Options::loads},
    {"--arrivals", &Options::arrivals},
    {"--group-share", &Options::groupShare},
    {"--group-sizes", &Options::groupSizes},
    {"--group-any-model", &Options::groupAnyModel},
    {"--nvlink-members", &Options::nvlinkMembers},
    {"--single-duration", &Options::singleDuration},
    {"--group-duration", &Options::groupDuration},
    {"--warmup", &Options::warmup},
    {"--gpu-fail-rate", &FaultModelOptions::gpuFailRate},
    {"--link-fail-rate", &FaultModelOptions::linkFailRate},
    {"--lead", &FaultModelOptions::lead},
    {"--no-precursor", &FaultModelOptions::noPrecursorShare},
    {"--false-alarms", &FaultModelOptions::falseAlarmRatio},
    {"--false-alarm-duration", &FaultModelOptions::falseAlarmDuration},
    {"--repair-time", &FaultModelOptions::repairTime},
};

bool parseArgs(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view arg = argv[i];
    const std::string value = argv[i + 1];
    const auto* option = std::find_if(std::begin(kOptionFields), std::end(kOptionFields),
                                      [&](const auto& entry) { return entry.first == arg; });
    if (option == std::end(kOptionFields)) {
      return false;
    }
    try {
      if (const auto* text = std::get_if<std::string Options::*>(&option->second)) {
        options.*(*text) = value;
      } else if (const auto* whole = std::get_if<int Options::*>(&option->second)) {
        options.*(*whole) = std::stoi(value);
      } else if (const auto* fault = std::get_if<FaultField>(&option->second)) {
        options.faults.*(*fault) = std::stod(value);
      } else {
        options.*std::get<double Options::*>(option->second) = std::stod(value);
      }
    } catch (const std::exception&) {  // std::stoi, std::stod: not a number
      std::cerr << "gte_simulate: " << arg << ": '" << value << "' is not a number\n";
      return false;
    }
  }
  return argc % 2 == 1 && applyModeDefaults(options);
}

struct Scenario {
  std::string name;
  std::vector<SimNodeSpec> nodes;
};

bool loadScenarios(const Options& options, std::vector<Scenario>& scenarios) {
  if (options.openbNodes.empty()) {
    auto nodes = parseClusterSpec(options.cluster);
    if (!nodes.ok()) {
      std::cerr << "gte_simulate: --cluster: " << nodes.error().message << "\n";
      return false;
    }
    scenarios.push_back(Scenario{options.cluster, std::move(*nodes)});
    return true;
  }
  std::string text;
  if (!readFile(options.openbNodes, text)) {
    std::cerr << "gte_simulate: cannot read " << options.openbNodes << "\n";
    return false;
  }
  for (const std::string& name : splitList(options.eight)) {
    const NodeTemplate* eight = findNodeTemplate(name);
    if (eight == nullptr || eight->gpus != 8) {
      std::cerr << "gte_simulate: --eight: '" << name << "' is not an 8-GPU template\n";
      return false;
    }
    auto nodes = parseOpenbNodes(text, *eight);
    if (!nodes.ok()) {
      std::cerr << "gte_simulate: " << options.openbNodes << ": " << nodes.error().message << "\n";
      return false;
    }
    scenarios.push_back(Scenario{"openb nodes, 8-GPU nodes as " + name, std::move(*nodes)});
  }
  return true;
}

// The synthetic generator's MIG profiles are the A100-80GB's (the MIG templates' GPU).
const MigProduct* migTemplateProduct(const Policy& policy) {
  for (const MigProduct& product : policy.migProducts) {
    if (product.name == "A100-80GB") {
      return &product;
    }
  }
  return nullptr;
}

bool loadTrace(const Options& options, const Policy& policy, std::int64_t capacityGpus,
               std::vector<SimPod>& trace) {
  if (!options.pods.empty()) {
    if (options.migShare > 0) {
      std::cerr << "gte_simulate: --mig-share applies to the synthetic generator, not --pods\n";
      return false;
    }
    std::string text;
    if (!readFile(options.pods, text)) {
      std::cerr << "gte_simulate: cannot read " << options.pods << "\n";
      return false;
    }
    auto pods = parseOpenbPods(text);
    if (!pods.ok()) {
      std::cerr << "gte_simulate: " << options.pods << ": " << pods.error().message << "\n";
      return false;
    }
    trace = std::move(*pods);
    return true;
  }
  auto mix = parseSyntheticMix(options.synthetic);
  if (!mix.ok()) {
    std::cerr << "gte_simulate: --synthetic: " << mix.error().message << "\n";
    return false;
  }
  if (options.migShare > 0) {
    const MigProduct* product = migTemplateProduct(policy);
    const Status added = product == nullptr
                             ? Status(invalidArgument("the policy has no A100-80GB MIG product"))
                             : addMigMix(*mix, options.migShare, options.migMix, *product);
    if (!added.ok()) {
      std::cerr << "gte_simulate: --mig-mix: " << added.error().message << "\n";
      return false;
    }
  }
  double meanGpus = 0;
  double weights = 0;
  for (const auto& [gpus, weight] : mix->weights) {
    meanGpus += gpus * weight;
    weights += weight;
  }
  meanGpus = meanGpus == 0 ? 1 : meanGpus / weights;
  if (options.migShare > 0) {
    // Mean demand per pod in GPUs, a MIG instance weighing its memory slices.
    double migSlices = 0;
    double migWeights = 0;
    for (const auto& [profile, weight] : mix->migWeights) {
      migSlices += profile->slices * weight;
      migWeights += weight;
    }
    meanGpus = (1 - options.migShare) * meanGpus +
               options.migShare * migSlices / migWeights / kMigMemorySlices;
  }
  // Twice the pods the target needs on average: the arrival sequence stops at the target.
  const auto count = static_cast<int>(2.0 * static_cast<double>(capacityGpus) * options.target /
                                      100.0 / meanGpus) +
                     16;
  trace = syntheticPods(*mix, count, 7);
  return true;
}

// DRA mode models whole GPUs: MIG pods and GPUs in MIG mode are refused.
bool draModelled(const Options& options, const std::vector<Scenario>& scenarios) {
  if (options.migShare > 0) {
    std::cerr << "gte_simulate: --dra models whole GPUs: no --mig-share\n";
    return false;
  }
  for (const Scenario& scenario : scenarios) {
    for (const SimNodeSpec& node : scenario.nodes) {
      if (node.machine->migGpus() > 0) {
        std::cerr << "gte_simulate: --dra models whole GPUs: template " << node.machine->name
                  << " has GPUs in MIG mode\n";
        return false;
      }
    }
  }
  return true;
}

bool chooserOptions(const std::string& name, SimOptions& sim) {
  if (name.rfind("extender", 0) == 0) {
    sim.chooser = Chooser::kExtender;
    const std::size_t plus = name.find('+');
    const auto inTree =
        inTreeFromName(plus == std::string::npos ? "least-allocated" : name.substr(plus + 1));
    if (!inTree || (plus == std::string::npos && name != "extender")) {
      return false;
    }
    sim.inTree = *inTree;
    return true;
  }
  const auto chooser = chooserFromName(name);
  if (!chooser || *chooser == Chooser::kExtender) {
    return false;
  }
  sim.chooser = *chooser;
  return true;
}

bool writeOutput(const std::string& path,
                 void (*writer)(std::ostream&, std::span<const LabelledRun>),
                 const std::vector<LabelledRun>& runs) {
  if (path.empty()) {
    return true;
  }
  std::ofstream out(path);
  writer(out, runs);
  if (!out) {
    std::cerr << "gte_simulate: cannot write " << path << "\n";
    return false;
  }
  return true;
}

// Group choosers: "tas-best-fit[:POD-CHOOSER]" (the label-level best fit; members inside the
// domain, and single pods, by the default scheduler's LeastAllocated or the pod chooser named),
// "extender-groups[+IN-TREE]" (the extender's group planner, single pods by the extender with that
// in-tree strategy), or any pod chooser placing members one by one.
bool groupChooserOptions(const std::string& name, GroupSimOptions& sim) {
  constexpr std::string_view kBestFit = "tas-best-fit";
  if (name.rfind(kBestFit, 0) == 0) {
    sim.groups = GroupMode::kTasBestFit;
    if (name.size() == kBestFit.size()) {
      sim.pods.chooser = Chooser::kLeastAllocated;
      return true;
    }
    return name[kBestFit.size()] == ':' &&
           chooserOptions(name.substr(kBestFit.size() + 1), sim.pods);
  }
  constexpr std::string_view kPlanned = "extender-groups";
  if (name.rfind(kPlanned, 0) == 0) {
    sim.groups = GroupMode::kPlanned;
    return chooserOptions("extender" + name.substr(kPlanned.size()), sim.pods);
  }
  sim.groups = GroupMode::kPerPod;
  return chooserOptions(name, sim.pods);
}

bool groupWorkloadSpec(const Options& options, std::span<const SimNodeSpec> nodes,
                       std::vector<SimPod>& trace, GroupWorkloadSpec& spec) {
  if (!options.pods.empty()) {
    std::string text;
    auto pods = readFile(options.pods, text)
                    ? parseOpenbPods(text)
                    : Result<std::vector<SimPod>>(invalidArgument("cannot read the file"));
    if (!pods.ok()) {
      std::cerr << "gte_simulate: " << options.pods << ": " << pods.error().message << "\n";
      return false;
    }
    trace = std::move(*pods);
    spec.singleTrace = trace;
  } else {
    auto mix = parseWeightedValues(options.synthetic, 0, 8, "gpus");
    if (!mix.ok()) {
      std::cerr << "gte_simulate: --synthetic: " << mix.error().message << "\n";
      return false;
    }
    spec.singleGpus = std::move(*mix);
  }
  auto sizes = parseWeightedValues(options.groupSizes, 2, 64, "members");
  if (!sizes.ok()) {
    std::cerr << "gte_simulate: --group-sizes: " << sizes.error().message << "\n";
    return false;
  }
  spec.groupSizes = std::move(*sizes);
  spec.groupShare = options.groupShare;
  spec.singleDuration = options.singleDuration;
  spec.groupDuration = options.groupDuration;
  spec.arrivals = options.arrivals;
  // commaItems keeps empty items, so "2,,4" is refused by name rather than read as "2,4".
  for (const std::string_view item : options.nvlinkMembers.empty()
                                         ? std::vector<std::string_view>{}
                                         : commaItems(options.nvlinkMembers)) {
    const int gpus = wholeIn(item, 2, 8);
    if (gpus == 0) {
      std::cerr << "gte_simulate: --nvlink-members: \"" << item << "\" is not a GPU count 2-8\n";
      return false;
    }
    spec.nvlinkMemberGpus.push_back(gpus);
  }
  if (options.groupAnyModel.empty()) {
    spec.pools = defaultGroupPools(nodes);
    return true;
  }
  auto members = parseWeightedValues(options.groupAnyModel, 1, 8, "gpus");
  if (!members.ok()) {
    std::cerr << "gte_simulate: --group-any-model: " << members.error().message << "\n";
    return false;
  }
  spec.pools = {anyModelGroupPool(std::move(*members), nodes)};
  return true;
}

// What the timed modes (groups, faults) replay: the cluster, the group workload (with the single
// pods' trace it reads from) and the cluster's GPUs. False, the error printed, when an option does
// not read.
bool timedRunSetup(const Options& options, std::vector<SimNodeSpec>& nodes,
                   std::vector<SimPod>& trace, GroupWorkloadSpec& spec, std::int64_t& capacity) {
  auto parsed = parseClusterSpec(options.cluster);
  if (!parsed.ok()) {
    std::cerr << "gte_simulate: --cluster: " << parsed.error().message << "\n";
    return false;
  }
  nodes = std::move(*parsed);
  if (!groupWorkloadSpec(options, nodes, trace, spec)) return false;
  capacity = 0;
  for (const SimNodeSpec& node : nodes)
    capacity += node.machine->gpus;
  return true;
}

int runGroupMode(const Options& options, const Policy& policy) {
  if (options.migShare > 0) {
    std::cerr << "gte_simulate: --mig-share does not apply to --mode groups\n";
    return 2;
  }
  const auto draOrder = draDeviceOrderFromName(options.dra);
  if (!draOrder) {
    std::cerr << "gte_simulate: --dra: unknown '" << options.dra << "'\n";
    return 2;
  }
  const auto draPods = draPodFormFromName(options.draPods);
  if (!draPods) {
    std::cerr << "gte_simulate: --dra-pods: unknown '" << options.draPods << "'\n";
    return 2;
  }
  std::vector<SimNodeSpec> nodes;
  std::vector<SimPod> trace;
  GroupWorkloadSpec spec;
  std::int64_t capacity = 0;
  if (!timedRunSetup(options, nodes, trace, spec, capacity)) {
    return 2;
  }
  if (*draOrder != DraDeviceOrder::kOff &&
      !draModelled(options, std::vector<Scenario>{Scenario{"", nodes}})) {
    return 2;
  }
  std::vector<LabelledRun> runs;
  for (const std::string& load : splitList(options.loads)) {
    spec.load = std::stod(load);
    const std::string name =
        (options.label.empty() ? "" : options.label + ": ") + options.cluster + ", load " + load +
        (*draOrder == DraDeviceOrder::kOff
             ? ""
             : ", DRA (" + std::string(draDeviceOrderName(*draOrder)) + " device order" +
                   (*draPods == DraPodForm::kClaimTemplate ? ", pods by claim-template" : "") +
                   ")");
    for (const std::string& chooser : splitList(options.choosers)) {
      GroupSimOptions sim;
      sim.pods.extenderWeight = options.extenderWeight;
      sim.pods.draOrder = *draOrder;
      sim.pods.draPods = *draPods;
      if (!groupChooserOptions(chooser, sim)) {
        std::cerr << "gte_simulate: --choosers: unknown '" << chooser << "'\n" << kUsage;
        return 2;
      }
      sim.measureFrom = static_cast<std::size_t>(options.warmup * options.arrivals);
      for (const std::string& seedText : splitList(options.seeds)) {
        const auto seed = static_cast<std::uint64_t>(std::stoull(seedText));
        const std::vector<TimedArrival> arrivals = groupWorkload(spec, capacity, seed);
        sim.pods.seed = seed;
        const GroupRun run = simulateGroups(nodes, arrivals, policy, sim);
        runs.push_back(
            LabelledRun{name, chooser, seed, summariseGroups(run, arrivals, sim.measureFrom), {}});
      }
    }
  }
  std::cout << "util = allocated GPUs % of capacity (mean over measured arrivals); single% = single"
               " pods' GPU demand placed; missK = K-GPU single pods, missM = multi-GPU group"
               " members, given a weaker link class than a feasible node offered; per level: whole%"
               " = groups placed inside one domain, of those one domain could hold at arrival;"
               " split% = placed groups spread over 2+ domains; refusedR = groups refused while"
               " their nodes together had room. mean±sd over seeds "
            << options.seeds << ".\n";
  writeTable(std::cout, runs);
  const bool written = writeOutput(options.csv, writeMetricsCsv, runs) &&
                       writeOutput(options.json, writeMetricsJson, runs);
  return written ? 0 : 1;
}

// "mean±sd" of the values, as the other tables write it.
std::string meanSd(const std::vector<double>& values, int digits) {
  return formatMeanSd(values, digits);
}

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0;
}

// --mode faults: per chooser and seed, the same arrivals and faults replayed health-blind and
// health-aware; per chooser a row for each, mean±sd over seeds.
int runFaultMode(const Options& options, const Policy& policy, const std::string& commandLine) {
  if (options.dra != "off" || options.migShare > 0) {
    std::cerr << "gte_simulate: --mode faults models the device plugin's whole GPUs: no --dra,"
                 " no --mig-share\n";
    return 2;
  }
  std::vector<SimNodeSpec> nodes;
  std::vector<SimPod> trace;
  GroupWorkloadSpec spec;
  std::int64_t capacity = 0;
  if (!timedRunSetup(options, nodes, trace, spec, capacity)) {
    return 2;
  }
  spec.load = std::stod(splitList(options.loads).front());
  const std::vector<std::string> seeds = splitList(options.seeds);
  std::cout << "# " << commandLine << "\n"
            << "cluster " << options.cluster << " (" << capacity << " GPUs), load " << spec.load
            << ", " << options.arrivals << " arrivals, single pods "
            << (options.pods.empty() ? "mix " + options.synthetic : "from --pods") << "; faults:"
            << " gpu-fail-rate " << options.faults.gpuFailRate << ", link-fail-rate "
            << options.faults.linkFailRate << ", lead " << options.faults.lead << ", no-precursor "
            << options.faults.noPrecursorShare << ", false-alarms "
            << options.faults.falseAlarmRatio << " (duration " << options.faults.falseAlarmDuration
            << "), repair-time " << options.faults.repairTime << "; seeds " << options.seeds << "\n"
            << "podsHit% = placed multi-GPU single pods with a GPU or an NVLink pair of theirs"
               " failing during their run; groupsHit% = placed groups likewise (any member's GPU,"
               " or a pair between two of its GPUs on one node); podsSeen%/groupsSeen% = of those, "
               "hit by a"
               " fault whose degraded mark was already up at placement; util = allocated GPUs % of"
               " capacity; idleFA = GPU-time falsely marked GPUs sat free, % of capacity"
               " GPU-time; withheld = aware idleFA - blind idleFA, GPU-time (time units x GPUs)"
               " and % of capacity GPU-time. Measured after the warm-up. mean±sd over seeds.\n";
  constexpr const char* kRow =
      "%-31s %-5s %7s %7s %11s %11s %11s %11s %11s %11s %10s %11s %8s %7s\n";
  std::printf(kRow, "chooser", "marks", "pods", "groups", "podsHit%", "podsSeen%", "groupsHit%",
              "groupsSeen%", "util%", "idleFA%", "withheld", "withheld%", "faults", "FA");
  std::vector<std::string> bySize;
  for (const std::string& chooser : splitList(options.choosers)) {
    GroupSimOptions sim;
    sim.pods.extenderWeight = options.extenderWeight;
    if (!groupChooserOptions(chooser, sim)) {
      std::cerr << "gte_simulate: --choosers: unknown '" << chooser << "'\n" << kUsage;
      return 2;
    }
    sim.measureFrom = static_cast<std::size_t>(options.warmup * options.arrivals);
    std::vector<FaultRunSummary> blind;
    std::vector<FaultRunSummary> aware;
    for (const std::string& seedText : seeds) {
      const auto seed = static_cast<std::uint64_t>(std::stoull(seedText));
      const std::vector<TimedArrival> arrivals = groupWorkload(spec, capacity, seed);
      const std::vector<FaultEvent> faults =
          generateFaults(nodes, workloadHorizon(arrivals), options.faults, seed);
      sim.pods.seed = seed;
      sim.faults = faults;
      for (const bool healthAware : {false, true}) {
        sim.healthAware = healthAware;
        const GroupRun run = simulateGroups(nodes, arrivals, policy, sim);
        (healthAware ? aware : blind)
            .push_back(summariseFaultRun(run, arrivals, faults, sim.measureFrom));
      }
    }
    for (const bool healthAware : {false, true}) {
      const std::vector<FaultRunSummary>& runs = healthAware ? aware : blind;
      std::vector<double> pods, groups, podsHit, groupsHit, podsMarked, groupsMarked, util, hit2,
          hit4, hit8, idle, withheld, withheldShare, failures, alarms;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        const FaultRunSummary& run = runs[k];
        pods.push_back(run.multiGpuPods);
        groups.push_back(run.groups);
        podsHit.push_back(percent(run.multiGpuPodsHit, run.multiGpuPods));
        groupsHit.push_back(percent(run.groupsHit, run.groups));
        podsMarked.push_back(percent(run.multiGpuPodsHitMarked, run.multiGpuPods));
        hit2.push_back(percent(run.podsHitBySize[2], run.podsBySize[2]));
        hit4.push_back(percent(run.podsHitBySize[4], run.podsBySize[4]));
        hit8.push_back(percent(run.podsHitBySize[8], run.podsBySize[8]));
        groupsMarked.push_back(percent(run.groupsHitMarked, run.groups));
        util.push_back(run.utilisation);
        idle.push_back(percent(run.falselyMarkedIdle, run.capacityTime));
        const double extra = run.falselyMarkedIdle - blind[k].falselyMarkedIdle;
        withheld.push_back(extra);
        withheldShare.push_back(percent(extra, run.capacityTime));
        failures.push_back(run.gpuFailures + run.linkFailures);
        alarms.push_back(run.falseAlarms);
      }
      std::printf(kRow, chooser.c_str(), healthAware ? "aware" : "blind", meanSd(pods, 0).c_str(),
                  meanSd(groups, 0).c_str(), meanSd(podsHit, 2).c_str(),
                  meanSd(podsMarked, 2).c_str(), meanSd(groupsHit, 2).c_str(),
                  meanSd(groupsMarked, 2).c_str(), meanSd(util, 2).c_str(), meanSd(idle, 3).c_str(),
                  healthAware ? meanSd(withheld, 0).c_str() : "-",
                  healthAware ? meanSd(withheldShare, 3).c_str() : "-", meanSd(failures, 0).c_str(),
                  meanSd(alarms, 0).c_str());
      bySize.push_back(chooser + " " + (healthAware ? "aware" : "blind") + ": 2-GPU " +
                       meanSd(hit2, 2) + ", 4-GPU " + meanSd(hit4, 2) + ", 8-GPU " +
                       meanSd(hit8, 2));
    }
  }
  std::cout << "podsHit% by single pods' GPU count:\n";
  for (const std::string& line : bySize) {
    std::cout << "  " << line << "\n";
  }
  return 0;
}

// --mode sharing: per chooser and seed, one fill of the cluster; then the extender on the same
// sequence with the shared pools and their pods taken out, for the exclusive jobs' link misses.
int runSharingMode(const Options& options, const Policy& policy) {
  if (options.dra != "off" || options.migShare > 0 || !options.openbNodes.empty()) {
    std::cerr << "gte_simulate: --mode sharing models the device plugin's whole GPUs and their"
                 " replicas on --cluster templates: no --dra, --mig-share or --openb-nodes\n";
    return 2;
  }
  auto nodes = parseClusterSpec(options.cluster);
  if (!nodes.ok()) {
    std::cerr << "gte_simulate: --cluster: " << nodes.error().message << "\n";
    return 2;
  }
  std::vector<SimNodeSpec> exclusiveNodes;
  std::int64_t advertised = 0;
  std::int64_t exclusiveGpus = 0;
  for (const SimNodeSpec& node : *nodes) {
    advertised += node.machine->advertisedGpus();
    if (node.machine->sharing.empty()) {
      exclusiveNodes.push_back(node);
      exclusiveGpus += node.machine->gpus;
    }
  }
  std::vector<SimPod> trace;
  if (!loadTrace(options, policy, advertised, trace)) {
    return 2;
  }
  for (SimPod& pod : trace) {
    pod.exclusive = pod.gpus >= 2;
  }
  std::cout << "cluster " << options.cluster << " (" << advertised
            << " nvidia.com/gpu advertised, replicas counted), pods " << options.synthetic
            << " (1-GPU pods shared services, 2+ GPUs exclusive jobs), " << options.target
            << "% of it arriving; seeds " << options.seeds << "\n"
            << "exclOnShared = exclusive pods placed on a node whose GPUs the device plugin"
               " shares (% of exclusive pods placed); tenants p50/p95/max = replicas held per"
               " shared GPU at the end; replicas% = advertised replicas of the shared nodes held"
               " at the end; sharedPlaced% / exclPlaced% = pods placed of those arrived;"
               " sharedOnWhole% = shared services placed on whole GPUs, of those placed;"
               " exclMiss% = exclusive pods of 2+ GPUs given a weaker link class than a feasible"
               " node offered (on a shared node no set is known). mean±sd over seeds.\n";
  constexpr const char* kRow = "%-34s %13s %11s %11s %9s %11s %13s %14s %11s %11s\n";
  std::printf(kRow, "chooser", "exclOnShared%", "tenantsP50", "tenantsP95", "max", "replicas%",
              "sharedPlaced%", "sharedOnWhole%", "exclPlaced%", "exclMiss%");
  const std::vector<std::string> seeds = splitList(options.seeds);
  const auto row = [&](const std::string& label, const SimOptions& base,
                       std::span<const SimNodeSpec> cluster, bool exclusiveOnly) {
    std::vector<double> onShared, p50, p95, peak, replicas, sharedPlaced, onWhole, exclPlaced,
        misses;
    for (const std::string& seedText : seeds) {
      SimOptions sim = base;
      sim.seed = static_cast<std::uint64_t>(std::stoull(seedText));
      std::vector<SimPod> arrivals = arrivalSequence(trace, advertised, options.target, sim.seed);
      if (exclusiveOnly) {
        std::erase_if(arrivals, [](const SimPod& pod) { return pod.gpus > 0 && !pod.exclusive; });
      }
      const SimRun run = simulate(cluster, arrivals, policy, sim);
      const SharingFigures f = measureSharing(run, arrivals);
      onShared.push_back(percent(static_cast<double>(f.exclusiveOnShared),
                                 static_cast<double>(f.exclusivePlaced)));
      p50.push_back(f.tenantsP50);
      p95.push_back(f.tenantsP95);
      peak.push_back(f.tenantsMax);
      replicas.push_back(
          percent(static_cast<double>(f.replicasHeld), static_cast<double>(f.replicasAdvertised)));
      sharedPlaced.push_back(
          percent(static_cast<double>(f.sharedPlaced), static_cast<double>(f.sharedPods)));
      onWhole.push_back(
          percent(static_cast<double>(f.sharedOnWhole), static_cast<double>(f.sharedPlaced)));
      exclPlaced.push_back(
          percent(static_cast<double>(f.exclusivePlaced), static_cast<double>(f.exclusivePods)));
      misses.push_back(percent(static_cast<double>(f.multiGpuExclusiveMisses),
                               static_cast<double>(f.multiGpuExclusivePlaced)));
    }
    std::printf(kRow, label.c_str(), meanSd(onShared, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(p50, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(p95, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(peak, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(replicas, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(sharedPlaced, 1).c_str(),
                exclusiveOnly ? "-" : meanSd(onWhole, 1).c_str(), meanSd(exclPlaced, 1).c_str(),
                meanSd(misses, 1).c_str());
  };
  for (const std::string& chooser : splitList(options.choosers)) {
    SimOptions sim;
    sim.extenderWeight = options.extenderWeight;
    if (!chooserOptions(chooser, sim)) {
      std::cerr << "gte_simulate: --choosers: unknown '" << chooser << "'\n" << kUsage;
      return 2;
    }
    row(chooser, sim, *nodes, false);
  }
  SimOptions extender;
  extender.extenderWeight = options.extenderWeight;
  row("extender, exclusive pods on the " + std::to_string(exclusiveGpus) + " whole GPUs alone",
      extender, exclusiveNodes, true);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseArgs(argc, argv, options)) {
    std::cerr << kUsage;
    return 2;
  }
  Policy policy = defaultPolicy();
  if (!options.policy.empty()) {
    std::string text;
    auto parsed = readFile(options.policy, text) ? parsePolicyYaml(text)
                                                 : Result<Policy>(invalidArgument("cannot read"));
    if (!parsed.ok()) {
      std::cerr << "gte_simulate: --policy " << options.policy << ": " << parsed.error().message
                << "\n";
      return 2;
    }
    policy = std::move(*parsed);
  }
  if (options.mode == "groups") {
    return runGroupMode(options, policy);
  }
  if (options.mode == "sharing") {
    return runSharingMode(options, policy);
  }
  if (options.mode == "faults") {
    std::string commandLine = "gte_simulate";
    for (int i = 1; i < argc; ++i) {
      commandLine += std::string(" ") + argv[i];
    }
    return runFaultMode(options, policy, commandLine);
  }
  if (options.migShare > 0) {
    policy.dynamicMig = true;
  }
  const auto draOrder = draDeviceOrderFromName(options.dra);
  const auto draPods = draPodFormFromName(options.draPods);
  if (!draOrder || !draPods) {
    std::cerr << "gte_simulate: --dra / --dra-pods: unknown '"
              << (draOrder ? options.draPods : options.dra) << "'\n"
              << kUsage;
    return 2;
  }
  std::vector<Scenario> scenarios;
  if (!loadScenarios(options, scenarios)) {
    return 2;
  }
  if (*draOrder != DraDeviceOrder::kOff && !draModelled(options, scenarios)) {
    return 2;
  }
  std::vector<LabelledRun> runs;
  for (const Scenario& scenario : scenarios) {
    std::int64_t capacity = 0;
    for (const SimNodeSpec& node : scenario.nodes) {
      capacity += node.machine->gpus;
    }
    std::vector<SimPod> trace;
    if (!loadTrace(options, policy, capacity, trace)) {
      return 2;
    }
    const std::string name =
        (options.label.empty() ? "" : options.label + ": ") + scenario.name +
        (*draOrder == DraDeviceOrder::kOff
             ? ""
             : ", DRA (" + std::string(draDeviceOrderName(*draOrder)) + " device order, pods by " +
                   std::string(draPodFormName(*draPods)) + ")");
    for (const std::string& chooser : splitList(options.choosers)) {
      SimOptions sim;
      sim.extenderWeight = options.extenderWeight;
      sim.draOrder = *draOrder;
      sim.draPods = *draPods;
      if (!options.cpuPods.empty()) {
        sim.cpuPodsInTree = inTreeFromName(options.cpuPods);
        if (!sim.cpuPodsInTree) {
          std::cerr << "gte_simulate: --cpu-pods: unknown '" << options.cpuPods << "'\n" << kUsage;
          return 2;
        }
      }
      if (!chooserOptions(chooser, sim)) {
        std::cerr << "gte_simulate: --choosers: unknown '" << chooser << "'\n" << kUsage;
        return 2;
      }
      for (const std::string& seedText : splitList(options.seeds)) {
        const auto seed = static_cast<std::uint64_t>(std::stoull(seedText));
        const std::vector<SimPod> arrivals = arrivalSequence(trace, capacity, options.target, seed);
        sim.seed = seed;
        const SimRun run = simulate(scenario.nodes, arrivals, policy, sim);
        LabelledRun labelled{name, chooser, seed, summarise(run, arrivals), {}};
        for (int x = 0; x <= options.target; ++x) {
          labelled.curve.emplace_back(x, allocationAt(run, x));
        }
        runs.push_back(std::move(labelled));
      }
    }
  }
  std::cout << "AR = allocated GPUs % of capacity at 100/130% arrived demand; ff = arrived % at the"
               " first failed GPU pod (ff8: 8-GPU pod); nvlK = K-GPU pods on an all-NVLink set;"
               " missK = K-GPU pods given a weaker link class than a feasible node offered;"
               " sysK = K-GPU pods with a pair across the inter-socket link;"
               " frag90/tfrag90 = FGD / topology fragmentation % at 90% arrived. mean±sd over"
               " seeds "
            << options.seeds << ".\n";
  if (options.migShare > 0) {
    std::cout << "MIG: ff = arrived demand % (memory slices, whole GPUs as 8) at the first failed"
                 " MIG pod; trap = failed MIG pods although some GPU's free slice counts covered"
                 " the profile; invalid = sent where the profile had no legal start (MIG-naive"
                 " choosers); lost = failed although a legal placement was free somewhere;"
                 " slices% = MIG slices allocated at the end. mig.dynamic on.\n";
  }
  writeTable(std::cout, runs);
  const bool written = writeOutput(options.csv, writeMetricsCsv, runs) &&
                       writeOutput(options.json, writeMetricsJson, runs) &&
                       writeOutput(options.curve, writeCurveCsv, runs);
  return written ? 0 : 1;
}
