#pragma once
// The extender's Prometheus metrics. Families and label sets are registered once at start-up and
// held by reference (prometheus-cpp's Add() per event is slow); labels are bounded: verb, HTTP
// code, outcome — never node or pod names. prometheus-cpp headers stay in metrics.cpp.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gte::metrics {

enum class Verb { kFilter, kPrioritize, kBind, kPreempt, kOther };
enum class NodeOutcome { kFit, kUnschedulable, kUnresolvable };
enum class ReloadResult { kOk, kError };

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One HTTP request: its verb, status code and wall time.
  void observeRequest(Verb verb, int httpStatus, double seconds);
  // Per-node filter verdicts.
  void countFilterNodes(NodeOutcome outcome, std::uint64_t n);
  // A node whose topology labels could not be read (one per node and label change).
  void countNodeTopologyError();
  void countPolicyReload(ReloadResult result);
  void setPolicyHash(std::string_view hash);
  // Snapshots published (generations), in cluster-cache mode.
  void countSnapshotBuilds(std::uint64_t n);
  // Nodes whose topology labels are malformed right now (cluster-cache mode).
  void setMalformedNodes(std::int64_t n);
  void setCachedObjects(std::int64_t nodes, std::int64_t pods, std::int64_t reservations);
  void countBind(bool ok);
  void countRejectedRequest(std::string_view reason);  // body too large, bad JSON, ...

  // The text exposition format (version 0.0.4) of everything registered.
  std::string serialize() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gte::metrics
