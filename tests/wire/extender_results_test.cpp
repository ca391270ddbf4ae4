#include "wire/extender_results.h"

#include <catch2/catch_test_macros.hpp>

using namespace gte::wire;

TEST_CASE("Filter result in names mode uses Go field names and null Nodes") {
  FilterResult r;
  r.keptNames = {"a"};
  r.failed = {{"b", "insufficient free GPUs"}};
  r.failedUnresolvable = {{"c", "node has no GPUs"}};
  CHECK(writeFilterResult(r) ==
        R"({"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"insufficient free GPUs"},)"
        R"("FailedAndUnresolvableNodes":{"c":"node has no GPUs"},"Error":""})");
}

TEST_CASE("Filter result repeats a shared reason for every node and escapes it") {
  FilterResult r;
  r.reasonTexts = {"gpu-topology: \"min-link\" unmet", "gpu-topology: too few GPUs"};
  r.failed = {{"a", r.reasonTexts[0]}, {"b", r.reasonTexts[1]}, {"c", r.reasonTexts[0]}};
  r.failedUnresolvable = {{"d", r.reasonTexts[0]}};
  CHECK(writeFilterResult(r) ==
        R"({"Nodes":null,"NodeNames":[],"FailedNodes":{"a":"gpu-topology: \"min-link\" unmet",)"
        R"("b":"gpu-topology: too few GPUs","c":"gpu-topology: \"min-link\" unmet"},)"
        R"("FailedAndUnresolvableNodes":{"d":"gpu-topology: \"min-link\" unmet"},"Error":""})");
}

TEST_CASE("Filter result in full-Node mode echoes raw nodes byte for byte") {
  FilterResult r;
  r.nodesMode = true;
  r.keptNodes = {R"({ "metadata" : {"name":"a"} })"};
  CHECK(writeFilterResult(r) ==
        R"({"Nodes":{"metadata":{},"items":[{ "metadata" : {"name":"a"} }]},"NodeNames":null,)"
        R"("FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
}

TEST_CASE("Prioritize answers a bare array of HostPriority") {
  CHECK(writeHostPriorityList({{"a", 10}, {"b", 0}}) ==
        R"([{"Host":"a","Score":10},{"Host":"b","Score":0}])");
  CHECK(writeHostPriorityList({}) == "[]");
  // A name that needs escaping (never a valid node name, but the answer must stay JSON).
  CHECK(writeHostPriorityList({{"a", 1}, {"b\"c", 2}}) ==
        R"([{"Host":"a","Score":1},{"Host":"b\"c","Score":2}])");
  CHECK(writeHostPriorityList({{"x", -3}}) == R"([{"Host":"x","Score":-3}])");
}

TEST_CASE("Bind and preempt results") {
  CHECK(writeBindingResult("") == R"({"Error":""})");
  CHECK(
      writePreemptionResult({{"a", {"v1", "v2"}, 1}}) ==
      R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"v1"},{"UID":"v2"}],"NumPDBViolations":1}}})");
  CHECK(writeFilterError("cache not synced") ==
        R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,)"
        R"("Error":"cache not synced"})");
}
