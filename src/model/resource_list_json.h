#pragma once
// Reads a JSON ResourceList ({"nvidia.com/gpu":"8",...}) from a pull parser. Shared by the Node and
// Pod readers so both accept the same quantity forms (strings, bare numbers, null).
#include <string_view>

#include "base/result.h"
#include "json/json_fields.h"
#include "json/json_reader.h"
#include "model/resource_list.h"
#include "model/string_map.h"

namespace gte {

// One quantity: a string ("10Gi") or, as Quantity.UnmarshalJSON accepts, a bare number.
Status readQuantityValue(json::JsonReader& reader, std::string_view where, Quantity& out);

// On a malformed quantity returns an error naming `where` and the resource.
Status readResourceList(json::JsonReader& reader, std::string_view where, ResourceList& out);

// Reads a JSON object of string values (labels, annotations); null values are skipped.
Status readStringMap(json::JsonReader& reader, std::string_view where, StringMap& out);

}  // namespace gte
