#pragma once
// PlainAnswers for one node state, from checkFit and scoreTerms on each plain demand: the
// request loops read these instead of calling them, so the two paths agree by construction.
// Pure: no I/O, clock, locks or globals.
#include "core/node_state.h"
#include "core/plain_answers.h"
#include "policy/policy.h"

namespace gte {

// `policy` must be the one the state was built under and the requests will decide with (the
// snapshot's).
PlainAnswers precomputePlainAnswers(const NodeState& state, const Policy& policy);

}  // namespace gte
