#pragma once
// Decodes one line of a Kubernetes watch stream, {"type":"ADDED","object":{...}}, in one pass: the
// object of an ADDED, MODIFIED or DELETED event is read where it stands in the line, by the
// caller's reader (the sink's typed reader), which also gives its metadata.resourceVersion. Only
// what the watch loop itself needs is read here: for BOOKMARK the resourceVersion, for ERROR the
// Status code, reason and message (410 Gone means the resourceVersion is too old and the cache
// must re-list).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::json {
class JsonReader;
}

namespace gte::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* watchEventTypeName(WatchEventType type) noexcept;

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string resourceVersion;
  // kError only: the embedded metav1.Status.
  std::int64_t statusCode = 0;
  std::string statusReason;
  std::string statusMessage;

  bool gone() const noexcept { return type == WatchEventType::kError && statusCode == 410; }
};

// Reads the object of an ADDED, MODIFIED or DELETED event from a reader standing at it, to the
// object's end and no further, and returns its metadata.resourceVersion.
using EventObjectReader = std::function<Result<std::string>(json::JsonReader& object)>;

// Calls readObject once for an ADDED, MODIFIED or DELETED event: on the object where it stands in
// the line when "type" comes first (as the API server writes it), else on the object's bytes once
// the type is known. When readObject fails, the event still decodes: the object is skipped and its
// resourceVersion read from its metadata (the failure is readObject's to report). The line's other
// errors (not JSON, no object, an unknown type) are errors.
Result<WatchEvent> decodeWatchEvent(std::string_view line, const EventObjectReader& readObject);

}  // namespace gte::kube
