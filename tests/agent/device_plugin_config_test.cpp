// The NVIDIA device plugin's configuration as the agent reads it for labels-v1 `sharing`
// (agent/device_plugin_config.h): the strategy, the replicas of nvidia.com/gpu and
// failRequestsGreaterThanOne with the plugin's defaults; the files the plugin refuses refused with
// the field named; which ConfigMap key configures the node.
#include "agent/device_plugin_config.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;

std::string timeSlicing(const std::string& extra, const std::string& name = "nvidia.com/gpu",
                        int replicas = 4) {
  return "version: v1\nsharing:\n  timeSlicing:\n" + extra + "    resources:\n    - name: " + name +
         "\n      replicas: " + std::to_string(replicas) + "\n";
}

TEST_CASE("device plugin config: strategy, replicas and the flag with the plugin's defaults",
          "[agent][sharing]") {
  SECTION("time-slicing: the flag is off unless set") {
    const auto read = sharingInDevicePluginConfig(timeSlicing(""));
    REQUIRE(read);
    CHECK(formatAgentSharing(*read) == "time-slicing.4");
    CHECK(read->failRequestsGreaterThanOne == false);
    const auto strict =
        sharingInDevicePluginConfig(timeSlicing("    failRequestsGreaterThanOne: true\n"));
    REQUIRE(strict);
    CHECK(formatAgentSharing(*strict) == "time-slicing.4.f");
  }
  SECTION("MPS: the flag is on unless set false") {
    const auto mps = sharingInDevicePluginConfig(
        "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n"
        "      replicas: 2\n");
    REQUIRE(mps);
    CHECK(formatAgentSharing(*mps) == "mps.2.f");
    const auto off = sharingInDevicePluginConfig(
        "version: v1\nsharing:\n  mps:\n    failRequestsGreaterThanOne: false\n    resources:\n"
        "    - name: nvidia.com/gpu\n      replicas: 2\n");
    REQUIRE(off);
    CHECK(formatAgentSharing(*off) == "mps.2");
  }
  SECTION("`gpu` names nvidia.com/gpu; JSON reads as YAML") {
    CHECK(formatAgentSharing(*sharingInDevicePluginConfig(timeSlicing("", "gpu", 8))) ==
          "time-slicing.8");
    const auto json = sharingInDevicePluginConfig(
        R"({"version":"v1","sharing":{"timeSlicing":{"renameByDefault":true,)"
        R"("resources":[{"name":"nvidia.com/gpu","replicas":3}]}}})");
    REQUIRE(json);
    CHECK(formatAgentSharing(*json) == "time-slicing.3");
  }
  SECTION("no sharing, MIG resources only, one replica, or an empty file: none") {
    for (const std::string& text :
         {std::string("version: v1\nflags:\n  migStrategy: none\n"), std::string(""),
          timeSlicing("", "nvidia.com/mig-1g.10gb"), timeSlicing("", "nvidia.com/gpu", 1),
          std::string("version: v1\nsharing: {}\n")}) {
      INFO(text);
      const auto read = sharingInDevicePluginConfig(text);
      REQUIRE(read);
      CHECK_FALSE(read->shared());
      CHECK(formatAgentSharing(*read) == "none");
    }
  }
}

TEST_CASE("device plugin config: what the plugin refuses is refused, the field named",
          "[agent][sharing]") {
  const std::pair<std::string, std::string> cases[] = {
      {"version: v1\nsharing:\n  timeSlicing:\n    resources: []\n  mps:\n    resources: []\n",
       "timeSlicing and mps both set"},
      {"version: v2\n", "version: want v1"},
      {timeSlicing("    failRequestsGreaterThanOne: maybe\n"),
       "sharing.timeSlicing.failRequestsGreaterThanOne: want true or false"},
      {"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
       "      replicas: four\n",
       "sharing.timeSlicing.resources[0].replicas: want a whole number of at least 1"},
      {"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - replicas: 2\n",
       "resources[0].name: want a resource name"},
      {"version: v1\nsharing:\n  timeSlicing:\n    resources: nvidia.com/gpu\n",
       "resources: want a list"},
      {"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
       "      replicas: 2\n    - name: nvidia.com/gpu\n      replicas: 4\n",
       "different replicas"},
      {"version: v1\nsharing: [\n", "YAML"},
      {"- 1\n- 2\n", "want a mapping at the top"},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    const auto read = sharingInDevicePluginConfig(text);
    REQUIRE_FALSE(read);
    CHECK_THAT(read.error().message, ContainsSubstring(want));
    CHECK_THAT(read.error().message, ContainsSubstring("device plugin config: "));
  }
}

TEST_CASE("device plugin config: the node's label picks the key, else the default, else the only",
          "[agent][sharing]") {
  const std::vector<std::string> two = {"a100-ts", "default"};
  const StringMap labelled = {{"nvidia.com/device-plugin.config", "a100-ts"}};
  CHECK(*devicePluginConfigKey(labelled, two, "default") == "a100-ts");
  CHECK(*devicePluginConfigKey({}, two, "default") == "default");
  CHECK(*devicePluginConfigKey({}, {"any"}, "") == "any");
  CHECK_THAT(devicePluginConfigKey({}, two, "").error().message,
             ContainsSubstring("set --device-plugin-config-default"));
  CHECK_THAT(
      devicePluginConfigKey({{"nvidia.com/device-plugin.config", "h100"}}, two, "").error().message,
      ContainsSubstring("names 'h100', which the ConfigMap does not hold"));
  CHECK_THAT(devicePluginConfigKey({}, two, "missing").error().message,
             ContainsSubstring("the default config 'missing' is not a key"));
}

TEST_CASE("device plugin config: a ConfigMap's data", "[agent][sharing]") {
  const auto data = configMapData(
      R"({"kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"two\nlines"}})");
  REQUIRE(data);
  CHECK(*data == StringMap{{"a", "1"}, {"b", "two\nlines"}});
  CHECK(configMapData(R"({"data":null})")->empty());
  CHECK(configMapData(R"({"metadata":{}})")->empty());
  CHECK_FALSE(configMapData(R"({"data":{"a":1}})"));
  CHECK_FALSE(configMapData(R"({"data":{"a":"1"})"));
  CHECK_FALSE(configMapData("[]"));
}

}  // namespace
}  // namespace gte::agent
