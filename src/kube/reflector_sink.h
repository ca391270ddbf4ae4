#pragma once
// Where a Reflector delivers what it lists and watches. One sink per resource kind (nodes, pods);
// the sink decodes the object JSON and updates the cache. Calls come from the reflector's thread.
#include <string_view>

#include "base/result.h"
#include "kube/watch_event.h"

namespace gte::kube {

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A full list starts: items that follow replace the cache's contents once endList() is called.
  // A list that fails part way is simply started again with beginList().
  virtual void beginList() = 0;
  // One list item. An error skips the item (one bad object must not block the cache).
  virtual Status listItem(std::string_view object) = 0;
  virtual void endList() = 0;
  // ADDED, MODIFIED or DELETED. An error skips the event.
  virtual Status apply(WatchEventType type, std::string_view object) = 0;
};

}  // namespace gte::kube
