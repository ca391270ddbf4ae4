// The --cluster-file backend: ready at once, bind reserves and marks bound in memory.
#include "cluster/static_cluster_backend.h"
#include "support/cluster_events_fixture.h"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cluster_test_support.h"

using gte::BindRequest;
using gte::ErrorCode;
using gte::cluster::ClusterFileContents;
using gte::cluster::FilePod;
using gte::cluster::StaticClusterBackend;
using namespace gte::testing;

namespace {

ClusterFileContents smallCluster(int pendingPods, int gpusEach) {
  ClusterFileContents contents;
  contents.nodes = {h100("a"), h100("b")};
  contents.pods.push_back(FilePod{gpuPod("running", 2, "a"), std::nullopt});
  for (int i = 0; i < pendingPods; ++i) {
    contents.pods.push_back(FilePod{gpuPod(numbered("p", i), gpusEach), std::nullopt});
  }
  return contents;
}

BindRequest bindRequest(const std::string& uid, const std::string& node) {
  return BindRequest{gpuPod(uid, 0).name, "ml", uid, node};
}

}  // namespace

TEST_CASE("static backend: ready at once; file pods without a bind time are in the labels") {
  StaticClusterBackend backend(smallCluster(0, 1), testPolicy());
  CHECK(backend.ready());
  std::string why;
  CHECK(backend.healthy(&why));
  CHECK(backend.snapshot()->synced);
  // `running` predates the labels (no bind time in the file), which show all GPUs free.
  CHECK(backend.snapshot()->find("a")->freeCount == 8);
  CHECK(backend.podByUid("running").has_value());
  CHECK(backend.podsOnNode("a").size() == 1);
}

TEST_CASE("static backend: binds until the cluster is full, never double-booking") {
  StaticClusterBackend backend(smallCluster(20, 2), testPolicy());  // 40 GPUs wanted, 16 there
  int boundPods = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string uid = numbered("p", i);
    for (const char* node : {"a", "b"}) {
      if (backend.bind(bindRequest(uid, node)).ok()) {
        ++boundPods;
        break;
      }
    }
  }
  CHECK(boundPods == 8);
  CHECK(backend.snapshot()->find("a")->freeCount == 0);
  CHECK(backend.snapshot()->find("b")->freeCount == 0);
  CHECK(backend.podsOnNode("a").size() + backend.podsOnNode("b").size() == 9);

  SECTION("binding a bound pod again to its node succeeds; elsewhere it fails") {
    const auto pod = backend.podByUid("p0");
    REQUIRE(pod.has_value());
    CHECK(backend.bind(bindRequest("p0", pod->nodeName)).ok());
    const std::string other = pod->nodeName == "a" ? "b" : "a";
    auto moved = backend.bind(bindRequest("p0", other));
    REQUIRE_FALSE(moved.ok());
    CHECK(moved.error().code == ErrorCode::kFailedPrecondition);
  }
  SECTION("a pod not in the file is refused") {
    auto unknown = backend.bind(bindRequest("ghost", "a"));
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().code == ErrorCode::kNotFound);
  }
  SECTION("a request without a UID finds the pod by name") {
    BindRequest byName{"pod-p19", "ml", "", "a"};
    auto full = backend.bind(byName);
    REQUIRE_FALSE(full.ok());  // found, but no room left
    CHECK(full.error().code == ErrorCode::kFailedPrecondition);
  }
}

TEST_CASE("static backend: fromFile reads a YAML file; errors name the file") {
  const auto path = std::filesystem::temp_directory_path() / "gte_static_backend_test.yaml";
  {
    std::ofstream out(path);
    out << "kind: Node\nmetadata:\n  name: gfd\n  labels:\n    nvidia.com/gpu.count: \"4\"\n"
           "status:\n  allocatable:\n    nvidia.com/gpu: \"4\"\n---\n"
           "kind: Pod\nmetadata: {name: w, namespace: ml}\n"
           "spec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 3}}\n";
  }
  auto backend = StaticClusterBackend::fromFile(path.string(), testPolicy());
  REQUIRE(backend.ok());
  CHECK((*backend)->snapshot()->find("gfd")->freeCount == 4);
  CHECK((*backend)->bind(BindRequest{"w", "ml", "", "gfd"}).ok());
  CHECK((*backend)->snapshot()->find("gfd")->freeCount == 1);
  std::filesystem::remove(path);

  auto missing = StaticClusterBackend::fromFile("/nonexistent.yaml", testPolicy());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("/nonexistent.yaml") != std::string::npos);
}

TEST_CASE("static backend: every published snapshot reports its build time; pods by name") {
  int builds = 0;
  double total = 0;
  gte::cluster::ClusterStateOptions options;
  auto events = gte::testing::functionEvents();
  events->onSnapshotBuilt = [&](double seconds) {
    ++builds;
    total += seconds;
  };
  options.events = events;
  StaticClusterBackend backend(smallCluster(2, 1), testPolicy(), options);
  const int afterLoad = builds;
  CHECK(afterLoad >= 1);
  REQUIRE(backend.bind(bindRequest(numbered("p", 0), "b")).ok());
  CHECK(builds > afterLoad);  // the reservation and the bound pod were published
  CHECK(total >= 0);

  // Explain reads pending pods by name, with their requests, as the file has them.
  std::string name = "pod-";
  name += numbered("p", 1);
  auto pending = backend.podByName("ml", name);
  REQUIRE(pending.ok());
  CHECK(pending->uid == numbered("p", 1));
  auto missing = backend.podByName("ml", "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
}
