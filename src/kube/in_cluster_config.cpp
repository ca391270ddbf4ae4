#include "kube/in_cluster_config.h"

#include <cstdlib>

#include "kube/file_text.h"

namespace gte::kube {

std::optional<std::string> processEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

Result<KubeConfig> inClusterConfig(const EnvLookup& env, const std::string& serviceAccountDir) {
  const auto host = env("KUBERNETES_SERVICE_HOST");
  const auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    return Error{ErrorCode::kFailedPrecondition,
                 "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
                 "set (is this running in a pod?)"};
  }
  KubeConfig config;
  // An IPv6 service address needs brackets in a URL.
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  config.tokenFile = serviceAccountDir + "/token";
  // Read the token once now so a missing mount fails at startup, not on the first request.
  if (auto token = readFileText(config.tokenFile); !token) {
    return Error{ErrorCode::kFailedPrecondition, "in-cluster config: " + token.error().message};
  }
  auto ca = readFileText(serviceAccountDir + "/ca.crt");
  if (!ca) return Error{ErrorCode::kFailedPrecondition, "in-cluster config: " + ca.error().message};
  config.caPem = std::move(*ca);
  config.source = "in-cluster " + config.server;
  return config;
}

}  // namespace gte::kube
