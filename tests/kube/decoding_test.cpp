// Pure decoders of the watch path: base64, NDJSON framing, watch events, list pages, query
// escaping.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "kube/base64.h"
#include "kube/line_splitter.h"
#include "kube/list_page.h"
#include "kube/query_escape.h"
#include "kube/watch_event.h"
#include "model/node_info.h"

using namespace gte::kube;

TEST_CASE("base64 decodes kubeconfig data, with or without padding and line breaks") {
  CHECK(decodeBase64("aGVsbG8=").value() == "hello");
  CHECK(decodeBase64("aGVsbG8").value() == "hello");
  CHECK(decodeBase64("aGVs\nbG8h\n").value() == "hello!");
  CHECK(decodeBase64("").value().empty());
  CHECK_FALSE(decodeBase64("aGVsbG8*").ok());
  CHECK_FALSE(decodeBase64("a").ok());
  CHECK_FALSE(decodeBase64("aG=x").ok());
}

TEST_CASE("query values are percent-encoded") {
  CHECK(queryEscape("status.phase!=Succeeded") == "status.phase%21%3DSucceeded");
  CHECK(queryEscape("eyJ2Ijo+/=") == "eyJ2Ijo%2B%2F%3D");
  CHECK(queryEscape("a-b_c.d~e") == "a-b_c.d~e");
}

TEST_CASE("LineSplitter frames events across arbitrary chunk boundaries") {
  LineSplitter splitter;
  std::vector<std::string> lines;
  auto collect = [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  };
  CHECK(splitter.feed("{\"a\":1}\n{\"b\"", collect));
  CHECK(lines.size() == 1);
  CHECK(splitter.pending() == 4);
  CHECK(splitter.feed(":2}\n\n{\"c\":3}\r\n{", collect));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == "{\"b\":2}");
  CHECK(lines[2] == "{\"c\":3}\r");  // the JSON reader treats \r as whitespace
  CHECK(splitter.pending() == 1);

  SECTION("the consumer can stop the stream") {
    int seen = 0;
    CHECK_FALSE(splitter.feed("}\n{}\n{}\n", [&](std::string_view) { return ++seen < 2; }));
    CHECK(seen == 2);
  }
  SECTION("an endless line is refused") {
    LineSplitter small(8);
    CHECK_FALSE(small.feed("0123456789", collect));
    CHECK(small.overflowed());
  }
}

TEST_CASE("Watch events: ADDED, MODIFIED, DELETED carry the object and its resourceVersion") {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1",)"
      R"("resourceVersion":"4242","labels":{"gputopo.dev/v":"1"}},"status":{}}})";
  auto event = decodeWatchEvent(line);
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kModified);
  CHECK(event->resourceVersion == "4242");
  auto node = gte::parseNodeJson(event->object);
  REQUIRE(node.ok());
  CHECK(node->name == "n1");

  CHECK(
      decodeWatchEvent(R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}})")->type ==
      WatchEventType::kAdded);
  CHECK(decodeWatchEvent(R"({"object":{"metadata":{}},"type":"DELETED"})")->type ==
        WatchEventType::kDeleted);
}

TEST_CASE("Watch events: BOOKMARK only moves the resourceVersion") {
  auto event = decodeWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12746",)"
      R"("creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}})");
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kBookmark);
  CHECK(event->resourceVersion == "12746");
}

TEST_CASE("Watch events: ERROR carries the Status; 410 means re-list") {
  auto gone = decodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"json("message":"too old resource version: 1 (2)","reason":"Expired","code":410}})json");
  REQUIRE(gone.ok());
  CHECK(gone->gone());
  CHECK(gone->statusReason == "Expired");
  CHECK(gone->statusMessage == "too old resource version: 1 (2)");

  auto other = decodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":500,"message":"etcd timeout"}})");
  REQUIRE(other.ok());
  CHECK_FALSE(other->gone());
  CHECK(other->statusCode == 500);
}

TEST_CASE("Watch events: malformed lines are errors, not crashes") {
  CHECK_FALSE(decodeWatchEvent("").ok());
  CHECK_FALSE(decodeWatchEvent(R"({"type":"ADDED"})").ok());  // no object
  CHECK_FALSE(decodeWatchEvent(R"({"type":"RENAMED","object":{}})").ok());
  CHECK_FALSE(decodeWatchEvent(R"({"type":"ADDED","object":{"metadata":)").ok());
  CHECK_FALSE(decodeWatchEvent(R"({"type":"ADDED","object":{}} trailing)").ok());
}

TEST_CASE("List pages hand out each item's bytes, the resourceVersion and the continue token") {
  const std::string body =
      R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"abc"},)"
      R"("items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})";
  std::vector<std::string> names;
  auto page = decodeListPage(body, [&](std::string_view item) -> gte::Status {
    auto node = gte::parseNodeJson(item);
    if (!node) return std::move(node).error();
    names.push_back(node->name);
    return gte::Ok{};
  });
  REQUIRE(page.ok());
  CHECK(page->resourceVersion == "77");
  CHECK(page->continueToken == "abc");
  CHECK(page->items == 2);
  CHECK(names == std::vector<std::string>{"a", "b"});

  SECTION("an item error names its index") {
    int seen = 0;
    auto failed = decodeListPage(body, [&](std::string_view) -> gte::Status {
      return ++seen == 2 ? gte::Status(gte::invalidArgument("bad")) : gte::Status(gte::Ok{});
    });
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().message == "items[1]: bad");
  }
  SECTION("null items and a missing continue are fine") {
    auto empty = decodeListPage(R"({"metadata":{"resourceVersion":"5"},"items":null})",
                                [](std::string_view) -> gte::Status { return gte::Ok{}; });
    REQUIRE(empty.ok());
    CHECK(empty->items == 0);
    CHECK(empty->continueToken.empty());
  }
}
