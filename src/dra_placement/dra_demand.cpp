#include "dra_placement/dra_demand.h"

#include "dra_placement/dra_node_state.h"
#include "model/gpu_request.h"

namespace gte {
namespace {

const std::string* claimForTemplate(const PodInfo& pod, const std::string& entry) {
  for (const PodResourceClaimStatus& status : pod.resourceClaimStatuses) {
    if (status.name == entry) return &status.resourceClaimName;
  }
  return nullptr;
}

// Extended resources other than the device plugin's that a class backs: the extender reads only
// nvidia.com/gpu (docs/dra.md).
std::string otherBackedResource(const PodInfo& pod, const dra::ClassCatalog& classes) {
  for (const auto& [name, quantity] : pod.requests.entries()) {
    if (name == kDraGpuExtendedResource || quantity.isZero()) continue;
    if (classes.forExtendedResource(name) >= 0) return name;
  }
  return {};
}

// The claims as "N devices of class C", when they are nothing more (see DraDemand::plainGpus).
void findPlainForm(DraDemand& demand) {
  std::int64_t total = 0;
  int cls = -1;
  for (const dra::ClaimProgram& claim : demand.claims) {
    if (!claim.constraints.empty()) return;
    for (const dra::RequestProgram& request : claim.requests) {
      if (request.firstAvailable || request.alternatives.size() != 1) return;
      const dra::ShapeProgram& shape = request.alternatives.front();
      const bool plain = shape.mode == dra::AllocationMode::kExactCount &&
                         shape.selectors.empty() && shape.tolerations.empty() &&
                         shape.capacityRequests.empty() && (cls < 0 || shape.classIndex == cls);
      if (!plain) return;
      cls = shape.classIndex;
      total += shape.count;
    }
  }
  demand.plainGpus = total;
  demand.plainClass = cls;
}

// The claims as "N devices of class C in tiers", when every alternative asks the same count of the
// same class (see DraDemand::tieredDevices).
void findTieredForm(DraDemand& demand) {
  std::int64_t total = 0;
  int cls = -1;
  for (const dra::ClaimProgram& claim : demand.claims) {
    for (const dra::RequestProgram& request : claim.requests) {
      if (request.alternatives.empty()) return;
      const std::int64_t count = request.alternatives.front().count;
      for (const dra::ShapeProgram& shape : request.alternatives) {
        if (shape.mode != dra::AllocationMode::kExactCount || shape.count != count ||
            !shape.capacityRequests.empty() || (cls >= 0 && shape.classIndex != cls)) {
          return;
        }
        cls = shape.classIndex;
      }
      total += count;
    }
  }
  demand.tieredDevices = total;
}

}  // namespace

void classifyClaims(DraDemand& demand) {
  demand.plainGpus = 0;
  demand.plainClass = -1;
  demand.tieredDevices = 0;
  findPlainForm(demand);
  findTieredForm(demand);
}

std::vector<std::string_view> draPassThroughNames() {
  std::vector<std::string_view> out;
  for (int i = static_cast<int>(DraPassThrough::kNone) + 1;
       i < static_cast<int>(DraPassThrough::kCount); ++i) {
    out.push_back(draPassThroughName(static_cast<DraPassThrough>(i)));
  }
  return out;
}

std::string_view draPassThroughName(DraPassThrough reason) noexcept {
  switch (reason) {
    case DraPassThrough::kOtherExtendedResource:
      return "other_extended_resource";
    case DraPassThrough::kClaimNotCached:
      return "claim_not_cached";
    case DraPassThrough::kTemplateEntry:
      return "template_entry";
    case DraPassThrough::kUninterpretable:
      return "uninterpretable";
    case DraPassThrough::kNone:
    case DraPassThrough::kCount:
      break;
  }
  return "none";
}

DraDemandConstSharedPtr resolveDraDemand(const PodInfo& pod, std::int64_t gpus,
                                         const dra::DraObjects* objects) {
  if (objects == nullptr) return nullptr;
  const dra::ClassCatalogConstSharedPtr& catalog = objects->classes();
  const dra::ClassCatalog& classes = *catalog;
  const int extendedClass = gpus > 0 ? classes.forExtendedResource(kDraGpuExtendedResource) : -1;
  const std::string other = otherBackedResource(pod, classes);
  if (pod.resourceClaims.empty() && extendedClass < 0 && other.empty()) return nullptr;

  auto demand = std::make_shared<DraDemand>();
  demand->catalog = catalog;
  demand->extendedClass = extendedClass;
  if (extendedClass >= 0) demand->extendedClaim = dra::extendedResourceClaim(extendedClass, gpus);
  const auto passThrough = [&](DraPassThrough kind, std::string why) {
    demand->claims.clear();
    demand->passThrough = std::move(why);
    demand->passThroughKind = kind;
    return demand;
  };
  if (!other.empty()) {
    return passThrough(DraPassThrough::kOtherExtendedResource,
                       "extended resource " + other +
                           " is backed by a DeviceClass; the extender reads only nvidia.com/gpu");
  }
  for (const PodResourceClaim& entry : pod.resourceClaims) {
    std::string claimName = entry.resourceClaimName;
    if (claimName.empty()) {
      const std::string* made = claimForTemplate(pod, entry.name);
      if (made != nullptr && made->empty()) continue;  // the template needed no claim
      if (made != nullptr) claimName = *made;
    }
    if (!claimName.empty()) {
      const dra::CachedClaim cached = objects->cachedClaim(pod.ns, claimName);
      const dra::ResourceClaimConstSharedPtr& claim = cached.claim;
      if (!claim) {
        return passThrough(DraPassThrough::kClaimNotCached,
                           "claim " + pod.ns + "/" + claimName + " is not in the cache yet");
      }
      if (claim->allocated) {
        ++demand->allocatedClaims;  // holds its devices already; nothing to allocate
        continue;
      }
      // Compiled by the cache when the claim arrived; compiled here only for objects that keep
      // no programs (a what-if's own maps, tests).
      Result<dra::ClaimProgram> program =
          cached.program ? *cached.program
                         : dra::compileClaim(claim->spec, pod.ns + "/" + claimName, classes);
      if (!program.ok())
        return passThrough(DraPassThrough::kUninterpretable, program.error().message);
      demand->claims.push_back(std::move(program).value());
      continue;
    }
    if (entry.resourceClaimTemplateName.empty()) {
      return passThrough(DraPassThrough::kTemplateEntry,
                         "resource claim entry " + entry.name + " names no claim or template");
    }
    // Before the claim exists the scheduler waits for it (PreEnqueue); explain may ask earlier.
    const dra::ResourceClaimTemplateConstSharedPtr tmpl =
        objects->claimTemplate(pod.ns, entry.resourceClaimTemplateName);
    if (!tmpl) {
      return passThrough(DraPassThrough::kTemplateEntry, "template " + pod.ns + "/" +
                                                             entry.resourceClaimTemplateName +
                                                             " is not in the cache yet");
    }
    Result<dra::ClaimProgram> program = dra::compileClaim(
        tmpl->spec, pod.ns + "/" + pod.name + "-" + entry.name + " (template " + tmpl->name + ")",
        classes);
    if (!program.ok())
      return passThrough(DraPassThrough::kUninterpretable, program.error().message);
    demand->claims.push_back(std::move(program).value());
  }
  classifyClaims(*demand);
  return demand;
}

}  // namespace gte
