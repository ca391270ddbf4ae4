#include "model/node_info.h"

#include <catch2/catch_test_macros.hpp>

TEST_CASE("Node parsing reads name, labels and allocatable only") {
  auto node = gte::parseNodeJson(R"({"metadata":{"name":"gpu-a","uid":"n1","resourceVersion":"7",
    "labels":{"gputopo.dev/n":"8","kubernetes.io/hostname":"gpu-a"},"managedFields":[{"x":1}]},
    "spec":{"unschedulable":true,"taints":[{"key":"k","effect":"NoSchedule"}]},
    "status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"7","memory":"1Gi",
    "pods":110},"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"images":[{"names":["a"]}]}})");
  REQUIRE(node.ok());
  CHECK(node->name == "gpu-a");
  CHECK(node->resourceVersion == "7");
  CHECK(node->labels.at("gputopo.dev/n") == "8");
  CHECK(node->allocatable.get("nvidia.com/gpu").wholeUnits() == 7);
  CHECK(node->allocatable.get("pods").wholeUnits() == 110);  // bare numbers are accepted
}

TEST_CASE("Node parsing rejects bad quantities and missing names") {
  auto bad = gte::parseNodeJson(
      R"({"metadata":{"name":"x"},"status":{"allocatable":{"nvidia.com/gpu":"8 GPUs"}}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("status.allocatable[nvidia.com/gpu]") != std::string::npos);
  CHECK_FALSE(gte::parseNodeJson(R"({"metadata":{}})").ok());
  CHECK_FALSE(gte::parseNodeJson(R"({"metadata":{"name":"x","labels":{"a":1}}})").ok());
}

TEST_CASE("Node parsing reads whether the kubelet declares DRAOptionalNodeOperations") {
  // status.declaredFeatures (NodeDeclaredFeatures): the scheduler's experimental allocator takes
  // devices of slices with skipNodeOperations only on nodes declaring the feature (docs/dra.md).
  const auto declared = gte::parseNodeJson(
      R"({"metadata":{"name":"a"},"status":{"declaredFeatures":["Other","DRAOptionalNodeOperations"]}})");
  REQUIRE(declared.ok());
  CHECK(declared->declaresDraOptionalNodeOperations);
  const auto other = gte::parseNodeJson(
      R"({"metadata":{"name":"a"},"status":{"declaredFeatures":["Other",1,null]}})");
  REQUIRE(other.ok());
  CHECK_FALSE(other->declaresDraOptionalNodeOperations);
  const auto none = gte::parseNodeJson(R"({"metadata":{"name":"a"},"status":{}})");
  REQUIRE(none.ok());
  CHECK_FALSE(none->declaresDraOptionalNodeOperations);
}
