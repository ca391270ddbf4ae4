#include "model/pod_info.h"

#include <catch2/catch_test_macros.hpp>

using gte::parsePodJson;

namespace {

std::int64_t gpus(const gte::PodInfo& pod) {
  return pod.requests.get("nvidia.com/gpu").wholeUnits().value_or(-1);
}

}  // namespace

TEST_CASE("Pod parsing keeps identity, annotations and scheduling fields") {
  auto pod = parsePodJson(R"({"metadata":{"name":"train-0","namespace":"ml","uid":"u1",
    "annotations":{"gputopo.dev/min-link":"nvlink"},"creationTimestamp":null},
    "spec":{"containers":[{"name":"m","resources":{}}],"priority":1000,"nodeName":"gpu-a"},
    "status":{"phase":"Pending","nominatedNodeName":"gpu-b"}})");
  REQUIRE(pod.ok());
  CHECK(pod->name == "train-0");
  CHECK(pod->ns == "ml");
  CHECK(pod->uid == "u1");
  CHECK(pod->priority == 1000);
  CHECK(pod->nodeName == "gpu-a");
  CHECK(pod->nominatedNodeName == "gpu-b");
  CHECK(pod->annotations.at("gputopo.dev/min-link") == "nvlink");
  CHECK(pod->requests.empty());
}

TEST_CASE("Effective pod requests follow the Kubernetes rule") {
  SECTION("containers add up; a limit alone stands in for the request") {
    auto pod = parsePodJson(R"({"spec":{"containers":[
      {"resources":{"requests":{"nvidia.com/gpu":"2"},"limits":{"nvidia.com/gpu":"2"}}},
      {"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
    REQUIRE(pod.ok());
    CHECK(gpus(*pod) == 3);
    // What one container asks: the device plugin's Allocate sees each container on its own.
    CHECK(pod->largestContainerGpus == 2);
  }
  SECTION("an init container counts only if larger than the app containers") {
    auto pod =
        parsePodJson(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}],
      "initContainers":[{"resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})");
    REQUIRE(pod.ok());
    CHECK(gpus(*pod) == 4);  // max(1, 4)
    CHECK(pod->largestContainerGpus == 4);
  }
  SECTION("restartable sidecars add to the containers and to later init containers") {
    auto pod =
        parsePodJson(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}],
      "initContainers":[{"restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}},
                        {"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})");
    REQUIRE(pod.ok());
    CHECK(gpus(*pod) == 3);  // max(2 + 1 sidecar, 2 init + 1 sidecar) = 3
    CHECK(pod->largestContainerGpus == 2);
  }
  SECTION("overhead is added") {
    auto pod = parsePodJson(R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"500m"}}}],
      "overhead":{"cpu":"250m"}}})");
    REQUIRE(pod.ok());
    CHECK(pod->requests.get("cpu").nanos() == 750'000'000);
    CHECK(pod->largestContainerGpus == 0);
  }
  SECTION("renamed shared replicas count as one container's GPUs too") {
    auto pod = parsePodJson(R"({"spec":{"containers":[
      {"resources":{"limits":{"nvidia.com/gpu.shared":"1"}}},
      {"resources":{"limits":{"nvidia.com/gpu.shared":"1"}}}]}})");
    REQUIRE(pod.ok());
    CHECK(pod->largestContainerGpus == 1);
  }
}

TEST_CASE("Pod parsing errors name the field") {
  auto badQuantity = parsePodJson(
      R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"two"}}}]}})");
  REQUIRE_FALSE(badQuantity.ok());
  CHECK(badQuantity.error().message.find("spec.containers[0].resources.limits[nvidia.com/gpu]") !=
        std::string::npos);
  auto wrongType = parsePodJson(R"({"metadata":{"name":7}})");
  REQUIRE_FALSE(wrongType.ok());
  CHECK(wrongType.error().message.find("metadata.name") != std::string::npos);
  CHECK_FALSE(parsePodJson(R"({"spec":{"containers":{}}})").ok());
}
