#pragma once
// The CEL device selectors the extender evaluates itself, compiled once per expression
// (docs/dra.md, "The CEL subset"): `device.driver`, `device.attributes['<domain>'].<id>` (or
// `[...]['<id>']`), `device.capacity[...]`, `device.allowMultipleAllocations`, `has(...)` on an
// attribute or capacity, string, int, bool, list, `semver('...')` and `quantity('...')` literals,
// `==` `!=` `<` `<=` `>` `>=` `in`, `!`, `&&`, `||`, parentheses, the methods `compareTo`,
// `isGreaterThan`, `isLessThan` (versions and quantities) and `startsWith`, `endsWith`, `contains`
// (strings). Anything else does not compile: the request is then uninterpretable and passed
// through, never guessed.
//
// Evaluation follows CEL as the scheduler runs it (k8s.io/dynamic-resource-allocation/cel): a
// missing attribute is a runtime error (`has()` tests for it), `==` between different types is
// false, `&&`/`||` absorb an error when the other side decides (false && error is false), and any
// version attribute of the device that is not a semantic version fails every expression on it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "dra/slice_device.h"

namespace gte::dra {

enum class CelOutcome : std::uint8_t {  // values fit two bits (class_catalog.h packs them)
  kFalse,
  kTrue,
  kError,            // a CEL runtime error: the scheduler's allocation fails on the node
  kUninterpretable,  // valid CEL whose value the subset cannot compute here (a list attribute)
};

class CelProgram {
 public:
  // Errors say what is outside the subset: "outside the CEL subset: offset 12: arithmetic ...".
  static Result<CelProgram> compile(std::string_view expression);

  CelOutcome evaluate(const SliceDevice& device) const;
  const std::string& expression() const noexcept { return expression_; }

  struct Node;  // compiled form, defined in cel_program.cpp

 private:
  std::string expression_;
  std::shared_ptr<const std::vector<Node>> nodes_;  // shared: programs are copied into claims
  int root_ = -1;
};

}  // namespace gte::dra
