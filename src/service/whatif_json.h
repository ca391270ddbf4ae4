#pragma once
// The what-if answer as JSON. Field names are a stable interface (docs/api.md, "What-if"): the
// `whatif` command, the kubectl plugin and the table renderer read them, so fields are only ever
// added, never renamed.
#include <string>

#include "service/whatif.h"

namespace gte {

std::string writeWhatif(const WhatifOutcome& outcome);

}  // namespace gte
