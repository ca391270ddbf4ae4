#pragma once
// Decodes one page of a Kubernetes list response ({"kind":"PodList","metadata":{"resourceVersion",
// "continue"},"items":[...]}) without building a DOM: each item's raw JSON span is handed to a
// callback as soon as it is scanned, so a page of 500 pods never exists as a tree.
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::kube {

struct ListPage {
  std::string resourceVersion;  // the list's metadata.resourceVersion: where the watch starts
  std::string continueToken;    // non-empty: more pages follow
  std::size_t items = 0;
};

// onItem receives each element of `items`; its error aborts the decode and is returned with the
// item index prepended.
Result<ListPage> decodeListPage(std::string_view body,
                                const std::function<Status(std::string_view item)>& onItem);

}  // namespace gte::kube
