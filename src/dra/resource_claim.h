#pragma once
// A resource.k8s.io/v1 ResourceClaim (and the claim spec of a ResourceClaimTemplate) as the
// structured allocator reads it: the requests (exactly one device request shape, or firstAvailable
// alternatives), the constraints between them, and status.allocation: the devices the claim holds.
// What the extender cannot replicate (derived attributes, admin access, a
// selector or constraint kind it predates) is recorded in `unsupported` with the reason; such a
// claim is passed through, never guessed (docs/dra.md).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "json/json_reader.h"
#include "model/resource_list.h"

namespace gte::dra {

enum class AllocationMode : std::uint8_t { kExactCount, kAll };

struct DeviceToleration {
  std::string key;
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;  // empty: every effect
  friend bool operator==(const DeviceToleration&, const DeviceToleration&) = default;
};

// One way to satisfy a request: an `exactly` request or one firstAvailable subrequest.
struct DeviceRequestShape {
  std::string name;  // the request's name, or the subrequest's
  std::string deviceClassName;
  std::vector<std::string> selectors;  // CEL expressions
  AllocationMode mode = AllocationMode::kExactCount;
  std::int64_t count = 1;  // the API default for ExactCount
  std::vector<DeviceToleration> tolerations;
  ResourceList capacityRequests;  // capacity.requests (consumable capacity)
  std::string unsupported;        // why the extender cannot replicate it; empty when it can
  friend bool operator==(const DeviceRequestShape&, const DeviceRequestShape&) = default;
};

struct DeviceRequest {
  std::string name;
  std::vector<DeviceRequestShape> alternatives;  // `exactly`: one; firstAvailable: in order
  bool firstAvailable = false;
  friend bool operator==(const DeviceRequest&, const DeviceRequest&) = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // "req" or "req/sub"; empty: every request of the claim
  std::string matchAttribute;         // fully qualified; exactly one of the two is set
  std::string distinctAttribute;
  friend bool operator==(const DeviceConstraint&, const DeviceConstraint&) = default;
};

struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::string unsupported;  // a claim-level reason (an unknown constraint kind)
  friend bool operator==(const ClaimSpec&, const ClaimSpec&) = default;
};

// One entry of status.allocation.devices.results.
struct AllocatedDevice {
  std::string request;  // "req" or "req/sub"
  std::string driver;
  std::string pool;
  std::string device;
  bool adminAccess = false;       // not counted as in use
  bool shared = false;            // has a shareID (consumable capacity): not exclusive
  ResourceList consumedCapacity;  // what the share consumes of the device's capacities
  friend bool operator==(const AllocatedDevice&, const AllocatedDevice&) = default;
};

struct ClaimConsumer {
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
  friend bool operator==(const ClaimConsumer&, const ClaimConsumer&) = default;
};

struct ResourceClaim {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resourceVersion;
  bool deleting = false;
  bool extendedResourceClaim = false;  // annotation resource.kubernetes.io/extended-resource-claim
  ClaimSpec spec;
  bool allocated = false;                  // status.allocation is set
  std::vector<AllocatedDevice> devices;    // status.allocation.devices.results
  std::vector<ClaimConsumer> reservedFor;  // status.reservedFor
};

struct ResourceClaimTemplate {
  std::string name;
  std::string ns;
  ClaimSpec spec;  // spec.spec
};

using ResourceClaimConstSharedPtr = std::shared_ptr<const ResourceClaim>;
using ResourceClaimTemplateConstSharedPtr = std::shared_ptr<const ResourceClaimTemplate>;

Result<ResourceClaimConstSharedPtr> parseResourceClaimJson(std::string_view json);
Result<ResourceClaimConstSharedPtr> readResourceClaim(json::JsonReader& reader);
Result<ResourceClaimTemplateConstSharedPtr> parseResourceClaimTemplateJson(std::string_view json);
Result<ResourceClaimTemplateConstSharedPtr> readResourceClaimTemplate(json::JsonReader& reader);

}  // namespace gte::dra
