// Pure decoders of the watch path: base64, NDJSON framing, watch events, list pages, query
// escaping.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "json/json_reader.h"
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

namespace {

// Reads each event's object as a Node where it stands, as the cache's node sink does, and keeps
// what it read.
struct NodeReads {
  std::vector<gte::NodeInfo> nodes;
  int calls = 0;

  EventObjectReader reader() {
    return [this](gte::json::JsonReader& object) -> gte::Result<std::string> {
      ++calls;
      auto node = gte::readNodeJson(object);
      if (!node) return std::move(node).error();
      nodes.push_back(*node);
      return node->resourceVersion;
    };
  }
};

gte::Result<WatchEvent> decode(std::string_view line) {
  NodeReads reads;
  return decodeWatchEvent(line, reads.reader());
}

}  // namespace

TEST_CASE("Watch events: ADDED, MODIFIED, DELETED objects are read in the same pass as the line") {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1",)"
      R"("resourceVersion":"4242","labels":{"gputopo.dev/v":"1"}},"status":{}}})";
  NodeReads reads;
  auto event = decodeWatchEvent(line, reads.reader());
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kModified);
  CHECK(event->resourceVersion == "4242");
  REQUIRE(reads.nodes.size() == 1);
  CHECK(reads.nodes[0].name == "n1");
  CHECK(reads.nodes[0].labels.at("gputopo.dev/v") == "1");

  CHECK(decode(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})")
            ->type == WatchEventType::kAdded);
}

TEST_CASE("Watch events: an object before its type is read once the type is known") {
  NodeReads reads;
  auto event = decodeWatchEvent(
      R"({"object":{"metadata":{"name":"n2","resourceVersion":"7"}},"type":"DELETED"})",
      reads.reader());
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kDeleted);
  CHECK(event->resourceVersion == "7");
  CHECK(reads.calls == 1);
  REQUIRE(reads.nodes.size() == 1);
  CHECK(reads.nodes[0].name == "n2");
}

TEST_CASE("Watch events: an object the reader refuses is skipped, its resourceVersion still read") {
  // No metadata.name: not a Node the cache can keep. The watch goes on from this event.
  NodeReads reads;
  auto event = decodeWatchEvent(
      R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"99"},"status":{}},"x":1})",
      reads.reader());
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kModified);
  CHECK(event->resourceVersion == "99");
  CHECK(reads.calls == 1);
  CHECK(reads.nodes.empty());
}

TEST_CASE("Watch events: BOOKMARK only moves the resourceVersion") {
  NodeReads reads;
  auto event = decodeWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12746",)"
      R"("creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}})",
      reads.reader());
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kBookmark);
  CHECK(event->resourceVersion == "12746");
  CHECK(reads.calls == 0);
}

TEST_CASE("Watch events: ERROR carries the Status; 410 means re-list") {
  auto gone = decode(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"json("message":"too old resource version: 1 (2)","reason":"Expired","code":410}})json");
  REQUIRE(gone.ok());
  CHECK(gone->gone());
  CHECK(gone->statusReason == "Expired");
  CHECK(gone->statusMessage == "too old resource version: 1 (2)");

  auto other =
      decode(R"({"type":"ERROR","object":{"kind":"Status","code":500,"message":"etcd timeout"}})");
  REQUIRE(other.ok());
  CHECK_FALSE(other->gone());
  CHECK(other->statusCode == 500);

  SECTION("the last type wins, whatever the object was read as first") {
    auto last = decode(R"({"type":"MODIFIED","object":{"kind":"Status","code":410,)"
                       R"("metadata":{"name":"n"}},"type":"ERROR"})");
    REQUIRE(last.ok());
    CHECK(last->gone());
  }
}

TEST_CASE("Watch events: malformed lines are errors, not crashes") {
  CHECK_FALSE(decode("").ok());
  CHECK_FALSE(decode(R"({"type":"ADDED"})").ok());  // no object
  CHECK_FALSE(decode(R"({"type":"RENAMED","object":{}})").ok());
  CHECK_FALSE(decode(R"({"type":"ADDED","object":{"metadata":)").ok());
  CHECK_FALSE(decode(R"({"type":"ADDED","object":{}} trailing)").ok());
  CHECK_FALSE(decode(R"({"type":"BOOKMARK","object":{"metadata":7}})").ok());
  // The same error whichever order the keys come in.
  CHECK(decode(R"({"type":"ERROR","object":{"code":"x"}})").error().message ==
        decode(R"({"object":{"code":"x"},"type":"ERROR"})").error().message);
}

TEST_CASE(
    "List pages read each item where it stands, and give the resourceVersion and the "
    "continue token") {
  const std::string body =
      R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"abc"},)"
      R"("items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})";
  std::vector<std::string> names;
  const ListItemReader readNode = [&](gte::json::JsonReader& item) -> gte::Status {
    auto node = gte::readNodeJson(item);
    if (!node) return std::move(node).error();
    names.push_back(node->name);
    return gte::Ok{};
  };
  auto page = decodeListPage(body, readNode);
  REQUIRE(page.ok());
  CHECK(page->resourceVersion == "77");
  CHECK(page->continueToken == "abc");
  CHECK(page->items == 2);
  CHECK(names == std::vector<std::string>{"a", "b"});

  SECTION("an item that does not read is skipped and the page goes on") {
    names.clear();
    auto skipped = decodeListPage(
        R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"labels":{}}},{"metadata":{"name":"c"}}]})",
        readNode);
    REQUIRE(skipped.ok());
    CHECK(skipped->items == 3);
    CHECK(names == std::vector<std::string>{"a", "c"});
  }
  SECTION("an item that is not JSON fails the page, naming its index") {
    auto broken = decodeListPage(R"({"items":[{"metadata":{"name":"a"}},{"metadata":]})", readNode);
    REQUIRE_FALSE(broken.ok());
    CHECK(broken.error().message.find("items[1]") != std::string::npos);
  }
  SECTION("null items and a missing continue are fine") {
    auto empty = decodeListPage(R"({"metadata":{"resourceVersion":"5"},"items":null})", readNode);
    REQUIRE(empty.ok());
    CHECK(empty->items == 0);
    CHECK(empty->continueToken.empty());
  }
}
