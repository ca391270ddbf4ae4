// The merge patch the agent sends: only changed facts, nulls for labels it no longer produces,
// nothing at all when only `gen` would change; other owners' labels are never touched.
#include <catch2/catch_test_macros.hpp>

#include "agent/label_patch.h"

namespace gte::agent {
namespace {

constexpr std::string_view kPrefix = "gputopo.dev/";

TEST_CASE("only changed values and removed keys are patched", "[agent][patch]") {
  const StringMap current = {{"gputopo.dev/v", "1"},
                             {"gputopo.dev/used", "0000"},
                             {"gputopo.dev/mig0", "00f"},
                             {"gputopo.dev/gen", "100"},
                             {"kubernetes.io/hostname", "n1"}};
  const StringMap desired = {
      {"gputopo.dev/v", "1"}, {"gputopo.dev/used", "0100"}, {"gputopo.dev/gen", "200"}};
  CHECK(
      labelPatch(current, desired, kPrefix) ==
      R"({"metadata":{"labels":{"gputopo.dev/gen":"200","gputopo.dev/used":"0100","gputopo.dev/mig0":null}}})");
}

TEST_CASE("a new gen alone is not a change", "[agent][patch]") {
  const StringMap current = {{"gputopo.dev/v", "1"}, {"gputopo.dev/gen", "100"}};
  const StringMap desired = {{"gputopo.dev/v", "1"}, {"gputopo.dev/gen", "200"}};
  CHECK_FALSE(labelPatch(current, desired, kPrefix));
}

TEST_CASE("a node without labels gets all of them", "[agent][patch]") {
  const StringMap desired = {{"gputopo.dev/v", "1"}, {"gputopo.dev/gen", "5"}};
  CHECK(labelPatch({}, desired, kPrefix) ==
        R"({"metadata":{"labels":{"gputopo.dev/gen":"5","gputopo.dev/v":"1"}}})");
}

TEST_CASE("cleanup nulls every label under the prefix and nothing else", "[agent][patch]") {
  const StringMap current = {
      {"gputopo.dev/v", "1"}, {"gputopo.dev/n", "8"}, {"nvidia.com/gpu.count", "8"}};
  CHECK(cleanupPatch(current, kPrefix) ==
        R"({"metadata":{"labels":{"gputopo.dev/n":null,"gputopo.dev/v":null}}})");
  CHECK_FALSE(cleanupPatch({{"nvidia.com/gpu.count", "8"}}, kPrefix));
}

}  // namespace
}  // namespace gte::agent
