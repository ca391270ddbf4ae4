#include "agent/mig_listing_text.h"

#include <regex>

#include "agent/capture_error.h"

namespace gte::agent {
namespace {

// "|   0  MIG 1g.5gb          19        7          0:1     |"
const std::regex& instanceRow() {
  static const std::regex re(
      R"(^\|\s*(\d{1,4})\s+MIG\s+(\S+)\s+(\d{1,4})\s+(\d{1,4})\s+(\d{1,4}):(\d{1,4})\s*\|\s*$)");
  return re;
}

// "|   0  MIG 1g.5gb        19     7/7        4.75       No     14     0     0   |"
const std::regex& profileRow() {
  static const std::regex re(
      R"(^\|\s*(\d{1,4})\s+MIG\s+(\S+)\s+(\d{1,4})\s+(\d{1,4})/(\d{1,4})\s+[\d.]+\s+(Yes|No)\s+\d+\s+\d+\s+\d+\s*\|\s*$)");
  return re;
}

// "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1" and "GPU  0 Profile ID  5 Placement : {0}:4"
const std::regex& placementLine() {
  static const std::regex re(
      R"(^\s*GPU\s+(\d{1,4})\s+Profile\s+ID\s+(\d{1,4})\s+Placements?\s*:\s*\{((?:\s*\d\s*,)*\s*\d\s*)\}\s*:\s*(\d{1,4})\s*$)");
  return re;
}

enum class Table { kNone, kInstances, kProfiles };

int toInt(const std::ssub_match& match) {
  return std::stoi(match.str());
}

std::vector<int> startList(const std::string& text) {
  std::vector<int> starts;
  static const std::regex number(R"(\d)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it) {
    starts.push_back(std::stoi(it->str()));
  }
  return starts;
}

class ListingParser {
 public:
  explicit ListingParser(std::string_view text) : text_(text) {}

  Result<MigListing> parse() {
    std::size_t pos = 0;
    int lineNumber = 0;
    while (pos < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos), text_.size());
      std::string line(text_.substr(pos, end - pos));
      pos = end + 1;
      ++lineNumber;
      if (!line.empty() && line.back() == '\r') {
        line.pop_back();
      }
      if (auto status = parseLine(line, lineNumber); !status.ok()) {
        return status.error();
      }
    }
    if (rowOpen_) {
      return captureError(lineNumber, "table ends without its closing border (partial capture)");
    }
    return std::move(listing_);
  }

 private:
  Status parseLine(const std::string& line, int number) {
    if (line.find("GPU instances:") != std::string::npos) {
      table_ = Table::kInstances;
      return Ok{};
    }
    if (line.find("GPU instance profiles:") != std::string::npos) {
      table_ = Table::kProfiles;
      return Ok{};
    }
    if (line.rfind("+", 0) == 0) {
      rowOpen_ = false;  // a border closes the row above it
      return Ok{};
    }
    if (line.rfind("|", 0) == 0) {
      return tableLine(line, number);
    }
    if (line.find("Profile ID") != std::string::npos) {
      return placement(line, number);
    }
    return Ok{};  // blank lines, "No MIG-enabled devices found.", command echoes
  }

  Status tableLine(const std::string& line, int number) {
    // Header, "=====" and continuation lines (CE/JPEG/OFA under a profile) carry no "MIG".
    if (line.find(" MIG ") == std::string::npos) {
      return Ok{};
    }
    std::smatch m;
    if (table_ == Table::kInstances && std::regex_match(line, m, instanceRow())) {
      listing_.instances.push_back(
          {toInt(m[1]), m[2].str(), toInt(m[3]), toInt(m[4]), toInt(m[5]), toInt(m[6]), number});
      rowOpen_ = true;
      return Ok{};
    }
    if (table_ == Table::kProfiles && std::regex_match(line, m, profileRow())) {
      listing_.profiles.push_back(
          {toInt(m[1]), m[2].str(), toInt(m[3]), toInt(m[4]), toInt(m[5]), number});
      rowOpen_ = true;
      return Ok{};
    }
    return captureError(number, table_ == Table::kNone
                                    ? "MIG table row outside a 'GPU instances:' or 'GPU instance "
                                      "profiles:' table"
                                    : "unreadable MIG table row (cut short or unknown layout)");
  }

  Status placement(const std::string& line, int number) {
    std::smatch m;
    if (!std::regex_match(line, m, placementLine())) {
      return captureError(number,
                          "unreadable placement line, want 'GPU <i> Profile ID <id> "
                          "Placements: {<start>,...}:<size>'");
    }
    PlacementRow row{toInt(m[1]), toInt(m[2]), startList(m[3].str()), toInt(m[4]), number};
    if (row.starts.empty()) {
      return captureError(number, "placement line lists no start slice");
    }
    listing_.placements.push_back(std::move(row));
    return Ok{};
  }

  std::string_view text_;
  Table table_ = Table::kNone;
  bool rowOpen_ = false;
  MigListing listing_;
};

}  // namespace

Result<MigListing> parseMigListing(std::string_view text) {
  return ListingParser(text).parse();
}

}  // namespace gte::agent
