#pragma once
// A real etcd + kube-apiserver on loopback for the integration tests, from the binaries the e2e
// harness builds (tests/e2e/hack/build-control-plane.sh -> build/e2e-bin, or $E2E_BIN_DIR). The PKI
// is made with the openssl CLI: a CA, a serving certificate for 127.0.0.1, a service-account key
// pair and a system:masters bearer token. The API server can be stopped and restarted on the same
// port to test that watches survive it.
#include <sys/types.h>
#include <string>

#include "base/result.h"

namespace gte::testing {

class ControlPlane {
 public:
  // Empty when the binaries are not there (the test is then skipped).
  static std::string binDir();

  ~ControlPlane();  // stops everything, removes the work directory

  // Starts etcd and kube-apiserver and waits for /readyz; the error names what failed.
  Status start();
  Status stopApiServer();
  Status startApiServer();  // again, same port and etcd

  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& url() const { return url_; }

 private:
  Status writePki();
  Status waitReady();

  std::string bin_;
  std::string dir_;
  std::string url_;
  std::string kubeconfig_;
  int apiPort_ = 0;
  int etcdPort_ = 0;
  pid_t etcd_ = -1;
  pid_t apiserver_ = -1;
};

}  // namespace gte::testing
