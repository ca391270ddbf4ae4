#pragma once
// Decodes one line of a Kubernetes watch stream: {"type":"ADDED","object":{...}}. The object is not
// parsed here (that is the Node/Pod reader's job); only what the watch loop itself needs is read:
// the object's metadata.resourceVersion, and for ERROR events the Status code and message (410 Gone
// means the resourceVersion is too old and the cache must re-list).
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* watchEventTypeName(WatchEventType type) noexcept;

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string_view object;  // the raw object JSON; points into the decoded line
  std::string resourceVersion;
  // kError only: the embedded metav1.Status.
  std::int64_t statusCode = 0;
  std::string statusReason;
  std::string statusMessage;

  bool gone() const noexcept { return type == WatchEventType::kError && statusCode == 410; }
};

// `line` must outlive the returned event (object points into it).
Result<WatchEvent> decodeWatchEvent(std::string_view line);

}  // namespace gte::kube
