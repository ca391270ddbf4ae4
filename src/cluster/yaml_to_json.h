#pragma once
// Converts YAML documents to JSON text so YAML input goes through the same JSON readers as API
// objects. Scalars follow YAML 1.2 core-schema typing as Kubernetes' sigs.k8s.io/yaml does: quoted
// scalars are strings; plain `true`/`false`, `null`/`~`/empty and numbers keep their types;
// everything else is a string.
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gte::cluster {

// One JSON text per YAML document in `text` (a multi-document stream gives several).
Result<std::vector<std::string>> yamlDocumentsToJson(std::string_view text);

}  // namespace gte::cluster
