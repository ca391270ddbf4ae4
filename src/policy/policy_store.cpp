#include "policy/policy_store.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "policy/policy_hash.h"
#include "policy/policy_yaml.h"

namespace gte {

Result<std::string> readPolicyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kNotFound, "policy file " + path + ": cannot open"};
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    return Error{ErrorCode::kUnavailable, "policy file " + path + ": read failed"};
  }
  return content.str();
}

PolicyStore::PolicyStore(std::string path, PolicyConstSharedPtr initial, Callback callback)
    : path_(std::move(path)), callback_(std::move(callback)), current_(std::move(initial)) {}

PolicyStore::~PolicyStore() {
  stop();
}

PolicyConstSharedPtr PolicyStore::current() const {
  MutexLock lock(policyMutex_);
  return current_;
}

void PolicyStore::publish(PolicyReloadEvent event) {
  if (callback_) {
    callback_(event);
  }
}

Status PolicyStore::reload() {
  MutexLock reloadLock(reloadMutex_);
  Result<std::string> content = readPolicyFile(path_);
  // An unreadable file is reported every time it stays unreadable only once: remembering "no
  // content" as hash 0 keeps a missing file from flooding the log every poll.
  const std::uint64_t contentHash = content.ok() ? fnv1a64(*content) : 0;
  if (lastContentHash_ == contentHash) {
    if (lastError_) {
      return *lastError_;  // still broken; already reported through the callback
    }
    return Ok{};
  }
  lastContentHash_ = contentHash;
  lastError_.reset();

  Result<Policy> parsed =
      content.ok() ? parsePolicyYaml(*content) : Result<Policy>(content.error());
  if (content.ok() && isBlankPolicy(*content)) {
    parsed = invalidArgument(
        "is empty (sets nothing): an emptied ConfigMap or a file caught half-written is not taken "
        "as the built-in defaults; write {} to mean them, or start without --policy");
  }
  if (!parsed.ok()) {
    Error error = parsed.error();
    if (content.ok()) {
      error.message = "policy file " + path_ + ": " + error.message;
    }
    lastError_ = error;
    PolicyConstSharedPtr active = current();
    publish({PolicyReloadEvent::Kind::kError, active, policyHash(*active), error});
    return error;
  }

  auto next = std::make_shared<const Policy>(std::move(parsed).value());
  {
    MutexLock lock(policyMutex_);
    if (current_ && *current_ == *next) {
      return Ok{};  // same policy, different spelling: nothing changed for readers
    }
    current_ = next;
  }
  publish({PolicyReloadEvent::Kind::kLoaded, next, policyHash(*next), std::nullopt});
  return Ok{};
}

void PolicyStore::start(std::chrono::milliseconds interval) {
  stop();
  {
    MutexLock lock(stopMutex_);
    stopping_ = false;
  }
  watcher_ = std::thread([this, interval] { run(interval); });
}

void PolicyStore::stop() {
  {
    MutexLock lock(stopMutex_);
    stopping_ = true;
  }
  stopCv_.notify_all();
  if (watcher_.joinable()) {
    watcher_.join();
  }
}

void PolicyStore::run(std::chrono::milliseconds interval) {
  // The first poll runs at once, so start() alone brings the file in.
  UniqueLock lock(stopMutex_);
  do {
    lock.unlock();
    (void)reload();  // outcomes go to the callback
    lock.lock();
  } while (
      !stopCv_.wait_for(lock, interval, [this]() GTE_REQUIRES(stopMutex_) { return stopping_; }));
}

}  // namespace gte
