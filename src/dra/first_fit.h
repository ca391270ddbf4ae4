#pragma once
// A replica of the device choice kube-scheduler 1.37's structured allocator (the incubating
// variant) makes for a pod's claims on one node: the devices in the node's device order
// (node_devices.h), claims in the pod's order, each claim's requests in order, each request's
// devices at increasing positions, a firstAvailable request taking the first alternative for which
// everything after it also succeeds, backtracking over constraints (matchAttribute,
// distinctAttribute), counters, taints and consumable capacity (a device that allows multiple
// allocations shared by every request whose capacity still fits, its counters charged once), and
// the first complete solution wins: no scoring. docs/dra.md ("The allocator replicated") lists
// each rule and where the replica stops: an attribute list, or a search beyond its step budget
// makes the outcome uninterpretable instead of a guess.
//
// One FirstFit serves one request's claims over many nodes: run() resets its scratch state, so
// the per-node cost is the search alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dra/claim_program.h"
#include "dra/class_catalog.h"
#include "dra/consumable_capacity.h"
#include "dra/node_devices.h"
#include "dra/slice_device.h"
#include "model/quantity.h"

namespace gte::dra {

enum class FirstFitStatus : std::uint8_t {
  kAllocated,        // every claim got devices: `devices` lists them
  kNoFit,            // the allocator finds no solution on this node
  kError,            // the allocator fails on this node (a CEL runtime error, All on a pool
                     // being updated, a constraint All cannot meet)
  kUninterpretable,  // beyond the replica (see above): no verdict
};

const char* firstFitStatusName(FirstFitStatus status) noexcept;

struct PickedDevice {
  std::uint16_t claim = 0;
  std::uint16_t request = 0;
  std::uint16_t alternative = 0;  // the firstAvailable subrequest; 0 for `exactly`
  std::uint32_t position = 0;     // in NodeDevices::devices
  // A share of a device that allows multiple allocations: into FirstFitResult::consumed; -1 for
  // a device taken whole.
  std::int32_t share = -1;
};

struct FirstFitResult {
  FirstFitStatus status = FirstFitStatus::kNoFit;
  std::vector<PickedDevice> devices;  // claim by claim, in the order picked
  // Per share picked: what it consumes of each of the device's capacities (device order).
  std::vector<std::vector<Quantity>> consumed;
  std::string why;  // for kError and kUninterpretable
  long steps = 0;   // allocateOne calls the search made
};

// The allocator has no budget but the Filter timeout (10 s); the replica stops here and answers
// kUninterpretable. 50,000 steps is far beyond any GPU claim on a node of 16 GPUs.
inline constexpr long kFirstFitStepBudget = 50'000;

class FirstFit {
 public:
  // `claims` (not owned) in the order the scheduler allocates them: the pod's unallocated claims
  // in spec.resourceClaims order, the extended-resource claim last.
  explicit FirstFit(std::vector<const ClaimProgram*> claims, long budget = kFirstFitStepBudget);

  // `emptied`: as if no claim held any device of the node (every device free, every counter at
  // its set's value): whether preemption could make room.
  FirstFitResult run(const NodeDevices& node, const ClassMatches& classMatches,
                     bool emptied = false);

 private:
  enum class Step : std::uint8_t { kFalse, kTrue, kExceeded, kError, kUnknown };
  struct Shape {
    const ShapeProgram* program = nullptr;
    std::vector<bool> constrained;  // per constraint of the claim: applies to this request
    int numDevices = 0;
    std::vector<std::uint32_t> allDevices;  // allocation mode All: every selectable device
    std::vector<std::int8_t> selectable;    // per position: -1 not evaluated, else a Step
  };
  struct MatchState {
    std::optional<AttributeValue> first;  // matchAttribute: the value the first device fixed
    int count = 0;
    std::vector<AttributeValue> values;  // distinctAttribute: the values taken
    // The constraint's attribute per device position, looked up once per node: -1 not yet,
    // 0 the device lacks it, 1 in `attribute`.
    std::vector<std::int8_t> known;
    std::vector<AttributeValue> attribute;
    const ResourceSlice* resolvedIn = nullptr;  // the slice `lookup` is resolved in
    SliceDevice::QualifiedLookup lookup;
  };

  Step prepare();
  Step allocateOne(int claim, int request, int sub, int k, bool inSub, std::uint32_t start);
  Step selectable(Shape& shape, std::uint32_t position);
  Step capacityFits(int claim, const Shape& shape, std::uint32_t position,
                    CapacityUse* use = nullptr);
  bool shareable(std::uint32_t position) const;
  bool capacityInUse(std::uint32_t position) const;
  Step allocateDevice(int claim, int request, int sub, std::uint32_t position, bool must);
  void deallocate(int claim, std::uint32_t position);
  bool inUse(std::uint32_t position) const;
  bool countersFit(std::uint32_t position, bool add);
  bool tainted(const Shape& shape, std::uint32_t position) const;
  const AttributeValue* attributeOf(int claim, std::size_t constraint, std::uint32_t position);
  bool addToConstraints(int claim, const Shape& shape, std::uint32_t position, std::size_t& added);
  void removeFromConstraints(int claim, const Shape& shape, std::size_t count);
  Step fail(Step step, std::string why);

  std::vector<const ClaimProgram*> claims_;
  long budget_;
  // Per node:
  const NodeDevices* node_ = nullptr;
  const ClassMatches* matches_ = nullptr;
  bool emptied_ = false;
  std::vector<std::vector<std::vector<Shape>>> shapes_;  // [claim][request][alternative]
  std::vector<std::int16_t> allocating_;                 // per position: claim, or -1
  std::vector<std::vector<Quantity>> consumed_;          // [pool][counter]
  std::vector<std::vector<MatchState>> constraints_;     // [claim][constraint]
  struct Taken {
    PickedDevice picked;
    bool countersReserved = false;
    std::vector<Quantity> consumed;  // a share's, per capacity of the device
  };
  std::vector<std::vector<Taken>> results_;  // [claim]
  // Per position: shares taken in this search, and what they consume per capacity.
  std::vector<std::int16_t> sharesTaken_;
  std::vector<std::vector<Quantity>> sharesConsumed_;
  std::string why_;
  long steps_ = 0;
};

}  // namespace gte::dra
