#pragma once
// Holds the active policy and keeps it in step with a policy file. ConfigMap volumes update by
// swapping a symlink, so the store compares file *content* (hash), not mtime. A bad file never
// replaces the last good policy, and neither does an empty one (isBlankPolicy); every outcome is
// reported through the callback, never thrown.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/result.h"
#include "policy/policy.h"

namespace gte {

struct PolicyReloadEvent {
  enum class Kind {
    kLoaded,  // a new policy (different content hash) is now active
    kError,   // the file could not be read or parsed; the previous policy stays active
  };
  Kind kind = Kind::kLoaded;
  PolicyConstSharedPtr policy;  // the policy active after the event
  std::string policyHash;       // policyHash(*policy)
  std::optional<Error> error;   // set for kError
};

class PolicyStore {
 public:
  using Callback = std::function<void(const PolicyReloadEvent&)>;

  // Starts with `initial` active (usually defaultPolicy()); nothing is read until reload() or
  // start(). The callback runs on the caller's thread for reload() and on the watcher thread
  // otherwise; it must not call back into the store's start()/stop().
  PolicyStore(std::string path, PolicyConstSharedPtr initial, Callback callback);
  ~PolicyStore();
  PolicyStore(const PolicyStore&) = delete;
  PolicyStore& operator=(const PolicyStore&) = delete;

  // Reads the file now. Returns the error when the file is unreadable or invalid (the active
  // policy is then unchanged). Content identical to the last attempt is not parsed or reported
  // again: it returns the same outcome as before. A valid file equal to the active policy
  // changes nothing and reports nothing.
  Status reload();

  // Polls at once and then every `interval` on a thread of its own until stop() or destruction.
  void start(std::chrono::milliseconds interval);
  void stop();

  PolicyConstSharedPtr current() const;
  const std::string& path() const noexcept { return path_; }

 private:
  void publish(PolicyReloadEvent event);
  void run(std::chrono::milliseconds interval);

  const std::string path_;
  const Callback callback_;

  mutable Mutex policyMutex_;
  PolicyConstSharedPtr current_ GTE_GUARDED_BY(policyMutex_);

  Mutex reloadMutex_;  // serialises reload() against the watcher
  std::optional<std::uint64_t> lastContentHash_ GTE_GUARDED_BY(reloadMutex_);
  // lastContentHash_'s error, if bad
  std::optional<Error> lastError_ GTE_GUARDED_BY(reloadMutex_);

  Mutex stopMutex_;
  std::condition_variable_any stopCv_;
  bool stopping_ GTE_GUARDED_BY(stopMutex_) = false;
  std::thread watcher_;
};

// Reads a whole file. Errors name the path.
Result<std::string> readPolicyFile(const std::string& path);

}  // namespace gte
