#include "dra/node_selector.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace gte::dra {
namespace {

std::optional<std::int64_t> integer(std::string_view text) noexcept {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Error badRequirement(const NodeSelectorRequirement& r, std::string_view why) {
  return invalidArgument("node selector requirement " + r.key + " " + r.op + ": " +
                         std::string(why));
}

bool contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// One requirement on a value that may be absent (a label) or always present (a field).
Result<bool> holds(const NodeSelectorRequirement& r, const std::string* value) {
  const std::string& op = r.op;
  if (op == "In" || op == "NotIn") {
    if (r.values.empty()) return badRequirement(r, "needs values");
    const bool in = value != nullptr && contains(r.values, *value);
    return op == "In" ? in : !in;
  }
  if (op == "Exists" || op == "DoesNotExist") {
    if (!r.values.empty()) return badRequirement(r, "takes no values");
    return (value != nullptr) == (op == "Exists");
  }
  if (op == "Gt" || op == "Lt") {
    const auto bound = r.values.size() == 1 ? integer(r.values[0]) : std::nullopt;
    if (!bound) return badRequirement(r, "needs one integer value");
    const auto actual = value != nullptr ? integer(*value) : std::nullopt;
    if (!actual) return false;
    return op == "Gt" ? *actual > *bound : *actual < *bound;
  }
  return badRequirement(r, "unknown operator");
}

Result<bool> termSelects(const NodeSelectorTerm& term, const std::string& nodeName,
                         const StringMap& labels) {
  if (term.matchExpressions.empty() && term.matchFields.empty()) return false;
  bool all = true;
  for (const NodeSelectorRequirement& r : term.matchExpressions) {
    const auto it = labels.find(r.key);
    const Result<bool> ok = holds(r, it == labels.end() ? nullptr : &it->second);
    if (!ok.ok()) return ok.error();
    all = all && *ok;
  }
  for (const NodeSelectorRequirement& r : term.matchFields) {
    if (r.key != "metadata.name") return badRequirement(r, "the only field is metadata.name");
    if ((r.op != "In" && r.op != "NotIn") || r.values.size() != 1) {
      return badRequirement(r, "a field takes In or NotIn with one value");
    }
    const Result<bool> ok = holds(r, &nodeName);
    if (!ok.ok()) return ok.error();
    all = all && *ok;
  }
  return all;
}

}  // namespace

Result<bool> selectsNode(const NodeSelector& selector, std::string_view nodeName,
                         const StringMap& labels) {
  const std::string name(nodeName);
  bool any = false;
  // Every term is checked, not only up to the first match: an invalid term is an error wherever
  // it stands, as nodeaffinity.NewNodeSelector refuses the whole selector.
  for (const NodeSelectorTerm& term : selector.terms) {
    const Result<bool> selected = termSelects(term, name, labels);
    if (!selected.ok()) return selected.error();
    any = any || *selected;
  }
  return any;
}

}  // namespace gte::dra
