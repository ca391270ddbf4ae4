#include "json/json_reader.h"

#include <catch2/catch_test_macros.hpp>
#include <initializer_list>
#include <string>
#include <utility>

using gte::json::JsonReader;
using gte::json::Kind;

namespace {

// Skips the whole document; returns whether it was valid JSON.
bool valid(std::string_view text) {
  JsonReader r(text);
  return r.skipValue() && r.finish();
}

}  // namespace

TEST_CASE("JsonReader accepts valid documents and rejects malformed ones") {
  CHECK(valid(R"({"a":[1,2.5,-3e2,true,false,null,"x\"y"],"b":{}})"));
  CHECK(valid("  [ ]  "));
  CHECK(valid(R"("\u00e9\ud83d\ude00")"));
  CHECK_FALSE(valid(""));
  CHECK_FALSE(valid("{"));
  CHECK_FALSE(valid(R"({"a":1,})"));
  CHECK_FALSE(valid(R"({"a" 1})"));
  CHECK_FALSE(valid("[1 2]"));
  CHECK_FALSE(valid("[01]"));
  CHECK_FALSE(valid("tru"));
  CHECK_FALSE(valid(R"("unterminated)"));
  CHECK_FALSE(valid("\"tab\tinside\""));
  CHECK_FALSE(valid("{} {}"));
  CHECK_FALSE(valid(R"({'a':1})"));
}

// Found by fuzz_verbs: a full-Node filter request with the byte 0xC3 inside a key of a node was
// accepted, and the node, echoed byte for byte, made the answer invalid JSON.
TEST_CASE("JsonReader accepts UTF-8 in strings and refuses bytes that are not UTF-8") {
  CHECK(valid("\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF\""));
  CHECK(valid("{\"\xC3\xA9\":\"\xED\x9F\xBF\"}"));  // U+D7FF, the last before the surrogates
  const char* const invalid[] = {
      "\"kubeletEndpoi\xC3t\"",  // lead byte without its continuation (the fuzz finding)
      "\"\x80\"",                // stray continuation byte
      "\"\xC0\xAF\"",            // overlong '/'
      "\"\xE0\x80\xAF\"",        // overlong, three bytes
      "\"\xF0\x80\x80\xAF\"",    // overlong, four bytes
      "\"\xED\xA0\x80\"",        // U+D800, a surrogate
      "\"\xF4\x90\x80\x80\"",    // above U+10FFFF
      "\"\xF5\x80\x80\x80\"",    // no such lead byte
      "\"\xFF\"",
      "\"\xE2\x82\"",  // cut short by the closing quote
      "\"\xE2\x82",    // cut short by the end of input
  };
  for (const char* text : invalid) {
    CAPTURE(text);
    JsonReader r(text);
    CHECK_FALSE(r.skipValue());
    CHECK(r.error().find("invalid UTF-8 in string") != std::string::npos);
  }
  std::string key;
  JsonReader r("{\"n\xC3t\":1}");
  REQUIRE(r.beginObject());
  CHECK_FALSE(r.nextKey(key));
  CHECK(r.error().find("invalid UTF-8 in string at offset 3") != std::string::npos);
}

TEST_CASE("JsonReader refuses nesting deeper than its limit") {
  std::string deep(200, '[');
  deep += std::string(200, ']');
  JsonReader r(deep);
  CHECK_FALSE(r.skipValue());
  CHECK(r.error().find("nesting too deep") != std::string::npos);
  JsonReader shallow("[[[[1]]]]", 8);
  CHECK(shallow.skipValue());
}

TEST_CASE("JsonReader walks objects, unescapes strings and captures exact spans") {
  const std::string text = R"({"name":"a\u003cb\n","items":[{"x": 1}, {"y":[2]}],"n":-42})";
  JsonReader r(text);
  REQUIRE(r.beginObject());
  std::string key;
  std::string value;
  REQUIRE(r.nextKey(key));
  CHECK(key == "name");
  REQUIRE(r.readString(value));
  CHECK(value == "a<b\n");
  REQUIRE(r.nextKey(key));
  CHECK(key == "items");
  REQUIRE(r.beginArray());
  std::string_view span;
  REQUIRE(r.nextElement());
  REQUIRE(r.skipValue(&span));
  CHECK(span == R"({"x": 1})");
  REQUIRE(r.nextElement());
  REQUIRE(r.skipValue(&span));
  CHECK(span == R"({"y":[2]})");
  CHECK_FALSE(r.nextElement());
  REQUIRE(r.nextKey(key));
  std::int64_t n = 0;
  REQUIRE(r.readInt64(n));
  CHECK(n == -42);
  CHECK_FALSE(r.nextKey(key));
  CHECK(r.finish());
}

TEST_CASE("JsonReader reads int64 exactly like Go: no floats, no overflow") {
  for (const char* bad : {"5.0", "5e0", "9223372036854775808", "\"5\""}) {
    JsonReader r(bad);
    std::int64_t v = 0;
    CHECK_FALSE(r.readInt64(v));
  }
  JsonReader r("9223372036854775807");
  std::int64_t v = 0;
  CHECK(r.readInt64(v));
  CHECK(v == INT64_MAX);
}

TEST_CASE("JsonReader reads strings the same wherever their special bytes fall") {
  // Strings are scanned eight bytes at a time, then byte by byte: each special byte is tried at
  // every position of strings long enough to cover several words and the tail.
  const std::string plain = "ip-10-0-1-23.us-west-2";  // 22 bytes
  const auto read = [](const std::string& json, std::string& out) {
    JsonReader r(json);
    return r.readString(out) && r.finish();
  };
  for (std::size_t at = 0; at <= plain.size(); ++at) {
    INFO("at " << at);
    std::string out;
    // The closing quote at every length.
    REQUIRE(read('"' + plain.substr(0, at) + '"', out));
    CHECK(out == plain.substr(0, at));
    const std::string head = plain.substr(0, at);
    const std::string tail = plain.substr(at);
    // Escapes and UTF-8 sequences of each length, inside the run.
    for (const auto& [encoded, decoded] :
         std::initializer_list<std::pair<std::string, std::string>>{
             {"\\\"", "\""},
             {"\\\\", "\\"},
             {"\\n", "\n"},
             {"\\u00e9", "\xc3\xa9"},
             {"\xc3\xa9", "\xc3\xa9"},
             {"\xe2\x82\xac", "\xe2\x82\xac"},
             {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
             {"\x7f", "\x7f"}}) {
      REQUIRE(read('"' + head + encoded + tail + '"', out));
      CHECK(out == head + decoded + tail);
    }
    // Bytes a string may not hold raw.
    for (const std::string& bad : std::initializer_list<std::string>{
             "\x01", "\x1f", std::string(1, '\0'), "\x80", "\xff", "\xc0\x80", "\xed\xa0\x80"}) {
      CHECK_FALSE(read('"' + head + bad + tail + '"', out));
    }
    // A string cut short anywhere is an error, not a read past the end.
    CHECK_FALSE(read('"' + head, out));
  }
}

namespace {

std::string unescaped(std::string_view text) {
  JsonReader r(text);
  std::string out;
  REQUIRE(r.readString(out));
  return out;
}

}  // namespace

// Found by fuzz_companion_slice: "\udaad\udae8" (a high surrogate followed by another high one)
// was read as U+FFFD and then the raw surrogate bytes of U+DAE8, which no JSON reader accepts back:
// a slice written back did not read, and explain answered bytes that are not UTF-8.
TEST_CASE("JsonReader reads every surrogate outside a valid pair as U+FFFD, as Go does") {
  CHECK(unescaped(R"("\udaad\udae8")") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(unescaped(R"("ZZ\udaad\udae8ets")") ==
        "ZZ\xEF\xBF\xBD\xEF\xBF\xBD"
        "ets");
  CHECK(unescaped(R"("\udaad")") == "\xEF\xBF\xBD");
  CHECK(unescaped(R"("\udc00x")") ==
        "\xEF\xBF\xBD"
        "x");
  CHECK(unescaped(R"("\udaadA")") ==
        "\xEF\xBF\xBD"
        "A");
  CHECK(unescaped(R"("\udaad\u0041")") ==
        "\xEF\xBF\xBD"
        "A");
  CHECK(unescaped(R"("\ud83d\ude00")") == "\xF0\x9F\x98\x80");
  CHECK(unescaped(R"("\udaad\ud83d\ude00")") == "\xEF\xBF\xBD\xF0\x9F\x98\x80");
  // What was read is valid UTF-8: it reads again as a string.
  std::string again = unescaped(R"("\udaad\udae8")");
  again.insert(again.begin(), '"');
  again.push_back('"');
  CHECK(valid(again));
  CHECK_FALSE(valid(R"("\udaad\u00zz")"));
}
