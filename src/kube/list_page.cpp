#include "kube/list_page.h"

#include "json/json_reader.h"

namespace gte::kube {
namespace {

using json::JsonReader;

Error decodeError(const JsonReader& reader, std::string_view what) {
  return invalidArgument("list response: " + std::string(what) + ": " + reader.error());
}

bool readListMeta(JsonReader& reader, ListPage& page) {
  if (reader.readNull()) return true;
  if (!reader.beginObject()) return false;
  std::string key;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "resourceVersion") {
      good = reader.readStringOrNull(page.resourceVersion);
    } else if (key == "continue") {
      good = reader.readStringOrNull(page.continueToken);
    } else {
      good = reader.skipValue();
    }
    if (!good) return false;
  }
  return reader.ok();
}

Status readItems(JsonReader& reader, ListPage& page, const ListItemReader& readItem) {
  if (reader.readNull()) return Ok{};
  if (!reader.beginArray()) return decodeError(reader, "items");
  while (reader.nextElement()) {
    // A nested reader reads the item in the same pass; one it cannot read is skipped over.
    const std::string_view rest = reader.rest();
    JsonReader item(rest, reader.depthLeft());
    if (readItem(item)) {
      reader.consumed(item.offset());
    } else if (!reader.skipValue()) {
      return decodeError(reader, "items[" + std::to_string(page.items) + "]");
    }
    ++page.items;
  }
  if (!reader.ok()) return decodeError(reader, "items");
  return Ok{};
}

}  // namespace

Result<ListPage> decodeListPage(std::string_view body, const ListItemReader& readItem) {
  JsonReader reader(body);
  ListPage page;
  if (!reader.beginObject()) return decodeError(reader, "body");
  std::string key;
  while (reader.nextKey(key)) {
    if (key == "metadata") {
      if (!readListMeta(reader, page)) return decodeError(reader, "metadata");
    } else if (key == "items") {
      if (auto s = readItems(reader, page, readItem); !s) return std::move(s).error();
    } else if (!reader.skipValue()) {
      return decodeError(reader, key);
    }
  }
  if (!reader.ok() || !reader.finish()) return decodeError(reader, "body");
  return page;
}

}  // namespace gte::kube
