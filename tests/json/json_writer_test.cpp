#include "json/json_writer.h"

#include <catch2/catch_test_macros.hpp>

using gte::json::JsonWriter;

TEST_CASE("JsonWriter places commas and escapes strings") {
  std::string out;
  JsonWriter w(out);
  w.beginObject().key("a").beginArray();
  w.element().integer(1).element().string("q\"\\\n\x01").element().beginObject().endObject();
  w.endArray().key("b").null().key("c").rawValue(R"({"raw" : true})").endObject();
  CHECK(out == R"({"a":[1,"q\"\\\n\u0001",{}],"b":null,"c":{"raw" : true}})");
}
