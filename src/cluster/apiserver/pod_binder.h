#pragma once
// Bind for the API-server backend, asynchronous from end to end (no thread waits on the API
// server):
//   1. the pod comes from the cache (the watch keeps pending GPU pods); only a pod the watch has
//      not delivered yet is read from the API server;
//   2. its predicted GPUs are reserved with the fit check filter made (ClusterState::reserve), in
//      the order the binds arrive;
//   3. it waits for one of --bind-concurrency slots;
//   4. a bind whose caller has gone (connection closed) or that is older than --bind-deadline is
//      dropped there and its reservation released: kube-scheduler has given up on it, and binding
//      the pod now would bind one the scheduler has forgotten (a stale bind);
//   5. ONE request: POST pods/{name}/binding whose metadata carries the pod's UID (a precondition:
//      the API server refuses a pod deleted and re-created under the same name) and the
//      `<prefix>gpus` annotation, which the API server copies onto the pod in the same write, so a
//      bound pod never lacks it.
// A failed Binding may hide our own bind that landed (a lost answer, a retry): only then is the pod
// read, and one bound to the requested node under the same UID is a success. Any other failure
// releases the reservation and says why.
// With leader election, a LeaderGate comes first and last: a bind waits (or is refused) until this
// replica is active, i.e. it leads and has listed the pods afresh since (step 1 reads a cache that
// holds everything the previous leader bound), and the Binding of step 5 is sent only while the
// lease's fence holds.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "cluster/apiserver/bind_gate.h"
#include "cluster/apiserver/leader_gate.h"
#include "cluster/cluster_state.h"
#include "kube/api_transport.h"
#include "service/cluster_backend.h"

namespace gte::cluster {

struct PodBinderOptions {
  // Binds sent to the API server at once (--bind-concurrency); the rest wait their turn.
  std::size_t concurrency = 64;
  // A bind not sent within this long of its arrival is dropped (--bind-deadline): a little under
  // kube-scheduler's httpTimeout (3 s in the chart), leaving time for the Binding itself.
  std::chrono::milliseconds deadline{2500};
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
};

class PodBinder : public std::enable_shared_from_this<PodBinder> {
 public:
  using Done = std::function<void(BindOutcome)>;

  // `leader` may be null: no leader election, this replica always binds.
  PodBinder(std::shared_ptr<kube::ApiTransport> transport,
            std::shared_ptr<cluster::ClusterState> state, PodBinderOptions options = {},
            std::shared_ptr<LeaderGate> leader = nullptr);

  // Never waits: `done` runs once, on the caller's thread (an answer known at once) or on the
  // thread completing the last API request. Must be held by a shared_ptr.
  void bind(BindRequest request, BindCaller caller, Done done);
  // Binds still waiting for a slot are answered "shutting down" (reservations released); later
  // ones at once.
  void stop();

  std::size_t inFlight() const { return gate_.inFlight(); }
  std::size_t waiting() const { return gate_.waiting(); }

 private:
  struct Attempt;
  using AttemptPtr = std::shared_ptr<Attempt>;

  void lookUp(const AttemptPtr& attempt);
  void fetchPod(const AttemptPtr& attempt);
  void onPod(const AttemptPtr& attempt, PodInfo pod);
  void onSlot(const AttemptPtr& attempt, bool cancelled);
  void send(const AttemptPtr& attempt);
  void resolveFailure(const AttemptPtr& attempt, Error failure);
  void finish(const AttemptPtr& attempt, BindOutcome outcome);
  BindAbandon abandonReason(const Attempt& attempt) const;

  std::shared_ptr<kube::ApiTransport> transport_;
  std::shared_ptr<cluster::ClusterState> state_;
  const PodBinderOptions options_;
  BindGate gate_;
  std::shared_ptr<LeaderGate> leader_;
};

// The v1 Binding body: the pod's UID as a precondition (omitted when empty) and, when `gpus` is
// not empty, the annotation `annotationKey: gpus` (exposed for tests).
std::string bindingBody(const BindRequest& request, const std::string& uid,
                        const std::string& annotationKey, const std::string& gpus);

}  // namespace gte::cluster
