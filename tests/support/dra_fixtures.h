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
