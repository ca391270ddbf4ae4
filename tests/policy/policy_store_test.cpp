// The policy store: reloads on content change (including a ConfigMap-style symlink swap), keeps
// the last good policy on errors, reports every outcome through the callback, stops cleanly.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "policy/default_policy.h"
#include "policy/policy_store.h"

namespace gte {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("gte-policy-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path path() const { return path_; }

 private:
  fs::path path_;
};

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

struct Recorder {
  std::mutex mutex;
  std::vector<PolicyReloadEvent> events;
  PolicyStore::Callback callback() {
    return [this](const PolicyReloadEvent& event) {
      std::lock_guard lock(mutex);
      events.push_back(event);
    };
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return events.size();
  }
  PolicyReloadEvent last() {
    std::lock_guard lock(mutex);
    return events.back();
  }
};

// A store on policy.yaml in a directory of its own, the file first holding `text`, the defaults
// active until the first reload.
struct StoreOnFile {
  TempDir dir;
  fs::path file = dir.path() / "policy.yaml";
  Recorder recorder;
  PolicyStore store;
  explicit StoreOnFile(const std::string& text)
      : store((writeFile(file, text), file.string()),
              std::make_shared<const Policy>(defaultPolicy()), recorder.callback()) {}
};

TEST_CASE("reload applies a new policy and keeps the last good one on errors", "[policy][store]") {
  StoreOnFile on("strategy: spread\n");
  const fs::path& file = on.file;
  Recorder& recorder = on.recorder;
  PolicyStore& store = on.store;
  CHECK(store.current()->defaultStrategy == Strategy::kBinpack);

  REQUIRE(store.reload().ok());
  CHECK(store.current()->defaultStrategy == Strategy::kSpread);
  REQUIRE(recorder.count() == 1);
  CHECK(recorder.last().kind == PolicyReloadEvent::Kind::kLoaded);
  CHECK(recorder.last().policyHash.size() == 16);

  // Same content again: nothing to report.
  REQUIRE(store.reload().ok());
  CHECK(recorder.count() == 1);

  // A broken file is reported once and the spread policy stays.
  writeFile(file, "weights: {linkQuality: -3}\n");
  const Status bad = store.reload();
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, ContainsSubstring("weights.linkQuality: must be >= 0"));
  CHECK(store.current()->defaultStrategy == Strategy::kSpread);
  REQUIRE(recorder.count() == 2);
  CHECK(recorder.last().kind == PolicyReloadEvent::Kind::kError);
  REQUIRE(recorder.last().error.has_value());
  CHECK(recorder.last().policy->defaultStrategy == Strategy::kSpread);
  CHECK_FALSE(store.reload().ok());
  CHECK(recorder.count() == 2);

  // A missing file is an error too, never a crash.
  fs::remove(file);
  CHECK_FALSE(store.reload().ok());
  CHECK(recorder.count() == 3);
  CHECK(store.current()->defaultStrategy == Strategy::kSpread);

  // Fixed: the new policy is applied.
  writeFile(file, "strategy: binpack\nmig: {dynamic: true}\n");
  REQUIRE(store.reload().ok());
  CHECK(store.current()->dynamicMig);
  CHECK(recorder.last().kind == PolicyReloadEvent::Kind::kLoaded);
}

// An emptied ConfigMap (or a file read half-written) used to put the built-in defaults in force,
// silently: an empty document parses as the defaults.
TEST_CASE("an emptied policy file keeps the last good policy and says why", "[policy][store]") {
  StoreOnFile on("strategy: spread\n");
  const fs::path& file = on.file;
  PolicyStore& store = on.store;
  REQUIRE(store.reload().ok());
  for (const char* blank : {"", "\n\n", "# strategy: binpack\n"}) {
    CAPTURE(blank);
    writeFile(file, blank);
    const Status emptied = store.reload();
    REQUIRE_FALSE(emptied.ok());
    CHECK_THAT(emptied.error().message, ContainsSubstring("is empty (sets nothing)"));
    CHECK(store.current()->defaultStrategy == Strategy::kSpread);
    CHECK(on.recorder.last().kind == PolicyReloadEvent::Kind::kError);
  }
  // {} states "the defaults" on purpose.
  writeFile(file, "{}\n");
  REQUIRE(store.reload().ok());
  CHECK(store.current()->defaultStrategy == Strategy::kBinpack);
}

TEST_CASE("the watcher picks up a ConfigMap-style symlink swap", "[policy][store]") {
  TempDir dir;
  // Kubernetes mounts: policy.yaml -> ..data/policy.yaml, ..data -> ..2026_v1; an update writes
  // ..2026_v2 and renames a new ..data symlink over the old one.
  fs::create_directories(dir.path() / "..v1");
  fs::create_directories(dir.path() / "..v2");
  writeFile(dir.path() / "..v1" / "policy.yaml", "strategy: binpack\n");
  writeFile(dir.path() / "..v2" / "policy.yaml", "strategy: spread\n");
  fs::create_directory_symlink("..v1", dir.path() / "..data");
  fs::create_symlink("..data/policy.yaml", dir.path() / "policy.yaml");

  Recorder recorder;
  PolicyStore store((dir.path() / "policy.yaml").string(),
                    std::make_shared<const Policy>(defaultPolicy()), recorder.callback());
  store.start(std::chrono::milliseconds(10));
  fs::create_directory_symlink("..v2", dir.path() / "..data_tmp");
  fs::rename(dir.path() / "..data_tmp", dir.path() / "..data");

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (store.current()->defaultStrategy != Strategy::kSpread &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(store.current()->defaultStrategy == Strategy::kSpread);
  store.stop();
  const std::size_t afterStop = recorder.count();
  writeFile(dir.path() / "..v2" / "policy.yaml", "strategy: binpack\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(recorder.count() == afterStop);  // stopped means stopped
}

TEST_CASE("stop returns promptly even with a long interval", "[policy][store]") {
  TempDir dir;
  writeFile(dir.path() / "policy.yaml", "strategy: spread\n");
  PolicyStore store((dir.path() / "policy.yaml").string(),
                    std::make_shared<const Policy>(defaultPolicy()), nullptr);
  store.start(std::chrono::hours(1));
  const auto begin = std::chrono::steady_clock::now();
  store.stop();
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(2));
  CHECK(store.current()->defaultStrategy == Strategy::kSpread);  // the first poll ran at start
}

}  // namespace
}  // namespace gte
