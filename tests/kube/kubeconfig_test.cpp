// Kubeconfig and in-cluster configuration, and the rotating bearer token.
#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "kube/bearer_token.h"
#include "kube/in_cluster_config.h"
#include "kube/kubeconfig_file.h"

using namespace gte::kube;
namespace fs = std::filesystem;

namespace {

// A scratch directory removed at the end of the test.
struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() /
           ("gte_kube_test_" +
            std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "_" +
            std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
  fs::path path;
  static inline int counter = 0;
};

// base64 of "CA-PEM", "CERT-PEM", "KEY-PEM".
constexpr const char* kCaData = "Q0EtUEVN";
constexpr const char* kCertData = "Q0VSVC1QRU0=";
constexpr const char* kKeyData = "S0VZLVBFTQ==";

std::string twoContexts() {
  return std::string(R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: )") +
         kCaData + R"(
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: prod-admin, namespace: ml}
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
users:
- name: prod-admin
  user:
    client-certificate-data: )" +
         kCertData + R"(
    client-key-data: )" +
         kKeyData + R"(
- name: dev-user
  user:
    token: s3cr3t
)";
}

}  // namespace

TEST_CASE("kubeconfig: the current context picks cluster and user") {
  auto config = parseKubeconfig(twoContexts(), "/base");
  REQUIRE(config.ok());
  CHECK(config->server == "https://127.0.0.1:6443");
  CHECK(config->insecureSkipTlsVerify);
  CHECK(config->token == "s3cr3t");
  CHECK(config->caPem.empty());
  CHECK(config->clientCertPem.empty());
}

TEST_CASE("kubeconfig: a named context, inline certificate data") {
  auto config = parseKubeconfig(twoContexts(), "/base", "prod");
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.0.0.1:6443");  // trailing slash dropped
  CHECK_FALSE(config->insecureSkipTlsVerify);
  CHECK(config->caPem == "CA-PEM");
  CHECK(config->clientCertPem == "CERT-PEM");
  CHECK(config->clientKeyPem == "KEY-PEM");
  CHECK(config->token.empty());
}

TEST_CASE("kubeconfig: file references resolve against the kubeconfig's directory") {
  TempDir dir;
  dir.write("ca.crt", "CA-FROM-FILE");
  dir.write("client.crt", "CERT-FROM-FILE");
  dir.write("client.key", "KEY-FROM-FILE");
  const std::string path = dir.write("config", R"(
current-context: c
clusters:
- name: k
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user: {client-certificate: client.crt, client-key: client.key, tokenFile: /var/token}
)");
  auto config = loadKubeconfigFile(path);
  REQUIRE(config.ok());
  CHECK(config->caPem == "CA-FROM-FILE");
  CHECK(config->clientCertPem == "CERT-FROM-FILE");
  CHECK(config->clientKeyPem == "KEY-FROM-FILE");
  CHECK(config->tokenFile == "/var/token");
  CHECK(config->source.find(path) != std::string::npos);
}

TEST_CASE("kubeconfig: errors say what is wrong and where") {
  auto expectError = [](const std::string& yaml, const std::string& needle,
                        const std::string& context = "") {
    auto config = parseKubeconfig(yaml, "/nowhere", context);
    REQUIRE_FALSE(config.ok());
    INFO(config.error().message);
    CHECK(config.error().message.find(needle) != std::string::npos);
  };
  expectError(twoContexts(), "contexts has no entry named \"staging\"", "staging");
  expectError("clusters: []\n", "current-context is not set");
  expectError("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n",
              "clusters has no entry named \"k\"");
  expectError(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {insecure-skip-tls-verify: true}}]
)",
              "clusters[k].cluster.server is missing");
  expectError(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: aws}}}]
)",
              "exec or auth-provider");
  expectError(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://x", certificate-authority: missing.crt}}]
)",
              "certificate-authority: cannot open /nowhere/missing.crt");
  expectError(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://x", certificate-authority-data: "***"}}]
)",
              "certificate-authority-data: base64");
  expectError(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://x"}}]
users: [{name: u, user: {client-certificate-data: Q0E=}}]
)",
              "without a key");
  expectError("current-context: [", "kubeconfig:");
  auto missing = loadKubeconfigFile("/nonexistent/kubeconfig");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("/nonexistent/kubeconfig") != std::string::npos);
}

TEST_CASE("in-cluster config: service host and port, token and CA from the mount") {
  TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", "CLUSTER-CA");
  std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                            {"KUBERNETES_SERVICE_PORT", "443"}};
  auto lookup = [&env](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto config = inClusterConfig(lookup, dir.path.string());
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.96.0.1:443");
  CHECK(config->caPem == "CLUSTER-CA");
  CHECK(config->tokenFile == (dir.path / "token").string());

  env["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  CHECK(inClusterConfig(lookup, dir.path.string())->server == "https://[fd00::1]:443");

  env.erase("KUBERNETES_SERVICE_PORT");
  auto outside = inClusterConfig(lookup, dir.path.string());
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.error().message.find("KUBERNETES_SERVICE_HOST") != std::string::npos);

  env["KUBERNETES_SERVICE_PORT"] = "443";
  auto noMount = inClusterConfig(lookup, (dir.path / "absent").string());
  REQUIRE_FALSE(noMount.ok());
  CHECK(noMount.error().message.find("token") != std::string::npos);
}

TEST_CASE("BearerToken re-reads a rotated token file") {
  TempDir dir;
  const std::string file = dir.write("token", "first\n");
  BearerToken token("static", file);
  CHECK(token.current() == "first");  // the file wins over the static token
  // Rotation writes a new file (size changes here; the kubelet swaps a symlink, changing mtime).
  dir.write("token", "second-token\n");
  CHECK(token.current() == "second-token");
  // A file that vanishes mid-rotation keeps the last good token.
  fs::remove(file);
  CHECK(token.current() == "second-token");

  BearerToken onlyStatic("static", "");
  CHECK(onlyStatic.current() == "static");
  BearerToken none("", "");
  CHECK(none.current().empty());
}
