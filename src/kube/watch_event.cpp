#include "kube/watch_event.h"

#include <optional>

#include "json/json_reader.h"

namespace gte::kube {
namespace {

using json::JsonReader;

Error decodeError(const JsonReader& reader, std::string_view what) {
  return invalidArgument("watch event: " + std::string(what) + ": " + reader.error());
}

std::optional<WatchEventType> knownType(std::string_view name) {
  if (name == "ADDED") return WatchEventType::kAdded;
  if (name == "MODIFIED") return WatchEventType::kModified;
  if (name == "DELETED") return WatchEventType::kDeleted;
  if (name == "BOOKMARK") return WatchEventType::kBookmark;
  if (name == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

// ADDED, MODIFIED and DELETED carry an object of the watched kind, read by the caller's reader;
// BOOKMARK and ERROR carry only what the loop reads itself.
bool changesObject(WatchEventType type) {
  return type != WatchEventType::kBookmark && type != WatchEventType::kError;
}

// Whether an object read for an event of type `readFor` is read as one of type `type` needs.
bool readAlike(WatchEventType readFor, WatchEventType type) {
  return changesObject(readFor) ? changesObject(type) : readFor == type;
}

// metadata.resourceVersion, skipping everything else in the metadata object.
bool readResourceVersion(JsonReader& reader, std::string& out) {
  if (reader.readNull()) return true;
  if (!reader.beginObject()) return false;
  std::string key;
  while (reader.nextKey(key)) {
    const bool good = key == "resourceVersion" ? reader.readStringOrNull(out) : reader.skipValue();
    if (!good) return false;
  }
  return reader.ok();
}

// Reads the object's resourceVersion, and for a Status object (event.type kError) its code, reason
// and message.
Status readObjectHeader(JsonReader& reader, WatchEvent& event) {
  if (!reader.beginObject()) return decodeError(reader, "object");
  std::string key;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "metadata") {
      good = readResourceVersion(reader, event.resourceVersion);
    } else if (event.type == WatchEventType::kError && key == "code") {
      good = reader.readInt64(event.statusCode);
    } else if (event.type == WatchEventType::kError && key == "reason") {
      good = reader.readStringOrNull(event.statusReason);
    } else if (event.type == WatchEventType::kError && key == "message") {
      good = reader.readStringOrNull(event.statusMessage);
    } else {
      good = reader.skipValue();
    }
    if (!good) return decodeError(reader, "object." + key);
  }
  if (!reader.ok()) return decodeError(reader, "object");
  return Ok{};
}

// The line's object and how it was read while the line was scanned.
struct ObjectReading {
  std::string_view bytes;
  std::optional<WatchEventType> readFor;  // nullopt: only skipped (its bytes are read later)
  bool objectUnread = false;              // readChange failed: its header is still to be read
};

// Reads the object of an event of `type` from `reader`, which stands at it. A BOOKMARK's or ERROR's
// object that does not read is an error; an object readChange fails on is not: it is marked
// unread, and skipped.
Status readEventObject(JsonReader& reader, WatchEventType type, WatchEvent& event,
                       const EventObjectReader& readChange, ObjectReading& reading) {
  // What an earlier object of the line gave does not count (the last "object" key wins).
  event = WatchEvent{};
  event.type = type;
  reading.objectUnread = false;
  if (!changesObject(type)) return readObjectHeader(reader, event);
  auto version = readChange(reader);
  if (version) {
    event.resourceVersion = std::move(*version);
  } else {
    reading.objectUnread = true;
  }
  return Ok{};
}

// The object where it stands in the line, read in the same pass by a nested reader whose extent
// becomes the object's bytes. When that read fails the object is skipped instead (which fails only
// when it is not JSON), and what is still to be read is read from its bytes once the rest of the
// line has decoded: the errors are the ones a line with the keys in another order gets.
bool readInLine(JsonReader& reader, WatchEventType type, WatchEvent& event,
                const EventObjectReader& readChange, ObjectReading& reading) {
  const std::string_view rest = reader.rest();
  JsonReader nested(rest, reader.depthLeft());
  if (readEventObject(nested, type, event, readChange, reading).ok() && !reading.objectUnread) {
    reading.bytes = rest.substr(0, nested.offset());
    reading.readFor = type;
    reader.consumed(nested.offset());
    return true;
  }
  reading.readFor = reading.objectUnread ? std::optional(type) : std::nullopt;
  return reader.skipValue(&reading.bytes);
}

// What readInLine left to read, now that the event's type is final: an object read for another
// type (or only skipped) is read from its bytes, and an unread one's header for its
// resourceVersion.
Status finishObject(WatchEvent& event, const EventObjectReader& readChange,
                    ObjectReading& reading) {
  if (!reading.readFor || !readAlike(*reading.readFor, event.type)) {
    JsonReader reader(reading.bytes);
    if (auto s = readEventObject(reader, event.type, event, readChange, reading); !s) return s;
  }
  if (!reading.objectUnread) return Ok{};
  JsonReader header(reading.bytes);
  return readObjectHeader(header, event);
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

Result<WatchEvent> decodeWatchEvent(std::string_view line, const EventObjectReader& readObject) {
  JsonReader reader(line);
  if (!reader.beginObject()) return decodeError(reader, "line");
  std::string key;
  std::string type;
  WatchEvent event;
  ObjectReading reading;
  bool haveObject = false;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "type") {
      good = reader.readString(type);
    } else if (key == "object") {
      haveObject = true;
      reading = ObjectReading{};
      const auto typeSoFar = knownType(type);
      good = typeSoFar ? readInLine(reader, *typeSoFar, event, readObject, reading)
                       : reader.skipValue(&reading.bytes);
    } else {
      good = reader.skipValue();
    }
    if (!good) return decodeError(reader, key);
  }
  if (!reader.ok() || !reader.finish()) return decodeError(reader, "line");
  const auto parsedType = knownType(type);
  if (!parsedType) return invalidArgument("watch event: unknown type \"" + type + "\"");
  event.type = *parsedType;
  if (!haveObject) return invalidArgument("watch event: no object");
  if (auto s = finishObject(event, readObject, reading); !s) return std::move(s).error();
  return event;
}

}  // namespace gte::kube
