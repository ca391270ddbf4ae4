#include "json/json_reader.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

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
