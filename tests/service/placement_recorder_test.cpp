// Placement regret's memory (service/placement_recorder.h): a decision becomes a regret when its
// pod is seen bound, counted in the metrics; the entries stay bounded by count and age, and a
// deleted pod's entry goes.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <thread>
#include <vector>

#include "metrics/metrics.h"
#include "service/placement_recorder.h"

namespace gte {
namespace {

PlacementDecision twoGpuDecision() {
  PlacementDecision d;
  d.gpus = 2;
  d.clusterBest = {LinkClass::kNvlink, 50};  // an NV2 pair somewhere
  d.feasibleBest = {LinkClass::kPix, 16};    // the candidates offered PIX at best
  d.topWorst = {LinkClass::kPix, 16};
  d.bestNode = "pcie-a";
  d.topNode = "pcie-a";
  return d;
}

PodPlacement placedOn(const std::string& uid, const std::string& node, SetQuality got) {
  PodPlacement p;
  p.uid = uid;
  p.ns = "ml";
  p.name = uid;
  p.node = node;
  p.gpus = 2;
  p.indices = {0, 1};
  p.got = got;
  return p;
}

bool scrapeHas(const metrics::Metrics& m, const std::string& line) {
  return m.serialize().find(line) != std::string::npos;
}

TEST_CASE("a decided pod seen bound gets its regret, in explain and in the metrics",
          "[service][regret]") {
  metrics::Metrics metrics;
  PlacementRecorder recorder(&metrics);
  recorder.decided("u1", twoGpuDecision());
  REQUIRE(recorder.find("u1").has_value());
  CHECK_FALSE(recorder.find("u1")->placed);

  recorder.placed(placedOn("u1", "pcie-a", {LinkClass::kPix, 16}));
  const auto record = recorder.find("u1");
  REQUIRE(record.has_value());
  CHECK(record->placed);
  CHECK(record->placement.node == "pcie-a");
  // 1 - 16/50 = 0.68; nothing the pod could use was better.
  CHECK(record->regret.measured);
  CHECK(record->regret.ratio > 0.679);
  CHECK(record->regret.ratio < 0.681);
  CHECK(record->regret.reason == RegretReason::kNoBetterFit);
  CHECK(record->regret.belowBestClass);
  CHECK(scrapeHas(metrics, "gpu_topology_extender_placement_regret_ratio_count{k=\"2\"} 1"));
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_below_best_class_total{k=\"2\",reason=\"no_"
                  "better_fit\"} 1"));
  // 0.68 is in the 0.75 bucket, not in the 0.5 one.
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_regret_ratio_bucket{k=\"2\",le=\"0.5\"} 0"));
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_regret_ratio_bucket{k=\"2\",le=\"0.75\"} 1"));

  // The same binding reported again counts once.
  recorder.placed(placedOn("u1", "pcie-a", {LinkClass::kPix, 16}));
  CHECK(scrapeHas(metrics, "gpu_topology_extender_placement_regret_ratio_count{k=\"2\"} 1"));
}

TEST_CASE("placements without a decision or a known set are counted as unmeasured",
          "[service][regret]") {
  metrics::Metrics metrics;
  PlacementRecorder recorder(&metrics);
  recorder.placed(placedOn("never-decided", "n", {LinkClass::kNvlink, 50}));
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_unmeasured_total{reason=\"no_decision\"} 1"));
  recorder.decided("u2", twoGpuDecision());
  recorder.placed(placedOn("u2", "n", SetQuality{}));  // links unknown there
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_unmeasured_total{reason=\"set_unknown\"} 1"));
  // A 1-GPU pod has no pair: not counted at all.
  PodPlacement single = placedOn("one", "n", SetQuality{});
  single.gpus = 1;
  recorder.placed(single);
  CHECK(scrapeHas(metrics,
                  "gpu_topology_extender_placement_unmeasured_total{reason=\"no_decision\"} 1"));
}

TEST_CASE("the entries stay bounded by count and age, and a deleted pod's goes",
          "[service][regret]") {
  auto now = PlacementRecorder::Clock::time_point{};
  PlacementRecorderOptions options;
  options.capacity = 3;
  options.maxAge = std::chrono::seconds(60);
  options.now = [&now] { return now; };
  PlacementRecorder recorder(nullptr, options);
  for (int i = 0; i < 5; ++i) {
    std::string uid = "u";
    uid += std::to_string(i);
    recorder.decided(uid, twoGpuDecision());
  }
  // The two least recently touched went.
  CHECK(recorder.size() == 3);
  CHECK_FALSE(recorder.find("u0").has_value());
  CHECK_FALSE(recorder.find("u1").has_value());
  // A placement touches its entry: u2 is now the newest, u3 the oldest.
  recorder.placed(placedOn("u2", "n", {LinkClass::kNvlink, 50}));
  recorder.decided("u5", twoGpuDecision());
  CHECK_FALSE(recorder.find("u3").has_value());
  CHECK(recorder.find("u2").has_value());

  recorder.forget("u2");
  CHECK_FALSE(recorder.find("u2").has_value());
  CHECK(recorder.size() == 2);

  // Past the age limit, the next insert drops them.
  now += std::chrono::seconds(61);
  recorder.decided("u6", twoGpuDecision());
  CHECK(recorder.size() == 1);
  // Each entry holds a few hundred bytes, names included.
  CHECK(recorder.bytes() > 200);
  CHECK(recorder.bytes() < 2000);
}

TEST_CASE("decisions, placements, lookups and deletions from several threads at once",
          "[service][regret]") {
  // The decision threads record, the watch thread reports placements and deletions, explain and
  // the metrics observer read: all at once, the memory stays bounded and consistent (run under
  // ThreadSanitizer by make tsan).
  metrics::Metrics metrics;
  PlacementRecorderOptions options;
  options.capacity = 64;
  PlacementRecorder recorder(&metrics, options);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&recorder, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string uid = "u";
        uid += std::to_string((i * 7 + t) % 200);
        switch ((i + t) % 4) {
          case 0:
            recorder.decided(uid, twoGpuDecision());
            break;
          case 1:
            recorder.placed(placedOn(uid, "n", {LinkClass::kNvlink, 50}));
            break;
          case 2:
            (void)recorder.find(uid);
            (void)recorder.bytes();
            break;
          default:
            recorder.forget(uid);
        }
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  CHECK(recorder.size() <= 64);
  CHECK(recorder.bytes() > 0);
}

}  // namespace
}  // namespace gte
