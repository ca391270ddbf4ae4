#include "dra/json_fields.h"

namespace gte::dra {

namespace {

Status readRequirements(json::JsonReader& r, std::string_view where,
                        std::vector<NodeSelectorRequirement>& out) {
  return forEachElement(r, where, [&](std::size_t i) -> Status {
    const std::string at = indexed(where, i);
    NodeSelectorRequirement requirement;
    Status s = forEachKey(r, at, [&](const std::string& key) -> Status {
      if (key == "key") return readStringField(r, dotted(at, key), requirement.key);
      if (key == "operator") return readStringField(r, dotted(at, key), requirement.op);
      if (key == "values") return readStringList(r, dotted(at, key), requirement.values);
      return skipField(r, at);
    });
    if (!s.ok()) return s;
    out.push_back(std::move(requirement));
    return Ok{};
  });
}

}  // namespace

Status readNodeSelector(json::JsonReader& r, std::string_view where, NodeSelector& out) {
  return forEachKey(r, where, [&](const std::string& key) -> Status {
    if (key != "nodeSelectorTerms") return skipField(r, where);
    const std::string terms = dotted(where, key);
    return forEachElement(r, terms, [&](std::size_t i) -> Status {
      const std::string at = indexed(terms, i);
      NodeSelectorTerm term;
      Status s = forEachKey(r, at, [&](const std::string& field) -> Status {
        if (field == "matchExpressions") {
          return readRequirements(r, dotted(at, field), term.matchExpressions);
        }
        if (field == "matchFields") return readRequirements(r, dotted(at, field), term.matchFields);
        return skipField(r, at);
      });
      if (!s.ok()) return s;
      out.terms.push_back(std::move(term));
      return Ok{};
    });
  });
}

Status readDeviceSelectors(json::JsonReader& r, std::string_view where,
                           std::vector<std::string>& out, bool& unknownSelector) {
  return forEachElement(r, where, [&](std::size_t i) -> Status {
    const std::string item = indexed(where, i);
    bool cel = false;
    Status s = forEachKey(r, item, [&](const std::string& key) -> Status {
      if (key != "cel" || r.peek() == json::Kind::kNull) return skipField(r, dotted(item, key));
      cel = true;
      std::string expression;
      const std::string at = dotted(item, "cel");
      Status read = forEachKey(r, at, [&](const std::string& field) -> Status {
        if (field == "expression") return readStringField(r, dotted(at, field), expression);
        return skipField(r, at);
      });
      out.push_back(std::move(expression));
      return read;
    });
    unknownSelector = unknownSelector || !cel;
    return s;
  });
}

Status readObjectMeta(json::JsonReader& r, std::string_view where, ObjectMeta& out) {
  return forEachKey(r, where, [&](const std::string& key) -> Status {
    const std::string at = dotted(where, key);
    if (key == "name") return readStringField(r, at, out.name);
    if (key == "namespace") return readStringField(r, at, out.ns);
    if (key == "uid") return readStringField(r, at, out.uid);
    if (key == "resourceVersion") return readStringField(r, at, out.resourceVersion);
    if (key == "creationTimestamp") return readStringField(r, at, out.creationTimestamp);
    if (key == "annotations") return readStringMap(r, at, out.annotations);
    if (key == "deletionTimestamp") {
      out.deleting = r.peek() != json::Kind::kNull;
      return skipField(r, at);
    }
    return skipField(r, at);
  });
}

}  // namespace gte::dra
