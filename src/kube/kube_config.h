#pragma once
// Everything the API client needs to reach and authenticate to one API server, already resolved:
// file references are read (except the bearer token file, which rotates and is re-read by
// BearerToken), base64 data decoded.
#include <string>

namespace gte::kube {

struct KubeConfig {
  std::string server;  // "https://host:port" (no trailing slash)
  std::string caPem;   // trusted CA bundle; empty = the system roots
  std::string clientCertPem;
  std::string clientKeyPem;
  std::string token;      // a static bearer token
  std::string tokenFile;  // a bearer token file (service-account projected tokens rotate)
  bool insecureSkipTlsVerify = false;
  std::string source;  // where this came from, for log lines ("kubeconfig /x (context y)")
};

}  // namespace gte::kube
