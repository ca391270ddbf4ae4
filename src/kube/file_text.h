#pragma once
// Reads a whole (small) file as text, as a Result: certificates, keys, tokens, kubeconfigs and
// cluster files are read this way, and a missing file becomes an error naming the path.
#include <string>

#include "base/result.h"

namespace gte::kube {

Result<std::string> readFileText(const std::string& path);

}  // namespace gte::kube
