#pragma once
// Reading the fields of resource.k8s.io objects: the JSON field toolkit (json/json_fields.h: every
// malformed field is an Error naming its path, null reads as absent) plus the shapes only DRA
// objects have (node selectors, device selectors, the metadata the DRA readers keep).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "dra/node_selector.h"
#include "json/json_fields.h"
#include "json/json_reader.h"
#include "model/resource_list_json.h"
#include "model/string_map.h"

namespace gte::dra {

// The JSON field toolkit (json/json_fields.h), by its short names in the DRA readers.
using json::dotted;
using json::fieldError;
using json::forEachElement;
using json::forEachKey;
using json::indexed;
using json::readBoolField;
using json::readIntField;
using json::readStringField;
using json::readStringList;
using json::skipField;

Status readNodeSelector(json::JsonReader& r, std::string_view where, NodeSelector& out);
// A list of resource.k8s.io DeviceSelectors ({cel: {expression}}): the expressions, in order;
// `unknownSelector` is set when an entry holds no CEL selector (a kind this reader predates).
Status readDeviceSelectors(json::JsonReader& r, std::string_view where,
                           std::vector<std::string>& out, bool& unknownSelector);

// The parts of metadata the DRA readers keep.
struct ObjectMeta {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resourceVersion;
  std::string creationTimestamp;  // RFC 3339, as the API server writes it
  bool deleting = false;          // deletionTimestamp set
  StringMap annotations;
};
Status readObjectMeta(json::JsonReader& r, std::string_view where, ObjectMeta& out);

}  // namespace gte::dra
