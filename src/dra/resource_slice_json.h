#pragma once
// Reads a resource.k8s.io/v1 ResourceSlice (as the API server sends it in a list or a watch
// event) with the pull parser. Every malformed field is an Error naming the slice and the field;
// fields the structured allocator does not read are skipped.
#include <string_view>

#include "base/result.h"
#include "dra/resource_slice.h"
#include "json/json_reader.h"

namespace gte::dra {

Result<ResourceSliceConstSharedPtr> parseResourceSliceJson(std::string_view json);

// The slice object at `reader`, read to its end and no further (a list is read in one pass).
Result<ResourceSliceConstSharedPtr> readResourceSlice(json::JsonReader& reader);

}  // namespace gte::dra
