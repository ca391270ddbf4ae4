#include "cluster/apiserver/control_plane.h"
#include "support/free_port.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "kube/api_client.h"
#include "kube/kubeconfig_file.h"

namespace gte::testing {
namespace {

using gte::testing::freePort;

namespace fs = std::filesystem;
constexpr const char* kToken = "gte-integration-admin-token";

// fork/exec with output to `log`; the child gets its own process group so stop() reaches it all.
pid_t spawn(const std::string& binary, const std::vector<std::string>& args,
            const std::string& log) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  // Dies with the test process, even when a timeout kills it before the destructors run.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(out, 1);
  ::dup2(out, 2);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execv(binary.c_str(), argv.data());
  ::_exit(127);
}

void terminate(pid_t& pid) {
  if (pid <= 0) return;
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 150; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pid = -1;
}

Status run(const std::string& command) {
  if (std::system(command.c_str()) != 0) return invalidArgument("failed: " + command);
  return Ok{};
}

}  // namespace

std::string ControlPlane::binDir() {
  const char* env = std::getenv("E2E_BIN_DIR");
  const std::string dir = env != nullptr ? env : std::string(GTE_SOURCE_DIR) + "/build/e2e-bin";
  for (const char* name : {"etcd", "kube-apiserver"}) {
    if (::access((dir + "/" + name).c_str(), X_OK) != 0) return "";
  }
  return dir;
}

ControlPlane::~ControlPlane() {
  terminate(apiserver_);
  terminate(etcd_);
  if (!dir_.empty() && std::getenv("GTE_KEEP_CONTROL_PLANE") == nullptr) fs::remove_all(dir_);
}

Status ControlPlane::writePki() {
  const std::string d = dir_;
  const std::string quiet = " >>" + d + "/openssl.log 2>&1";
  std::ofstream(d + "/ext.cnf") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                << "extendedKeyUsage=serverAuth\n";
  std::ofstream(d + "/client.cnf") << "extendedKeyUsage=clientAuth\n";
  for (const std::string& command : {
           "openssl ecparam -name prime256v1 -genkey -noout -out " + d + "/ca.key",
           "openssl req -x509 -new -key " + d + "/ca.key -subj /CN=gte-test-ca -days 2 -out " + d +
               "/ca.crt",
           "openssl ecparam -name prime256v1 -genkey -noout -out " + d + "/apiserver.key",
           "openssl req -new -key " + d + "/apiserver.key -subj /CN=kube-apiserver -out " + d +
               "/apiserver.csr",
           "openssl x509 -req -in " + d + "/apiserver.csr -CA " + d + "/ca.crt -CAkey " + d +
               "/ca.key -CAcreateserial -days 2 -extfile " + d + "/ext.cnf -out " + d +
               "/apiserver.crt",
           // A client certificate in the system:masters group, for certificate authentication.
           "openssl ecparam -name prime256v1 -genkey -noout -out " + d + "/client.key",
           "openssl req -new -key " + d + "/client.key -subj /O=system:masters/CN=gte-admin -out " +
               d + "/client.csr",
           "openssl x509 -req -in " + d + "/client.csr -CA " + d + "/ca.crt -CAkey " + d +
               "/ca.key -CAcreateserial -days 2 -extfile " + d + "/client.cnf -out " + d +
               "/client.crt",
           "openssl base64 -A -in " + d + "/client.crt -out " + d + "/client.crt.b64",
           // A CA that signed nothing here: verification against it must fail.
           "openssl ecparam -name prime256v1 -genkey -noout -out " + d + "/other-ca.key",
           "openssl req -x509 -new -key " + d + "/other-ca.key -subj /CN=other-ca -days 2 -out " +
               d + "/other-ca.crt",
           "openssl genrsa -out " + d + "/sa.key 2048",
           "openssl rsa -in " + d + "/sa.key -pubout -out " + d + "/sa.pub",
       }) {
    if (auto s = run(command + quiet); !s) return s;
  }
  std::ofstream(d + "/tokens.csv") << kToken << ",admin,admin-uid,\"system:masters\"\n";
  std::ifstream certFile(d + "/client.crt.b64");
  std::string certData((std::istreambuf_iterator<char>(certFile)),
                       std::istreambuf_iterator<char>());
  // Contexts: `it` (token; CA as a file relative to the kubeconfig, the default), `cert` (client
  // certificate as inline data, key as a file), `insecure` (no CA, verification off) and
  // `wrong-ca` (a CA that did not sign the server: must fail).
  std::ofstream(kubeconfig_)
      << "apiVersion: v1\nkind: Config\ncurrent-context: it\n"
      << "clusters:\n"
      << "- name: it\n  cluster:\n    server: " << url_ << "\n    certificate-authority: ca.crt\n"
      << "- name: it-insecure\n  cluster:\n    server: " << url_
      << "\n    insecure-skip-tls-verify: true\n"
      << "- name: it-wrong-ca\n  cluster:\n    server: " << url_
      << "\n    certificate-authority: other-ca.crt\n"
      << "users:\n- name: admin\n  user:\n    token: " << kToken << "\n"
      << "- name: cert-admin\n  user:\n    client-certificate-data: " << certData
      << "\n    client-key: client.key\n"
      << "contexts:\n- name: it\n  context: {cluster: it, user: admin}\n"
      << "- name: cert\n  context: {cluster: it, user: cert-admin}\n"
      << "- name: insecure\n  context: {cluster: it-insecure, user: admin}\n"
      << "- name: wrong-ca\n  context: {cluster: it-wrong-ca, user: admin}\n";
  return Ok{};
}

Status ControlPlane::start() {
  bin_ = binDir();
  if (bin_.empty()) return Error{ErrorCode::kNotFound, "control-plane binaries not built"};
  char pattern[] = "/tmp/gte-apiserver-XXXXXX";
  dir_ = ::mkdtemp(pattern);
  apiPort_ = freePort();
  etcdPort_ = freePort();
  url_ = "https://127.0.0.1:" + std::to_string(apiPort_);
  kubeconfig_ = dir_ + "/kubeconfig";
  if (auto s = writePki(); !s) return s;
  etcd_ = spawn(bin_ + "/etcd",
                {"--data-dir", dir_ + "/etcd", "--client-port", std::to_string(etcdPort_),
                 "--peer-port", std::to_string(freePort())},
                dir_ + "/etcd.log");
  return startApiServer();
}

Status ControlPlane::startApiServer() {
  const std::string d = dir_;
  apiserver_ = spawn(
      bin_ + "/kube-apiserver",
      {"--etcd-servers=http://127.0.0.1:" + std::to_string(etcdPort_), "--bind-address=127.0.0.1",
       "--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
       "--secure-port=" + std::to_string(apiPort_), "--cert-dir=" + d + "/certs",
       "--tls-cert-file=" + d + "/apiserver.crt", "--tls-private-key-file=" + d + "/apiserver.key",
       "--token-auth-file=" + d + "/tokens.csv", "--client-ca-file=" + d + "/ca.crt",
       "--authorization-mode=RBAC", "--service-account-issuer=https://kubernetes.default.svc",
       "--service-account-key-file=" + d + "/sa.pub",
       "--service-account-signing-key-file=" + d + "/sa.key",
       "--service-cluster-ip-range=10.0.0.0/24",
       "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,"
       "StorageObjectInUseProtection",
       "--profiling=false", "--v=1"},
      d + "/apiserver.log");
  return waitReady();
}

Status ControlPlane::stopApiServer() {
  terminate(apiserver_);
  return Ok{};
}

Status ControlPlane::waitReady() {
  auto config = kube::loadKubeconfigFile(kubeconfig_);
  if (!config) return std::move(config).error();
  auto client = kube::ApiClient::create(*config, {std::chrono::seconds(5)});
  if (!client) return std::move(client).error();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    // The namespace the tests use must exist too (the API server creates it at startup).
    auto ready = (*client)->send("GET", "/readyz");
    auto ns = (*client)->send("GET", "/api/v1/namespaces/default");
    if (ready && ready->status == 200 && ns && ns->status == 200) return Ok{};
    last = ready ? std::to_string(ready->status) : ready.error().message;
    if (::waitpid(apiserver_, nullptr, WNOHANG) == apiserver_) {
      apiserver_ = -1;
      return Error{ErrorCode::kUnavailable,
                   "kube-apiserver exited; see " + dir_ + "/apiserver.log"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Error{ErrorCode::kUnavailable,
               "kube-apiserver not ready (" + last + "); see " + dir_ + "/apiserver.log"};
}

}  // namespace gte::testing
