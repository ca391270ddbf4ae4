// The list+watch loop against a scripted transport: resourceVersion hand-over, bookmarks, 410 Gone
// (as an ERROR event and as HTTP 410), paging, backoff without busy loops, health and stop.
#include "kube/reflector.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <atomic>
#include <mutex>
#include <thread>

#include "json/json_reader.h"
#include "kube/fake_transport.h"
#include "kube/object_sink.h"
#include "model/node_info.h"

using namespace gte::kube;
using gte::Error;
using gte::ErrorCode;
using gte::Ok;
using gte::Result;
using gte::Status;
using gte::testing::blockUntilCancelled;
using gte::testing::FakeTransport;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using std::chrono::milliseconds;

namespace {

// An object as the recording sink keeps it: its JSON exactly as listed or watched.
struct RawObject {
  std::string json;
  std::string resourceVersion;
};

// The test objects are Nodes (a name and a resourceVersion); one without a name does not read.
Result<RawObject> readRaw(gte::json::JsonReader& reader) {
  std::string_view span;
  if (!reader.skipValue(&span)) return gte::invalidArgument(reader.error());
  auto node = gte::parseNodeJson(span);
  if (!node) return std::move(node).error();
  return RawObject{std::string(span), node->resourceVersion};
}

// Records what the reflector delivers, as readable strings.
class RecordingSink final : public ObjectSink<RawObject> {
 public:
  void beginList() override { record("begin"); }
  Status listItem(RawObject object) override {
    record("item " + object.json);
    return Ok{};
  }
  void endList() override { record("end"); }
  Status apply(WatchEventType type, RawObject object) override {
    record(std::string(watchEventTypeName(type)) + " " + object.json);
    return Ok{};
  }
  std::vector<std::string> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }

 private:
  void record(std::string entry) {
    std::lock_guard lock(mutex_);
    log_.push_back(std::move(entry));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> log_;
};

std::shared_ptr<ReflectorSink> recordInto(std::shared_ptr<RecordingSink> sink) {
  return reflectorSink<RawObject>(readRaw, std::move(sink));
}

std::string listBody(const std::string& rv, const std::string& items,
                     const std::string& continueToken = "") {
  return R"({"kind":"NodeList","metadata":{"resourceVersion":")" + rv + R"(","continue":")" +
         continueToken + R"("},"items":[)" + items + "]}";
}

std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  return R"({"type":")" + type + R"(","object":{"metadata":{"name":")" + name +
         R"(","resourceVersion":")" + rv + R"("}}})" + "\n";
}

std::string obj(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv + R"("}})";
}

ReflectorOptions fastOptions() {
  ReflectorOptions options;
  options.resource = "nodes";
  options.path = "/api/v1/nodes";
  options.minWatchTimeout = std::chrono::seconds(300);
  options.backoff = BackoffOptions{milliseconds(20), milliseconds(80)};
  return options;
}

bool waitFor(const std::function<bool()>& condition, milliseconds timeout = milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return condition();
}

}  // namespace

TEST_CASE("Reflector: list, then watch from the list's resourceVersion; bookmarks move it on") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(listBody("10", obj("a", "3") + "," + obj("b", "4")));
  };
  transport->onStream = [](int call, const std::string&, const auto& emit,
                           Cancellation& cancel) -> Result<HttpResponse> {
    if (call > 0) return blockUntilCancelled(cancel);
    // One event split over two chunks, then several in one chunk.
    const std::string added = event("ADDED", "c", "11");
    emit(added.substr(0, 20));
    emit(added.substr(20));
    emit(event("MODIFIED", "a", "12") + event("DELETED", "b", "13") +
         R"({"type":"BOOKMARK","object":{"kind":"Node","metadata":{"resourceVersion":"20"}}})" +
         "\n");
    return ok("");  // the server ended the watch (timeoutSeconds)
  };
  Reflector reflector(transport, recordInto(sink), fastOptions());
  CHECK_FALSE(reflector.synced());
  reflector.start();
  REQUIRE(transport->waitForStreams(2, milliseconds(3000)));
  CHECK(reflector.synced());
  CHECK(reflector.lists() == 1);
  reflector.stop();

  const auto paths = transport->streamPaths();
  CHECK(paths[0].find("watch=1") != std::string::npos);
  CHECK(paths[0].find("allowWatchBookmarks=true") != std::string::npos);
  CHECK(paths[0].find("resourceVersion=10") != std::string::npos);
  CHECK(paths[0].find("timeoutSeconds=") != std::string::npos);
  CHECK(paths[1].find("resourceVersion=20") != std::string::npos);  // from the bookmark
  CHECK(transport->requests()[0].path == "/api/v1/nodes?limit=500");
  const std::vector<std::string> expected = {"begin",
                                             "item " + obj("a", "3"),
                                             "item " + obj("b", "4"),
                                             "end",
                                             "ADDED " + obj("c", "11"),
                                             "MODIFIED " + obj("a", "12"),
                                             "DELETED " + obj("b", "13")};
  CHECK(sink->log() == expected);
  std::string why;
  CHECK(reflector.healthy(&why));
}

TEST_CASE("Reflector: an object that does not read is skipped; the list and the watch go on") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  const std::string nameless = R"({"metadata":{"resourceVersion":"5"}})";
  transport->onSend = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(listBody("10", obj("a", "3") + "," + nameless + "," + obj("b", "4")));
  };
  transport->onStream = [&](int call, const std::string&, const auto& emit,
                            Cancellation& cancel) -> Result<HttpResponse> {
    if (call > 0) return blockUntilCancelled(cancel);
    emit(event("MODIFIED", "a", "11") +
         R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"12"}}})" + "\n");
    return ok("");
  };
  Reflector reflector(transport, recordInto(sink), fastOptions());
  reflector.start();
  REQUIRE(transport->waitForStreams(2, milliseconds(3000)));
  reflector.stop();
  CHECK(sink->log() == std::vector<std::string>{"begin", "item " + obj("a", "3"),
                                                "item " + obj("b", "4"), "end",
                                                "MODIFIED " + obj("a", "11")});
  // The skipped event still moved the resourceVersion on: the next watch starts after it.
  CHECK(transport->streamPaths()[1].find("resourceVersion=12") != std::string::npos);
  CHECK(reflector.failures() == 0);
}

TEST_CASE("Reflector: a list follows continue tokens before it is complete") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest& request) -> Result<HttpResponse> {
    if (request.path.find("continue=") == std::string::npos) {
      return ok(listBody("1", obj("a", "1"), "tok+/="));
    }
    return ok(listBody("7", obj("b", "2")));
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  auto options = fastOptions();
  options.pageSize = 1;
  options.fieldSelector = "status.phase!=Failed";
  Reflector reflector(transport, recordInto(sink), options);
  reflector.start();
  REQUIRE(transport->waitForStreams(1, milliseconds(3000)));
  reflector.stop();
  const auto requests = transport->requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].path == "/api/v1/nodes?limit=1&fieldSelector=status.phase%21%3DFailed");
  CHECK(requests[1].path ==
        "/api/v1/nodes?limit=1&fieldSelector=status.phase%21%3DFailed&continue=tok%2B%2F%3D");
  CHECK(transport->streamPaths()[0].find("resourceVersion=7") != std::string::npos);
  CHECK(sink->log() ==
        std::vector<std::string>{"begin", "item " + obj("a", "1"), "item " + obj("b", "2"), "end"});
}

TEST_CASE("Reflector: 410 Gone re-lists, as an ERROR event or as an HTTP status") {
  const bool asEvent = GENERATE(true, false);
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  std::atomic<int> lists{0};
  transport->onSend = [&](const RecordedRequest&) -> Result<HttpResponse> {
    ++lists;
    return ok(listBody(lists == 1 ? "10" : "500", obj("a", "1")));
  };
  transport->onStream = [asEvent](int call, const std::string&, const auto& emit,
                                  Cancellation& cancel) -> Result<HttpResponse> {
    if (call > 0) return blockUntilCancelled(cancel);
    if (!asEvent) return HttpResponse{410, R"({"kind":"Status","code":410})"};
    emit(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
         "\n");
    return ok("");
  };
  Reflector reflector(transport, recordInto(sink), fastOptions());
  reflector.start();
  REQUIRE(transport->waitForStreams(2, milliseconds(3000)));
  reflector.stop();
  CHECK(lists == 2);
  CHECK(reflector.lists() == 2);
  CHECK(transport->streamPaths()[1].find("resourceVersion=500") != std::string::npos);
}

TEST_CASE("Reflector: an API server that is down is retried with backoff, not in a busy loop") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return Error{ErrorCode::kUnavailable, "connection refused"};
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  auto options = fastOptions();
  options.failureGrace = milliseconds(150);
  Reflector reflector(transport, recordInto(sink), options);
  reflector.start();
  std::this_thread::sleep_for(milliseconds(600));
  // Delays 10-20, 20-40, then 40-80 ms: about 10 attempts in 600 ms; a busy loop makes thousands.
  const auto attempts = transport->requests().size();
  CHECK(attempts >= 4);
  CHECK(attempts <= 30);
  std::string why;
  CHECK_FALSE(reflector.healthy(&why));
  CHECK(why.find("failing") != std::string::npos);
  CHECK(why.find("connection refused") != std::string::npos);
  CHECK_FALSE(reflector.synced());
  reflector.stop();
}

TEST_CASE("Reflector: recovers after the API server comes back") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  std::atomic<int> calls{0};
  transport->onSend = [&](const RecordedRequest&) -> Result<HttpResponse> {
    if (++calls <= 3) return HttpResponse{503, "unavailable"};
    return ok(listBody("9", obj("a", "1")));
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  auto options = fastOptions();
  options.failureGrace = milliseconds(10);
  Reflector reflector(transport, recordInto(sink), options);
  reflector.start();
  REQUIRE(transport->waitForStreams(1, milliseconds(3000)));
  CHECK(reflector.synced());
  std::string why;
  CHECK(reflector.healthy(&why));
  reflector.stop();
}

TEST_CASE("Reflector: a watch the server closes at once is backed off too") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(listBody("1", ""));
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation&) {
    return Result<HttpResponse>(ok(""));
  };
  Reflector reflector(transport, recordInto(sink), fastOptions());
  reflector.start();
  std::this_thread::sleep_for(milliseconds(400));
  reflector.stop();
  CHECK(transport->streamPaths().size() <= 20);
  CHECK(transport->streamPaths().size() >= 2);
}

TEST_CASE("Reflector: a watch that hears nothing for too long makes it unhealthy") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(listBody("1", ""));
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  auto options = fastOptions();
  options.stuckAfter = milliseconds(100);
  Reflector reflector(transport, recordInto(sink), options);
  reflector.start();
  REQUIRE(transport->waitForStreams(1, milliseconds(3000)));
  std::string why;
  CHECK(waitFor([&] { return !reflector.healthy(&why); }));
  CHECK(why.find("nothing received") != std::string::npos);
  reflector.stop();
}

TEST_CASE("Reflector: stop cancels the in-flight watch and joins promptly") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(listBody("1", ""));
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  Reflector reflector(transport, recordInto(sink), fastOptions());
  reflector.start();
  REQUIRE(transport->waitForStreams(1, milliseconds(3000)));
  const auto started = std::chrono::steady_clock::now();
  CHECK(reflector.stop(milliseconds(2000)));
  CHECK(std::chrono::steady_clock::now() - started < milliseconds(1000));
  CHECK(transport->streamPaths().size() == 1);  // no reconnect after stop
}

TEST_CASE("Reflector: stop gives up on a thread stuck in an uncancellable call") {
  auto transport = std::make_shared<FakeTransport>();
  auto sink = std::make_shared<RecordingSink>();
  std::atomic<bool> release{false};
  std::atomic<bool> entered{false};
  transport->onSend = [&](const RecordedRequest&) -> Result<HttpResponse> {
    entered = true;
    while (!release)
      std::this_thread::sleep_for(milliseconds(5));
    return Error{ErrorCode::kUnavailable, "timeout"};
  };
  transport->onStream = [](int, const std::string&, const auto&, Cancellation& cancel) {
    return blockUntilCancelled(cancel);
  };
  {
    Reflector reflector(transport, recordInto(sink), fastOptions());
    reflector.start();
    REQUIRE(waitFor([&] { return entered.load(); }));
    CHECK_FALSE(reflector.stop(milliseconds(100)));
  }
  // The detached thread owns what it uses: letting it finish after the Reflector is gone is safe.
  release = true;
  std::this_thread::sleep_for(milliseconds(100));
  CHECK(transport->streamPaths().empty());
}
