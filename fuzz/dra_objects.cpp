// DRA objects through every reader, the CEL subset and the first-fit replica. The input is read
// as a ResourceSlice, a DeviceClass, a ResourceClaim, a ResourceClaimTemplate and a CEL
// expression, each in turn (most inputs are one of them, and a refusal must say why):
// - an accepted slice is gathered as a node's devices (next to nothing else), matched against the
//   NVIDIA chart's classes, mapped onto an HGX H100's GPUs and allocated from by fixed claims;
// - an accepted class is compiled and matched against the H100 fixture's devices;
// - an accepted claim (or template) is compiled and allocated on the H100 fixture's devices;
// - an accepted expression is evaluated on every H100 device, twice, with the same outcome.
// Every allocation takes devices no claim holds, as many as an exact count asks: distinct ones,
// except that a device allowing multiple allocations may be shared, never past its capacity.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "dra/cel_program.h"
#include "dra/claim_program.h"
#include "dra/class_catalog.h"
#include "dra/device_class.h"
#include "dra/first_fit.h"
#include "dra/gpu_mapping.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice_json.h"
#include "fuzz_check.h"

namespace {

using gte::fuzz::check;
namespace dra = gte::dra;

std::string fixture(const std::string& file) {
  std::ifstream in(std::string(GTE_SOURCE_DIR) + "/tests/data/dra/" + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<dra::DeviceClassConstSharedPtr> fixtureClasses() {
  return dra::parseDeviceClassListJson(fixture("nvidia-device-classes.json")).value();
}

dra::ResourceClaimConstSharedPtr fixtureClaim(const std::string& file) {
  return dra::parseResourceClaimJson(fixture(file)).value();
}

struct Context {
  dra::ClassCatalog catalog{fixtureClasses()};
  dra::SliceIndex slices;
  dra::NodeDevices h100;
  dra::ClassMatches matches;
  gte::GpuTopology topology;
  std::vector<dra::ClaimProgram> claims;

  Context() {
    slices.upsert(dra::parseResourceSliceJson(fixture("hgx-h100-slice.json")).value());
    h100 = dra::gatherNodeDevices("hgx-h100-a", {}, slices, dra::AllocatedDevices{});
    matches = dra::matchClasses(h100, catalog);
    topology.gpuCount = 8;
    for (int i = 0; i < 8; ++i)
      topology.pciAddresses.push_back(static_cast<std::uint32_t>(i) << 8);
    for (const char* file : {"claim-2-gpus.json", "claim-first-available.json"}) {
      claims.push_back(dra::compileClaim(fixtureClaim(file)->spec, file, catalog).value());
    }
    // Two requests that may share one device (consumable capacity).
    const auto shares = dra::parseResourceClaimJson(R"({"metadata":{"name":"s","namespace":"f"},
      "spec":{"devices":{"requests":[
        {"name":"a","exactly":{"deviceClassName":"gpu.nvidia.com",
          "capacity":{"requests":{"memory":"10Gi"}}}},
        {"name":"b","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,
          "capacity":{"requests":{"memory":"1500m"}}}}]}}})");
    claims.push_back(dra::compileClaim(shares.value()->spec, "shares", catalog).value());
  }
};

const Context& context() {
  static const Context ctx;
  return ctx;
}

void checkAllocation(const dra::FirstFitResult& result, const dra::NodeDevices& node,
                     const std::vector<const dra::ClaimProgram*>& claims) {
  check(result.status == dra::FirstFitStatus::kAllocated || result.devices.empty(),
        "only an allocation lists devices");
  check(result.status == dra::FirstFitStatus::kAllocated ||
            result.status == dra::FirstFitStatus::kNoFit || !result.why.empty(),
        "an error or an uninterpretable outcome says why");
  check(result.steps <= dra::kFirstFitStepBudget + 1, "the search stays within its budget");
  if (result.status != dra::FirstFitStatus::kAllocated) return;
  std::set<std::uint32_t> whole;
  std::set<std::uint32_t> shared;
  for (const dra::PickedDevice& picked : result.devices) {
    check(picked.position < node.devices.size(), "a picked device exists");
    check(!node.devices[picked.position].inUse, "no device some claim holds is picked");
    check(picked.claim < claims.size(), "a pick names a claim");
    const dra::NodeDevice& nd = node.devices[picked.position];
    const dra::Device& device = nd.slice->devices[nd.index];
    if (picked.share < 0) {
      check(whole.insert(picked.position).second, "no device is picked whole twice");
      continue;
    }
    check(device.allowMultipleAllocations, "only a shareable device is shared");
    check(static_cast<std::size_t>(picked.share) < result.consumed.size(), "a share says its use");
    shared.insert(picked.position);
  }
  for (const std::uint32_t position : shared) {
    check(whole.count(position) == 0, "a shared device is not also taken whole");
    // Every share of the device together, beside those allocated before, within its capacity.
    const dra::NodeDevice& nd = node.devices[position];
    const dra::Device& device = nd.slice->devices[nd.index];
    std::vector<gte::Quantity> total(device.capacity.count);
    if (nd.shares >= 0) total = node.shareUse[static_cast<std::size_t>(nd.shares)];
    for (const dra::PickedDevice& picked : result.devices) {
      if (picked.position != position) continue;
      const auto& consumed = result.consumed[static_cast<std::size_t>(picked.share)];
      check(consumed.size() == device.capacity.count, "a share names every capacity");
      for (std::size_t i = 0; i < consumed.size(); ++i)
        total[i] += consumed[i];
    }
    for (std::uint32_t i = 0; i < device.capacity.count; ++i) {
      check(total[i] <= nd.slice->quantities[device.capacity.first + i].value,
            "shares stay within the device's capacity");
    }
  }
  for (std::size_t c = 0; c < claims.size(); ++c) {
    for (std::size_t r = 0; r < claims[c]->requests.size(); ++r) {
      std::int64_t count = 0;
      std::size_t alternative = 0;
      for (const dra::PickedDevice& picked : result.devices) {
        if (picked.claim != c || picked.request != r) continue;
        ++count;
        alternative = picked.alternative;
      }
      const dra::ShapeProgram& shape = claims[c]->requests[r].alternatives[alternative];
      if (shape.mode == dra::AllocationMode::kExactCount) {
        check(count == shape.count, "an exact count gets that many devices");
      }
    }
  }
}

void allocate(const dra::NodeDevices& node, const dra::ClassMatches& matches,
              const std::vector<const dra::ClaimProgram*>& claims) {
  dra::FirstFit fit(claims);
  checkAllocation(fit.run(node, matches), node, claims);
  // The scratch is reset between nodes: a second run decides the same.
  const dra::FirstFitResult again = fit.run(node, matches);
  checkAllocation(again, node, claims);
  checkAllocation(fit.run(node, matches, true), node, claims);
}

void exerciseSlice(const dra::ResourceSliceConstSharedPtr& slice) {
  const Context& ctx = context();
  for (const dra::Device& device : slice->devices) {
    check(device.attributes.first + device.attributes.count <= slice->attributes.size(),
          "attribute ranges stay inside the slice");
    check(device.capacity.first + device.capacity.count <= slice->quantities.size(),
          "capacity ranges stay inside the slice");
  }
  dra::SliceIndex index;
  index.upsert(slice);
  const std::string node = slice->selection.nodeName.empty() ? "n" : slice->selection.nodeName;
  const dra::NodeDevices devices = dra::gatherNodeDevices(node, {}, index, dra::AllocatedDevices{});
  const dra::ClassMatches matches = dra::matchClasses(devices, ctx.catalog);
  const dra::GpuMapping mapping = dra::mapGpuDevices(node, devices, ctx.topology, false);
  check(mapping.devices.size() == devices.devices.size(), "one mapping per device");
  for (const dra::DeviceGpu& d : mapping.devices) {
    check(d.gpu < ctx.topology.gpuCount, "a mapped GPU is one of the node's");
  }
  std::vector<const dra::ClaimProgram*> claims;
  for (const dra::ClaimProgram& claim : ctx.claims)
    claims.push_back(&claim);
  allocate(devices, matches, claims);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Context& ctx = context();

  const auto slice = dra::parseResourceSliceJson(text);
  if (slice.ok()) {
    exerciseSlice(*slice);
  } else {
    check(!slice.error().message.empty(), "a refused slice says why");
  }

  const auto list = dra::parseDeviceClassListJson(text);
  if (!list.ok()) check(!list.error().message.empty(), "a refused class list says why");
  const auto cls = dra::parseDeviceClassJson(text);
  if (cls.ok()) {
    const dra::ClassCatalog catalog({*cls});
    const dra::ClassMatches matches = dra::matchClasses(ctx.h100, catalog);
    check(matches.packed.size() == ctx.h100.devices.size(), "one match per device");
  } else {
    check(!cls.error().message.empty(), "a refused class says why");
  }

  const auto claim = dra::parseResourceClaimJson(text);
  const auto tmpl = dra::parseResourceClaimTemplateJson(text);
  for (const dra::ClaimSpec* spec :
       {claim.ok() ? &(*claim)->spec : nullptr, tmpl.ok() ? &(*tmpl)->spec : nullptr}) {
    if (spec == nullptr) continue;
    const auto program = dra::compileClaim(*spec, "fuzz", ctx.catalog);
    if (!program.ok()) {
      check(!program.error().message.empty(), "an uninterpretable claim says why");
      continue;
    }
    allocate(ctx.h100, ctx.matches, {&*program});
  }
  if (!claim.ok()) check(!claim.error().message.empty(), "a refused claim says why");

  const auto expression = dra::CelProgram::compile(text);
  if (!expression.ok()) {
    check(!expression.error().message.empty(), "an expression outside the subset says why");
    return 0;
  }
  for (const dra::NodeDevice& device : ctx.h100.devices) {
    const dra::SliceDevice view(*device.slice, device.index);
    check(expression->evaluate(view) == expression->evaluate(view), "evaluation is deterministic");
  }
  return 0;
}
