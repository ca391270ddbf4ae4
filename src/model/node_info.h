#pragma once
// The parts of a v1.Node the extender decides on. Everything else in the Node is ignored (and, in
// full-Node mode, echoed back byte-for-byte by the wire layer, never re-serialised).
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/resource_list.h"
#include "model/string_map.h"

namespace gte {
namespace json {
class JsonReader;
}

struct NodeInfo {
  std::string name;
  std::string uid;
  std::string resourceVersion;
  StringMap labels;          // metadata.labels
  ResourceList allocatable;  // status.allocatable (what fit decisions use, as the scheduler does)
  // status.declaredFeatures holds "DRAOptionalNodeOperations" (the kubelet declares it with that
  // gate on): only then does the scheduler allocate devices of slices with skipNodeOperations.
  bool declaresDraOptionalNodeOperations = false;
};

// Parses one v1.Node JSON object. Invalid quantities in allocatable are errors that name the key.
Result<NodeInfo> parseNodeJson(std::string_view json);

// The same for the object at `reader`, which it reads to the object's end and no further (the
// caller checks what follows): a list of nodes is read in one pass.
Result<NodeInfo> readNodeJson(json::JsonReader& reader);

}  // namespace gte
