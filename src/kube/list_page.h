#pragma once
// Decodes one page of a Kubernetes list response ({"kind":"PodList","metadata":{"resourceVersion",
// "continue"},"items":[...]}) in one pass without building a DOM: each item is read where it stands
// by the caller's reader (the sink's typed reader), so a page of 500 pods never exists as a tree
// and no item's bytes are scanned twice.
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::json {
class JsonReader;
}

namespace gte::kube {

struct ListPage {
  std::string resourceVersion;  // the list's metadata.resourceVersion: where the watch starts
  std::string continueToken;    // non-empty: more pages follow
  std::size_t items = 0;        // read or skipped
};

// Reads one element of `items` from a reader standing at it, to the element's end and no further.
// An error skips the item: the page goes on, and fails only if the item is not even JSON.
using ListItemReader = std::function<Status(json::JsonReader& item)>;

Result<ListPage> decodeListPage(std::string_view body, const ListItemReader& readItem);

}  // namespace gte::kube
