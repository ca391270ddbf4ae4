#pragma once
// Where a Reflector delivers what it lists and watches, untyped. Each object is read straight from
// the list page or the watch line while the Reflector scans it (one pass: its bytes are never
// scanned again), held, and handed on by listItem() or apply() once the item or the line has
// decoded. Calls come from the reflector's thread. Implement ObjectSink<Object>
// (kube/object_sink.h) for a typed sink; this interface is what it is adapted to.
#include <string>

#include "base/result.h"
#include "kube/watch_event.h"

namespace gte::json {
class JsonReader;
}

namespace gte::kube {

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // Reads one object (a list item, or the object of an ADDED, MODIFIED or DELETED event) from
  // `reader`, which stands at it, to the object's end and no further, and holds it for the next
  // listItem() or apply(). Returns its metadata.resourceVersion. An error: the object did not read
  // and is skipped (one bad object must not block the cache).
  virtual Result<std::string> read(json::JsonReader& reader) = 0;
  // A full list starts: items that follow replace the cache's contents once endList() is called.
  // A list that fails part way is simply started again with beginList().
  virtual void beginList() = 0;
  // Adds the object read last to the list. An error skips it.
  virtual Status listItem() = 0;
  virtual void endList() = 0;
  // Applies the object read last as an ADDED, MODIFIED or DELETED event. An error skips the event.
  virtual Status apply(WatchEventType type) = 0;
};

}  // namespace gte::kube
