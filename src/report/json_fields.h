#pragma once
// Reading the extender's JSON answers for the operator tables: the few value shapes they share,
// read leniently (a field of an unexpected type reads as empty), since a table is for people and
// an extender newer than the table may add fields. Pure.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "json/json_reader.h"

namespace gte::report {

// A string, integer or null as text ("" for null); any other value is skipped and reads as "".
bool readScalar(json::JsonReader& r, std::string& out);
// An array of integers as "0,1,2"; anything else reads as "".
bool readInts(json::JsonReader& r, std::string& out);
// The `demand` object of explain and whatif as text: "4 GPUs, min-link nvlink, single NUMA node,
// binpack"; null leaves `out` unchanged.
bool readDemandText(json::JsonReader& r, std::string& out);
// An object of scalars as one text: its values joined by `separator` ({"1": 8, "2": 4} as "8/4"
// with '/'), or with `keys` its "key:value" pairs ({"nvlink": 24, "sys": 4} as
// "nvlink:24 sys:4" with ' '). Null reads as "".
bool readJoined(json::JsonReader& r, std::string& out, char separator, bool keys = false);
// A free-sets object ({"1": 8, "2": 4, "4": 2, "8": 1}) as "8/4/2/1".
inline bool readFreeSets(json::JsonReader& r, std::string& out) {
  return readJoined(r, out, '/');
}

// Where each scalar field of an object goes.
using ScalarFields = std::initializer_list<std::pair<std::string_view, std::string*>>;

// Reads one object: the keys of `scalars` with readScalar, any other key with `other(key)`, which
// reads the value and returns whether it did so cleanly, or returns false without reading for a
// key that is not its own (the value is then skipped). False when the text is not JSON.
template <class Other>
bool readObject(json::JsonReader& r, ScalarFields scalars, Other&& other) {
  if (!r.beginObject()) return false;
  std::string key;
  while (r.nextKey(key)) {
    std::string* scalar = nullptr;
    for (const auto& [name, out] : scalars) {
      if (key == name) scalar = out;
    }
    // A failed read leaves the reader failed, so its skipValue fails too.
    if (!(scalar ? readScalar(r, *scalar) : (other(key) || r.skipValue()))) return false;
  }
  return r.ok();
}

inline bool readObject(json::JsonReader& r, ScalarFields scalars) {
  return readObject(r, scalars, [](const std::string&) { return false; });
}

// Reads an array, each element into a new item of `out` with readOne(item).
template <class Item, class ReadOne>
bool readList(json::JsonReader& r, std::vector<Item>& out, ReadOne&& readOne) {
  if (!r.beginArray()) return false;
  while (r.nextElement()) {
    out.emplace_back();
    if (!readOne(out.back())) return false;
  }
  return r.ok();
}

// The end of a document: only whitespace may follow, and a reading error is "not a <what>
// document: …".
Status finishDocument(json::JsonReader& r, std::string_view what);

}  // namespace gte::report
