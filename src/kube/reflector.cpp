#include "kube/reflector.h"

#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <random>

#include "base/mutex.h"
#include "json/json_reader.h"
#include "kube/api_status.h"
#include "kube/line_splitter.h"
#include "kube/list_page.h"
#include "kube/query_escape.h"
#include "kube/watch_event.h"
#include "log/logger.h"

namespace gte::kube {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string seconds(std::chrono::milliseconds d) {
  return std::to_string(static_cast<double>(d.count()) / 1000.0) + " s";
}

}  // namespace

// Everything the loop thread touches, shared with it so a detached thread outlives the Reflector
// safely.
struct Reflector::Loop {
  Loop(std::shared_ptr<ApiTransport> t, std::shared_ptr<ReflectorSink> s, ReflectorOptions o)
      : transport(std::move(t)),
        sink(std::move(s)),
        options(std::move(o)),
        backoff(options.backoff),
        random(std::random_device{}()) {
    lastProgressNs = nowNs();
  }

  enum class Outcome { kOk, kGone, kFailed, kStopped, kRelist };

  void run();
  Outcome listAll();
  Outcome watchOnce();
  std::string watchPath();
  bool stopping() const { return cancel.cancelled(); }
  bool relistPending() const { return relistsRequested > relistsCovered; }
  // Waits for the backoff delay; false when stop() came first.
  bool pause(std::chrono::milliseconds delay);
  void markProgress();
  void markFailure(const std::string& message);

  std::shared_ptr<ApiTransport> transport;
  std::shared_ptr<ReflectorSink> sink;
  const ReflectorOptions options;
  Cancellation cancel;
  std::mutex pauseMutex;
  std::condition_variable pauseWake;

  std::atomic<bool> synced{false};
  std::atomic<std::uint64_t> lists{0};
  std::atomic<std::uint64_t> skipped{0};  // list items and watch events not applied
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> skippedObjects{0};
  std::atomic<std::int64_t> lastProgressNs{0};
  std::atomic<std::int64_t> failingSinceNs{0};  // 0: the last attempt succeeded
  // relist(): tickets handed out, and the highest one a delivered list covers.
  std::atomic<std::uint64_t> relistsRequested{0};
  std::atomic<std::uint64_t> relistsCovered{0};
  Mutex watchMutex;
  Cancellation* currentWatch GTE_GUARDED_BY(watchMutex) = nullptr;  // the watch in flight
  mutable Mutex errorMutex;
  std::string lastError GTE_GUARDED_BY(errorMutex);

  // Loop thread only.
  Backoff backoff;
  std::mt19937_64 random;
  std::string resourceVersion;  // empty: (re)list before watching
};

void Reflector::Loop::markProgress() {
  lastProgressNs = nowNs();
  failingSinceNs = 0;
  backoff.reset();
}

void Reflector::Loop::markFailure(const std::string& message) {
  ++failures;
  std::int64_t expected = 0;
  failingSinceNs.compare_exchange_strong(expected, nowNs());
  {
    MutexLock lock(errorMutex);
    lastError = message;
  }
}

bool Reflector::Loop::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(pauseMutex);
  // A relist asked for while pausing cuts the pause short (one asked before does not: a failing
  // list must not turn into a busy loop).
  const std::uint64_t seen = relistsRequested;
  pauseWake.wait_for(lock, delay, [&] { return stopping() || relistsRequested > seen; });
  return !stopping();
}

void Reflector::Loop::run() {
  while (!stopping()) {
    if (relistPending()) resourceVersion.clear();
    Outcome outcome = resourceVersion.empty() ? listAll() : watchOnce();
    if (outcome == Outcome::kStopped) return;
    if (outcome == Outcome::kRelist) {
      log::info("watch: fresh list asked for", {{"resource", options.resource}});
      continue;
    }
    if (outcome == Outcome::kGone) {
      // Our resourceVersion fell out of the server's window: only a fresh list is consistent.
      log::info("watch: 410 Gone, re-listing", {{"resource", options.resource}});
      resourceVersion.clear();
      continue;
    }
    if (outcome == Outcome::kFailed) {
      const auto delay = backoff.next();
      {
        MutexLock lock(errorMutex);
        log::warn(
            "watch: request failed",
            {{"resource", options.resource}, {"error", lastError}, {"retry_in", seconds(delay)}});
      }
      if (!pause(delay)) return;
    }
  }
}

Reflector::Loop::Outcome Reflector::Loop::listAll() {
  // Every ticket handed out so far is covered by this list: its first page is read after them.
  const std::uint64_t covers = relistsRequested;
  sink->beginList();
  std::string continueToken;
  std::string listVersion;
  std::size_t listSkipped = 0;
  do {
    std::string path = options.path + "?limit=" + std::to_string(options.pageSize);
    if (!options.fieldSelector.empty())
      path += "&fieldSelector=" + queryEscape(options.fieldSelector);
    if (!continueToken.empty()) path += "&continue=" + queryEscape(continueToken);
    auto response = transport->send("GET", path);
    if (stopping()) return Outcome::kStopped;
    if (!response) {
      markFailure("list: " + response.error().message);
      return Outcome::kFailed;
    }
    if (!response->success()) {
      markFailure(statusError("list", *response).message);
      return Outcome::kFailed;  // includes 410 on an expired continue token: list again
    }
    const auto skip = [&](const Error& error) {
      ++listSkipped;
      ++skipped;
      ++skippedObjects;
      log::warn("list: skipping an item",
                {{"resource", options.resource}, {"error", error.message}});
    };
    auto page = decodeListPage(response->body, [&](json::JsonReader& item) -> Status {
      auto read = sink->read(item);
      if (!read) {
        skip(read.error());
        return std::move(read).error();  // an item that did not read is skipped over
      }
      if (auto listed = sink->listItem(); !listed) skip(listed.error());
      return Ok{};
    });
    if (!page) {
      markFailure("list: " + page.error().message);
      return Outcome::kFailed;
    }
    continueToken = page->continueToken;
    listVersion = page->resourceVersion;
  } while (!continueToken.empty());
  relistsCovered = std::max<std::uint64_t>(relistsCovered, covers);
  sink->endList();
  if (options.onListed) options.onListed(relistsCovered);
  resourceVersion = listVersion.empty() ? "0" : listVersion;
  ++lists;
  synced = true;
  markProgress();
  log::info("listed", {{"resource", options.resource},
                       {"resource_version", resourceVersion},
                       {"skipped", std::to_string(listSkipped)}});
  return Outcome::kOk;
}

std::string Reflector::Loop::watchPath() {
  const auto minSeconds = options.minWatchTimeout.count();
  std::uniform_int_distribution<std::int64_t> spread(minSeconds, 2 * minSeconds - 1);
  std::string path = options.path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                     queryEscape(resourceVersion) +
                     "&timeoutSeconds=" + std::to_string(std::max<std::int64_t>(1, spread(random)));
  if (!options.fieldSelector.empty())
    path += "&fieldSelector=" + queryEscape(options.fieldSelector);
  return path;
}

Reflector::Loop::Outcome Reflector::Loop::watchOnce() {
  const auto started = Clock::now();
  LineSplitter splitter;
  std::size_t events = 0;
  Outcome verdict = Outcome::kOk;
  // Why the last event's object did not read, if it did not: the event is skipped.
  std::optional<Error> unread;
  const EventObjectReader readObject = [this, &unread](json::JsonReader& object) {
    auto version = sink->read(object);
    unread = version ? std::nullopt : std::optional<Error>(version.error());
    return version;
  };
  auto onLine = [&](std::string_view line) {
    unread.reset();
    auto event = decodeWatchEvent(line, readObject);
    if (!event) {
      markFailure(event.error().message);
      verdict = Outcome::kFailed;
      return false;
    }
    if (event->type == WatchEventType::kError) {
      if (event->gone()) {
        verdict = Outcome::kGone;
      } else {
        markFailure("ERROR event " + std::to_string(event->statusCode) + " " + event->statusReason +
                    ": " + event->statusMessage);
        verdict = Outcome::kFailed;
      }
      return false;
    }
    if (event->type != WatchEventType::kBookmark) {
      const Status applied = unread ? Status(*unread) : sink->apply(event->type);
      if (!applied) {
        ++skipped;
        log::warn("watch: skipping an event", {{"resource", options.resource},
                                               {"type", watchEventTypeName(event->type)},
                                               {"error", applied.error().message}});
      }
    }
    if (!event->resourceVersion.empty()) resourceVersion = event->resourceVersion;
    ++events;
    markProgress();
    return true;
  };
  // Its own cancellation, so relist() can end this watch without stopping the loop.
  Cancellation watchCancel;
  CancellationRegistration onStop(cancel, [&watchCancel] { watchCancel.cancel(); });
  {
    MutexLock lock(watchMutex);
    if (relistPending()) return Outcome::kRelist;
    currentWatch = &watchCancel;
  }
  auto response = transport->stream(
      watchPath(), [&](std::string_view chunk) { return splitter.feed(chunk, onLine); },
      watchCancel);
  {
    MutexLock lock(watchMutex);
    currentWatch = nullptr;
  }
  if (stopping()) return Outcome::kStopped;
  if (watchCancel.cancelled()) return Outcome::kRelist;
  if (!response) {
    markFailure("watch: " + response.error().message);
    return Outcome::kFailed;
  }
  if (response->status == 410) return Outcome::kGone;
  if (!response->success()) {
    markFailure(statusError("watch", *response).message);
    return Outcome::kFailed;
  }
  if (splitter.overflowed()) {
    markFailure("watch: an event exceeded the line limit");
    return Outcome::kFailed;
  }
  if (verdict != Outcome::kOk) return verdict;
  // A watch the server ends at once without a single event (a proxy closing connections, a
  // server shutting down) must not turn into a reconnect loop.
  if (events == 0 && Clock::now() - started < std::chrono::seconds(1)) {
    markFailure("watch: the server closed the stream immediately");
    return Outcome::kFailed;
  }
  markProgress();
  return Outcome::kOk;
}

Reflector::Reflector(std::shared_ptr<ApiTransport> transport, std::shared_ptr<ReflectorSink> sink,
                     ReflectorOptions options)
    : loop_(std::make_shared<Loop>(std::move(transport), std::move(sink), std::move(options))) {}

Reflector::~Reflector() {
  stop();
}

void Reflector::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([loop = loop_] { loop->run(); });
}

bool Reflector::stop(std::chrono::milliseconds deadline) {
  if (!thread_.joinable()) return true;
  loop_->cancel.cancel();
  { std::lock_guard lock(loop_->pauseMutex); }
  loop_->pauseWake.notify_all();
  // The loop notices the cancellation at its next step, but a unary request already in flight is
  // not cancellable and may run to its timeout: join on a detached helper and wait only so long.
  auto finished = std::make_shared<std::promise<void>>();
  auto done = finished->get_future();
  std::thread([worker = std::move(thread_), finished]() mutable {
    worker.join();
    finished->set_value();
  }).detach();
  if (done.wait_for(deadline) == std::future_status::ready) return true;
  log::warn("watch: thread did not stop in time; leaving it to finish on its own",
            {{"resource", loop_->options.resource}, {"deadline", seconds(deadline)}});
  return false;
}

bool Reflector::synced() const {
  return loop_->synced;
}

std::uint64_t Reflector::lists() const {
  return loop_->lists;
}

std::uint64_t Reflector::relist() {
  std::uint64_t ticket = 0;
  {
    MutexLock lock(loop_->watchMutex);
    ticket = ++loop_->relistsRequested;
    if (loop_->currentWatch != nullptr) loop_->currentWatch->cancel();
  }
  { std::lock_guard lock(loop_->pauseMutex); }
  loop_->pauseWake.notify_all();
  return ticket;
}

std::uint64_t Reflector::failures() const {
  return loop_->failures;
}

std::uint64_t Reflector::skipped() const {
  return loop_->skipped;
}

bool Reflector::healthy(std::string* why) const {
  const std::int64_t now = nowNs();
  const std::int64_t failingSince = loop_->failingSinceNs;
  const auto elapsed = [now](std::int64_t since) {
    return std::chrono::milliseconds((now - since) / 1'000'000);
  };
  if (failingSince != 0 && elapsed(failingSince) > loop_->options.failureGrace) {
    if (why) {
      MutexLock lock(loop_->errorMutex);
      *why = loop_->options.resource + " watch failing for " + seconds(elapsed(failingSince)) +
             ": " + loop_->lastError;
    }
    return false;
  }
  if (elapsed(loop_->lastProgressNs) > loop_->options.stuckAfter) {
    if (why) {
      *why = loop_->options.resource + " watch: nothing received for " +
             seconds(elapsed(loop_->lastProgressNs));
    }
    return false;
  }
  return true;
}

}  // namespace gte::kube
