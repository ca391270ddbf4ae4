#pragma once
// The syntax of CEL expressions, parsed far enough to tell the subset the extender evaluates
// (cel_program.h) from everything else: literals, identifiers, member selection, indexing,
// function and method calls, list literals, `!`, unary `-`, relations, `in`, `&&` and `||`.
// Arithmetic, the conditional operator, maps, bytes, doubles, unsigned and raw strings are
// outside it: parsing fails with a message saying what and where, and the expression is then
// uninterpretable (never guessed).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gte::dra {

struct CelSyntax {
  enum class Kind : std::uint8_t {
    kIdent,   // text
    kString,  // text (unescaped)
    kInt,     // integer
    kBool,    // integer 0/1
    kNull,
    kSelect,  // kids[0].text
    kIndex,   // kids[0][kids[1]]
    kCall,    // text(kids...) ; a method call has `receiver` set and kids[0] is it
    kList,    // [kids...]
    kNot,     // !kids[0]
    kNegate,  // -kids[0]
    kBinary,  // kids[0] text kids[1]; text one of == != < <= > >= in && ||
  };
  Kind kind = Kind::kIdent;
  std::string text;
  std::int64_t integer = 0;
  bool receiver = false;
  std::vector<int> kids;  // indices into the tree's nodes
};

struct CelSyntaxTree {
  std::vector<CelSyntax> nodes;
  int root = -1;
};

// Errors read "offset 14: <what>".
Result<CelSyntaxTree> parseCel(std::string_view expression);

}  // namespace gte::dra
