#pragma once
// Reads a kubeconfig file (the format kubectl uses): picks the current context (or a named one) and
// resolves its cluster and user into a KubeConfig. Supported auth: client certificate (data or
// file), bearer token (inline or tokenFile). Exec and auth-provider plugins are refused with a
// clear error rather than silently connecting unauthenticated.
#include <string>
#include <string_view>

#include "base/result.h"
#include "kube/kube_config.h"

namespace gte::kube {

// `yamlText` is the kubeconfig; relative file paths in it resolve against `baseDir` (the directory
// of the kubeconfig, as kubectl does). An empty `context` selects `current-context`.
Result<KubeConfig> parseKubeconfig(std::string_view yamlText, const std::string& baseDir,
                                   const std::string& context = "");

// Reads `path` and parses it as above.
Result<KubeConfig> loadKubeconfigFile(const std::string& path, const std::string& context = "");

}  // namespace gte::kube
