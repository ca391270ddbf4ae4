#pragma once
// Errors from reading a text capture (nvidia-smi output): the 1-based line and what is wrong, so
// `discover` can print one line "<file>:<line>: <what>". Partial captures are errors, never
// guessed.
#include <string>

#include "base/result.h"

namespace gte::agent {

inline Error captureError(int line, const std::string& what) {
  return invalidArgument(std::to_string(line) + ": " + what);
}

}  // namespace gte::agent
