// The JSON field toolkit: what an admin reads when an object from the API server does not read
// is the path of the field that broke it, and null is as good as absent (as Go's decoder).
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "json/json_fields.h"

namespace gte::json {
namespace {

struct Item {
  std::string name;
  std::int64_t count = -1;
  bool on = false;
  std::vector<std::string> tags;
};

Status readSpec(JsonReader& r, std::vector<Item>& out);

Status readItems(std::string_view text, std::vector<Item>& out) {
  JsonReader r(text);
  return forEachKey(r, "object", [&](const std::string& top) -> Status {
    if (top != "spec") return skipField(r, top);
    return readSpec(r, out);
  });
}

Status readSpec(JsonReader& r, std::vector<Item>& out) {
  return forEachKey(r, "spec", [&](const std::string& key) -> Status {
    if (key != "items") return skipField(r, dotted("spec", key));
    const std::string items = dotted("spec", key);
    return forEachElement(r, items, [&](std::size_t i) -> Status {
      const std::string at = indexed(items, i);
      Item item;
      Status s = forEachKey(r, at, [&](const std::string& field) -> Status {
        if (field == "name") return readStringField(r, dotted(at, field), item.name);
        if (field == "count") return readIntField(r, dotted(at, field), item.count);
        if (field == "on") return readBoolField(r, dotted(at, field), item.on);
        if (field == "tags") return readStringList(r, dotted(at, field), item.tags);
        return skipField(r, dotted(at, field));
      });
      if (!s.ok()) return s;
      out.push_back(std::move(item));
      return Ok{};
    });
  });
}

TEST_CASE("json fields: values read, null reads as absent, unknown keys are skipped") {
  std::vector<Item> items;
  REQUIRE(readItems(R"({"kind":"x","spec":{"items":[
      {"name":"a","count":3,"on":true,"tags":["p","q"],"future":{"x":[1]}},
      {"name":null,"count":null,"on":null,"tags":null}]}})",
                    items)
              .ok());
  REQUIRE(items.size() == 2);
  CHECK(items[0].name == "a");
  CHECK(items[0].count == 3);
  CHECK(items[0].on);
  CHECK(items[0].tags == std::vector<std::string>{"p", "q"});
  CHECK(items[1].name.empty());
  CHECK(items[1].count == -1);
  CHECK_FALSE(items[1].on);
  CHECK(items[1].tags.empty());
  CHECK(readItems(R"({"spec":null})", items).ok());
}

TEST_CASE("json fields: a malformed field is an error naming its path") {
  const struct {
    const char* text;
    const char* path;
  } cases[] = {
      {R"({"spec":{"items":[{"name":"a"},{"name":7}]}})", "spec.items[1].name"},
      {R"({"spec":{"items":[{"count":"3"}]}})", "spec.items[0].count"},
      {R"({"spec":{"items":[{"on":"yes"}]}})", "spec.items[0].on"},
      {R"({"spec":{"items":[{"tags":["p",1]}]}})", "spec.items[0].tags[1]"},
      {R"({"spec":{"items":{}}})", "spec.items"},
      {R"({"spec":[]})", "spec"},
  };
  for (const auto& c : cases) {
    std::vector<Item> items;
    const Status s = readItems(c.text, items);
    INFO(c.text);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find(c.path) != std::string::npos);
  }
  CHECK(fieldError("spec.count", "must not be negative").message ==
        "spec.count: must not be negative");
}

}  // namespace
}  // namespace gte::json
