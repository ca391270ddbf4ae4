// The Kubernetes label syntax the agent checks before every write.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "agent/label_rules.h"

namespace gte::agent {
namespace {

TEST_CASE("label keys", "[agent][labels]") {
  CHECK(checkLabelKey("gputopo.dev/nvl0").ok());
  CHECK(checkLabelKey("v").ok());
  CHECK(checkLabelKey("example.com/A_b.c-d").ok());
  CHECK_FALSE(checkLabelKey("gputopo.dev/").ok());
  CHECK_FALSE(checkLabelKey("Gputopo.dev/n").ok());  // prefixes are lowercase
  CHECK_FALSE(checkLabelKey("-bad.dev/n").ok());
  CHECK_FALSE(checkLabelKey("gputopo.dev/-n").ok());
  CHECK_FALSE(checkLabelKey("gputopo..dev/n").ok());
  CHECK_FALSE(checkLabelKey("gputopo.dev/" + std::string(64, 'a')).ok());
  CHECK(checkLabelKey("gputopo.dev/" + std::string(63, 'a')).ok());
}

TEST_CASE("label values", "[agent][labels]") {
  CHECK(checkLabelValue("").ok());
  CHECK(checkLabelValue("NVIDIA-A100-SXM4-80GB").ok());
  CHECK(checkLabelValue(std::string(63, 'c')).ok());
  CHECK_FALSE(checkLabelValue(std::string(64, 'c')).ok());
  CHECK_FALSE(checkLabelValue("a b").ok());
  CHECK_FALSE(checkLabelValue("trailing-").ok());
  CHECK_FALSE(checkLabelValue(".leading").ok());
  CHECK_FALSE(checkLabelValue("a/b").ok());
}

TEST_CASE("a whole label set: the error names the key", "[agent][labels]") {
  CHECK(checkLabels({{"gputopo.dev/v", "1"}, {"gputopo.dev/n", "8"}}).ok());
  const auto status = checkLabels({{"gputopo.dev/model", "bad value"}});
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message.rfind("gputopo.dev/model: ", 0) == 0);
}

}  // namespace
}  // namespace gte::agent
