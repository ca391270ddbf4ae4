#pragma once
// A resource.k8s.io/v1 DeviceClass as the allocator uses it: its selectors (CEL expressions, kept
// as written; cel_program.h compiles the subset the extender evaluates) and the extended resource
// it backs (KEP-5004: a pod asking `nvidia.com/gpu: 2` on a node without that resource in its
// allocatable gets a claim for 2 devices of this class).
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "json/json_reader.h"

namespace gte::dra {

struct DeviceClass {
  std::string name;
  std::string resourceVersion;         // metadata.resourceVersion (a watch resumes from it)
  std::string creationTimestamp;       // orders classes that name one extended resource
  std::vector<std::string> selectors;  // CEL expressions, all must match
  std::string extendedResourceName;    // empty: none set
  // spec.selectors held a selector kind other than CEL: no device can be judged against it.
  bool unknownSelector = false;
};

using DeviceClassConstSharedPtr = std::shared_ptr<const DeviceClass>;

// The implicit extended resource every class backs: "deviceclass.resource.kubernetes.io/<name>".
std::string implicitExtendedResourceName(const std::string& className);

Result<DeviceClassConstSharedPtr> parseDeviceClassJson(std::string_view json);
Result<DeviceClassConstSharedPtr> readDeviceClass(json::JsonReader& reader);
// A DeviceClassList (what a list request answers): its items, in order.
Result<std::vector<DeviceClassConstSharedPtr>> parseDeviceClassListJson(std::string_view json);

}  // namespace gte::dra
