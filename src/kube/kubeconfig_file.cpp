#include "kube/kubeconfig_file.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "kube/base64.h"
#include "kube/file_text.h"

namespace gte::kube {
namespace {

Error configError(const std::string& message) {
  return invalidArgument("kubeconfig: " + message);
}

std::string scalarOr(const YAML::Node& node, const char* key, std::string fallback = "") {
  const YAML::Node value = node[key];
  if (!value || !value.IsScalar()) return fallback;
  return value.as<std::string>();
}

// Finds the entry `name` in a named list (`clusters`, `users`, `contexts`) and returns its body
// (`cluster`, `user`, `context`).
Result<YAML::Node> findNamed(const YAML::Node& root, const char* list, const char* body,
                             const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && !entries.IsSequence()) return configError(std::string(list) + " is not a list");
  if (entries) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (scalarOr(entries[i], "name") != name) continue;
      const YAML::Node value = entries[i][body];
      if (!value || !value.IsMap()) {
        return configError(std::string(list) + "[" + std::to_string(i) + "]." + body +
                           " is missing");
      }
      return value;
    }
  }
  return configError(std::string(list) + " has no entry named \"" + name + "\"");
}

std::string resolvePath(const std::string& path, const std::string& baseDir) {
  if (path.empty() || baseDir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(baseDir) / path).string();
}

// A credential given either inline as base64 `<key>-data` or as a file `<key>`; `data` wins, as in
// client-go.
Result<std::string> dataOrFile(const YAML::Node& node, const std::string& key,
                               const std::string& where, const std::string& baseDir) {
  const std::string data = scalarOr(node, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = decodeBase64(data);
    if (!decoded) return configError(where + "." + key + "-data: " + decoded.error().message);
    return decoded;
  }
  const std::string file = scalarOr(node, key.c_str());
  if (file.empty()) return std::string();
  auto text = readFileText(resolvePath(file, baseDir));
  if (!text) return configError(where + "." + key + ": " + text.error().message);
  return text;
}

Status readCluster(const YAML::Node& cluster, const std::string& where, const std::string& baseDir,
                   KubeConfig& out) {
  out.server = scalarOr(cluster, "server");
  while (!out.server.empty() && out.server.back() == '/')
    out.server.pop_back();
  if (out.server.empty()) return configError(where + ".server is missing");
  auto ca = dataOrFile(cluster, "certificate-authority", where, baseDir);
  if (!ca) return std::move(ca).error();
  out.caPem = std::move(*ca);
  out.insecureSkipTlsVerify = scalarOr(cluster, "insecure-skip-tls-verify") == "true";
  return Ok{};
}

Status readUser(const YAML::Node& user, const std::string& where, const std::string& baseDir,
                KubeConfig& out) {
  if (user["exec"] || user["auth-provider"]) {
    return configError(where + " uses an exec or auth-provider plugin, which is not supported; " +
                       "use a client certificate or a token");
  }
  auto cert = dataOrFile(user, "client-certificate", where, baseDir);
  if (!cert) return std::move(cert).error();
  auto key = dataOrFile(user, "client-key", where, baseDir);
  if (!key) return std::move(key).error();
  if (cert->empty() != key->empty()) {
    return configError(where + " has a client certificate without a key, or a key without one");
  }
  out.clientCertPem = std::move(*cert);
  out.clientKeyPem = std::move(*key);
  out.token = scalarOr(user, "token");
  out.tokenFile = resolvePath(scalarOr(user, "tokenFile"), baseDir);
  return Ok{};
}

Result<KubeConfig> resolve(const YAML::Node& root, const std::string& baseDir,
                           const std::string& requestedContext) {
  if (!root.IsMap()) return configError("the document is not a map");
  const std::string contextName =
      requestedContext.empty() ? scalarOr(root, "current-context") : requestedContext;
  if (contextName.empty()) return configError("current-context is not set and no context given");
  auto context = findNamed(root, "contexts", "context", contextName);
  if (!context) return std::move(context).error();

  KubeConfig out;
  out.source = "context " + contextName;
  const std::string clusterName = scalarOr(*context, "cluster");
  if (clusterName.empty()) return configError("context \"" + contextName + "\" names no cluster");
  auto cluster = findNamed(root, "clusters", "cluster", clusterName);
  if (!cluster) return std::move(cluster).error();
  if (auto s = readCluster(*cluster, "clusters[" + clusterName + "].cluster", baseDir, out); !s) {
    return std::move(s).error();
  }
  // A context without a user is legal (anonymous access, or a token-less local API server).
  const std::string userName = scalarOr(*context, "user");
  if (!userName.empty()) {
    auto user = findNamed(root, "users", "user", userName);
    if (!user) return std::move(user).error();
    if (auto s = readUser(*user, "users[" + userName + "].user", baseDir, out); !s) {
      return std::move(s).error();
    }
  }
  return out;
}

}  // namespace

Result<KubeConfig> parseKubeconfig(std::string_view yamlText, const std::string& baseDir,
                                   const std::string& context) {
  // yaml-cpp reports syntax errors by exception; this runs at startup only.
  try {
    return resolve(YAML::Load(std::string(yamlText)), baseDir, context);
  } catch (const YAML::Exception& e) {
    return configError(e.what());
  }
}

Result<KubeConfig> loadKubeconfigFile(const std::string& path, const std::string& context) {
  auto text = readFileText(path);
  if (!text) return configError(text.error().message);
  auto config = parseKubeconfig(*text, std::filesystem::path(path).parent_path().string(), context);
  if (config) config->source = "kubeconfig " + path + " (" + config->source + ")";
  return config;
}

}  // namespace gte::kube
