#pragma once
// coordination.k8s.io/v1 Lease, the object leader election is built on: who holds it, for how long,
// and how often it changed hands. Read with the pull parser in one pass; written whole for a create
// (no resourceVersion) or an update (the resourceVersion read, so the API server refuses the write
// with 409 when someone else wrote in between: optimistic concurrency is the lock).
//
//   GET /apis/coordination.k8s.io/v1/namespaces/NS/leases/NAME
//   {"metadata":{"name":"gte","namespace":"NS","resourceVersion":"812"},
//    "spec":{"holderIdentity":"gte-7c9f-abcde","leaseDurationSeconds":10,
//            "acquireTime":"2026-12-03T10:00:00.000000Z","renewTime":"2026-12-03T10:04:01.250000Z",
//            "leaseTransitions":3}}
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kube/resource_path.h"

namespace gte::json {
class JsonReader;
}

namespace gte::kube {

inline constexpr ResourceType kLeases{"coordination.k8s.io", "v1", "leases"};

// The spec fields leader election reads and writes. Times are kept as the API server's MicroTime
// text: electors compare records for change and measure time on their own clocks, never across
// machines (as client-go's leaderelection does).
struct LeaseSpec {
  std::string holderIdentity;  // empty: nobody holds it (released)
  std::int64_t leaseDurationSeconds = 0;
  std::string acquireTime;
  std::string renewTime;
  std::int64_t leaseTransitions = 0;

  bool operator==(const LeaseSpec&) const = default;
};

struct Lease {
  std::string name;
  std::string ns;
  std::string resourceVersion;
  LeaseSpec spec;
};

// Reads a Lease from a reader standing at it. Errors name the field; a Lease without
// metadata.name is an error. Unknown fields (labels, managedFields, spec.strategy) are skipped.
Result<Lease> readLeaseJson(json::JsonReader& reader);
Result<Lease> parseLeaseJson(std::string_view json);

// The Lease as a create (empty resourceVersion) or update body.
std::string leaseJson(const Lease& lease);

// A metav1.MicroTime: RFC 3339 in UTC with six fractional digits, "2026-12-03T10:04:01.250000Z".
std::string formatMicroTime(std::chrono::system_clock::time_point time);

}  // namespace gte::kube
