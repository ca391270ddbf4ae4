#include "cluster/gpu_annotation.h"

#include <catch2/catch_test_macros.hpp>

using gte::Allocation;
using gte::MigAssignment;
using gte::cluster::formatGpuAnnotation;
using gte::cluster::parseGpuAnnotation;

TEST_CASE("gpus annotation: whole GPUs and MIG instances round-trip") {
  Allocation allocation{true, {0, 1, 2, 3}, {}};
  CHECK(formatGpuAnnotation(allocation) == "0,1,2,3");
  allocation = Allocation{true, {}, {MigAssignment{0, "3g.40gb", 4, false}}};
  CHECK(formatGpuAnnotation(allocation) == "mig:0:3g.40gb@4");
  allocation = Allocation{true, {6}, {MigAssignment{1, "1g.10gb+me", 2, false}}};
  const std::string text = formatGpuAnnotation(allocation);
  CHECK(text == "6,mig:1:1g.10gb+me@2");
  auto parsed = parseGpuAnnotation(text);
  REQUIRE(parsed.ok());
  CHECK(parsed->gpus == std::vector<int>{6});
  REQUIRE(parsed->mig.size() == 1);
  CHECK(parsed->mig[0].gpu == 1);
  CHECK(parsed->mig[0].profile == "1g.10gb+me");
  CHECK(parsed->mig[0].start == 2);
}

TEST_CASE("gpus annotation: replicas of shared GPUs are a count, not GPUs") {
  Allocation allocation{true, {}, {}};
  allocation.replicas = 3;
  CHECK(formatGpuAnnotation(allocation) == "replicas:3");
  auto parsed = parseGpuAnnotation("replicas:3");
  REQUIRE(parsed.ok());
  CHECK(*parsed == allocation);
}

TEST_CASE("gpus annotation: malformed entries are named") {
  for (const char* bad : {"a", "1,,2", "-1", "mig:0:3g", "mig:x:3g@4", "mig:0:@4", "1 ,2",
                          "replicas:0", "replicas:", "replicas:-2", "replicas:2,replicas:1"}) {
    auto parsed = parseGpuAnnotation(bad);
    CHECK_FALSE(parsed.ok());
  }
  auto parsed = parseGpuAnnotation("0,zz");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message.find("\"zz\"") != std::string::npos);
  CHECK(parseGpuAnnotation("").ok());
}
