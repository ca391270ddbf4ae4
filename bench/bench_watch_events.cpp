// The watch thread's cost per event, from the line the API server writes to the object the cluster
// cache is handed: Node and Pod MODIFIED events of the shapes bench_cluster_state lists, decoded as
// the Reflector decodes them and read as the cache sinks read them. Nothing is applied to a
// ClusterState (bench_cluster_state times that). Prints the median ns per event over the rounds.
//
//   bench_watch_events [events=2000] [rounds=21]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "api_objects.h"
#include "cluster/apiserver/cache_sinks.h"
#include "kube/object_sink.h"
#include "kube/watch_event.h"
#include "model/node_info.h"
#include "model/pod_info.h"

namespace {

using Clock = std::chrono::steady_clock;
using gte::bench::nodeJson;
using gte::bench::podJson;

std::string watchLine(const std::string& object) {
  return R"({"type":"MODIFIED","object":)" + object + "}";
}

// Keeps the last object it is handed, as the cache sinks would before updating the ClusterState;
// pods go through the cache's observePod (the UID check) first.
template <typename Object>
class KeepLast final : public gte::kube::ObjectSink<Object> {
 public:
  void beginList() override {}
  gte::Status listItem(Object) override { return gte::Ok{}; }
  void endList() override {}
  gte::Status apply(gte::kube::WatchEventType, Object object) override {
    if constexpr (std::is_same_v<Object, gte::PodInfo>) {
      auto observed = gte::cluster::observePod(std::move(object));
      if (!observed) return std::move(observed).error();
      pod_ = std::move(*observed);
    } else {
      last_ = std::move(object);
    }
    return gte::Ok{};
  }

 private:
  Object last_;
  gte::cluster::ObservedPod pod_;
};

// One event as the watch loop handles it (kube/reflector.cpp): the line decoded with the sink's
// reader reading the object where it stands, then the object applied.
bool handle(const std::string& line, gte::kube::ReflectorSink& sink,
            const gte::kube::EventObjectReader& readObject) {
  auto event = gte::kube::decodeWatchEvent(line, readObject);
  if (!event || event->resourceVersion.empty()) return false;
  return sink.apply(event->type).ok();
}

template <typename Object>
double nsPerEvent(const std::vector<std::string>& lines, int rounds,
                  gte::kube::ObjectReader<Object> read) {
  auto sink =
      gte::kube::reflectorSink<Object>(std::move(read), std::make_shared<KeepLast<Object>>());
  bool readOk = true;
  const gte::kube::EventObjectReader readObject = [&](gte::json::JsonReader& object) {
    auto version = sink->read(object);
    readOk = version.ok();
    return version;
  };
  std::vector<double> perEvent;
  for (int round = 0; round < rounds + 1; ++round) {
    const auto t0 = Clock::now();
    for (const std::string& line : lines) {
      if (!handle(line, *sink, readObject) || !readOk) {
        std::fprintf(stderr, "an event did not decode\n");
        return -1;
      }
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    if (round > 0) perEvent.push_back(ns / static_cast<double>(lines.size()));  // round 0: warm-up
  }
  std::sort(perEvent.begin(), perEvent.end());
  return perEvent[perEvent.size() / 2];
}

double meanBytes(const std::vector<std::string>& lines) {
  double total = 0;
  for (const std::string& line : lines)
    total += static_cast<double>(line.size());
  return total / static_cast<double>(lines.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int events = argc > 1 ? std::stoi(argv[1]) : 2000;
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 21;
  std::vector<std::string> nodeLines;
  std::vector<std::string> podLines;
  for (int i = 0; i < events; ++i) {
    nodeLines.push_back(watchLine(nodeJson(i, i % 2 ? "11000000" : "00110000")));
    // Half of them GPU pods (1 GPU), as bench_cluster_state's recent binds; all bound and running.
    podLines.push_back(watchLine(
        podJson(i, "gpu-node-" + std::to_string(i % 500), false, i % 2, "2025-12-01T00:00:00Z")));
  }
  const double node = nsPerEvent<gte::NodeInfo>(nodeLines, rounds, gte::readNodeJson);
  const double pod = nsPerEvent<gte::PodInfo>(podLines, rounds, gte::readPodJson);
  if (node < 0 || pod < 0) return 1;
  std::printf("node MODIFIED (%.0f bytes): %.0f ns/event\n", meanBytes(nodeLines), node);
  std::printf("pod MODIFIED (%.0f bytes): %.0f ns/event\n", meanBytes(podLines), pod);
  return 0;
}
