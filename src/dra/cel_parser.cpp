#include "dra/cel_parser.h"

#include <charconv>
#include <utility>

namespace gte::dra {
namespace {

// Nesting beyond this is refused (no real selector comes close; the parser recurses).
constexpr int kMaxDepth = 256;

bool identStart(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool identChar(char c) noexcept {
  return identStart(c) || (c >= '0' && c <= '9');
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<CelSyntaxTree> run() {
    const int root = parseOr(0);
    if (root >= 0) {
      skipSpace();
      if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    }
    if (!error_.empty()) return invalidArgument(error_);
    tree_.root = root;
    return std::move(tree_);
  }

 private:
  void fail(const std::string& what) {
    if (error_.empty()) error_ = "offset " + std::to_string(pos_) + ": " + what;
  }
  bool failed() const noexcept { return !error_.empty(); }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // Consumes `token` if it comes next (after whitespace).
  bool accept(std::string_view token) {
    skipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  bool expect(std::string_view token) {
    if (accept(token)) return true;
    fail("expected '" + std::string(token) + "'");
    return false;
  }

  int add(CelSyntax node) {
    tree_.nodes.push_back(std::move(node));
    return static_cast<int>(tree_.nodes.size()) - 1;
  }

  int binary(std::string op, int left, int right) {
    CelSyntax node;
    node.kind = CelSyntax::Kind::kBinary;
    node.text = std::move(op);
    node.kids = {left, right};
    return add(std::move(node));
  }

  bool tooDeep(int depth) {
    if (depth <= kMaxDepth) return false;
    fail("nested more than " + std::to_string(kMaxDepth) + " levels");
    return true;
  }

  int parseOr(int depth) {
    if (tooDeep(depth)) return -1;
    int left = parseAnd(depth + 1);
    while (left >= 0 && accept("||")) {
      const int right = parseAnd(depth + 1);
      if (right < 0) return -1;
      left = binary("||", left, right);
    }
    skipSpace();
    if (left >= 0 && pos_ < text_.size() && text_[pos_] == '?') {
      fail("the conditional operator is outside the subset");
      return -1;
    }
    return left;
  }

  int parseAnd(int depth) {
    int left = parseRelation(depth + 1);
    while (left >= 0 && accept("&&")) {
      const int right = parseRelation(depth + 1);
      if (right < 0) return -1;
      left = binary("&&", left, right);
    }
    return left;
  }

  int parseRelation(int depth) {
    const int left = parseUnary(depth + 1);
    if (left < 0) return -1;
    skipSpace();
    for (const std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (accept(op)) {
        const int right = parseUnary(depth + 1);
        return right < 0 ? -1 : binary(std::string(op), left, right);
      }
    }
    if (text_.substr(pos_, 2) == "in" &&
        (pos_ + 2 >= text_.size() || !identChar(text_[pos_ + 2]))) {
      pos_ += 2;
      const int right = parseUnary(depth + 1);
      return right < 0 ? -1 : binary("in", left, right);
    }
    if (pos_ < text_.size() &&
        std::string_view("+-*/%").find(text_[pos_]) != std::string_view::npos) {
      fail("arithmetic is outside the subset");
      return -1;
    }
    return left;
  }

  int parseUnary(int depth) {
    if (tooDeep(depth)) return -1;
    skipSpace();
    for (const auto& [token, kind] :
         {std::pair{"!", CelSyntax::Kind::kNot}, std::pair{"-", CelSyntax::Kind::kNegate}}) {
      if (!accept(token)) continue;
      const int operand = parseUnary(depth + 1);
      if (operand < 0) return -1;
      CelSyntax node;
      node.kind = kind;
      node.kids = {operand};
      return add(std::move(node));
    }
    return parseMember(depth + 1);
  }

  // Arguments after '(' up to ')', appended to `node`'s kids.
  bool parseArguments(CelSyntax& node, int depth) {
    if (accept(")")) return true;
    do {
      const int argument = parseOr(depth + 1);
      if (argument < 0) return false;
      node.kids.push_back(argument);
    } while (accept(","));
    return expect(")");
  }

  int parseMember(int depth) {
    int current = parsePrimary(depth + 1);
    while (current >= 0) {
      if (accept(".")) {
        skipSpace();
        const std::string name = identifier();
        if (name.empty()) {
          fail("expected a field or method name");
          return -1;
        }
        CelSyntax node;
        node.text = name;
        node.kids = {current};
        if (accept("(")) {
          node.kind = CelSyntax::Kind::kCall;
          node.receiver = true;
          if (!parseArguments(node, depth)) return -1;
        } else {
          node.kind = CelSyntax::Kind::kSelect;
        }
        current = add(std::move(node));
      } else if (accept("[")) {
        const int index = parseOr(depth + 1);
        if (index < 0 || !expect("]")) return -1;
        CelSyntax node;
        node.kind = CelSyntax::Kind::kIndex;
        node.kids = {current, index};
        current = add(std::move(node));
      } else {
        break;
      }
    }
    return current;
  }

  std::string identifier() {
    const std::size_t start = pos_;
    if (pos_ < text_.size() && identStart(text_[pos_])) {
      while (pos_ < text_.size() && identChar(text_[pos_]))
        ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  int parsePrimary(int depth) {
    skipSpace();
    if (pos_ >= text_.size()) {
      fail("unexpected end of expression");
      return -1;
    }
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const int inner = parseOr(depth + 1);
      return inner >= 0 && expect(")") ? inner : -1;
    }
    if (c == '[') {
      ++pos_;
      CelSyntax node;
      node.kind = CelSyntax::Kind::kList;
      if (!accept("]")) {
        do {
          const int element = parseOr(depth + 1);
          if (element < 0) return -1;
          node.kids.push_back(element);
        } while (accept(","));
        if (!expect("]")) return -1;
      }
      return add(std::move(node));
    }
    if (c == '\'' || c == '"') return parseString();
    if (c >= '0' && c <= '9') return parseNumber();
    if (c == '{') {
      fail("map literals are outside the subset");
      return -1;
    }
    if (identStart(c)) {
      const std::string name = identifier();
      if ((name == "r" || name == "R" || name == "b" || name == "B") && pos_ < text_.size() &&
          (text_[pos_] == '\'' || text_[pos_] == '"')) {
        fail("raw and bytes literals are outside the subset");
        return -1;
      }
      CelSyntax node;
      if (name == "true" || name == "false") {
        node.kind = CelSyntax::Kind::kBool;
        node.integer = name == "true" ? 1 : 0;
        return add(std::move(node));
      }
      if (name == "null") {
        node.kind = CelSyntax::Kind::kNull;
        return add(std::move(node));
      }
      node.text = name;
      if (accept("(")) {
        node.kind = CelSyntax::Kind::kCall;
        if (!parseArguments(node, depth)) return -1;
      } else {
        node.kind = CelSyntax::Kind::kIdent;
      }
      return add(std::move(node));
    }
    fail("unexpected '" + std::string(1, c) + "'");
    return -1;
  }

  int parseString() {
    const char quote = text_[pos_];
    if (text_.substr(pos_, 3) == std::string(3, quote)) {
      fail("triple-quoted strings are outside the subset");
      return -1;
    }
    ++pos_;
    CelSyntax node;
    node.kind = CelSyntax::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\n' || c == '\r') {
        fail("a newline inside a string");
        return -1;
      }
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        const char escape = text_[pos_++];
        switch (escape) {
          case '\\':
          case '\'':
          case '"':
          case '`':
          case '?':
            c = escape;
            break;
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          default:
            fail("the string escape \\" + std::string(1, escape) + " is outside the subset");
            return -1;
        }
      }
      node.text += c;
    }
    if (pos_ >= text_.size()) {
      fail("unterminated string");
      return -1;
    }
    ++pos_;
    return add(std::move(node));
  }

  int parseNumber() {
    const std::size_t start = pos_;
    int base = 10;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      base = 16;
      pos_ += 2;
    }
    const std::size_t digits = pos_;
    while (pos_ < text_.size() && identChar(text_[pos_]))
      ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      fail("floating-point literals are outside the subset");
      return -1;
    }
    const std::string_view body = text_.substr(digits, pos_ - digits);
    CelSyntax node;
    node.kind = CelSyntax::Kind::kInt;
    const auto [end, ec] =
        std::from_chars(body.data(), body.data() + body.size(), node.integer, base);
    if (body.empty() || ec != std::errc() || end != body.data() + body.size()) {
      pos_ = start;
      fail("not a signed 64-bit integer literal (doubles and unsigned are outside the subset)");
      return -1;
    }
    return add(std::move(node));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
  CelSyntaxTree tree_;
};

}  // namespace

Result<CelSyntaxTree> parseCel(std::string_view expression) {
  return Parser(expression).run();
}

}  // namespace gte::dra
