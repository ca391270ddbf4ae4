#include "cluster/yaml_to_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <sstream>

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

// Remembers where the last document began; ignores everything else.
class DocumentStart final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { mark_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
  const YAML::Mark& mark() const { return mark_; }

 private:
  YAML::Mark mark_ = YAML::Mark::null_mark();
};

// yaml-cpp 0.7 (Debian 12's) never returns from LoadAll on a stream where a document would start
// with a token that cannot begin one (",", "[a], b", "- a\n,"): its parser reports an empty
// document there without consuming the token, again and again, allocating each time (fixed
// upstream after 0.7). fuzz_cluster_file found it. This pass reads the stream's events without
// building anything and refuses a document that starts where the previous one did.
Status documentsAdvance(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStart start;
  int previous = -1;
  while (parser.HandleNextDocument(start)) {
    if (start.mark().pos == previous) {
      return invalidArgument("YAML: error at line " + std::to_string(start.mark().line + 1) +
                             ", column " + std::to_string(start.mark().column + 1) +
                             ": no document can start here");
    }
    previous = start.mark().pos;
  }
  return Ok{};
}

}  // namespace

Result<std::vector<std::string>> yamlDocumentsToJson(std::string_view text) {
  // yaml-cpp reports errors by exception; this runs at startup only.
  try {
    const std::string yaml(text);
    if (Status advances = documentsAdvance(yaml); !advances) return std::move(advances).error();
    std::vector<std::string> out;
    for (const YAML::Node& document : YAML::LoadAll(yaml)) {
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
