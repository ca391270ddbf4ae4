#include "dra/first_fit.h"

#include <algorithm>
#include <optional>
#include <span>

#include "dra/slice_device.h"

namespace gte::dra {

namespace {

bool sameValue(const AttributeValue& a, const AttributeValue& b) {
  if (a.kind != b.kind || a.kind == ValueKind::kList) return false;
  if (a.kind == ValueKind::kString || a.kind == ValueKind::kVersion) return a.text == b.text;
  return a.integer == b.integer;
}

// Whether a constraint covers devices of a request (or of one of its subrequests): it names no
// request, the request, or "request/subrequest".
bool applies(const ConstraintProgram& constraint, const RequestProgram& request,
             const ShapeProgram& shape) {
  if (constraint.requests.empty()) return true;
  const auto named = [&](const std::string& name) {
    return std::find(constraint.requests.begin(), constraint.requests.end(), name) !=
           constraint.requests.end();
  };
  return named(request.name) || (request.firstAvailable && named(shape.fullName));
}

bool tolerates(const DeviceToleration& toleration, std::string_view key, std::string_view value,
               TaintEffect effect) {
  const std::string_view effectName =
      effect == TaintEffect::kNoSchedule ? "NoSchedule" : "NoExecute";
  if (!toleration.effect.empty() && toleration.effect != effectName) return false;
  if (!toleration.key.empty() && toleration.key != key) return false;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == value;
  return toleration.op == "Exists";
}

}  // namespace

const char* firstFitStatusName(FirstFitStatus status) noexcept {
  switch (status) {
    case FirstFitStatus::kAllocated:
      return "allocated";
    case FirstFitStatus::kNoFit:
      return "no fit";
    case FirstFitStatus::kError:
      return "allocator error";
    case FirstFitStatus::kUninterpretable:
      return "uninterpretable";
  }
  return "uninterpretable";
}

FirstFit::FirstFit(std::vector<const ClaimProgram*> claims, long budget)
    : claims_(std::move(claims)), budget_(budget) {
  shapes_.resize(claims_.size());
  constraints_.resize(claims_.size());
  results_.resize(claims_.size());
  for (std::size_t c = 0; c < claims_.size(); ++c) {
    const ClaimProgram& claim = *claims_[c];
    shapes_[c].resize(claim.requests.size());
    constraints_[c].resize(claim.constraints.size());
    for (std::size_t r = 0; r < claim.requests.size(); ++r) {
      for (const ShapeProgram& program : claim.requests[r].alternatives) {
        Shape shape;
        shape.program = &program;
        for (const ConstraintProgram& constraint : claim.constraints) {
          shape.constrained.push_back(applies(constraint, claim.requests[r], program));
        }
        shapes_[c][r].push_back(std::move(shape));
      }
    }
  }
}

FirstFit::Step FirstFit::fail(Step step, std::string why) {
  if (why_.empty()) why_ = std::move(why);
  return step;
}

FirstFitResult FirstFit::run(const NodeDevices& node, const ClassMatches& classMatches,
                             bool emptied) {
  node_ = &node;
  matches_ = &classMatches;
  emptied_ = emptied;
  const std::size_t n = node.devices.size();
  allocating_.assign(n, -1);
  sharesTaken_.assign(n, 0);
  sharesConsumed_.resize(n);
  for (std::vector<Quantity>& consumed : sharesConsumed_)
    consumed.clear();
  consumed_.resize(node.pools.size());
  for (std::size_t p = 0; p < node.pools.size(); ++p) {
    consumed_[p].assign(node.pools[p].counters.size(), Quantity());
  }
  for (auto& claim : constraints_) {
    for (MatchState& state : claim) {
      state.first.reset();
      state.count = 0;
      state.values.clear();
      state.known.assign(n, -1);
      state.attribute.resize(n);
      state.resolvedIn = nullptr;
    }
  }
  for (auto& result : results_)
    result.clear();
  why_.clear();
  steps_ = 0;

  FirstFitResult out;
  Step step = node.error.empty() ? prepare() : fail(Step::kError, node.error);
  if (step == Step::kTrue) step = allocateOne(0, 0, 0, 0, false, 0);
  out.steps = steps_;
  switch (step) {
    case Step::kTrue:
      out.status = FirstFitStatus::kAllocated;
      for (std::size_t c = 0; c < results_.size(); ++c) {
        for (const Taken& taken : results_[c]) {
          PickedDevice picked = taken.picked;
          if (shareable(picked.position)) {
            picked.share = static_cast<std::int32_t>(out.consumed.size());
            out.consumed.push_back(taken.consumed);
          }
          out.devices.push_back(picked);
        }
      }
      return out;
    case Step::kFalse:
      out.status = FirstFitStatus::kNoFit;
      return out;
    case Step::kExceeded:
      // A claim whose own requests cannot stay within 32 devices: the allocator returns the error.
      out.status = FirstFitStatus::kError;
      out.why = "a claim needs more than 32 devices";
      return out;
    case Step::kError:
      out.status = FirstFitStatus::kError;
      break;
    case Step::kUnknown:
      out.status = FirstFitStatus::kUninterpretable;
      break;
  }
  out.why = why_;
  return out;
}

// Allocate()'s checks before the search: the device count of every request (All: the list of
// every selectable device, which needs every pool on the node complete and valid) and the 32
// devices a claim can hold at least.
FirstFit::Step FirstFit::prepare() {
  for (std::size_t c = 0; c < shapes_.size(); ++c) {
    std::int64_t minimum = 0;
    for (auto& alternatives : shapes_[c]) {
      std::int64_t least = kAllocationResultsMaxSize + 1;
      for (Shape& shape : alternatives) {
        shape.selectable.assign(node_->devices.size(), -1);
        shape.allDevices.clear();
        if (shape.program->mode == AllocationMode::kExactCount) {
          shape.numDevices = static_cast<int>(shape.program->count);
        } else {
          for (const NodePool& pool : node_->pools) {
            if (pool.incomplete || pool.invalid) {
              return fail(Step::kError, "request " + shape.program->fullName +
                                            " asks for all devices, but pool " + pool.driver + "/" +
                                            pool.name + " is " +
                                            (pool.incomplete ? "being updated" : "invalid"));
            }
          }
          for (std::uint32_t p = 0; p < node_->devices.size(); ++p) {
            const Step s = selectable(shape, p);
            if (s == Step::kError || s == Step::kUnknown) return s;
            if (s != Step::kTrue) continue;
            // The capacity a device has at all; what its shares hold is checked on allocation,
            // so a device too full now stays in the list and All fails, as in the allocator.
            const NodeDevice& nd = node_->devices[p];
            if (!nd.capacityPlain || !shape.program->capacityRequests.empty()) {
              const CapacityUse use = checkCapacity(*nd.slice, nd.slice->devices[nd.index],
                                                    shape.program->capacityRequests, {});
              if (use.fit == CapacityFit::kError) {
                return fail(Step::kError,
                            "claim " + claims_[c]->id + ", request " + shape.program->fullName +
                                ": checking capacity for device " +
                                std::string(nd.slice->deviceName(nd.index)) + ": " + use.why);
              }
              if (use.fit == CapacityFit::kNoFit) continue;
            }
            shape.allDevices.push_back(p);
          }
          shape.numDevices = static_cast<int>(shape.allDevices.size());
        }
        least = std::min<std::int64_t>(least, shape.numDevices);
      }
      if (least > kAllocationResultsMaxSize - minimum) {
        return fail(Step::kError, "claim " + claims_[c]->id + " needs more than 32 devices");
      }
      minimum += least;
    }
  }
  return Step::kTrue;
}

bool FirstFit::inUse(std::uint32_t position) const {
  return (!emptied_ && node_->devices[position].inUse) || allocating_[position] >= 0;
}

// Class selectors (precomputed per node), then the request's own.
FirstFit::Step FirstFit::selectable(Shape& shape, std::uint32_t position) {
  std::int8_t& cached = shape.selectable[position];
  if (cached >= 0) return static_cast<Step>(cached);
  const auto remember = [&](Step s) {
    cached = static_cast<std::int8_t>(s);
    return s;
  };
  CelOutcome outcome = matches_->at(shape.program->classIndex, position);
  const NodeDevice& nd = node_->devices[position];
  if (outcome == CelOutcome::kTrue && shape.program->selectors.empty() && nd.plain) {
    return remember(Step::kTrue);  // the common case reads nothing of the device itself
  }
  const SliceDevice device(*nd.slice, nd.index);
  for (std::size_t s = 0; s < shape.program->selectors.size() && outcome == CelOutcome::kTrue;
       ++s) {
    outcome = shape.program->selectors[s].evaluate(device);
  }
  switch (outcome) {
    case CelOutcome::kFalse:
      return remember(Step::kFalse);
    case CelOutcome::kTrue:
      break;
    case CelOutcome::kError:
      return fail(Step::kError, "a selector of request " + shape.program->fullName +
                                    " fails on device " + std::string(device.name()));
    case CelOutcome::kUninterpretable:
      return fail(Step::kUnknown, "a selector of request " + shape.program->fullName +
                                      " reads a list attribute of device " +
                                      std::string(device.name()));
  }
  return remember(Step::kTrue);
}

bool FirstFit::shareable(std::uint32_t position) const {
  const NodeDevice& nd = node_->devices[position];
  return nd.slice->devices[nd.index].allowMultipleAllocations;
}

bool FirstFit::capacityInUse(std::uint32_t position) const {
  return (!emptied_ && node_->devices[position].shares >= 0) || sharesTaken_[position] > 0;
}

// The allocator's capacity check against what the device's shares hold: those allocated before
// (unless emptied) and those this search has taken.
FirstFit::Step FirstFit::capacityFits(int claim, const Shape& shape, std::uint32_t position,
                                      CapacityUse* use) {
  const NodeDevice& nd = node_->devices[position];
  const bool allocatedShares = !emptied_ && nd.shares >= 0;
  const bool takenShares = sharesTaken_[position] > 0;
  if (nd.capacityPlain && !allocatedShares && !takenShares &&
      shape.program->capacityRequests.empty()) {
    return Step::kTrue;
  }
  std::vector<Quantity> sum;
  std::span<const Quantity> current;
  if (allocatedShares) current = node_->shareUse[static_cast<std::size_t>(nd.shares)];
  if (takenShares) {
    const std::vector<Quantity>& taken = sharesConsumed_[position];
    if (allocatedShares) {
      sum.assign(current.begin(), current.end());
      for (std::size_t i = 0; i < sum.size() && i < taken.size(); ++i)
        sum[i] += taken[i];
      current = sum;
    } else {
      current = taken;
    }
  }
  const Device& device = nd.slice->devices[nd.index];
  CapacityUse checked = checkCapacity(*nd.slice, device, shape.program->capacityRequests, current);
  switch (checked.fit) {
    case CapacityFit::kFits:
      if (use != nullptr) *use = std::move(checked);
      return Step::kTrue;
    case CapacityFit::kNoFit:
      return Step::kFalse;
    case CapacityFit::kError:
      break;
  }
  return fail(Step::kError, "claim " + claims_[static_cast<std::size_t>(claim)]->id + ", request " +
                                shape.program->fullName + ": checking capacity for device " +
                                std::string(nd.slice->deviceName(nd.index)) + ": " + checked.why);
}

bool FirstFit::countersFit(std::uint32_t position, bool add) {
  const NodeDevice& nd = node_->devices[position];
  if (nd.plain) return true;
  const ResourceSlice& slice = *nd.slice;
  const Range uses = slice.devices[nd.index].consumesCounters;
  if (uses.count == 0) return true;
  const NodePool& pool = node_->pools[nd.pool];
  std::vector<Quantity>& consumed = consumed_[nd.pool];
  for (std::uint32_t g = uses.first; g < uses.first + uses.count; ++g) {
    const CounterGroup& group = slice.counterGroups[g];
    for (std::uint32_t c = group.counters.first; c < group.counters.first + group.counters.count;
         ++c) {
      const StoredQuantity& use = slice.quantities[c];
      for (std::size_t k = 0; k < pool.counters.size(); ++k) {
        if (pool.counters[k].counterSet == slice.view(group.counterSet) &&
            pool.counters[k].name == slice.view(use.name)) {
          if (add) {
            consumed[k] += use.value;
          } else {
            consumed[k] -= use.value;
          }
        }
      }
    }
  }
  if (!add) return true;
  // Every counter of the pool, not only this device's: one already over-consumed fails them all,
  // as in the allocator.
  for (std::size_t k = 0; k < pool.counters.size(); ++k) {
    const Quantity& available = emptied_ ? pool.counters[k].total : pool.counters[k].available;
    if (available < consumed[k]) {
      countersFit(position, false);
      return false;
    }
  }
  return true;
}

bool FirstFit::tainted(const Shape& shape, std::uint32_t position) const {
  const NodeDevice& nd = node_->devices[position];
  if (nd.plain) return false;
  const ResourceSlice& slice = *nd.slice;
  const Range taints = slice.devices[nd.index].taints;
  for (std::uint32_t t = taints.first; t < taints.first + taints.count; ++t) {
    const StoredTaint& taint = slice.taints[t];
    if (taint.effect != TaintEffect::kNoSchedule && taint.effect != TaintEffect::kNoExecute) {
      continue;
    }
    const bool tolerated =
        std::any_of(shape.program->tolerations.begin(), shape.program->tolerations.end(),
                    [&](const DeviceToleration& toleration) {
                      return tolerates(toleration, slice.view(taint.key), slice.view(taint.value),
                                       taint.effect);
                    });
    if (!tolerated) return true;
  }
  return false;
}

const AttributeValue* FirstFit::attributeOf(int claim, std::size_t constraint,
                                            std::uint32_t position) {
  MatchState& state = constraints_[static_cast<std::size_t>(claim)][constraint];
  std::int8_t& known = state.known[position];
  if (known < 0) {
    const NodeDevice& nd = node_->devices[position];
    const auto value =
        SliceDevice(*nd.slice, nd.index)
            .qualifiedAttribute(
                claims_[static_cast<std::size_t>(claim)]->constraints[constraint].attribute);
    known = value ? 1 : 0;
    if (value) state.attribute[position] = *value;
  }
  return known > 0 ? &state.attribute[position] : nullptr;
}

bool FirstFit::addToConstraints(int claim, const Shape& shape, std::uint32_t position,
                                std::size_t& added) {
  const ClaimProgram& program = *claims_[static_cast<std::size_t>(claim)];
  for (added = 0; added < program.constraints.size(); ++added) {
    if (!shape.constrained[added]) continue;
    MatchState& state = constraints_[static_cast<std::size_t>(claim)][added];
    const AttributeValue* value = attributeOf(claim, added, position);
    if (value == nullptr) return false;
    if (program.constraints[added].distinct) {
      for (const AttributeValue& taken : state.values) {
        if (value->kind == ValueKind::kList || sameValue(*value, taken)) return false;
      }
      state.values.push_back(*value);
      continue;
    }
    if (state.count == 0) {
      state.first = *value;
    } else if (!sameValue(*value, *state.first)) {
      return false;
    }
    ++state.count;
  }
  return true;
}

void FirstFit::removeFromConstraints(int claim, const Shape& shape, std::size_t count) {
  const ClaimProgram& program = *claims_[static_cast<std::size_t>(claim)];
  for (std::size_t i = count; i-- > 0;) {
    if (!shape.constrained[i]) continue;
    MatchState& state = constraints_[static_cast<std::size_t>(claim)][i];
    if (program.constraints[i].distinct) {
      state.values.pop_back();
    } else {
      --state.count;
    }
  }
}

// A device that allows multiple allocations is shared, not marked in use: each share adds what
// it consumes to the device's capacities, and only the first share of a device charges its
// counters (the allocator's skipCounterCheck).
FirstFit::Step FirstFit::allocateDevice(int claim, int request, int sub, std::uint32_t position,
                                        bool must) {
  if (inUse(position)) return Step::kFalse;
  const auto c = static_cast<std::size_t>(claim);
  const auto r = static_cast<std::size_t>(request);
  const Shape& shape = shapes_[c][r][static_cast<std::size_t>(sub)];
  const bool multiple = shareable(position);
  const bool chargeCounters = !(multiple && capacityInUse(position));
  if (chargeCounters && !countersFit(position, true)) return Step::kFalse;
  const auto undoCounters = [&] {
    if (chargeCounters) countersFit(position, false);
  };
  if (tainted(shape, position)) {
    undoCounters();
    return Step::kFalse;
  }
  std::size_t added = 0;
  if (!addToConstraints(claim, shape, position, added)) {
    removeFromConstraints(claim, shape, added);
    undoCounters();
    if (must) {
      return fail(Step::kError, "claim " + claims_[c]->id + ", request " + shape.program->fullName +
                                    ": a constraint rules out a device it must take");
    }
    return Step::kFalse;
  }
  CapacityUse use;
  if (const Step fits = capacityFits(claim, shape, position, &use); fits != Step::kTrue) {
    removeFromConstraints(claim, shape, added);
    undoCounters();
    return fits;
  }
  Taken taken{PickedDevice{static_cast<std::uint16_t>(claim), static_cast<std::uint16_t>(request),
                           static_cast<std::uint16_t>(sub), position},
              chargeCounters,
              {}};
  if (multiple) {
    std::vector<Quantity>& consumed = sharesConsumed_[position];
    consumed.resize(use.consumed.size());
    for (std::size_t i = 0; i < consumed.size(); ++i)
      consumed[i] += use.consumed[i];
    ++sharesTaken_[position];
    taken.consumed = std::move(use.consumed);
  } else {
    allocating_[position] = static_cast<std::int16_t>(claim);
  }
  results_[c].push_back(std::move(taken));
  return Step::kTrue;
}

void FirstFit::deallocate(int claim, std::uint32_t position) {
  const auto c = static_cast<std::size_t>(claim);
  const Taken taken = std::move(results_[c].back());
  results_[c].pop_back();
  if (shareable(position)) {
    std::vector<Quantity>& consumed = sharesConsumed_[position];
    for (std::size_t i = 0; i < consumed.size() && i < taken.consumed.size(); ++i)
      consumed[i] -= taken.consumed[i];
    --sharesTaken_[position];
  } else {
    allocating_[position] = -1;
  }
  const Shape& shape = shapes_[c][taken.picked.request][taken.picked.alternative];
  removeFromConstraints(claim, shape, claims_[c]->constraints.size());
  if (taken.countersReserved) countersFit(position, false);
}

// allocateOne: one device of request `request` (alternative `sub` when inSub) of claim `claim`,
// the k-th, at a position from `start` on.
FirstFit::Step FirstFit::allocateOne(int claim, int request, int sub, int k, bool inSub,
                                     std::uint32_t start) {
  if (++steps_ > budget_) {
    return fail(Step::kUnknown, "the search took more than " + std::to_string(budget_) + " steps");
  }
  if (claim >= static_cast<int>(claims_.size())) return Step::kTrue;  // the first solution wins
  const auto c = static_cast<std::size_t>(claim);
  const ClaimProgram& program = *claims_[c];
  if (request >= static_cast<int>(program.requests.size())) {
    const Step next = allocateOne(claim + 1, 0, 0, 0, false, 0);
    // Another claim's size limit is no reason to try other devices for this one.
    return next == Step::kExceeded ? Step::kFalse : next;
  }
  const auto r = static_cast<std::size_t>(request);
  if (!inSub && program.requests[r].firstAvailable) {
    bool allExceeded = true;
    for (std::size_t s = 0; s < shapes_[c][r].size(); ++s) {
      const Step tried = allocateOne(claim, request, static_cast<int>(s), k, true, 0);
      if (tried == Step::kExceeded) continue;
      allExceeded = false;
      if (tried == Step::kTrue) return Step::kTrue;
      if (tried != Step::kFalse) return tried;
    }
    return allExceeded ? Step::kExceeded : Step::kFalse;
  }
  Shape& shape = shapes_[c][r][static_cast<std::size_t>(sub)];
  const bool all = shape.program->mode == AllocationMode::kAll;
  if (all && shape.allDevices.empty()) return Step::kFalse;
  if (k >= shape.numDevices) return allocateOne(claim, request + 1, 0, 0, false, 0);
  const std::int64_t remaining = shape.numDevices - k;
  const auto available = kAllocationResultsMaxSize - static_cast<std::int64_t>(results_[c].size());
  if (remaining > available) return Step::kExceeded;
  if (all) {
    const std::uint32_t position = shape.allDevices[static_cast<std::size_t>(k)];
    const Step added = allocateDevice(claim, request, sub, position, true);
    if (added != Step::kTrue) return added;
    const Step next = allocateOne(claim, request, sub, k + 1, inSub, 0);
    if (next != Step::kTrue) deallocate(claim, position);
    return next;
  }
  const auto n = static_cast<std::uint32_t>(node_->devices.size());
  for (std::uint32_t position = start; position < n; ++position) {
    if (inUse(position)) continue;
    const Step canSelect = selectable(shape, position);
    if (canSelect == Step::kFalse) continue;
    if (canSelect != Step::kTrue) return canSelect;
    const Step fits = capacityFits(claim, shape, position);
    if (fits == Step::kFalse) continue;
    if (fits != Step::kTrue) return fits;
    const Step added = allocateDevice(claim, request, sub, position, false);
    if (added == Step::kFalse) continue;
    if (added != Step::kTrue) return added;
    const Step next = allocateOne(claim, request, sub, k + 1, inSub, position + 1);
    if (next == Step::kTrue) return Step::kTrue;
    deallocate(claim, position);
    if (next != Step::kFalse) return next;
  }
  return Step::kFalse;
}

}  // namespace gte::dra
