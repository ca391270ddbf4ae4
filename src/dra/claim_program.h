#pragma once
// A claim spec compiled for the first-fit replica (first_fit.h): each request's alternatives (one
// for `exactly`, the subrequests in order for firstAvailable) with their class resolved in the
// catalog and their selectors compiled, and the constraints. Compiling fails, with the reason,
// for everything the replica does not reproduce: such a claim is uninterpretable and the pod is
// passed through (docs/dra.md, "What is passed through").
#include <string>
#include <vector>

#include "base/result.h"
#include "dra/cel_program.h"
#include "dra/class_catalog.h"
#include "dra/resource_claim.h"

namespace gte::dra {

struct ShapeProgram {
  std::string name;      // the request's name, or the subrequest's
  std::string fullName;  // "req" or "req/sub", as results and constraints name it
  int classIndex = -1;   // in the catalog
  std::vector<CelProgram> selectors;
  AllocationMode mode = AllocationMode::kExactCount;
  std::int64_t count = 1;
  std::vector<DeviceToleration> tolerations;
  ResourceList capacityRequests;  // consumable capacity (consumable_capacity.h)
};

struct RequestProgram {
  std::string name;
  bool firstAvailable = false;
  std::vector<ShapeProgram> alternatives;
};

struct ConstraintProgram {
  std::vector<std::string> requests;  // empty: every request
  std::string attribute;              // fully qualified
  bool distinct = false;              // distinctAttribute; else matchAttribute
};

struct ClaimProgram {
  std::string id;  // "namespace/name", or "<extended-resources>" for the scheduler's own claim
  std::vector<RequestProgram> requests;
  std::vector<ConstraintProgram> constraints;
};

// Errors read "claim ml/train-0: request gpus: <why>".
Result<ClaimProgram> compileClaim(const ClaimSpec& spec, const std::string& id,
                                  const ClassCatalog& catalog);

// Whether two compiled claims ask for the same devices: the same requests, alternatives
// (class, selectors, mode, count, tolerations; the tiered form names no capacity) and constraints;
// only the id may differ. Pods of one group made from one template ask the same, so the group
// planner may place them as alike members.
bool asksTheSame(const ClaimProgram& a, const ClaimProgram& b);

// The claim the scheduler builds for a pod's DRA-backed extended resource: one request of
// `count` devices of the class (first_fit.h treats it as the last claim).
ClaimProgram extendedResourceClaim(int classIndex, std::int64_t count);

// The largest number of devices the allocator puts in one claim's result
// (resource.k8s.io AllocationResultsMaxSize).
inline constexpr std::int64_t kAllocationResultsMaxSize = 32;

}  // namespace gte::dra
