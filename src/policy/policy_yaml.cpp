#include "policy/policy_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "policy/default_policy.h"

namespace gte {
namespace {

constexpr int kMaxLinkScore = 100000;  // keeps 16-GPU set sums far from int overflow
constexpr int kMaxWeight = 1000;
constexpr int kMaxScarceSetPoints = 100;  // the whole 0..100 score

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string element(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

bool isDnsSubdomain(std::string_view text) {
  if (text.empty() || text.size() > 253) {
    return false;
  }
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) {
      return false;
    }
  }
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(text.front()) && alnum(text.back());
}

// A Kubernetes label key: an optional DNS-subdomain prefix and '/', then a name of 1-63 characters
// of [A-Za-z0-9-_.] that starts and ends alphanumeric.
bool isLabelKey(std::string_view key) {
  const std::size_t slash = key.rfind('/');
  if (slash != std::string_view::npos && !isDnsSubdomain(key.substr(0, slash))) {
    return false;
  }
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (name.empty() || name.size() > 63) {
    return false;
  }
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return alnum(name.front()) && alnum(name.back());
}

// Walks the document, keeping the first error; later reads after an error are harmless no-ops so
// the code reads top to bottom without checking after every key.
class PolicyReader {
 public:
  Result<Policy> read(const YAML::Node& root) {
    Policy policy = defaultPolicy();
    if (root.IsNull()) {
      return policy;
    }
    if (!isMap(root, "policy")) {
      return *error_;
    }
    allowKeys(root, "",
              {"labelPrefix", "strategy", "linkScores", "weights", "unknownTopology", "wireScale",
               "mig", "groups", "sharing", "scarceSets", "health"});
    if (const YAML::Node n = root["labelPrefix"]) {
      readLabelPrefix(n, policy.labelPrefix);
    }
    if (const YAML::Node n = root["strategy"]) {
      readStrategy(n, "strategy", policy.defaultStrategy);
    }
    if (const YAML::Node n = root["linkScores"]) {
      readLinkScores(n, "linkScores", policy.linkScores);
    }
    if (const YAML::Node n = root["weights"]) {
      readWeights(n, "weights", policy.weights);
    }
    if (const YAML::Node n = root["unknownTopology"]) {
      if (isMap(n, "unknownTopology")) {
        allowKeys(n, "unknownTopology", {"allowMultiGpu"});
        readBool(n["allowMultiGpu"], "unknownTopology.allowMultiGpu",
                 policy.allowMultiGpuOnUnknownTopology);
      }
    }
    if (const YAML::Node n = root["wireScale"]) {
      if (isMap(n, "wireScale")) {
        allowKeys(n, "wireScale", {"linkFirst"});
        readBool(n["linkFirst"], "wireScale.linkFirst", policy.linkFirst);
      }
    }
    if (const YAML::Node n = root["mig"]) {
      readMig(n, "mig", policy);
    }
    if (const YAML::Node n = root["groups"]) {
      readGroups(n, "groups", policy.groups);
    }
    if (const YAML::Node n = root["sharing"]) {
      if (isMap(n, "sharing")) {
        allowKeys(n, "sharing", {"defaultIsolation", "placement"});
        if (const YAML::Node isolation = n["defaultIsolation"]) {
          readIsolation(isolation, "sharing.defaultIsolation", policy.sharing.defaultIsolation);
        }
        if (const YAML::Node placement = n["placement"]) {
          if (const auto text = scalar(placement, "sharing.placement")) {
            if (const auto value = sharedPlacementFromName(*text)) {
              policy.sharing.placement = *value;
            } else {
              fail("sharing.placement", "must be spread or pack");
            }
          }
        }
      }
    }
    if (const YAML::Node n = root["scarceSets"]) {
      if (isMap(n, "scarceSets")) {
        allowKeys(n, "scarceSets", {"points"});
        readInt(n["points"], "scarceSets.points", 0, kMaxScarceSetPoints, policy.scarceSets.points);
      }
    }
    if (const YAML::Node n = root["health"]) {
      readHealth(n, policy.health);
    }
    if (error_) {
      return *error_;
    }
    return policy;
  }

 private:
  void fail(const std::string& path, std::string_view message) {
    if (!error_) {
      error_ = invalidArgument((path.empty() ? std::string("policy") : path) + ": " +
                               std::string(message));
    }
  }

  void readHealth(const YAML::Node& n, HealthPolicy& out) {
    if (!isMap(n, "health")) return;
    allowKeys(n, "health", {"degradedGpus", "degradedLinks"});
    if (const YAML::Node gpus = n["degradedGpus"]) {
      if (const auto text = scalar(gpus, "health.degradedGpus")) {
        if (const auto value = degradedGpusFromName(*text)) {
          out.degradedGpus = *value;
        } else {
          fail("health.degradedGpus", "must be avoid or refuse");
        }
      }
    }
    if (const YAML::Node links = n["degradedLinks"]) {
      if (const auto text = scalar(links, "health.degradedLinks")) {
        if (const auto value = degradedLinksFromName(*text)) {
          out.degradedLinks = *value;
        } else {
          fail("health.degradedLinks", "must be avoid or ignore");
        }
      }
    }
  }

  bool isMap(const YAML::Node& node, const std::string& path) {
    if (!node.IsMap()) {
      fail(path, "must be a mapping");
      return false;
    }
    // YAML leaves a key given twice to the reader, and yaml-cpp's lookup would take the first one
    // silently: an admin who adds a key below an old one would see the old value win.
    std::vector<std::string> seen;
    for (const auto& entry : node) {
      // Every policy key is a name: a sequence or mapping as a key (`? [a, b]`) names nothing,
      // and would read as "" beside any other such key.
      if (!entry.first.IsScalar()) {
        fail(path == "policy" ? "" : path, "has a key that is a sequence or mapping, not a name");
        return false;
      }
      const std::string key = entry.first.Scalar();
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        fail(child(path == "policy" ? "" : path, key), "given twice in the same mapping");
        return false;
      }
      seen.push_back(key);
    }
    return true;
  }

  void allowKeys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<std::string_view> allowed) {
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(child(path, key), "unknown key");
      }
    }
  }

  std::optional<std::string> scalar(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      fail(path, "must be a scalar");
      return std::nullopt;
    }
    return node.Scalar();
  }

  void readInt(const YAML::Node& node, const std::string& path, int min, int max, int& out) {
    if (!node) {
      return;
    }
    const auto text = scalar(node, path);
    if (!text) {
      return;
    }
    int value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc() || ptr != end) {
      fail(path, "must be an integer");
      return;
    }
    if (value < min) {
      fail(path, "must be >= " + std::to_string(min));
      return;
    }
    if (value > max) {
      fail(path, "must be <= " + std::to_string(max));
      return;
    }
    out = value;
  }

  void readBool(const YAML::Node& node, const std::string& path, bool& out) {
    if (!node) {
      return;
    }
    const auto text = scalar(node, path);
    if (text == "true") {
      out = true;
    } else if (text == "false") {
      out = false;
    } else if (text) {
      fail(path, "must be true or false");
    }
  }

  void readString(const YAML::Node& node, const std::string& path, std::string& out) {
    if (!node) {
      fail(path, "is required");
      return;
    }
    if (const auto text = scalar(node, path)) {
      if (text->empty()) {
        fail(path, "must not be empty");
        return;
      }
      out = *text;
    }
  }

  void readLabelPrefix(const YAML::Node& node, std::string& out) {
    std::string prefix;
    readString(node, "labelPrefix", prefix);
    if (error_) {
      return;
    }
    if (prefix.back() != '/' ||
        !isDnsSubdomain(std::string_view(prefix).substr(0, prefix.size() - 1))) {
      fail("labelPrefix", "must be a DNS subdomain followed by '/', like gputopo.dev/");
      return;
    }
    out = prefix;
  }

  void readStrategy(const YAML::Node& node, const std::string& path, Strategy& out) {
    const auto text = scalar(node, path);
    if (!text) {
      return;
    }
    if (const auto strategy = strategyFromName(*text)) {
      out = *strategy;
    } else {
      fail(path, "must be binpack or spread");
    }
  }

  void readIsolation(const YAML::Node& node, const std::string& path, Isolation& out) {
    const auto text = scalar(node, path);
    if (!text) {
      return;
    }
    if (const auto isolation = isolationFromName(*text)) {
      out = *isolation;
    } else {
      fail(path, "must be exclusive or shared");
    }
  }

  void readLinkScores(const YAML::Node& node, const std::string& path, LinkScores& out) {
    if (!isMap(node, path)) {
      return;
    }
    // YAML spelling of each PCIe level, indexed like LinkScores::pcie.
    static constexpr std::array<std::string_view, kPcieLevelCount> kKeys = {
        "unknown", "sys", "node", "phb", "pxb", "pix", "sameBoard"};
    allowKeys(node, path,
              {"nvlinkPerLink", "sameBoard", "pix", "pxb", "phb", "node", "sys", "unknown"});
    readInt(node["nvlinkPerLink"], child(path, "nvlinkPerLink"), 0, kMaxLinkScore,
            out.nvlinkPerLink);
    for (std::size_t level = 0; level < kKeys.size(); ++level) {
      readInt(node[std::string(kKeys[level])], child(path, kKeys[level]), 0, kMaxLinkScore,
              out.pcie[level]);
    }
    // A closer PCIe level must never score below a farther one, or "min-link" and the score
    // would disagree about which set is better.
    for (std::size_t level = 0; level + 1 < kKeys.size(); ++level) {
      if (out.pcie[level] > out.pcie[level + 1]) {
        fail(child(path, kKeys[level]),
             "must not exceed " + child(path, kKeys[level + 1]) + " (closer links score higher)");
      }
    }
  }

  void readWeights(const YAML::Node& node, const std::string& path, ScoringWeights& out) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"linkQuality", "numaLocality", "packing", "migFit"});
    readInt(node["linkQuality"], child(path, "linkQuality"), 0, kMaxWeight, out.linkQuality);
    readInt(node["numaLocality"], child(path, "numaLocality"), 0, kMaxWeight, out.numaLocality);
    readInt(node["packing"], child(path, "packing"), 0, kMaxWeight, out.packing);
    readInt(node["migFit"], child(path, "migFit"), 0, kMaxWeight, out.migFit);
    if (out.linkQuality + out.numaLocality + out.packing == 0) {
      fail(path, "linkQuality, numaLocality and packing must not all be 0");
    }
    if (out.migFit + out.packing == 0) {
      fail(path, "migFit and packing must not both be 0");
    }
  }

  void readMig(const YAML::Node& node, const std::string& path, Policy& policy) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"dynamic", "products"});
    readBool(node["dynamic"], child(path, "dynamic"), policy.dynamicMig);
    const YAML::Node products = node["products"];
    if (!products) {
      return;
    }
    const std::string productsPath = child(path, "products");
    if (!products.IsSequence()) {
      fail(productsPath, "must be a sequence");
      return;
    }
    policy.migProducts.clear();
    for (std::size_t i = 0; i < products.size(); ++i) {
      MigProduct product;
      readProduct(products[i], element(productsPath, i), product);
      policy.migProducts.push_back(std::move(product));
    }
  }

  void readProduct(const YAML::Node& node, const std::string& path, MigProduct& out) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"name", "models", "profiles"});
    readString(node["name"], child(path, "name"), out.name);
    const YAML::Node models = node["models"];
    if (!models || !models.IsSequence() || models.size() == 0) {
      fail(child(path, "models"), "must be a non-empty sequence of model substrings");
      return;
    }
    for (std::size_t i = 0; i < models.size(); ++i) {
      std::string model;
      readString(models[i], element(child(path, "models"), i), model);
      out.models.push_back(model);
    }
    const YAML::Node profiles = node["profiles"];
    const std::string profilesPath = child(path, "profiles");
    if (!profiles || !profiles.IsSequence() || profiles.size() == 0) {
      fail(profilesPath, "must be a non-empty sequence");
      return;
    }
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      MigProfile profile;
      readProfile(profiles[i], element(profilesPath, i), profile);
      for (std::size_t j = 0; j < out.profiles.size(); ++j) {
        if (out.profiles[j].name == profile.name) {
          fail(child(element(profilesPath, i), "name"), "duplicates " + element("profiles", j));
        }
        if (out.profiles[j].code == profile.code) {
          fail(child(element(profilesPath, i), "code"), "duplicates " + element("profiles", j));
        }
      }
      out.profiles.push_back(std::move(profile));
    }
  }

  void readProfile(const YAML::Node& node, const std::string& path, MigProfile& out) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"name", "code", "slices", "starts", "maxInstances"});
    readString(node["name"], child(path, "name"), out.name);
    std::string code;
    readString(node["code"], child(path, "code"), code);
    if (!error_) {
      const bool base36 = code.size() == 1 && ((code[0] >= '0' && code[0] <= '9') ||
                                               (code[0] >= 'a' && code[0] <= 'z'));
      if (!base36) {
        fail(child(path, "code"), "must be one base-36 character (labels-v1 profile code)");
      } else {
        out.code = code[0];
      }
    }
    if (!node["slices"]) {
      fail(child(path, "slices"), "is required");
    }
    readInt(node["slices"], child(path, "slices"), 1, kMigMemorySlices, out.slices);
    if (!node["maxInstances"]) {
      fail(child(path, "maxInstances"), "is required");
    }
    readInt(node["maxInstances"], child(path, "maxInstances"), 1, kMigMemorySlices,
            out.maxInstances);
    readStarts(node["starts"], child(path, "starts"), out);
  }

  void readStarts(const YAML::Node& node, const std::string& path, MigProfile& out) {
    if (!node || !node.IsSequence() || node.size() == 0) {
      fail(path, "must be a non-empty sequence of start slices");
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      int start = -1;
      readInt(node[i], element(path, i), 0, kMigMemorySlices - 1, start);
      if (error_) {
        return;
      }
      if (start + out.slices > kMigMemorySlices) {
        fail(element(path, i), "start " + std::to_string(start) + " + " +
                                   std::to_string(out.slices) + " slices exceeds " +
                                   std::to_string(kMigMemorySlices));
        return;
      }
      if (!out.starts.empty() && start <= out.starts.back()) {
        fail(element(path, i), "starts must be strictly increasing");
        return;
      }
      out.starts.push_back(start);
    }
  }

  void readGroups(const YAML::Node& node, const std::string& path, GroupsPolicy& out) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"holdTtl", "levels", "sameModel"});
    if (const YAML::Node ttl = node["holdTtl"]) {
      readDuration(ttl, child(path, "holdTtl"), kMinHoldTtlMillis, kMaxHoldTtlMillis,
                   out.holdTtlMillis);
    }
    if (const YAML::Node sameModel = node["sameModel"]) {
      if (const auto text = scalar(sameModel, child(path, "sameModel"))) {
        const auto mode = groupLevelModeFromName(*text);
        if (mode && *mode != GroupLevelMode::kRequired) {
          out.sameModel = *mode;
        } else {
          fail(child(path, "sameModel"), "must be preferred or ignore");
        }
      }
    }
    const YAML::Node levels = node["levels"];
    if (!levels) {
      return;
    }
    const std::string levelsPath = child(path, "levels");
    if (!levels.IsSequence()) {
      fail(levelsPath, "must be a sequence");
      return;
    }
    if (levels.size() > kMaxGroupLevels) {
      fail(levelsPath, "must have at most " + std::to_string(kMaxGroupLevels) + " levels");
      return;
    }
    out.levels.clear();
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const std::string at = element(levelsPath, i);
      GroupLevel level;
      readGroupLevel(levels[i], at, level);
      for (std::size_t j = 0; j < out.levels.size(); ++j) {
        if (!error_ && out.levels[j].label == level.label) {
          fail(child(at, "label"), "duplicates " + element("levels", j));
        }
      }
      out.levels.push_back(std::move(level));
    }
  }

  void readGroupLevel(const YAML::Node& node, const std::string& path, GroupLevel& out) {
    if (!isMap(node, path)) {
      return;
    }
    allowKeys(node, path, {"label", "mode"});
    readString(node["label"], child(path, "label"), out.label);
    if (!error_ && !isLabelKey(out.label)) {
      fail(child(path, "label"),
           "must be a node-label key (optional DNS-subdomain prefix and '/', "
           "then up to 63 of [A-Za-z0-9-_.])");
    }
    std::string mode;
    readString(node["mode"], child(path, "mode"), mode);
    if (error_) {
      return;
    }
    if (const auto parsed = groupLevelModeFromName(mode)) {
      out.mode = *parsed;
    } else {
      fail(child(path, "mode"), "must be required, preferred or ignore");
    }
  }

  // A whole number with ms, s or m: "500ms", "60s", "2m".
  void readDuration(const YAML::Node& node, const std::string& path, std::int64_t min,
                    std::int64_t max, std::int64_t& outMillis) {
    const auto text = scalar(node, path);
    if (!text) {
      return;
    }
    std::int64_t value = 0;
    const char* begin = text->data();
    const char* end = begin + text->size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    const std::int64_t scale = unit == "ms" ? 1 : unit == "s" ? 1000 : unit == "m" ? 60'000 : 0;
    if (ec != std::errc() || ptr == begin || scale == 0 || value > max) {
      fail(path, "must be a duration like 500ms, 60s or 2m");
      return;
    }
    const std::int64_t millis = value * scale;
    if (millis < min || millis > max) {
      fail(path, "must be between " + std::to_string(min / 1000) + "s and " +
                     std::to_string(max / 60'000) + "m");
      return;
    }
    outMillis = millis;
  }

  static constexpr std::int64_t kMinHoldTtlMillis = 1'000;
  static constexpr std::int64_t kMaxHoldTtlMillis = 3'600'000;

  std::optional<Error> error_;
};

}  // namespace

bool isBlankPolicy(std::string_view text) {
  try {
    return YAML::Load(std::string(text)).IsNull();
  } catch (const YAML::Exception&) {
    return false;  // not blank: parsePolicyYaml reports the syntax error
  }
}

Result<Policy> parsePolicyYaml(std::string_view text) {
  YAML::Node root;
  try {
    // yaml-cpp reports syntax errors only by exception; this runs at load time, never per request.
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return invalidArgument("policy: YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                           ": " + e.msg);
  }
  try {
    return PolicyReader().read(root);
  } catch (const YAML::Exception& e) {
    return invalidArgument(std::string("policy: ") + e.what());
  }
}

}  // namespace gte
