// The cpprest transport against a local HTTP server on 127.0.0.1 (no API server needed): bearer
// tokens from a rotating file, unary requests, a watch body delivered while it is still being
// written, cancellation of a quiet watch, and non-2xx answers.
#include "kube/api_client.h"
#include "support/free_port.h"

#include <arpa/inet.h>
#include <cpprest/http_listener.h>
#include <cpprest/producerconsumerstream.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

using namespace gte::kube;
using std::chrono::milliseconds;
using web::http::http_request;
using web::http::methods;
using web::http::status_codes;
using web::http::experimental::listener::http_listener;

namespace {

using gte::testing::freePort;

// A loopback server whose watch responses the test writes by hand.
class FakeApiServer {
 public:
  FakeApiServer() : url_("http://127.0.0.1:" + std::to_string(freePort())), listener_(url_) {
    listener_.support([this](http_request request) { handle(std::move(request)); });
    listener_.open().wait();
  }
  ~FakeApiServer() {
    {
      std::lock_guard lock(mutex_);
      if (watchBody_) watchBody_->close(std::ios_base::out).wait();
    }
    listener_.close().wait();
  }
  const std::string& url() const { return url_; }
  std::string lastAuthorization() {
    std::lock_guard lock(mutex_);
    return authorization_;
  }
  // The body of the watch currently open (after the client connected).
  concurrency::streams::producer_consumer_buffer<std::uint8_t> watchBody() {
    return watchOpened_.get_future().get();
  }

 private:
  void handle(http_request request) {
    const std::string path = request.relative_uri().to_string();
    {
      std::lock_guard lock(mutex_);
      authorization_ = request.headers().has("Authorization")
                           ? request.headers().find("Authorization")->second
                           : "";
    }
    if (path.rfind("/watch", 0) == 0) {
      concurrency::streams::producer_consumer_buffer<std::uint8_t> body;
      {
        std::lock_guard lock(mutex_);
        watchBody_ = body;
      }
      request.reply(status_codes::OK, body.create_istream(), "application/json");
      watchOpened_.set_value(body);
      return;
    }
    if (path == "/forbidden") {
      request.reply(status_codes::Forbidden, R"({"kind":"Status","code":403})", "application/json");
      return;
    }
    request.reply(status_codes::OK, R"({"path":")" + path + R"("})", "application/json");
  }

  std::string url_;
  http_listener listener_;
  std::mutex mutex_;
  std::string authorization_;
  std::optional<concurrency::streams::producer_consumer_buffer<std::uint8_t>> watchBody_;
  std::promise<concurrency::streams::producer_consumer_buffer<std::uint8_t>> watchOpened_;
};

void write(concurrency::streams::producer_consumer_buffer<std::uint8_t>& body,
           const std::string& text) {
  body.putn_nocopy(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()).wait();
  body.sync().wait();
}

}  // namespace

TEST_CASE("ApiClient: unary requests carry the token from a rotating file") {
  FakeApiServer server;
  const auto tokenFile = std::filesystem::temp_directory_path() / "gte_api_client_token";
  std::ofstream(tokenFile) << "first\n";
  KubeConfig config;
  config.server = server.url();
  config.tokenFile = tokenFile.string();
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());

  auto response = (*client)->send("GET", "/api/v1/nodes?limit=500");
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  CHECK(response->body == R"({"path":"/api/v1/nodes?limit=500"})");
  CHECK(server.lastAuthorization() == "Bearer first");

  std::ofstream(tokenFile) << "rotated-token\n";
  REQUIRE((*client)->send("GET", "/x").ok());
  CHECK(server.lastAuthorization() == "Bearer rotated-token");

  auto forbidden = (*client)->send("GET", "/forbidden");
  REQUIRE(forbidden.ok());  // an HTTP status is a value, not an error
  CHECK(forbidden->status == 403);
  std::filesystem::remove(tokenFile);
}

TEST_CASE("ApiClient: a watch body reaches the caller while the server is still writing it") {
  FakeApiServer server;
  KubeConfig config;
  config.server = server.url();
  config.token = "t";
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());

  std::mutex mutex;
  std::string received;
  std::promise<void> firstEvent;
  bool signalled = false;
  Cancellation cancel;
  auto watch = std::async(std::launch::async, [&] {
    return (*client)->stream(
        "/watch?watch=1",
        [&](std::string_view chunk) {
          std::lock_guard lock(mutex);
          received.append(chunk);
          if (!signalled && received.find('\n') != std::string::npos) {
            signalled = true;
            firstEvent.set_value();
          }
          return true;
        },
        cancel);
  });
  auto body = server.watchBody();
  write(body, "{\"type\":\"ADDED\"}\n");
  // The first event arrives although the response is far from finished.
  REQUIRE(firstEvent.get_future().wait_for(milliseconds(5000)) == std::future_status::ready);
  write(body, "{\"type\":\"DELETED\"}\n");
  body.close(std::ios_base::out).wait();
  auto result = watch.get();
  REQUIRE(result.ok());
  CHECK(result->status == 200);
  CHECK(received == "{\"type\":\"ADDED\"}\n{\"type\":\"DELETED\"}\n");
}

TEST_CASE("ApiClient: cancelling a quiet watch returns promptly") {
  FakeApiServer server;
  KubeConfig config;
  config.server = server.url();
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());
  Cancellation cancel;
  auto watch = std::async(std::launch::async, [&] {
    return (*client)->stream(
        "/watch?watch=1", [](std::string_view) { return true; }, cancel);
  });
  auto body = server.watchBody();  // connected; the server says nothing
  write(body, "{}\n");
  std::this_thread::sleep_for(milliseconds(100));
  const auto started = std::chrono::steady_clock::now();
  cancel.cancel();
  REQUIRE(watch.wait_for(milliseconds(3000)) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - started < milliseconds(3000));
  CHECK_FALSE(watch.get().ok());
}

TEST_CASE("ApiClient: refuses a server URL without a scheme and bad PEM at creation") {
  KubeConfig noScheme;
  noScheme.server = "127.0.0.1:6443";
  CHECK_FALSE(ApiClient::create(noScheme).ok());
  KubeConfig badCa;
  badCa.server = "https://127.0.0.1:6443";
  badCa.caPem = "not a certificate";
  auto client = ApiClient::create(badCa);
  REQUIRE_FALSE(client.ok());
  CHECK(client.error().message.find("https://127.0.0.1:6443") != std::string::npos);
}

TEST_CASE("ApiClient: an unreachable server is a transport error") {
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(freePort());  // nothing listens
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());
  auto response = (*client)->send("GET", "/readyz");
  REQUIRE_FALSE(response.ok());
  CHECK(response.error().code == gte::ErrorCode::kUnavailable);
}

TEST_CASE("ApiClient: sendAsync answers through its callback, the body and status intact") {
  FakeApiServer server;
  KubeConfig config;
  config.server = server.url();
  config.token = "static";
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());
  std::promise<gte::Result<HttpResponse>> answered;
  (*client)->sendAsync(
      "POST", "/api/v1/namespaces/ml/pods/p/binding", R"({"kind":"Binding"})", "application/json",
      [&answered](gte::Result<HttpResponse> response) { answered.set_value(std::move(response)); });
  auto response = answered.get_future().get();
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  CHECK(response->body == R"({"path":"/api/v1/namespaces/ml/pods/p/binding"})");
  CHECK(server.lastAuthorization() == "Bearer static");

  std::promise<gte::Result<HttpResponse>> refused;
  (*client)->sendAsync(
      "GET", "/forbidden", "", "application/json",
      [&refused](gte::Result<HttpResponse> r) { refused.set_value(std::move(r)); });
  auto forbidden = refused.get_future().get();
  REQUIRE(forbidden.ok());
  CHECK(forbidden->status == 403);
}

TEST_CASE("ApiClient: sendAsync to an unreachable server is a transport error, after its retries") {
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(freePort());  // nothing listens
  auto client = ApiClient::create(config);
  REQUIRE(client.ok());
  std::promise<gte::Result<HttpResponse>> answered;
  (*client)->sendAsync(
      "GET", "/readyz", "", "application/json",
      [&answered](gte::Result<HttpResponse> r) { answered.set_value(std::move(r)); });
  auto response = answered.get_future().get();
  REQUIRE_FALSE(response.ok());
  CHECK(response.error().code == gte::ErrorCode::kUnavailable);
}
