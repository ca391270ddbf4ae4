// The metrics an operator alerts on and the dashboard draws, as the observer derives them from a
// cluster snapshot: sync, label age and fragmentation of free GPUs by NVLink set size.
#include "app/cluster_observer.h"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "cluster/cluster_file.h"
#include "cluster/static_cluster_backend.h"
#include "metrics/metrics.h"
#include "policy/default_policy.h"

namespace gte::app {
namespace {

constexpr std::int64_t kGen = 1764670000;

// A DGX-1V with GPUs 2 and 5 in use (the labels-v1 worked example) whose agent wrote 400 s ago,
// a DGX-1V with everything free written 2 h ago, and a node with only GPU Feature Discovery labels
// (4 GPUs, links unknown, no gen).
constexpr const char* kCluster = R"(
apiVersion: v1
kind: List
items:
  - kind: Node
    metadata:
      name: busy
      labels:
        gputopo.dev/v: "1"
        gputopo.dev/n: "8"
        gputopo.dev/model: Tesla-V100-SXM2-16GB
        gputopo.dev/fabric: mesh
        gputopo.dev/nvl: "1122000210200200100001112212"
        gputopo.dev/pci: PHHSSSSHHSSSSPSSSSSSSSPHHHHP
        gputopo.dev/numa: "00001111"
        gputopo.dev/health: "11111111"
        gputopo.dev/mig: nnnnnnnn
        gputopo.dev/used: "00100100"
        gputopo.dev/gen: "1764670000"
    status: {allocatable: {nvidia.com/gpu: "8"}}
  - kind: Node
    metadata:
      name: idle
      labels:
        gputopo.dev/v: "1"
        gputopo.dev/n: "8"
        gputopo.dev/model: Tesla-V100-SXM2-16GB
        gputopo.dev/fabric: mesh
        gputopo.dev/nvl: "1122000210200200100001112212"
        gputopo.dev/pci: PHHSSSSHHSSSSPSSSSSSSSPHHHHP
        gputopo.dev/numa: "00001111"
        gputopo.dev/health: "11111111"
        gputopo.dev/mig: nnnnnnnn
        gputopo.dev/used: "00000000"
        gputopo.dev/gen: "1764663200"
    status: {allocatable: {nvidia.com/gpu: "8"}}
  - kind: Node
    metadata:
      name: gfd
      labels:
        nvidia.com/gpu.count: "4"
        nvidia.com/gpu.product: NVIDIA-L40S
    status: {allocatable: {nvidia.com/gpu: "4"}}
)";

// The value of one exported series, or -1 when the scrape lacks it.
double valueOf(const std::string& scrape, const std::string& series) {
  const std::string prefix = series + " ";
  const auto at = scrape.find("\n" + prefix);
  if (at == std::string::npos) return -1;
  return std::stod(scrape.substr(at + 1 + prefix.size()));
}

// The scrape after `observations` observations of the cluster file `doc`, 400 s after kGen.
std::string scrapeAfterObserving(const std::string& doc, int observations) {
  auto contents = cluster::parseClusterDocument(doc);
  REQUIRE(contents.ok());
  cluster::StaticClusterBackend backend(std::move(*contents),
                                        std::make_shared<const Policy>(defaultPolicy()));
  metrics::Metrics metrics;
  ClusterObserver observer(
      backend, [] { return CacheCounts{}; }, metrics, std::chrono::hours(1),
      [] { return kGen + 400; });
  for (int i = 0; i < observations; ++i)
    observer.observe();
  return metrics.serialize();
}

}  // namespace

TEST_CASE("observer: cache sync, label age and free GPUs by NVLink set size") {
  // Twice: the age distribution is replaced, not accumulated.
  const std::string scrape = scrapeAfterObserving(kCluster, 2);

  CHECK(valueOf(scrape, "gpu_topology_extender_cache_synced") == 1);
  // Ages 400 s and 7,200 s; the GFD node has no gen and is not counted.
  CHECK(valueOf(scrape, "gpu_topology_extender_node_label_age_max_seconds") == 7200);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_node_label_age_seconds_bucket{le="300"})") == 0);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_node_label_age_seconds_bucket{le="900"})") == 1);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_node_label_age_seconds_bucket{le="3600"})") == 1);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_node_label_age_seconds_bucket{le="21600"})") == 2);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_node_label_age_seconds_bucket{le="+Inf"})") == 2);
  CHECK(valueOf(scrape, "gpu_topology_extender_node_label_age_seconds_count") == 2);
  CHECK(valueOf(scrape, "gpu_topology_extender_node_label_age_seconds_sum") == 7600);
  // busy: with GPUs 2 and 5 taken each free GPU still has an all-NVLink triple ({0,1,3} and
  // {4,6,7}); idle: the cube-mesh's two quads; gfd: 4 GPUs with unknown links.
  CHECK(valueOf(scrape, R"(gpu_topology_extender_free_gpus{nvlink_set="3-4"})") == 6 + 8);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_free_gpus{nvlink_set="1"})") == 0);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_free_gpus{nvlink_set="unknown"})") == 4);

  // The snapshot's health figures per pool (the GPU model here). Tesla-V100 pool: busy (free
  // {0,1,3,4,6,7}) and idle (all free). 2-GPU pods: 3 + 4 hostable, (6 + 8) / 2 = 7 if packed.
  // 4-GPU pods: 0 + 2 hostable against 14 / 4 = 3 packed: one of debt; busy's 6 free GPUs are in
  // no free NVLink quad.
  const std::string v100 = R"(pool="Tesla-V100-SXM2-16GB")";
  CHECK(valueOf(scrape,
                "gpu_topology_extender_fragmentation_hostable_pods{k=\"2\"," + v100 + "}") == 7);
  CHECK(valueOf(scrape, "gpu_topology_extender_fragmentation_packed_pods{k=\"4\"," + v100 + "}") ==
        3);
  CHECK(valueOf(scrape,
                "gpu_topology_extender_fragmentation_hostable_pods{k=\"4\"," + v100 + "}") == 2);
  CHECK(valueOf(scrape,
                "gpu_topology_extender_fragmentation_stranded_gpus{k=\"4\"," + v100 + "}") == 6);
  // FGD-style: busy's 12 unusable GPU-sizes / 4 = 3; idle none.
  CHECK(valueOf(scrape, "gpu_topology_extender_fragmentation_expected_gpus{" + v100 + "}") == 3);
  CHECK(valueOf(scrape, "gpu_topology_extender_fragmentation_free_gpus{" + v100 + "}") == 14);
  // The GFD node: model NVIDIA-L40S, links unknown: any 2 free GPUs count, no NVLink sets.
  const std::string l40s = R"(pool="NVIDIA-L40S")";
  CHECK(valueOf(scrape,
                "gpu_topology_extender_fragmentation_hostable_pods{k=\"2\"," + l40s + "}") == 2);
  CHECK(valueOf(scrape, "gpu_topology_extender_fragmentation_nvlink_sets{k=\"2\"," + l40s + "}") ==
        0);
}

TEST_CASE("observer: replicas and tenants of shared GPUs, per pool") {
  // The busy DGX-1V above, time-sliced 4 ways by the device plugin; the agent counted 3, 2 and 1
  // pods' replicas on GPUs 0-2 (`tenants`, base 36).
  std::string doc = kCluster;
  const std::string busy = "      name: busy\n      labels:\n";
  doc.replace(doc.find(busy), busy.size(),
              busy +
                  "        nvidia.com/gpu.sharing-strategy: time-slicing\n"
                  "        nvidia.com/gpu.replicas: \"4\"\n"
                  "        gputopo.dev/tenants: \"32100000\"\n");
  const std::string scrape = scrapeAfterObserving(doc, 1);
  const std::string v100 = R"(pool="Tesla-V100-SXM2-16GB")";
  // Shared: busy's 8 GPUs, 32 replicas, 6 held; idle's whole GPUs count nothing.
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_gpus{" + v100 + "}") == 8);
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_replicas{" + v100 + ",state=\"used\"}") == 6);
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_replicas{" + v100 + ",state=\"free\"}") ==
        26);
  // Tenants per shared GPU, sorted 0,0,0,0,0,1,2,3: the median GPU holds none, the busiest 3.
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_gpu_tenants{" + v100 + ",stat=\"p50\"}") ==
        0);
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_gpu_tenants{" + v100 + ",stat=\"p95\"}") ==
        3);
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_gpu_tenants{" + v100 + ",stat=\"max\"}") ==
        3);
  const std::string l40s = R"(pool="NVIDIA-L40S")";
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_gpus{" + l40s + "}") == 0);
  // No MIG device is shared here: the pool's series read 0.
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_mig_replicas{" + v100 + ",state=\"used\"}") ==
        0);
  CHECK(valueOf(scrape, "gpu_topology_extender_shared_mig_replicas{" + v100 + ",state=\"free\"}") ==
        0);
}

namespace {

// Counts a test changes between observations. The observer's own thread observes once at start,
// at any point of a test: it reads them under the lock, and the results must come out the same
// whatever the interleaving.
struct SharedCounts {
  std::mutex mutex;
  CacheCounts counts;

  std::function<CacheCounts()> reader() {
    return [this] {
      std::lock_guard lock(mutex);
      return counts;
    };
  }
  template <class Change>
  void change(Change&& apply) {
    std::lock_guard lock(mutex);
    apply(counts);
  }
};

}  // namespace

TEST_CASE("observer: watch lists, failures and skipped objects become counter increments") {
  cluster::StaticClusterBackend backend(cluster::ClusterFileContents{},
                                        std::make_shared<const Policy>(defaultPolicy()));
  metrics::Metrics metrics;
  SharedCounts shared;
  const auto podGroups = static_cast<std::size_t>(metrics::WatchedResource::kPodGroups);
  shared.change([&](CacheCounts& counts) {
    counts.watched = true;
    counts.watches[0] = WatchTotals{1, 0, 0, true};          // nodes
    counts.watches[1] = WatchTotals{1, 3, 0, true};          // pods
    counts.watches[podGroups] = WatchTotals{1, 0, 1, true};  // one PodGroup did not read
  });
  ClusterObserver observer(backend, shared.reader(), metrics, std::chrono::hours(1));
  observer.observe();
  shared.change([&](CacheCounts& counts) {
    counts.watches[1] = WatchTotals{2, 5, 0, true};          // a re-list after two more failures
    counts.watches[podGroups] = WatchTotals{1, 0, 3, true};  // two more bad PodGroups
  });
  observer.observe();
  observer.observe();  // nothing new: no increment
  const std::string scrape = metrics.serialize();
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_lists_total{resource="nodes"})") == 1);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_lists_total{resource="pods"})") == 2);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_failures_total{resource="pods"})") == 5);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_lists_total{resource="podgroups"})") == 1);
  CHECK(valueOf(scrape,
                R"(gpu_topology_extender_watch_skipped_objects_total{resource="podgroups"})") == 3);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_lists_total{resource="jobsets"})") == 0);
}

TEST_CASE("observer: a resource the API server does not serve reads 0, one it serves 1") {
  // An older control plane (no PodGroup API, no DeviceTaintRules): the admin's dashboard says which
  // features are off, instead of an error loop or silence.
  cluster::StaticClusterBackend backend(cluster::ClusterFileContents{},
                                        std::make_shared<const Policy>(defaultPolicy()));
  metrics::Metrics metrics;
  const auto at = [](metrics::WatchedResource r) { return static_cast<std::size_t>(r); };
  SharedCounts shared;
  shared.change([&](CacheCounts& counts) {
    counts.watched = true;
    counts.watches[at(metrics::WatchedResource::kNodes)].served = true;
    counts.watches[at(metrics::WatchedResource::kPodGroups)].served = false;
    counts.watches[at(metrics::WatchedResource::kDeviceTaintRules)].served = false;
    // kJobSets: discovery has not answered yet (no series at all).
  });
  ClusterObserver observer(backend, shared.reader(), metrics, std::chrono::hours(1));
  observer.observe();
  std::string scrape = metrics.serialize();
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_served{resource="nodes"})") == 1);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_served{resource="podgroups"})") == 0);
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_served{resource="devicetaintrules"})") == 0);
  CHECK(scrape.find(R"(gpu_topology_extender_watch_served{resource="jobsets"})") ==
        std::string::npos);
  shared.change([&](CacheCounts& counts) {  // the control plane was upgraded: PodGroups served
    counts.watches[at(metrics::WatchedResource::kPodGroups)].served = true;
  });
  observer.observe();
  scrape = metrics.serialize();
  CHECK(valueOf(scrape, R"(gpu_topology_extender_watch_served{resource="podgroups"})") == 1);
}

}  // namespace gte::app
