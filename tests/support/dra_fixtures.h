#pragma once
// The DRA objects under tests/data/dra (ResourceSlices as the NVIDIA DRA driver publishes them,
// its chart's DeviceClasses, claims and a template), loaded with the extender's own readers.
#include <string>
#include <vector>

#include "dra/device_class.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice.h"

namespace gte::testing {

// The file's text; throws when it cannot be read (a broken checkout, not a test outcome).
std::string draFixtureText(const std::string& file);

dra::ResourceSliceConstSharedPtr draSlice(const std::string& file);
// Every item of a DeviceClassList file.
std::vector<dra::DeviceClassConstSharedPtr> draClasses(const std::string& file);
dra::ResourceClaimConstSharedPtr draClaim(const std::string& file);
dra::ResourceClaimTemplateConstSharedPtr draTemplate(const std::string& file);

}  // namespace gte::testing

namespace gte::testing {

// A ResourceSlice as JSON: `devices` is the JSON array of devices; `spec` adds spec fields
// (e.g. R"("allNodes":true)" in place of the node name when `node` is empty).
std::string draSliceJson(const std::string& name, const std::string& node, const std::string& pool,
                         const std::string& devices, const std::string& spec = "",
                         int generation = 1, int sliceCount = 1);
// A `gpu.nvidia.com` whole-GPU device with the attributes the NVIDIA driver publishes that
// placement reads.
std::string draGpuDevice(const std::string& name, int numa, const std::string& pcieRoot,
                         const std::string& extra = "");

}  // namespace gte::testing
