// Memory and update cost of the cluster cache at scale: 5,000 GPU nodes and 100,000 pods fed
// through the same path as the API-server list (JSON -> the sinks' readers -> NodeCacheSink /
// PodCacheSink -> ClusterState), one object at a time as a paged list delivers them. Prints heap
// bytes in use (mallinfo2) and RSS before and after each step, per object, and the time of single
// watch events.
//
// With `dra`, the nodes carry no device plugin and their GPUs come through DRA as in `serve --dra`:
// the NVIDIA driver's DeviceClasses, one ResourceSlice per node (8 H100 devices) and `claims`
// ResourceClaims of 1-8 GPUs (allocated where they fit on their node, the rest pending), listed
// through the DRA sinks after the pods; then a stream of claim releases and allocations, each one
// watch event to a new snapshot.
//
//   bench_cluster_state [nodes=5000] [pods=100000] [dra [claims=20000]]
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "api_objects.h"
#include "cluster/apiserver/cache_sinks.h"
#include "cluster/apiserver/dra_sinks.h"
#include "cluster/cluster_state.h"
#include "json/json_reader.h"
#include "policy/default_policy.h"

namespace {

using Clock = std::chrono::steady_clock;
using gte::bench::nodeJson;
using gte::bench::podJson;

struct Memory {
  std::size_t heap = 0;  // bytes malloc has handed out and not got back
  std::size_t rss = 0;
};

Memory measure() {
  malloc_trim(0);
  Memory m;
  m.heap = mallinfo2().uordblks + mallinfo2().hblkhd;
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  m.rss = resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return m;
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

using gte::kube::ReflectorSink;
using gte::kube::WatchEventType;

// One object as a list page or a watch event delivers it: read by the sink's reader where it
// stands, then listed or applied.
bool listed(ReflectorSink& sink, const std::string& json) {
  gte::json::JsonReader reader(json);
  return sink.read(reader).ok() && sink.listItem().ok();
}

bool applied(ReflectorSink& sink, WatchEventType type, const std::string& json) {
  gte::json::JsonReader reader(json);
  return sink.read(reader).ok() && sink.apply(type).ok();
}

double perCent(std::vector<double>& times, int pct) {
  std::sort(times.begin(), times.end());
  return times[times.size() * static_cast<std::size_t>(pct) / 100];
}

// Claim i of the DRA run: on node i % nodes, the (i / nodes)-th of that node, its size from the
// node's pattern (each pattern fills the node's 8 GPUs; 8 + 1 + 1 + 1 leaves three pending).
struct PlannedClaim {
  std::string node;
  std::vector<int> devices;  // device names gpu-<k>
  bool allocated = false;
};

std::vector<PlannedClaim> planClaims(int claimCount, int nodeCount) {
  constexpr int kSizes[4][4] = {{1, 1, 2, 4}, {2, 2, 2, 2}, {4, 2, 1, 1}, {8, 1, 1, 1}};
  std::vector<int> used(static_cast<std::size_t>(nodeCount), 0);
  std::vector<PlannedClaim> out;
  for (int i = 0; i < claimCount; ++i) {
    const int node = i % nodeCount;
    const int size = kSizes[node % 4][(i / nodeCount) % 4];
    PlannedClaim claim{"gpu-node-" + std::to_string(node), {}, false};
    int& taken = used[static_cast<std::size_t>(node)];
    claim.allocated = taken + size <= 8;
    for (int k = 0; k < size; ++k)
      claim.devices.push_back(claim.allocated ? taken + k : k);
    if (claim.allocated) taken += size;
    out.push_back(std::move(claim));
  }
  return out;
}

// The DRA watches of `serve --dra` at scale; prints their memory, list times and claim events.
int benchDra(const std::shared_ptr<gte::cluster::ClusterState>& state, int nodeCount,
             int claimCount) {
  auto classSink = gte::kube::reflectorSink<gte::cluster::WatchedClass>(
      gte::cluster::readWatchedClass, gte::cluster::makeClassSink(state, [] {}));
  auto sliceSink = gte::kube::reflectorSink<gte::cluster::WatchedSlice>(
      gte::cluster::readWatchedSlice, gte::cluster::makeSliceSink(state, [] {}));
  auto claimSink = gte::kube::reflectorSink<gte::cluster::WatchedClaim>(
      gte::cluster::readWatchedClaim, gte::cluster::makeClaimSink(state, [] {}));
  const std::vector<PlannedClaim> plan = planClaims(claimCount, nodeCount);
  std::size_t allocatedClaims = 0;
  std::size_t allocatedDevices = 0;
  for (const PlannedClaim& claim : plan) {
    allocatedClaims += claim.allocated ? 1 : 0;
    allocatedDevices += claim.allocated ? claim.devices.size() : 0;
  }

  const Memory start = measure();
  auto t0 = Clock::now();
  classSink->beginList();
  for (const std::string& json : gte::bench::nvidiaDeviceClassJsons()) {
    if (!listed(*classSink, json)) return 1;
  }
  classSink->endList();
  const auto classListTime = Clock::now() - t0;

  std::mt19937 rng(42);
  const Memory beforeSlices = measure();
  t0 = Clock::now();
  sliceSink->beginList();
  for (int i = 0; i < nodeCount; ++i) {
    if (!listed(*sliceSink, gte::bench::resourceSliceJson(i, rng))) return 1;
  }
  const Memory slicesRead = measure();  // the parsed slices, held by the sink until endList
  sliceSink->endList();
  const auto sliceListTime = Clock::now() - t0;
  const Memory afterSlices = measure();

  t0 = Clock::now();
  claimSink->beginList();
  for (int i = 0; i < claimCount; ++i) {
    const PlannedClaim& c = plan[static_cast<std::size_t>(i)];
    if (!listed(*claimSink, gte::bench::resourceClaimJson(i, c.node, c.devices, c.allocated)))
      return 1;
  }
  const Memory claimsRead = measure();
  claimSink->endList();
  const auto claimListTime = Clock::now() - t0;
  const Memory afterClaims = measure();

  // Claim events: an allocated claim released (its allocation cleared), then allocated again.
  std::vector<double> releases;
  std::vector<double> allocations;
  for (int e = 0, i = 0; e < 500; ++e, i = (i + 7919) % claimCount) {
    while (!plan[static_cast<std::size_t>(i)].allocated)
      i = (i + 1) % claimCount;
    const PlannedClaim& c = plan[static_cast<std::size_t>(i)];
    const std::string released = gte::bench::resourceClaimJson(i, c.node, c.devices, false);
    const std::string allocated = gte::bench::resourceClaimJson(i, c.node, c.devices, true);
    t0 = Clock::now();
    if (!applied(*claimSink, WatchEventType::kModified, released)) return 1;
    releases.push_back(ms(Clock::now() - t0));
    t0 = Clock::now();
    if (!applied(*claimSink, WatchEventType::kModified, allocated)) return 1;
    allocations.push_back(ms(Clock::now() - t0));
  }
  // A driver republishing a node's slice unchanged but for its resourceVersion.
  std::vector<double> sliceEvents;
  for (int e = 0; e < 200; ++e) {
    const std::string json = gte::bench::resourceSliceJson((e * 37) % nodeCount, rng);
    t0 = Clock::now();
    if (!applied(*sliceSink, WatchEventType::kModified, json)) return 1;
    sliceEvents.push_back(ms(Clock::now() - t0));
  }

  // The gpu DeviceClass edited: outside its selection (a label; nothing re-derived), then its
  // extendedResourceName dropped and restored (every node's class matches recomputed).
  const std::string gpuClass = gte::bench::nvidiaDeviceClassJsons().front();
  std::string narrowed = gpuClass;
  const std::string backing = R"(,"extendedResourceName":"nvidia.com/gpu")";
  narrowed.erase(narrowed.find(backing), backing.size());
  std::vector<double> classRelabelled;
  std::vector<double> classChanged;
  for (int e = 0; e < 10; ++e) {
    const std::string& now = e % 2 ? narrowed : gpuClass;  // as the class stands
    t0 = Clock::now();
    if (!applied(*classSink, WatchEventType::kModified, now)) return 1;
    classRelabelled.push_back(ms(Clock::now() - t0));
    t0 = Clock::now();
    if (!applied(*classSink, WatchEventType::kModified, e % 2 ? gpuClass : narrowed)) return 1;
    classChanged.push_back(ms(Clock::now() - t0));
  }
  if (!applied(*classSink, WatchEventType::kModified, gpuClass)) return 1;

  // DeviceTaintRules: one node's pool tainted (its slice re-merged, that node re-derived), the
  // rule's status updated by the eviction controller (nothing re-derived), the rule deleted; then
  // a rule on every device of the driver (every slice copied, every node re-derived) and deleted.
  auto ruleSink = gte::kube::reflectorSink<gte::cluster::WatchedTaintRule>(
      gte::cluster::readWatchedTaintRule, gte::cluster::makeTaintRuleSink(state, [] {}));
  ruleSink->beginList();
  ruleSink->endList();
  const auto ruleJson = [](const std::string& selector, int version, const char* status) {
    return R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"maintenance","resourceVersion":")" +
           std::to_string(version) + R"("},"spec":{"deviceSelector":)" + selector +
           R"(,"taint":{"key":"example.com/maintenance","effect":"NoSchedule"}},"status":{"conditions":[{"type":"EvictionInProgress","status":")" +
           status + R"("}]}})";
  };
  std::vector<double> ruleAdded;
  std::vector<double> ruleStatus;
  std::vector<double> ruleDeleted;
  for (int e = 0; e < 200; ++e) {
    const std::string pool = R"({"pool":"gpu-node-)" + std::to_string((e * 37) % nodeCount) + "\"}";
    t0 = Clock::now();
    if (!applied(*ruleSink, WatchEventType::kAdded, ruleJson(pool, 1, "True"))) return 1;
    ruleAdded.push_back(ms(Clock::now() - t0));
    t0 = Clock::now();
    if (!applied(*ruleSink, WatchEventType::kModified, ruleJson(pool, 2, "False"))) return 1;
    ruleStatus.push_back(ms(Clock::now() - t0));
    t0 = Clock::now();
    if (!applied(*ruleSink, WatchEventType::kDeleted, ruleJson(pool, 3, "False"))) return 1;
    ruleDeleted.push_back(ms(Clock::now() - t0));
  }
  std::vector<double> ruleEveryNode;
  for (int e = 0; e < 4; ++e) {
    const std::string driver = R"({"driver":"gpu.nvidia.com"})";
    t0 = Clock::now();
    if (!applied(*ruleSink, WatchEventType::kAdded, ruleJson(driver, 1, "True"))) return 1;
    ruleEveryNode.push_back(ms(Clock::now() - t0));
    t0 = Clock::now();
    if (!applied(*ruleSink, WatchEventType::kDeleted, ruleJson(driver, 2, "True"))) return 1;
    ruleEveryNode.push_back(ms(Clock::now() - t0));
  }

  const gte::cluster::DraCounts counts = state->draCounts();
  const double mib = 1024.0 * 1024.0;
  const double devices = 8.0 * nodeCount;
  std::printf(
      "DRA: %zu slices (%.0f devices), %zu classes, %zu claims (%zu allocated, %zu devices "
      "held)\n",
      counts.slices, devices, counts.classes, counts.claims, allocatedClaims, allocatedDevices);
  std::printf("DRA class list: %.1f ms\n", ms(classListTime));
  std::printf(
      "DRA slice list: %.0f ms; heap +%.1f MiB (%.0f bytes/slice, %.0f bytes/device), RSS "
      "+%.1f MiB\n",
      ms(sliceListTime), static_cast<double>(afterSlices.heap - beforeSlices.heap) / mib,
      static_cast<double>(afterSlices.heap - beforeSlices.heap) / nodeCount,
      static_cast<double>(afterSlices.heap - beforeSlices.heap) / devices,
      static_cast<double>(afterSlices.rss - beforeSlices.rss) / mib);
  std::printf("DRA claim list: %.0f ms; heap +%.1f MiB (%.0f bytes/claim), RSS +%.1f MiB\n",
              ms(claimListTime), static_cast<double>(afterClaims.heap - afterSlices.heap) / mib,
              static_cast<double>(afterClaims.heap - afterSlices.heap) / claimCount,
              static_cast<double>(afterClaims.rss - afterSlices.rss) / mib);
  std::printf(
      "DRA parsed objects: %.0f bytes/slice, %.0f bytes/claim; the rest is the cache's indexes "
      "and node states\n",
      static_cast<double>(slicesRead.heap - beforeSlices.heap) / nodeCount,
      static_cast<double>(claimsRead.heap - afterSlices.heap) / claimCount);
  std::printf("DRA total: heap +%.1f MiB (%.0f bytes/node), RSS +%.1f MiB\n",
              static_cast<double>(afterClaims.heap - start.heap) / mib,
              static_cast<double>(afterClaims.heap - start.heap) / nodeCount,
              static_cast<double>(afterClaims.rss - start.rss) / mib);
  std::printf(
      "watch event -> new snapshot: claim released p50 %.3f ms p99 %.3f ms; claim allocated p50 "
      "%.3f ms p99 %.3f ms; slice republished p50 %.3f ms p99 %.3f ms\n",
      perCent(releases, 50), perCent(releases, 99), perCent(allocations, 50),
      perCent(allocations, 99), perCent(sliceEvents, 50), perCent(sliceEvents, 99));
  std::printf(
      "watch event -> new snapshot: device class relabelled p50 %.3f ms; its selection changed "
      "p50 %.0f ms\n",
      perCent(classRelabelled, 50), perCent(classChanged, 50));
  std::printf(
      "watch event -> new snapshot: taint rule on one node's pool added p50 %.3f ms p99 %.3f ms, "
      "status updated p50 %.3f ms, deleted p50 %.3f ms; rule on every device added or deleted "
      "p50 %.0f ms\n",
      perCent(ruleAdded, 50), perCent(ruleAdded, 99), perCent(ruleStatus, 50),
      perCent(ruleDeleted, 50), perCent(ruleEveryNode, 50));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodeCount = argc > 1 ? std::stoi(argv[1]) : 5000;
  const int podCount = argc > 2 ? std::stoi(argv[2]) : 100000;
  const bool dra = argc > 3 && std::string(argv[3]) == "dra";
  const int claimCount = argc > 4 ? std::stoi(argv[4]) : 20000;
  auto state = std::make_shared<gte::cluster::ClusterState>(
      std::make_shared<const gte::Policy>(gte::defaultPolicy()));
  auto nodeSink = gte::kube::reflectorSink<gte::NodeInfo>(
      gte::readNodeJson, std::make_shared<gte::cluster::NodeCacheSink>(state, [] {}));
  auto podSink = gte::kube::reflectorSink<gte::PodInfo>(
      gte::readPodJson, std::make_shared<gte::cluster::PodCacheSink>(state, [] {}));
  ReflectorSink& nodes = *nodeSink;
  ReflectorSink& pods = *podSink;
  if (dra) state->enableDra();

  const Memory start = measure();
  auto t0 = Clock::now();
  nodes.beginList();
  for (int i = 0; i < nodeCount; ++i) {
    if (!listed(nodes, nodeJson(i, i % 4 == 0 ? "11110000" : "00000000", !dra))) return 1;
  }
  nodes.endList();
  const auto nodeListTime = Clock::now() - t0;
  const Memory afterNodes = measure();

  t0 = Clock::now();
  pods.beginList();
  for (int i = 0; i < podCount; ++i) {
    const std::string node = "gpu-node-" + std::to_string(i % nodeCount);
    const bool nominated = i % 20 == 19;                  // 5% waiting on a nominated node
    const int gpus = i % 10 == 0 ? 1 + (i / 10) % 2 : 0;  // 10% GPU pods of 1-2 GPUs
    // One GPU pod in ten was bound after the agent's last write: counted by prediction.
    const bool recent = gpus > 0 && (i / 10) % 10 == 0;
    const std::string when = recent ? "2025-12-02T10:10:00Z" : "2025-12-01T00:00:00Z";
    if (!listed(pods, podJson(i, node, nominated, gpus, when))) return 1;
  }
  pods.endList();
  const auto podListTime = Clock::now() - t0;
  const Memory afterPods = measure();

  // Single watch events after the lists: a pod bound, a node's labels rewritten.
  std::vector<double> podEvents;
  std::vector<double> nodeEvents;
  for (int i = 0; i < 200; ++i) {
    const std::string json =
        podJson(podCount + i, "gpu-node-" + std::to_string(i), false, 2, "2026-01-01T00:00:00Z");
    t0 = Clock::now();
    if (!applied(pods, WatchEventType::kAdded, json)) return 1;
    podEvents.push_back(ms(Clock::now() - t0));
    const std::string node = nodeJson(i, i % 2 ? "11000000" : "00110000", !dra);
    t0 = Clock::now();
    if (!applied(nodes, WatchEventType::kModified, node)) return 1;
    nodeEvents.push_back(ms(Clock::now() - t0));
  }
  std::sort(podEvents.begin(), podEvents.end());
  std::sort(nodeEvents.begin(), nodeEvents.end());

  // A new snapshot that re-derives no node (the synced flag flips): the cost of the map copy alone.
  std::vector<double> republish;
  for (int i = 0; i < 100; ++i) {
    t0 = Clock::now();
    state->setSynced(i % 2 == 0);
    republish.push_back(ms(Clock::now() - t0));
  }
  std::sort(republish.begin(), republish.end());
  // The common events change nothing the accounting sees: pod status updates, node heartbeats.
  std::vector<double> quietEvents;
  for (int i = 0; i < 2000; ++i) {
    const std::string node = "gpu-node-" + std::to_string(1000 + i % 1000);
    const std::string pod =
        i % 2
            ? podJson(1000 + i, node, false, 0, "2025-12-01T00:00:00Z")
            : nodeJson(1000 + i % 1000, (1000 + i % 1000) % 4 == 0 ? "11110000" : "00000000", !dra);
    t0 = Clock::now();
    const bool good = applied(i % 2 ? pods : nodes, WatchEventType::kModified, pod);
    quietEvents.push_back(ms(Clock::now() - t0));
    if (!good) return 1;
  }
  std::sort(quietEvents.begin(), quietEvents.end());

  std::vector<double> reads;
  for (int i = 0; i < 100000; ++i) {
    t0 = Clock::now();
    auto snapshot = state->snapshot();
    reads.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  std::sort(reads.begin(), reads.end());

  const double mib = 1024.0 * 1024.0;
  std::printf("nodes: %d, cached pods: %zu (of %d listed), snapshot nodes: %zu\n", nodeCount,
              state->podCount(), podCount, state->snapshot()->nodes.size());
  std::printf("node list: %.0f ms; heap +%.1f MiB (%.0f bytes/node), RSS +%.1f MiB\n",
              ms(nodeListTime), static_cast<double>(afterNodes.heap - start.heap) / mib,
              static_cast<double>(afterNodes.heap - start.heap) / nodeCount,
              static_cast<double>(afterNodes.rss - start.rss) / mib);
  std::printf("pod list: %.0f ms; heap +%.1f MiB (%.0f bytes/pod), RSS +%.1f MiB\n",
              ms(podListTime), static_cast<double>(afterPods.heap - afterNodes.heap) / mib,
              static_cast<double>(afterPods.heap - afterNodes.heap) / podCount,
              static_cast<double>(afterPods.rss - afterNodes.rss) / mib);
  std::printf(
      "watch event -> new snapshot: pod added p50 %.2f ms p99 %.2f ms; "
      "node labels changed p50 %.2f ms p99 %.2f ms\n",
      podEvents[podEvents.size() / 2], podEvents[podEvents.size() * 99 / 100],
      nodeEvents[nodeEvents.size() / 2], nodeEvents[nodeEvents.size() * 99 / 100]);
  std::printf(
      "watch event changing no accounting (status update, heartbeat): p50 %.3f ms "
      "p99 %.3f ms\n",
      quietEvents[quietEvents.size() / 2], quietEvents[quietEvents.size() * 99 / 100]);
  std::printf("new snapshot re-deriving no node (node map copy only): p50 %.2f ms\n",
              republish[republish.size() / 2]);
  std::printf("snapshot() read: p50 %.0f ns p99 %.0f ns\n", reads[reads.size() / 2],
              reads[reads.size() * 99 / 100]);
  return dra ? benchDra(state, nodeCount, claimCount) : 0;
}
