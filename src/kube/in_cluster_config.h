#pragma once
// The configuration of a pod talking to its own cluster: KUBERNETES_SERVICE_HOST/PORT plus the
// mounted service-account token and CA (what client-go's rest.InClusterConfig does).
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "kube/kube_config.h"

namespace gte::kube {

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Environment lookup, injectable for tests; std::nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
std::optional<std::string> processEnv(const char* name);

// Errors when the variables are missing (not running in a pod) or the token/CA cannot be read.
Result<KubeConfig> inClusterConfig(const EnvLookup& env = processEnv,
                                   const std::string& serviceAccountDir = kServiceAccountDir);

}  // namespace gte::kube
