#include "json/json_writer.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

using gte::json::JsonWriter;

TEST_CASE("JsonWriter places commas and escapes strings") {
  std::string out;
  JsonWriter w(out);
  w.beginObject().key("a").beginArray();
  w.element().integer(1).element().string("q\"\\\n\x01").element().beginObject().endObject();
  w.endArray().key("b").null().key("c").rawValue(R"({"raw" : true})").endObject();
  CHECK(out == R"({"a":[1,"q\"\\\n\u0001",{}],"b":null,"c":{"raw" : true}})");
}

TEST_CASE("Strings are escaped wherever the byte that needs it sits, and only then") {
  // The check runs eight bytes at a time, then byte by byte: every position of a 21-byte string
  // covers both parts and each byte of a word.
  const std::string plain = "ip-10-0-1-23.internal";
  REQUIRE(plain.size() == 21);
  CHECK(gte::json::quotesVerbatim(plain));
  for (std::size_t at = 0; at < plain.size(); ++at) {
    for (const char bad : {'"', '\\', '\x01', '\x1f', '\0'}) {
      std::string s = plain;
      s[at] = bad;
      INFO("byte " << static_cast<int>(bad) << " at " << at);
      CHECK_FALSE(gte::json::quotesVerbatim(s));
      std::string out;
      gte::json::appendQuoted(out, s);
      CHECK(out.size() > s.size() + 2);  // escaped, never copied as it is
    }
    // The neighbours of those bytes, DEL and bytes of UTF-8 sequences need no escape.
    for (const char fine : {' ', '!', '#', '[', ']', '\x7f', '\x80', '\xff'}) {
      std::string s = plain;
      s[at] = fine;
      INFO("byte " << static_cast<int>(static_cast<unsigned char>(fine)) << " at " << at);
      CHECK(gte::json::quotesVerbatim(s));
      std::string out;
      gte::json::appendQuoted(out, s);
      CHECK(out == '"' + s + '"');
    }
  }
}
