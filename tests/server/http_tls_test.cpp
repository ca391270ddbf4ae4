// TLS as kube-scheduler's client sees it: --tls-cert/--tls-key serve HTTPS with TLS 1.2 or newer
// and HTTP/1.1 only (no h2 in ALPN, so Go never tries HTTP/2 PINGs against us). Uses the openssl
// and curl command-line tools, which scripts/install-deps.sh installs.
#include <unistd.h>

#include <array>
#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "extender_process.h"
#include "http_test_client.h"
#include "shell_command.h"
#include "support/free_port.h"

using gte::testing::ExtenderProcess;

namespace {

using gte::testing::runShell;

}  // namespace

TEST_CASE("HTTPS: TLS 1.2+ and HTTP/1.1 with the configured certificate") {
  char tmpl[] = "/tmp/gte-tls-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string cert = dir + "/tls.crt";
  const std::string key = dir + "/tls.key";
  REQUIRE(runShell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                   "-addext subjectAltName=IP:127.0.0.1 -keyout " +
                   key + " -out " + cert)
              .first == 0);

  ExtenderProcess ext({"--tls-cert", cert, "--tls-key", key});
  REQUIRE(ext.running());
  const std::string url = "https://127.0.0.1:" + std::to_string(ext.port());
  const std::string curl = "curl -s --max-time 5 --cacert " + cert + " ";

  // Verified against the CA, answered over HTTP/1.1 even when the client offers h2.
  const auto health =
      runShell(curl + "--http2 -o /dev/null -w '%{http_version} %{http_code}' " + url + "/healthz");
  CHECK(health.first == 0);
  CHECK(health.second == "1.1 200");

  const auto filter = runShell(curl + "-H 'Content-Type: application/json' -d '{\"Pod\":' " + url +
                               "/scheduler/filter");
  CHECK(filter.second.find("\"Error\":\"gpu-topology: malformed") != std::string::npos);

  // TLS 1.1 and older are refused.
  CHECK(runShell(curl + "--tlsv1.1 --tls-max 1.1 " + url + "/healthz").first != 0);
  CHECK(runShell(curl + "--tlsv1.2 --tls-max 1.2 " + url + "/healthz").second == "ok\n");

  std::filesystem::remove_all(dir);
}

TEST_CASE("A missing TLS key file stops the binary with a message") {
  ExtenderProcess ext({"--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key"});
  CHECK_FALSE(ext.running());
}

TEST_CASE("HTTPS offers only forward-secret AEAD suites on TLS 1.2") {
  char tmpl[] = "/tmp/gte-tls-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string cert = dir + "/tls.crt";
  const std::string key = dir + "/tls.key";
  REQUIRE(runShell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                   "-addext subjectAltName=IP:127.0.0.1 -keyout " +
                   key + " -out " + cert)
              .first == 0);
  ExtenderProcess ext({"--tls-cert", cert, "--tls-key", key});
  REQUIRE(ext.running());
  const std::string curl = "curl -s --max-time 5 --cacert " + cert + " --tls-max 1.2 ";
  const std::string url = "https://127.0.0.1:" + std::to_string(ext.port()) + "/healthz";
  CHECK(runShell(curl + "--ciphers ECDHE-RSA-AES128-GCM-SHA256 " + url).second == "ok\n");
  CHECK(runShell(curl + "--ciphers ECDHE-RSA-CHACHA20-POLY1305 " + url).second == "ok\n");
  // CBC, and RSA key exchange (no forward secrecy), are refused.
  CHECK(runShell(curl + "--ciphers ECDHE-RSA-AES128-SHA " + url).first != 0);
  CHECK(runShell(curl + "--ciphers AES128-GCM-SHA256 " + url).first != 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Client certificates (--tls-client-ca): only those from that CA are served") {
  char tmpl[] = "/tmp/gte-mtls-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string ossl = "cd " + dir + " && openssl ";
  REQUIRE(runShell(ossl + "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca "
                          "-keyout ca.key -out ca.crt")
              .first == 0);
  REQUIRE(runShell(ossl + "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                          "-addext subjectAltName=IP:127.0.0.1 -keyout tls.key -out tls.crt")
              .first == 0);
  REQUIRE(runShell(ossl + "req -newkey rsa:2048 -nodes -subj /CN=kube-scheduler -keyout client.key "
                          "-out client.csr")
              .first == 0);
  REQUIRE(runShell(ossl +
                   "x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
                   "-out client.crt")
              .first == 0);
  // A certificate signed by another CA (the server's own self-signed one) must not pass.
  const std::uint16_t probePort = gte::testing::freePort();
  ExtenderProcess ext({"--tls-cert", dir + "/tls.crt", "--tls-key", dir + "/tls.key",
                       "--tls-client-ca", dir + "/ca.crt", "--metrics-listen",
                       "127.0.0.1:" + std::to_string(probePort)});
  REQUIRE(ext.running());
  // The probe port opens just after the main one.
  bool probeUp = false;
  for (int i = 0; i < 250 && !probeUp; ++i) {
    probeUp = gte::testing::httpRequest(probePort, "GET", "/healthz").status == 200;
    if (!probeUp) ::usleep(20'000);
  }
  REQUIRE(probeUp);
  const std::string url = "https://127.0.0.1:" + std::to_string(ext.port()) + "/healthz";
  const std::string curl = "curl -s --max-time 5 --cacert " + dir + "/tls.crt ";
  CHECK(runShell(curl + url).first != 0);
  CHECK(runShell(curl + "--cert " + dir + "/tls.crt --key " + dir + "/tls.key " + url).first != 0);
  CHECK(
      runShell(curl + "--cert " + dir + "/client.crt --key " + dir + "/client.key " + url).second ==
      "ok\n");

  // Probes and metrics on the plain-HTTP port need no certificate; the verbs are not there.
  const std::string plain =
      "curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
      std::to_string(probePort);
  CHECK(runShell(plain + "/healthz").second == "200");
  CHECK(runShell(plain + "/metrics").second == "200");
  CHECK(runShell(plain + "/scheduler/filter -d '{}'").second == "404");
  std::filesystem::remove_all(dir);
}

TEST_CASE("A TLS handshake that never starts is closed after --tls-handshake-timeout") {
  char tmpl[] = "/tmp/gte-tls-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string cert = dir + "/tls.crt";
  const std::string key = dir + "/tls.key";
  REQUIRE(
      runShell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
               key + " -out " + cert)
          .first == 0);
  ExtenderProcess ext({"--tls-cert", cert, "--tls-key", key, "--tls-handshake-timeout", "300ms"});
  REQUIRE(ext.running());
  gte::testing::HttpConnection silent(ext.port());  // TCP only: no ClientHello ever comes
  REQUIRE(silent.connected());
  CHECK(silent.waitClosed());
  std::filesystem::remove_all(dir);
}
