#include "cluster/pod_bind_time.h"

#include <catch2/catch_test_macros.hpp>

using gte::cluster::parseRfc3339;
using gte::cluster::podBindTime;

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
    CHECK(podBindTime(R"({"metadata":{"creationTimestamp":"2025-12-02T10:00:00Z"},
      "status":{"conditions":[
        {"type":"Initialized","status":"True","lastTransitionTime":"2025-12-02T11:00:00Z"},
        {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-12-02T10:06:40Z"}]}})") ==
          1764670000);
  }
  SECTION("an Unschedulable PodScheduled=False is not a bind") {
    CHECK(podBindTime(R"({"metadata":{"creationTimestamp":"1970-01-01T00:00:10Z"},
      "status":{"conditions":[{"type":"PodScheduled","status":"False",
      "lastTransitionTime":"2025-12-02T10:06:40Z"}]}})") == 10);
  }
  SECTION("a null creationTimestamp and no conditions: unknown") {
    CHECK_FALSE(podBindTime(R"({"metadata":{"creationTimestamp":null},"status":{}})"));
  }
  SECTION("broken JSON: unknown") {
    CHECK_FALSE(podBindTime(R"({"metadata":)"));
  }
}
