// PodInfo::boundAt: when a pod was bound, read in the same pass as the rest of the pod, and the
// Kubernetes timestamps it is made of.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "model/pod_info.h"
#include "model/rfc3339.h"

using gte::parsePodJson;
using gte::parseRfc3339;

namespace {

std::optional<std::int64_t> boundAt(const std::string& json) {
  auto pod = parsePodJson(json);
  REQUIRE(pod.ok());
  return pod->boundAt;
}

}  // namespace

TEST_CASE("RFC 3339 times as the API server writes them") {
  CHECK(parseRfc3339("1970-01-01T00:00:00Z") == 0);
  CHECK(parseRfc3339("2025-12-02T10:06:40Z") == 1764670000);
  CHECK(parseRfc3339("2025-12-02T10:06:40.123456Z") == 1764670000);
  CHECK(parseRfc3339("2025-12-02T12:06:40+02:00") == 1764670000);
  CHECK(parseRfc3339("2000-02-29T00:00:00Z") == 951782400);  // leap day
  CHECK_FALSE(parseRfc3339("2025-12-02 10:06:40").has_value());
  CHECK_FALSE(parseRfc3339("2025-13-02T10:06:40Z").has_value());
  CHECK_FALSE(parseRfc3339("yesterday").has_value());
}

TEST_CASE("The bind time is the PodScheduled transition, else the creation time") {
  SECTION("PodScheduled True wins over creationTimestamp") {
    CHECK(boundAt(R"({"metadata":{"creationTimestamp":"2025-12-02T10:00:00Z"},
      "status":{"conditions":[
        {"type":"Initialized","status":"True","lastTransitionTime":"2025-12-02T11:00:00Z"},
        {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-12-02T10:06:40Z"}]}})") ==
          1764670000);
  }
  SECTION("whichever order status and metadata come in") {
    CHECK(boundAt(R"({"status":{"conditions":[{"lastTransitionTime":"2025-12-02T10:06:40Z",
      "status":"True","type":"PodScheduled"}]},
      "metadata":{"creationTimestamp":"2025-12-02T10:00:00Z"}})") == 1764670000);
  }
  SECTION("an Unschedulable PodScheduled=False is not a bind") {
    CHECK(boundAt(R"({"metadata":{"creationTimestamp":"1970-01-01T00:00:10Z"},
      "status":{"conditions":[{"type":"PodScheduled","status":"False",
      "lastTransitionTime":"2025-12-02T10:06:40Z"}]}})") == 10);
  }
  SECTION("a null creationTimestamp and no conditions: unknown") {
    CHECK_FALSE(boundAt(R"({"metadata":{"creationTimestamp":null},"status":{}})"));
  }
  SECTION("a time that does not parse is no time") {
    CHECK(boundAt(R"({"metadata":{"creationTimestamp":"1970-01-01T00:00:10Z"},
      "status":{"conditions":[{"type":"PodScheduled","status":"True",
      "lastTransitionTime":"yesterday"}]}})") == 10);
  }
}

TEST_CASE(
    "A bind-time field of a JSON type no API server writes makes the time unknown, not the "
    "pod unreadable") {
  // Each is a valid pod otherwise; the fields are skipped, and the bind time left unknown rather
  // than taken from whichever field happened to read.
  const std::string created = R"("creationTimestamp":"1970-01-01T00:00:10Z")";
  for (const std::string& json : std::vector<std::string>{
           R"({"metadata":{"name":"p","creationTimestamp":10}})",
           R"({"metadata":{)" + created + R"(},"status":{"conditions":{"type":"PodScheduled"}}})",
           R"({"metadata":{)" + created + R"(},"status":{"conditions":["PodScheduled"]}})",
           R"({"metadata":{)" + created +
               R"(},"status":{"conditions":[{"type":"PodScheduled","status":"True",)"
               R"("lastTransitionTime":1764670000}]}})",
       }) {
    INFO(json);
    auto pod = parsePodJson(json);
    REQUIRE(pod.ok());
    CHECK_FALSE(pod->boundAt.has_value());
  }
}

TEST_CASE("A pod that is not JSON is an error, bind-time fields included") {
  CHECK_FALSE(parsePodJson(R"({"metadata":)").ok());
  CHECK_FALSE(parsePodJson(R"({"status":{"conditions":[{"type":}]}})").ok());
}
