#include "kube/watch_event.h"

#include "json/json_reader.h"

namespace gte::kube {
namespace {

using json::JsonReader;
using json::Kind;

Error decodeError(const JsonReader& reader, std::string_view what) {
  return invalidArgument("watch event: " + std::string(what) + ": " + reader.error());
}

Result<WatchEventType> eventType(std::string_view name) {
  if (name == "ADDED") return WatchEventType::kAdded;
  if (name == "MODIFIED") return WatchEventType::kModified;
  if (name == "DELETED") return WatchEventType::kDeleted;
  if (name == "BOOKMARK") return WatchEventType::kBookmark;
  if (name == "ERROR") return WatchEventType::kError;
  return invalidArgument("watch event: unknown type \"" + std::string(name) + "\"");
}

bool readStringOrNull(JsonReader& reader, std::string& out) {
  if (reader.readNull()) return true;
  return reader.readString(out);
}

// metadata.resourceVersion, skipping everything else in the metadata object.
bool readResourceVersion(JsonReader& reader, std::string& out) {
  if (reader.readNull()) return true;
  if (!reader.beginObject()) return false;
  std::string key;
  while (reader.nextKey(key)) {
    const bool good = key == "resourceVersion" ? readStringOrNull(reader, out) : reader.skipValue();
    if (!good) return false;
  }
  return reader.ok();
}

// Reads the object's resourceVersion, and for a Status object its code, reason and message.
Status readObjectHeader(std::string_view object, WatchEvent& event) {
  JsonReader reader(object);
  if (!reader.beginObject()) return decodeError(reader, "object");
  std::string key;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "metadata") {
      good = readResourceVersion(reader, event.resourceVersion);
    } else if (event.type == WatchEventType::kError && key == "code") {
      good = reader.readInt64(event.statusCode);
    } else if (event.type == WatchEventType::kError && key == "reason") {
      good = readStringOrNull(reader, event.statusReason);
    } else if (event.type == WatchEventType::kError && key == "message") {
      good = readStringOrNull(reader, event.statusMessage);
    } else {
      good = reader.skipValue();
    }
    if (!good) return decodeError(reader, "object." + key);
  }
  if (!reader.ok()) return decodeError(reader, "object");
  return Ok{};
}

}  // namespace

const char* watchEventTypeName(WatchEventType type) noexcept {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

Result<WatchEvent> decodeWatchEvent(std::string_view line) {
  JsonReader reader(line);
  if (!reader.beginObject()) return decodeError(reader, "line");
  std::string key;
  std::string type;
  WatchEvent event;
  bool haveObject = false;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "type") {
      good = reader.readString(type);
    } else if (key == "object") {
      good = reader.skipValue(&event.object);
      haveObject = true;
    } else {
      good = reader.skipValue();
    }
    if (!good) return decodeError(reader, key);
  }
  if (!reader.ok() || !reader.finish()) return decodeError(reader, "line");
  auto parsedType = eventType(type);
  if (!parsedType) return std::move(parsedType).error();
  event.type = *parsedType;
  if (!haveObject) return invalidArgument("watch event: no object");
  if (auto s = readObjectHeader(event.object, event); !s) return std::move(s).error();
  return event;
}

}  // namespace gte::kube
