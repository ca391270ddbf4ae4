// Parsing a pod's demand: requests plus the `<prefix>` annotations; bad values name the annotation.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

#include "core/pod_demand.h"
#include "policy/default_policy.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

TEST_CASE("pod demand from requests and annotations", "[snapshot][demand]") {
  const Policy policy = defaultPolicy();
  const Result<PodDemand> plain = parsePodDemand(testing::makeGpuPod("p", 4), policy);
  REQUIRE(plain.ok());
  CHECK(plain->gpus == 4);
  CHECK_FALSE(plain->minLink.has_value());
  CHECK_FALSE(plain->singleNuma);
  CHECK(plain->strategy == Strategy::kBinpack);

  const Result<PodDemand> annotated =
      parsePodDemand(testing::makeGpuPod("p", 2,
                                         {{"gputopo.dev/min-link", "pxb"},
                                          {"gputopo.dev/numa", "single"},
                                          {"gputopo.dev/strategy", "spread"}}),
                     policy);
  REQUIRE(annotated.ok());
  CHECK(annotated->minLink == LinkClass::kPxb);
  CHECK(annotated->singleNuma);
  CHECK(annotated->strategy == Strategy::kSpread);

  const Result<PodDemand> mig = parsePodDemand(testing::makeMigPod("m", {{"3g.40gb", 2}}), policy);
  REQUIRE(mig.ok());
  CHECK(mig->gpus == 0);
  REQUIRE(mig->mig.size() == 1);
  CHECK(mig->mig[0].profile == "3g.40gb");
  CHECK(mig->migInstanceCount() == 2);

  CHECK(parsePodDemand(testing::makeGpuPod("cpu", 0), policy)->empty());
}

TEST_CASE("invalid annotation values name the annotation", "[snapshot][demand]") {
  const Policy policy = defaultPolicy();
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"gputopo.dev/min-link", "fast", "annotation gputopo.dev/min-link: want one of nvlink"},
      {"gputopo.dev/min-link", "unknown", "annotation gputopo.dev/min-link"},
      {"gputopo.dev/min-link", "NVLINK", "got 'NVLINK'"},
      {"gputopo.dev/numa", "dual", "annotation gputopo.dev/numa: want single; got 'dual'"},
      {"gputopo.dev/strategy", "random", "annotation gputopo.dev/strategy: want binpack or spread"},
  };
  for (const Case& c : cases) {
    INFO(c.key << "=" << c.value);
    const Result<PodDemand> demand =
        parsePodDemand(testing::makeGpuPod("p", 2, {{c.key, c.value}}), policy);
    REQUIRE_FALSE(demand.ok());
    CHECK_THAT(demand.error().message, ContainsSubstring(c.message));
  }
  // Annotations under another prefix are not ours.
  CHECK(
      parsePodDemand(testing::makeGpuPod("p", 2, {{"example.com/min-link", "fast"}}), policy).ok());
}

}  // namespace
}  // namespace gte
