#include "cluster/yaml_to_json.h"

#include <yaml-cpp/yaml.h>

#include <cstddef>

#include "json/json_writer.h"

namespace gte::cluster {
namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Advances `i` past a run of digits; false if there was none.
bool skipDigits(const std::string& text, std::size_t& i) {
  const std::size_t start = i;
  while (i < text.size() && isDigit(text[i]))
    ++i;
  return i > start;
}

// JSON's number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, by hand: std::regex
// recurses per character and overflows the stack on a scalar of some 30,000 digits. YAML forms
// outside the grammar (0x1f, .inf, 1_000) stay strings.
bool isPlainNumber(const std::string& text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (i >= text.size() || !skipDigits(text, i)) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!skipDigits(text, i)) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!skipDigits(text, i)) return false;
  }
  return i == text.size();
}

void appendScalar(std::string& out, const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") {  // quoted or explicitly tagged: a string
    json::appendQuoted(out, text);
  } else if (text == "true" || text == "false") {
    out += text;
  } else if (text.empty() || text == "null" || text == "~" || text == "Null" || text == "NULL") {
    out += "null";
  } else if (isPlainNumber(text)) {
    out += text;
  } else {
    json::appendQuoted(out, text);
  }
}

void appendNode(std::string& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out += "null";
      return;
    case YAML::NodeType::Scalar:
      appendScalar(out, node);
      return;
    case YAML::NodeType::Sequence: {
      out.push_back('[');
      bool first = true;
      for (const YAML::Node& element : node) {
        if (!first) out.push_back(',');
        first = false;
        appendNode(out, element);
      }
      out.push_back(']');
      return;
    }
    case YAML::NodeType::Map: {
      out.push_back('{');
      bool first = true;
      for (const auto& entry : node) {
        if (!first) out.push_back(',');
        first = false;
        json::appendQuoted(out, entry.first.as<std::string>());
        out.push_back(':');
        appendNode(out, entry.second);
      }
      out.push_back('}');
      return;
    }
  }
}

}  // namespace

Result<std::vector<std::string>> yamlDocumentsToJson(std::string_view text) {
  // yaml-cpp reports errors by exception; this runs at startup only.
  try {
    std::vector<std::string> out;
    for (const YAML::Node& document : YAML::LoadAll(std::string(text))) {
      if (document.IsNull()) continue;  // an empty document between `---` separators
      std::string json;
      appendNode(json, document);
      out.push_back(std::move(json));
    }
    return out;
  } catch (const YAML::Exception& e) {
    return invalidArgument(std::string("YAML: ") + e.what());
  }
}

}  // namespace gte::cluster
