// DRA at cluster scale (docs/dra.md, "Cost"): N GPU nodes whose 8 GPUs are published by the
// NVIDIA DRA driver (one ResourceSlice each, devices in a random order, as the driver's map order
// leaves them; some GPUs allocated to claims) next to the extender's own labels. Prints the heap a
// DRA node costs (its slice, its precomputed DRA state, and the node state beside it, measured
// against the same nodes served by the device plugin), the snapshot build, a one-node change,
// and filter + prioritize over all nodes for a 2-GPU claim pod, a 4-GPU claim pod with a
// matchAttribute constraint and a plain `nvidia.com/gpu: 2` pod (the DRA-backed extended
// resource, decided from the precomputed answers); then the same two-GPU pods through the service
// on a cluster cache fed as the watches feed it (compiling the pod, its claims resolved against the
// cache's claims, filter and prioritize), alternated call by call.
//
//   build/bin/bench_dra [nodes] [iterations]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api_objects.h"
#include "cluster/cluster_state.h"
#include "core/pod_demand.h"
#include "dra/dra_objects.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice_json.h"
#include "filter/filter_nodes.h"
#include "group/group_domains.h"
#include "group/group_plan.h"
#include "policy/default_policy.h"
#include "prioritize/prioritize_nodes.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/snapshot_backend.h"

namespace {

using Clock = std::chrono::steady_clock;

using gte::bench::gpuBus;
using gte::bench::gpuUuid;

std::string labelToken(int node, int gpu) {
  std::string token = gpuUuid(node, gpu).substr(4);
  token.erase(std::remove(token.begin(), token.end(), '-'), token.end());
  return token;
}

void putChunked(gte::NodeInfo& node, const std::string& key, const std::string& value) {
  for (std::size_t chunk = 0; chunk * 60 < value.size(); ++chunk) {
    node.labels["gputopo.dev/" + key + std::to_string(chunk)] = value.substr(chunk * 60, 60);
  }
}

// An HGX H100 labelled by the agent (bus and uuid included); device plugin or not.
gte::NodeInfo h100Node(int i, bool devicePlugin) {
  gte::NodeInfo node;
  node.name = "gpu-node-" + std::to_string(i);
  node.uid = "uid-" + std::to_string(i);
  const std::pair<const char*, const char*> labels[] = {{"v", "1"},
                                                        {"n", "8"},
                                                        {"model", "NVIDIA-H100-80GB-HBM3"},
                                                        {"fabric", "nvsw4"},
                                                        {"nvl", "iiiiiiiiiiiiiiiiiiiiiiiiiiii"},
                                                        {"pci", "NNNSSSSNNSSSSNSSSSSSSSNNNNNN"},
                                                        {"numa", "00001111"},
                                                        {"health", "11111111"},
                                                        {"used", "00000000"},
                                                        {"mig", "00000000"},
                                                        {"gen", "1764670000"}};
  for (const auto& [key, value] : labels)
    node.labels[std::string("gputopo.dev/") + key] = value;
  std::string bus;
  std::string uuids;
  for (int g = 0; g < 8; ++g) {
    bus += std::string("0000") + gpuBus(g) + "000";
    uuids += labelToken(i, g);
  }
  putChunked(node, "bus", bus);
  putChunked(node, "uuid", uuids);
  node.labels["kubernetes.io/hostname"] = node.name;
  if (devicePlugin) node.allocatable.set("nvidia.com/gpu", gte::Quantity::fromUnits(8));
  return node;
}

std::shared_ptr<const gte::dra::ClassCatalog> nvidiaClasses() {
  std::vector<gte::dra::DeviceClassConstSharedPtr> classes;
  for (const std::string& json : gte::bench::nvidiaDeviceClassJsons())
    classes.push_back(gte::dra::parseDeviceClassJson(json).value());
  return std::make_shared<const gte::dra::ClassCatalog>(std::move(classes));
}

std::size_t heapInUse() {
  return mallinfo2().uordblks;
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Median CPU time of the calling thread: on a shared machine steadier than wall time.
template <typename F>
double medianMs(int iterations, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    const double start = threadCpuMs();
    f();
    times.push_back(threadCpuMs() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<gte::NodeCandidate> candidates(const gte::ClusterSnapshot& snapshot,
                                           const std::vector<std::string>& names) {
  std::vector<gte::NodeCandidate> out(names.size());
  snapshot.nodes.findAll(names, [&](std::size_t i, const gte::NodeStateShard::Found& found) {
    out[i] = gte::NodeCandidate{names[i], found.state, {}, found.plain};
  });
  return out;
}

gte::dra::ResourceClaimConstSharedPtr claim(const std::string& name, const std::string& devices) {
  return gte::dra::parseResourceClaimJson(R"({"metadata":{"name":")" + name +
                                          R"(","namespace":"ml"},"spec":{"devices":)" + devices +
                                          "}}")
      .value();
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 50;
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::mt19937 rng(42);

  // Device-plugin nodes: the baseline a DRA node's cost is measured against.
  std::size_t before = heapInUse();
  auto plugin = std::make_unique<gte::ClusterSnapshotBuilder>(policy);
  for (int i = 0; i < nodes; ++i)
    plugin->upsertNode(h100Node(i, true));
  plugin->setSynced(true);
  auto pluginSnapshot = plugin->build();
  const std::size_t pluginBytes = heapInUse() - before;
  pluginSnapshot.reset();
  plugin.reset();

  // DRA nodes.
  std::vector<std::string> slices;
  for (int i = 0; i < nodes; ++i)
    slices.push_back(gte::bench::resourceSliceJson(i, rng));
  before = heapInUse();
  gte::dra::SliceIndex index;
  auto start = Clock::now();
  for (const std::string& json : slices)
    index.upsert(gte::dra::parseResourceSliceJson(json).value());
  const double parseMs = msSince(start);
  const std::size_t sliceBytes = heapInUse() - before;
  slices.clear();
  slices.shrink_to_fit();

  gte::dra::AllocatedDevices allocated;
  std::uniform_int_distribution<int> busy(0, 6);
  for (int i = 0; i < nodes; ++i) {
    const std::string node = "gpu-node-" + std::to_string(i);
    for (int g = 0, n = busy(rng); g < n; ++g) {
      allocated.addExclusive("gpu.nvidia.com", node, "gpu-" + std::to_string(rng() % 8),
                             {"pod-" + std::to_string(i) + "-" + std::to_string(g)});
    }
  }
  auto objects = std::make_shared<gte::dra::DraObjectMaps>(nvidiaClasses());
  objects->add(claim(
      "two",
      R"({"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}]})"));
  objects->add(claim(
      "four-numa",
      R"({"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":4}}],"constraints":[{"matchAttribute":"resource.kubernetes.io/numaNode"}]})"));

  before = heapInUse();
  gte::ClusterSnapshotBuilder builder(policy);
  for (int i = 0; i < nodes; ++i)
    builder.upsertNode(h100Node(i, false));
  builder.setDra(&index, &allocated, objects);
  builder.setSynced(true);
  start = Clock::now();
  auto snapshot = builder.build();
  const double buildMs = msSince(start);
  const std::size_t draBytes = heapInUse() - before;

  std::printf("nodes %d, 8 GPU devices each (NVIDIA-shaped slices)\n", nodes);
  std::printf("slice parse                       %8.1f ms total, %6.1f us per slice\n", parseMs,
              1000 * parseMs / nodes);
  std::printf("heap per node: device plugin      %8zu bytes (NodeInfo, NodeState, answers)\n",
              pluginBytes / static_cast<std::size_t>(nodes));
  std::printf(
      "heap per node: DRA                %8zu bytes (same + DRA state), + slice %zu bytes\n",
      draBytes / static_cast<std::size_t>(nodes), sliceBytes / static_cast<std::size_t>(nodes));
  std::printf("DRA cost per node                 %8zu bytes (slice + DRA state + DRA node state)\n",
              (sliceBytes + draBytes - pluginBytes) / static_cast<std::size_t>(nodes));
  std::printf("snapshot build, all DRA nodes     %8.1f ms\n", buildMs);
  const double oneNode = medianMs(iterations, [&] {
    builder.draNodeChanged("gpu-node-17");
    snapshot = builder.build();
  });
  std::printf("one node's allocation changed     %8.3f ms (median CPU)\n", oneNode);

  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i)
    names.push_back("gpu-node-" + std::to_string(i));
  const std::vector<gte::NodeCandidate> all = candidates(*snapshot, names);
  const auto request = [&](const char* what, const gte::PodInfo& pod) {
    const auto demand = gte::parsePodDemand(pod, *policy, snapshot->dra.get());
    if (!demand.ok()) {
      std::fprintf(stderr, "%s: %s\n", what, demand.error().message.c_str());
      std::exit(1);
    }
    std::size_t fits = 0;
    const double ms = medianMs(iterations, [&] {
      const gte::FilterResult filtered = gte::filterNodes(demand, all, *policy);
      fits = filtered.count(gte::Verdict::kFit);
      std::vector<gte::NodeCandidate> kept;
      kept.reserve(fits);
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (filtered.nodes[i].verdict == gte::Verdict::kFit) kept.push_back(all[i]);
      }
      const gte::HostScores scores = gte::prioritizeNodes(&*demand, kept, *policy);
      if (scores.size() != kept.size()) std::abort();
    });
    std::printf("filter + prioritize: %-28s %8.3f ms (median CPU, %zu of %d nodes fit)\n", what, ms,
                fits, nodes);
  };
  gte::PodInfo two;
  two.name = "two";
  two.ns = "ml";
  two.resourceClaims.push_back({"gpus", "two", ""});
  request("2-GPU claim", two);
  gte::PodInfo four = two;
  four.resourceClaims[0].resourceClaimName = "four-numa";
  request("4-GPU claim, same NUMA", four);
  gte::PodInfo plain;
  plain.name = "plain";
  plain.ns = "ml";
  plain.requests.set("nvidia.com/gpu", gte::Quantity::fromUnits(2));
  request("nvidia.com/gpu: 2 via DRA", plain);

  // A group of 8 members planned over every node (no domain label: the per-node pass), members of
  // 2 GPUs asking "2 GPUs of the class" (decided from the node state's chain) or through the
  // claim-template tiers (the first-fit replica run member after member on each node).
  objects->add(claim("two-tiered",
                     R"({"requests":[{"name":"gpus","firstAvailable":[)"
                     R"({"name":"same-pcie-root","deviceClassName":"gpu.nvidia.com","count":2},)"
                     R"({"name":"any","deviceClassName":"gpu.nvidia.com","count":2}]}],)"
                     R"("constraints":[{"requests":["gpus/same-pcie-root"],)"
                     R"("matchAttribute":"resource.kubernetes.io/pcieRoot"}]})"));
  std::vector<gte::NodeGroupFacts> facts;
  facts.reserve(all.size());
  const gte::GroupDomainIds none{gte::kNoDomain, gte::kNoDomain, gte::kNoDomain, gte::kNoDomain};
  for (const gte::NodeCandidate& node : all)
    facts.push_back(gte::nodeGroupFacts(*node.state, none, *policy));
  std::vector<gte::GroupPlanNode> planNodes;
  for (std::size_t i = 0; i < all.size(); ++i)
    planNodes.push_back({all[i].name, all[i].state, &facts[i]});
  const auto plan = [&](const char* what, const std::string& claimName) {
    gte::PodInfo pod = two;
    pod.resourceClaims[0].resourceClaimName = claimName;
    const auto demand = gte::parsePodDemand(pod, *policy, snapshot->dra.get());
    const std::vector<gte::PodDemand> members(8, *demand);
    gte::GroupPlanInput in;
    in.group = "ml/bench";
    in.levels = policy->groups.levels;
    in.nodes = planNodes;
    in.members = members;
    gte::GroupPlanStatus status = gte::GroupPlanStatus::kUnplaced;
    const double ms = medianMs(iterations, [&] { status = gte::planGroup(in, *policy).status; });
    std::printf("plan a group of 8 x %-26s %8.3f ms (median CPU, %s)\n", what, ms,
                std::string(gte::groupPlanStatusName(status)).c_str());
  };
  plan("2-GPU claims", "two");
  plan("2-GPU tiered claims", "two-tiered");

  // Through the service, on the cluster cache: the same slices (regenerated from the same seed),
  // the NVIDIA classes and the 2-GPU claim, fed as the watches feed them.
  gte::cluster::ClusterState state(policy);
  state.enableDra();
  std::vector<gte::NodeInfo> draNodes;
  for (int i = 0; i < nodes; ++i)
    draNodes.push_back(h100Node(i, false));
  state.replaceNodes(std::move(draNodes));
  std::vector<gte::dra::DeviceClassConstSharedPtr> classes;
  for (const std::string& json : gte::bench::nvidiaDeviceClassJsons())
    classes.push_back(gte::dra::parseDeviceClassJson(json).value());
  state.replaceDeviceClasses(std::move(classes));
  std::mt19937 again(42);
  std::vector<gte::dra::ResourceSliceConstSharedPtr> parsed;
  for (int i = 0; i < nodes; ++i)
    parsed.push_back(
        gte::dra::parseResourceSliceJson(gte::bench::resourceSliceJson(i, again)).value());
  state.replaceResourceSlices(std::move(parsed));
  state.upsertResourceClaim(claim(
      "two",
      R"({"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}]})"));
  state.setSynced(true);
  auto backend = gte::testing::SnapshotBackend::of(state);
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  std::string nodeNames = R"(,"Nodes":null,"NodeNames":[)";
  for (std::size_t i = 0; i < names.size(); ++i)
    nodeNames += std::string(i ? "," : "") + "\"" + names[i] + "\"";
  nodeNames += "]}";
  const std::string claimBody =
      R"({"Pod":{"metadata":{"name":"two","namespace":"ml","uid":"two-uid"},"spec":{)"
      R"("containers":[{"name":"m"}],"resourceClaims":[{"name":"gpus","resourceClaimName":)"
      R"("two"}]}})" +
      nodeNames;
  const std::string gpuBody =
      R"({"Pod":{"metadata":{"name":"plain","namespace":"ml","uid":"plain-uid"},"spec":{)"
      R"("containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})" +
      nodeNames;
  std::vector<double> claimTimes;
  std::vector<double> gpuTimes;
  for (int i = 0; i < iterations; ++i) {
    for (const bool claimPod : {true, false}) {
      const std::string& body = claimPod ? claimBody : gpuBody;
      const double t0 = threadCpuMs();
      if (service.filter(body).status != 200 || service.prioritize(body).status != 200) {
        std::abort();
      }
      (claimPod ? claimTimes : gpuTimes).push_back(threadCpuMs() - t0);
    }
  }
  std::sort(claimTimes.begin(), claimTimes.end());
  std::sort(gpuTimes.begin(), gpuTimes.end());
  const double claimMs = claimTimes[claimTimes.size() / 2];
  const double gpuMs = gpuTimes[gpuTimes.size() / 2];
  std::printf("service, filter + prioritize: 2-GPU claim   %8.3f ms (median CPU, alternated)\n",
              claimMs);
  std::printf("service, filter + prioritize: nvidia.com/gpu: 2 %6.3f ms (median CPU, alternated)\n",
              gpuMs);
  std::printf("service, claim / nvidia.com/gpu                %8.2f x\n", claimMs / gpuMs);
  return 0;
}
