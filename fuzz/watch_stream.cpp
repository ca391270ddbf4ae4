// What the API server sends the cluster cache: a watch stream (lines framed by LineSplitter,
// decoded by decodeWatchEvent) or a list page (decodeListPage), with each Node or Pod object read
// where it stands by the model's readers, as the cache's sinks read them. The first byte picks the
// kind (bit 0: Pod, else Node) and the shape (bit 1: a list page, else a watch stream cut into
// chunks of 1 + (first byte >> 2) bytes); the rest is the body.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "json/json_reader.h"
#include "kube/line_splitter.h"
#include "kube/list_page.h"
#include "kube/watch_event.h"
#include "model/node_info.h"
#include "model/pod_info.h"

namespace {

using gte::fuzz::check;

// The object reader of one kind, recording what its last call gave.
struct Reads {
  bool pods = false;
  int calls = 0;
  std::optional<std::string> lastVersion;  // nullopt: the last object did not read

  gte::Result<std::string> read(gte::json::JsonReader& object) {
    ++calls;
    gte::Result<std::string> version = gte::Error{gte::ErrorCode::kInvalidArgument, ""};
    if (pods) {
      auto pod = gte::readPodJson(object);
      version = pod ? gte::Result<std::string>(pod->resourceVersion)
                    : gte::Result<std::string>(std::move(pod).error());
    } else {
      auto node = gte::readNodeJson(object);
      version = node ? gte::Result<std::string>(node->resourceVersion)
                     : gte::Result<std::string>(std::move(node).error());
    }
    check(version || !version.error().message.empty(), "an object that does not read says why");
    lastVersion = version ? std::optional(*version) : std::nullopt;
    return version;
  }
};

bool changesObject(gte::kube::WatchEventType type) {
  using gte::kube::WatchEventType;
  return type == WatchEventType::kAdded || type == WatchEventType::kModified ||
         type == WatchEventType::kDeleted;
}

void watchStream(std::string_view body, std::size_t chunk, Reads& reads) {
  const gte::kube::EventObjectReader readObject = [&reads](gte::json::JsonReader& object) {
    return reads.read(object);
  };
  gte::kube::LineSplitter splitter;
  const auto onLine = [&](std::string_view line) {
    reads.calls = 0;
    auto event = gte::kube::decodeWatchEvent(line, readObject);
    if (!event) {
      check(!event.error().message.empty(), "a line that does not decode says why");
      return true;
    }
    if (changesObject(event->type)) {
      check(reads.calls > 0, "an ADDED, MODIFIED or DELETED event's object is read");
      if (reads.lastVersion) {
        check(event->resourceVersion == *reads.lastVersion,
              "the event's resourceVersion is its object's");
      }
    }
    return true;
  };
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    splitter.feed(body.substr(at, chunk), onLine);
  }
}

void listPage(std::string_view body, Reads& reads) {
  auto page = gte::kube::decodeListPage(body, [&reads](gte::json::JsonReader& item) -> gte::Status {
    auto version = reads.read(item);
    if (!version) return std::move(version).error();
    return gte::Ok{};
  });
  if (!page) {
    check(!page.error().message.empty(), "a page that does not decode says why");
    return;
  }
  check(static_cast<std::size_t>(reads.calls) == page->items,
        "every item of a page is offered to the reader once");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  Reads reads;
  reads.pods = (data[0] & 1) != 0;
  if ((data[0] & 2) != 0) {
    listPage(body, reads);
  } else {
    watchStream(body, 1 + (data[0] >> 2), reads);
  }
  return 0;
}
