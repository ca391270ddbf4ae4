// The Lease object: read in one pass (any key order, nulls, unknown fields), written back whole for
// a create or an update, and its MicroTime text.
#include "kube/lease.h"

#include <catch2/catch_test_macros.hpp>

#include "json/json_reader.h"

using namespace gte::kube;

TEST_CASE("a Lease as the API server sends it reads into name, version and spec") {
  const auto lease = parseLeaseJson(
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1",)"
      R"("metadata":{"name":"gpu-topology-scheduler","namespace":"gpu-system",)"
      R"("uid":"5a0c","resourceVersion":"812","managedFields":[{"manager":"kube-scheduler"}]},)"
      R"("spec":{"holderIdentity":"node-a_1b4e","leaseDurationSeconds":15,)"
      R"("acquireTime":"2026-12-03T10:00:00.000000Z","renewTime":"2026-12-03T10:04:01.250000Z",)"
      R"("leaseTransitions":3,"strategy":"OldestEmulationVersion"}})");
  REQUIRE(lease.ok());
  CHECK(lease->name == "gpu-topology-scheduler");
  CHECK(lease->ns == "gpu-system");
  CHECK(lease->resourceVersion == "812");
  CHECK(lease->spec.holderIdentity == "node-a_1b4e");
  CHECK(lease->spec.leaseDurationSeconds == 15);
  CHECK(lease->spec.acquireTime == "2026-12-03T10:00:00.000000Z");
  CHECK(lease->spec.renewTime == "2026-12-03T10:04:01.250000Z");
  CHECK(lease->spec.leaseTransitions == 3);
}

TEST_CASE("a released Lease (nulls, no holder) and spec before metadata read too") {
  const auto lease = parseLeaseJson(
      R"({"spec":{"holderIdentity":null,"leaseDurationSeconds":1,"acquireTime":null},)"
      R"("metadata":{"resourceVersion":"9","name":"gte"}})");
  REQUIRE(lease.ok());
  CHECK(lease->name == "gte");
  CHECK(lease->spec.holderIdentity.empty());
  CHECK(lease->spec.leaseDurationSeconds == 1);
  CHECK(lease->resourceVersion == "9");
}

TEST_CASE("a Lease that does not read says which field") {
  struct Case {
    const char* json;
    const char* says;
  };
  const Case cases[] = {
      {R"({"metadata":{"namespace":"x"}})", "no metadata.name"},
      {R"({"metadata":{"name":"a"},"spec":{"leaseDurationSeconds":"15"}})",
       "spec.leaseDurationSeconds"},
      {R"({"metadata":{"name":7}})", "metadata.name"},
      {R"({"metadata":{"name":"a"},"spec":[]})", "spec"},
      {R"({"metadata":{"name":"a"}} trailing)", "after the object"},
      {R"([1])", "object"},
  };
  for (const Case& c : cases) {
    const auto lease = parseLeaseJson(c.json);
    INFO(c.json);
    REQUIRE_FALSE(lease.ok());
    CHECK(lease.error().message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("a Lease is written whole and reads back the same") {
  Lease lease;
  lease.name = "gte";
  lease.ns = "gpu-system";
  lease.resourceVersion = "41";
  lease.spec.holderIdentity = "gte-6d9f-xk2lp";
  lease.spec.leaseDurationSeconds = 10;
  lease.spec.acquireTime = "2026-12-03T10:00:00.000000Z";
  lease.spec.renewTime = "2026-12-03T10:00:07.500000Z";
  lease.spec.leaseTransitions = 2;
  const std::string json = leaseJson(lease);
  CHECK(json == R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"gte",)"
                R"("namespace":"gpu-system","resourceVersion":"41"},"spec":{"holderIdentity":)"
                R"("gte-6d9f-xk2lp","leaseDurationSeconds":10,"acquireTime":)"
                R"("2026-12-03T10:00:00.000000Z","renewTime":"2026-12-03T10:00:07.500000Z",)"
                R"("leaseTransitions":2}})");
  const auto back = parseLeaseJson(json);
  REQUIRE(back.ok());
  CHECK(back->spec == lease.spec);
  CHECK(back->resourceVersion == "41");

  // A create carries no resourceVersion; a release writes the empty holder explicitly.
  lease.resourceVersion.clear();
  lease.spec.holderIdentity.clear();
  const std::string created = leaseJson(lease);
  CHECK(created.find("resourceVersion") == std::string::npos);
  CHECK(created.find(R"("holderIdentity":"")") != std::string::npos);
}

TEST_CASE("MicroTime is UTC with six fractional digits") {
  using namespace std::chrono;
  // 1796292241 s = 2026-12-03T10:04:01Z; .25 s after it.
  const system_clock::time_point t{seconds(1796292241) + microseconds(250'000)};
  CHECK(formatMicroTime(t) == "2026-12-03T10:04:01.250000Z");
  CHECK(formatMicroTime(system_clock::time_point{}) == "1970-01-01T00:00:00.000000Z");
  // Half a second before the epoch: the second before, and 500000 µs into it.
  CHECK(formatMicroTime(system_clock::time_point{microseconds(-500'000)}) ==
        "1969-12-31T23:59:59.500000Z");
}
