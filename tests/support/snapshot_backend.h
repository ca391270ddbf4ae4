#pragma once
// A ClusterBackend that serves snapshots and nothing else (no bind, no pod lookups): from a
// ClusterState as it publishes them, or one fixed snapshot. It counts the loads, so a test can
// hold a request to one. Header-only: the tests and benchmarks that link the service use it
// without the fixtures library linking the service.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "service/cluster_backend.h"
#include "snapshot/cluster_snapshot.h"

namespace gte::testing {

class SnapshotBackend final : public ClusterBackend {
 public:
  using Source = std::function<ClusterSnapshotConstSharedPtr()>;

  explicit SnapshotBackend(Source source) : source_(std::move(source)) {}
  explicit SnapshotBackend(ClusterSnapshotConstSharedPtr fixed)
      : source_([fixed = std::move(fixed)] { return fixed; }) {}
  // Anything with snapshot() (a ClusterState); it must outlive the backend.
  template <typename State>
  static SnapshotBackend of(const State& state) {
    return SnapshotBackend(Source([&state] { return state.snapshot(); }));
  }

  ClusterSnapshotConstSharedPtr snapshot() const override {
    ++loads;
    return source_();
  }
  bool ready() const override { return true; }
  bool healthy(std::string*) const override { return true; }
  Status bind(const BindRequest&) override {
    return Error{ErrorCode::kInternal, "this backend serves snapshots only"};
  }
  std::optional<PodInfo> podByUid(const std::string&) const override { return std::nullopt; }
  Result<PodInfo> podByName(const std::string&, const std::string&) const override {
    return Error{ErrorCode::kNotFound, "this backend serves snapshots only"};
  }
  std::vector<PodInfo> podsOnNode(const std::string&) const override { return {}; }

  mutable std::atomic<int> loads{0};

 private:
  Source source_;
};

}  // namespace gte::testing
