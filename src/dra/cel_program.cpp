#include "dra/cel_program.h"

#include <limits>

#include "dra/cel_parser.h"
#include "dra/semver.h"
#include "model/quantity.h"

namespace gte::dra {

struct CelProgram::Node {
  enum class Op : std::uint8_t {
    kBool,
    kInt,
    kString,
    kVersion,
    kQuantity,
    kConstError,
    kList,
    kDriver,
    kAllowMultiple,
    kAttribute,
    kCapacity,
    kHasAttribute,
    kHasCapacity,
    kNot,
    kNegate,
    kAnd,
    kOr,
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kIn,
    kCompareTo,
    kIsGreaterThan,
    kIsLessThan,
    kStartsWith,
    kEndsWith,
    kContains,
  };
  Op op = Op::kBool;
  std::int64_t integer = 0;
  std::string text;  // a string or version literal; an attribute's or capacity's domain
  std::string id;    // an attribute's or capacity's id
  Quantity quantity;
  std::vector<int> kids;
};

namespace {

using Node = CelProgram::Node;
using Op = Node::Op;
using Kind = CelSyntax::Kind;

Error outside(const std::string& what) {
  return invalidArgument("outside the CEL subset: " + what);
}

// Syntax tree -> compiled nodes.
class Compiler {
 public:
  explicit Compiler(const CelSyntaxTree& tree) : tree_(tree) {}

  Result<int> compile(int at) {
    const CelSyntax& s = tree_.nodes[static_cast<std::size_t>(at)];
    switch (s.kind) {
      case Kind::kBool:
        return leaf(Op::kBool, s.integer);
      case Kind::kInt:
        return leaf(Op::kInt, s.integer);
      case Kind::kString: {
        Node node;
        node.op = Op::kString;
        node.text = s.text;
        return add(std::move(node));
      }
      case Kind::kNull:
        return outside("null");
      case Kind::kIdent:
        return outside("the identifier '" + s.text + "' (only device.<field>)");
      case Kind::kSelect:
      case Kind::kIndex:
        return deviceField(at);
      case Kind::kCall:
        return s.receiver ? method(s) : function(s);
      case Kind::kList:
        return withKids(Op::kList, s.kids);
      case Kind::kNot:
        return withKids(Op::kNot, s.kids);
      case Kind::kNegate:
        return withKids(Op::kNegate, s.kids);
      case Kind::kBinary:
        return withKids(binaryOp(s.text), s.kids);
    }
    return outside("an unknown construct");
  }

  std::vector<Node> take() { return std::move(nodes_); }

 private:
  static Op binaryOp(const std::string& op) {
    if (op == "&&") return Op::kAnd;
    if (op == "||") return Op::kOr;
    if (op == "==") return Op::kEq;
    if (op == "!=") return Op::kNe;
    if (op == "<") return Op::kLt;
    if (op == "<=") return Op::kLe;
    if (op == ">") return Op::kGt;
    if (op == ">=") return Op::kGe;
    return Op::kIn;
  }

  int add(Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  Result<int> leaf(Op op, std::int64_t integer) {
    Node node;
    node.op = op;
    node.integer = integer;
    return add(std::move(node));
  }

  Result<int> withKids(Op op, const std::vector<int>& kids) {
    Node node;
    node.op = op;
    for (const int kid : kids) {
      const Result<int> compiled = compile(kid);
      if (!compiled.ok()) return compiled;
      node.kids.push_back(*compiled);
    }
    return add(std::move(node));
  }

  const CelSyntax& at(int index) const { return tree_.nodes[static_cast<std::size_t>(index)]; }

  bool isDevice(int index) const {
    return at(index).kind == Kind::kIdent && at(index).text == "device";
  }

  // `device.attributes['<domain>']` or `device.capacity['<domain>']`: the map's field name and
  // the domain; empty field when `index` is neither.
  std::pair<std::string, std::string> domainMap(int index) const {
    const CelSyntax& s = at(index);
    if (s.kind != Kind::kIndex) return {};
    const CelSyntax& map = at(s.kids[0]);
    const CelSyntax& key = at(s.kids[1]);
    if (map.kind != Kind::kSelect || !isDevice(map.kids[0]) || key.kind != Kind::kString) return {};
    if (map.text != "attributes" && map.text != "capacity") return {};
    return {map.text, key.text};
  }

  // A `device...` expression that names one value.
  Result<int> deviceField(int index) {
    const CelSyntax& s = at(index);
    if (s.kind == Kind::kSelect && isDevice(s.kids[0])) {
      if (s.text == "driver") return leaf(Op::kDriver, 0);
      if (s.text == "allowMultipleAllocations") return leaf(Op::kAllowMultiple, 0);
      return outside("device." + s.text + " as a value");
    }
    std::string id;
    int mapIndex = -1;
    if (s.kind == Kind::kSelect) {
      id = s.text;
      mapIndex = s.kids[0];
    } else if (at(s.kids[1]).kind == Kind::kString) {
      id = at(s.kids[1]).text;
      mapIndex = s.kids[0];
    }
    const auto [map, domain] =
        mapIndex >= 0 ? domainMap(mapIndex) : std::pair<std::string, std::string>{};
    if (map.empty())
      return outside("a selection that is not device.attributes/capacity['<domain>'].<id>");
    Node node;
    node.op = map == "attributes" ? Op::kAttribute : Op::kCapacity;
    node.text = domain;
    node.id = id;
    return add(std::move(node));
  }

  Result<int> function(const CelSyntax& s) {
    if (s.text == "has" && s.kids.size() == 1 && at(s.kids[0]).kind == Kind::kSelect) {
      const Result<int> field = deviceField(s.kids[0]);
      if (!field.ok()) return field;
      Node& node = nodes_[static_cast<std::size_t>(*field)];
      if (node.op != Op::kAttribute && node.op != Op::kCapacity) {
        return outside("has() on anything but an attribute or capacity");
      }
      node.op = node.op == Op::kAttribute ? Op::kHasAttribute : Op::kHasCapacity;
      return field;
    }
    if ((s.text == "semver" || s.text == "quantity") && s.kids.size() == 1 &&
        at(s.kids[0]).kind == Kind::kString) {
      const std::string& literal = at(s.kids[0]).text;
      Node node;
      if (s.text == "semver") {
        // A literal that is no version fails when evaluated, as the CEL function does.
        node.op = parseSemVer(literal) ? Op::kVersion : Op::kConstError;
        node.text = literal;
      } else {
        const Result<Quantity> quantity = parseQuantity(literal);
        node.op = quantity.ok() ? Op::kQuantity : Op::kConstError;
        if (quantity.ok()) node.quantity = *quantity;
      }
      return add(std::move(node));
    }
    return outside("the function " + s.text + "() with these arguments");
  }

  Result<int> method(const CelSyntax& s) {
    static constexpr std::pair<std::string_view, Op> kMethods[] = {
        {"compareTo", Op::kCompareTo},   {"isGreaterThan", Op::kIsGreaterThan},
        {"isLessThan", Op::kIsLessThan}, {"startsWith", Op::kStartsWith},
        {"endsWith", Op::kEndsWith},     {"contains", Op::kContains}};
    for (const auto& [name, op] : kMethods) {
      if (s.text == name && s.kids.size() == 2) return withKids(op, s.kids);
    }
    return outside("the method ." + s.text + "() with these arguments");
  }

  const CelSyntaxTree& tree_;
  std::vector<Node> nodes_;
};

struct Value {
  enum class Type : std::uint8_t {
    kError,
    kUnknown,
    kBool,
    kInt,
    kString,
    kVersion,
    kQuantity,
    kList
  };
  Type type = Type::kError;
  std::int64_t integer = 0;  // kBool, kInt
  std::string_view text;     // kString
  SemVer version;
  Quantity quantity;
  int list = -1;  // kList: the list node

  static Value error() { return Value{}; }
  static Value unknown() {
    Value v;
    v.type = Type::kUnknown;
    return v;
  }
  static Value boolean(bool b) {
    Value v;
    v.type = Type::kBool;
    v.integer = b ? 1 : 0;
    return v;
  }
  static Value number(std::int64_t i) {
    Value v;
    v.type = Type::kInt;
    v.integer = i;
    return v;
  }
  bool isBool(bool b) const { return type == Type::kBool && (integer != 0) == b; }
  bool failed() const { return type == Type::kError || type == Type::kUnknown; }
};

using Type = Value::Type;

// Unknown wins over error: a value the subset cannot compute must not become a verdict.
Value failure(const Value& a, const Value& b) {
  return a.type == Type::kUnknown || b.type == Type::kUnknown ? Value::unknown() : Value::error();
}

int sign(std::strong_ordering order) {
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

class Evaluator {
 public:
  Evaluator(const std::vector<Node>& nodes, const SliceDevice& device)
      : nodes_(nodes), device_(device) {}

  Value eval(int at) const {
    const Node& n = nodes_[static_cast<std::size_t>(at)];
    switch (n.op) {
      case Op::kBool:
        return Value::boolean(n.integer != 0);
      case Op::kInt:
        return Value::number(n.integer);
      case Op::kString:
        return text(n.text);
      case Op::kVersion:
        return version(n.text);
      case Op::kQuantity:
        return quantity(n.quantity);
      case Op::kConstError:
        return Value::error();
      case Op::kList: {
        Value v;
        v.type = Type::kList;
        v.list = at;
        return v;
      }
      case Op::kDriver:
        return text(device_.driver());
      case Op::kAllowMultiple:
        return Value::boolean(device_.device().allowMultipleAllocations);
      case Op::kAttribute:
        return attribute(n);
      case Op::kCapacity: {
        const Quantity* q = device_.celCapacity(n.text, n.id);
        return q == nullptr ? Value::error() : quantity(*q);
      }
      case Op::kHasAttribute:
        return Value::boolean(device_.celAttribute(n.text, n.id).has_value());
      case Op::kHasCapacity:
        return Value::boolean(device_.celCapacity(n.text, n.id) != nullptr);
      case Op::kNot: {
        const Value v = eval(n.kids[0]);
        if (v.failed()) return v;
        return v.type == Type::kBool ? Value::boolean(v.integer == 0) : Value::error();
      }
      case Op::kNegate: {
        const Value v = eval(n.kids[0]);
        if (v.failed()) return v;
        if (v.type != Type::kInt || v.integer == std::numeric_limits<std::int64_t>::min()) {
          return Value::error();
        }
        return Value::number(-v.integer);
      }
      case Op::kAnd:
        return logical(n, false);
      case Op::kOr:
        return logical(n, true);
      case Op::kEq:
      case Op::kNe: {
        const Value a = eval(n.kids[0]);
        const Value b = eval(n.kids[1]);
        if (a.failed() || b.failed()) return failure(a, b);
        const Value same = equal(a, b);
        if (same.failed()) return same;
        return Value::boolean((same.integer != 0) == (n.op == Op::kEq));
      }
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe:
        return relation(n);
      case Op::kIn:
        return in(n);
      case Op::kCompareTo:
      case Op::kIsGreaterThan:
      case Op::kIsLessThan:
        return compareMethod(n);
      case Op::kStartsWith:
      case Op::kEndsWith:
      case Op::kContains:
        return stringMethod(n);
    }
    return Value::error();
  }

 private:
  static Value text(std::string_view s) {
    Value v;
    v.type = Type::kString;
    v.text = s;
    return v;
  }
  static Value version(std::string_view s) {
    const auto parsed = parseSemVer(s);
    if (!parsed) return Value::error();
    Value v;
    v.type = Type::kVersion;
    v.version = *parsed;
    return v;
  }
  static Value quantity(const Quantity& q) {
    Value v;
    v.type = Type::kQuantity;
    v.quantity = q;
    return v;
  }

  Value attribute(const Node& n) const {
    const auto found = device_.celAttribute(n.text, n.id);
    if (!found) return Value::error();  // CEL: no such key
    switch (found->kind) {
      case ValueKind::kString:
        return text(found->text);
      case ValueKind::kInt:
        return Value::number(found->integer);
      case ValueKind::kBool:
        return Value::boolean(found->integer != 0);
      case ValueKind::kVersion:
        return version(found->text);
      case ValueKind::kList:
        return Value::unknown();
    }
    return Value::unknown();
  }

  // CEL's `&&` (decides = false) and `||` (decides = true): either side deciding decides, else
  // both must be booleans.
  Value logical(const Node& n, bool decides) const {
    const Value a = eval(n.kids[0]);
    if (a.isBool(decides)) return Value::boolean(decides);
    const Value b = eval(n.kids[1]);
    if (b.isBool(decides)) return Value::boolean(decides);
    if (a.type == Type::kBool && b.type == Type::kBool) return Value::boolean(!decides);
    if (a.failed() || b.failed()) return failure(a, b);
    return Value::error();  // a non-boolean operand: no such overload
  }

  // Heterogeneous equality is false; lists compare only inside `in`.
  static Value equal(const Value& a, const Value& b) {
    if (a.type == Type::kList || b.type == Type::kList) return Value::unknown();
    if (a.type != b.type) return Value::boolean(false);
    switch (a.type) {
      case Type::kBool:
      case Type::kInt:
        return Value::boolean(a.integer == b.integer);
      case Type::kString:
        return Value::boolean(a.text == b.text);
      case Type::kVersion:
        return Value::boolean(a.version == b.version);
      case Type::kQuantity:
        return Value::boolean(a.quantity == b.quantity);
      default:
        return Value::error();
    }
  }

  Value relation(const Node& n) const {
    const Value a = eval(n.kids[0]);
    const Value b = eval(n.kids[1]);
    if (a.failed() || b.failed()) return failure(a, b);
    if (a.type != b.type) return Value::error();
    int order = 0;
    if (a.type == Type::kInt || a.type == Type::kBool) {
      order = a.integer < b.integer ? -1 : a.integer > b.integer ? 1 : 0;
    } else if (a.type == Type::kString) {
      order = a.text.compare(b.text);
    } else {
      return Value::error();  // versions and quantities compare with methods
    }
    switch (n.op) {
      case Op::kLt:
        return Value::boolean(order < 0);
      case Op::kLe:
        return Value::boolean(order <= 0);
      case Op::kGt:
        return Value::boolean(order > 0);
      default:
        return Value::boolean(order >= 0);
    }
  }

  Value in(const Node& n) const {
    const Value needle = eval(n.kids[0]);
    const Value list = eval(n.kids[1]);
    if (needle.failed() || list.failed()) return failure(needle, list);
    if (list.type != Type::kList) return Value::error();
    for (const int element : nodes_[static_cast<std::size_t>(list.list)].kids) {
      const Value e = eval(element);
      if (e.failed()) return e;
      const Value same = equal(needle, e);
      if (same.failed()) return same;
      if (same.integer != 0) return Value::boolean(true);
    }
    return Value::boolean(false);
  }

  Value compareMethod(const Node& n) const {
    const Value a = eval(n.kids[0]);
    const Value b = eval(n.kids[1]);
    if (a.failed() || b.failed()) return failure(a, b);
    int order = 0;
    if (a.type == Type::kVersion && b.type == Type::kVersion) {
      order = sign(a.version <=> b.version);
    } else if (a.type == Type::kQuantity && b.type == Type::kQuantity) {
      order = sign(a.quantity <=> b.quantity);
    } else {
      return Value::error();
    }
    if (n.op == Op::kCompareTo) return Value::number(order);
    return Value::boolean(n.op == Op::kIsGreaterThan ? order > 0 : order < 0);
  }

  Value stringMethod(const Node& n) const {
    const Value a = eval(n.kids[0]);
    const Value b = eval(n.kids[1]);
    if (a.failed() || b.failed()) return failure(a, b);
    if (a.type != Type::kString || b.type != Type::kString) return Value::error();
    switch (n.op) {
      case Op::kStartsWith:
        return Value::boolean(a.text.starts_with(b.text));
      case Op::kEndsWith:
        return Value::boolean(a.text.ends_with(b.text));
      default:
        return Value::boolean(a.text.find(b.text) != std::string_view::npos);
    }
  }

  const std::vector<Node>& nodes_;
  const SliceDevice& device_;
};

}  // namespace

Result<CelProgram> CelProgram::compile(std::string_view expression) {
  Result<CelSyntaxTree> tree = parseCel(expression);
  if (!tree.ok()) return outside(tree.error().message);
  Compiler compiler(*tree);
  const Result<int> root = compiler.compile(tree->root);
  if (!root.ok()) return root.error();
  CelProgram program;
  program.expression_ = std::string(expression);
  program.nodes_ = std::make_shared<const std::vector<Node>>(compiler.take());
  program.root_ = *root;
  return program;
}

CelOutcome CelProgram::evaluate(const SliceDevice& device) const {
  if (device.hasMalformedVersion()) return CelOutcome::kError;
  const Value v = Evaluator(*nodes_, device).eval(root_);
  if (v.type == Type::kUnknown) return CelOutcome::kUninterpretable;
  if (v.type != Type::kBool) return CelOutcome::kError;
  return v.integer != 0 ? CelOutcome::kTrue : CelOutcome::kFalse;
}

}  // namespace gte::dra
