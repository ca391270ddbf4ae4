#include "dra/claim_program.h"

namespace gte::dra {

Result<ClaimProgram> compileClaim(const ClaimSpec& spec, const std::string& id,
                                  const ClassCatalog& catalog) {
  const auto fail = [&](const std::string& where, const std::string& why) -> Error {
    return invalidArgument("claim " + id + where + ": " + why);
  };
  if (!spec.unsupported.empty()) return fail("", spec.unsupported);
  if (spec.requests.empty()) return fail("", "no requests");
  ClaimProgram program;
  program.id = id;
  for (const DeviceRequest& request : spec.requests) {
    RequestProgram compiled;
    compiled.name = request.name;
    compiled.firstAvailable = request.firstAvailable;
    for (const DeviceRequestShape& shape : request.alternatives) {
      const std::string where =
          " request " + (request.firstAvailable ? request.name + "/" + shape.name : request.name);
      if (!shape.unsupported.empty()) return fail(where, shape.unsupported);
      ShapeProgram out;
      out.name = shape.name;
      out.fullName = request.firstAvailable ? request.name + "/" + shape.name : request.name;
      out.classIndex = catalog.find(shape.deviceClassName);
      if (out.classIndex < 0) {
        return fail(where, "device class " + shape.deviceClassName + " is not known (yet)");
      }
      if (!catalog.at(out.classIndex).uninterpretable.empty()) {
        return fail(where, "class " + shape.deviceClassName + ": " +
                               catalog.at(out.classIndex).uninterpretable);
      }
      for (const std::string& expression : shape.selectors) {
        Result<CelProgram> selector = CelProgram::compile(expression);
        if (!selector.ok()) return fail(where, selector.error().message);
        out.selectors.push_back(std::move(selector).value());
      }
      out.mode = shape.mode;
      out.count = shape.count;
      if (out.mode == AllocationMode::kExactCount && out.count > kAllocationResultsMaxSize) {
        return fail(where, "asks for " + std::to_string(out.count) +
                               " devices, more than a claim "
                               "can hold (32)");
      }
      out.tolerations = shape.tolerations;
      out.capacityRequests = shape.capacityRequests;
      compiled.alternatives.push_back(std::move(out));
    }
    program.requests.push_back(std::move(compiled));
  }
  for (const DeviceConstraint& constraint : spec.constraints) {
    ConstraintProgram out;
    out.requests = constraint.requests;
    out.distinct = !constraint.distinctAttribute.empty();
    out.attribute = out.distinct ? constraint.distinctAttribute : constraint.matchAttribute;
    program.constraints.push_back(std::move(out));
  }
  return program;
}

namespace {

bool sameShape(const ShapeProgram& a, const ShapeProgram& b) {
  if (a.name != b.name || a.classIndex != b.classIndex || a.mode != b.mode || a.count != b.count ||
      a.tolerations != b.tolerations || a.selectors.size() != b.selectors.size() ||
      !a.capacityRequests.empty() || !b.capacityRequests.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < a.selectors.size(); ++i) {
    if (a.selectors[i].expression() != b.selectors[i].expression()) return false;
  }
  return true;
}

bool sameRequest(const RequestProgram& a, const RequestProgram& b) {
  if (a.name != b.name || a.firstAvailable != b.firstAvailable ||
      a.alternatives.size() != b.alternatives.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.alternatives.size(); ++i) {
    if (!sameShape(a.alternatives[i], b.alternatives[i])) return false;
  }
  return true;
}

bool sameConstraint(const ConstraintProgram& a, const ConstraintProgram& b) {
  return a.requests == b.requests && a.attribute == b.attribute && a.distinct == b.distinct;
}

}  // namespace

bool asksTheSame(const ClaimProgram& a, const ClaimProgram& b) {
  if (a.requests.size() != b.requests.size() || a.constraints.size() != b.constraints.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    if (!sameRequest(a.requests[i], b.requests[i])) return false;
  }
  for (std::size_t i = 0; i < a.constraints.size(); ++i) {
    if (!sameConstraint(a.constraints[i], b.constraints[i])) return false;
  }
  return true;
}

ClaimProgram extendedResourceClaim(int classIndex, std::int64_t count) {
  ClaimProgram program;
  program.id = "<extended-resources>";
  RequestProgram request;
  // One request stands for the scheduler's per-container requests: they share the class, have
  // no selectors or constraints, so first-fit hands them the same devices as one request of the
  // sum (docs/dra.md, "DRA-backed extended resources").
  request.name = "container-0-request-0";
  ShapeProgram shape;
  shape.name = request.name;
  shape.fullName = request.name;
  shape.classIndex = classIndex;
  shape.count = count;
  request.alternatives.push_back(std::move(shape));
  program.requests.push_back(std::move(request));
  return program;
}

}  // namespace gte::dra
