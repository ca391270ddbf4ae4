// Policy YAML: the shipped file equals the built-in default, and every validation error names its
// key path.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "policy/policy_hash.h"
#include "policy/policy_yaml.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

std::string shippedPolicy() {
  std::ifstream in(std::string(GTE_SOURCE_DIR) + "/config/scheduler-policy.yaml");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("config/scheduler-policy.yaml is exactly the default policy", "[policy][yaml]") {
  const Result<Policy> parsed = parsePolicyYaml(shippedPolicy());
  REQUIRE(parsed.ok());
  CHECK(*parsed == defaultPolicy());
  CHECK(policyHash(*parsed) == policyHash(defaultPolicy()));
  CHECK(parsed->migProducts.size() == 6);
}

TEST_CASE("an empty document is the default policy", "[policy][yaml]") {
  const Result<Policy> parsed = parsePolicyYaml("");
  REQUIRE(parsed.ok());
  CHECK(*parsed == defaultPolicy());
}

TEST_CASE("keys override defaults and leave the rest alone", "[policy][yaml]") {
  const Result<Policy> parsed = parsePolicyYaml(R"(
labelPrefix: topo.example.com/
strategy: spread
linkScores: {nvlinkPerLink: 250}
weights: {packing: 0}
unknownTopology: {allowMultiGpu: false}
wireScale: {linkFirst: false}
mig:
  dynamic: true
  products:
    - name: A30
      models: [A30]
      profiles:
        - {name: 1g.6gb, code: "0", slices: 2, starts: [0, 2, 4, 6], maxInstances: 4}
)");
  REQUIRE(parsed.ok());
  CHECK(parsed->labelPrefix == "topo.example.com/");
  CHECK(parsed->defaultStrategy == Strategy::kSpread);
  CHECK(parsed->linkScores.nvlinkPerLink == 250);
  CHECK(parsed->linkScores.pcieScore(PcieLevel::kPix) == 50);
  CHECK(parsed->weights.packing == 0);
  CHECK(parsed->weights.linkQuality == 60);
  CHECK_FALSE(parsed->allowMultiGpuOnUnknownTopology);
  CHECK_FALSE(parsed->linkFirst);
  CHECK(parsed->dynamicMig);
  REQUIRE(parsed->migProducts.size() == 1);
  CHECK(parsed->migProducts[0].profiles[0].starts == std::vector<int>{0, 2, 4, 6});
  CHECK(policyHash(*parsed) != policyHash(defaultPolicy()));
}

TEST_CASE("validation errors name the key path", "[policy][yaml]") {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"weights: {linkQuality: -1}", "weights.linkQuality: must be >= 0"},
      {"weights: {linkQuality: 1001}", "weights.linkQuality: must be <= 1000"},
      {"weights: {packing: lots}", "weights.packing: must be an integer"},
      {"weights: {linkQuality: 0, numaLocality: 0, packing: 0}",
       "weights: linkQuality, numaLocality and packing must not all be 0"},
      {"weights: {migFit: 0, packing: 0}", "weights: migFit and packing must not both be 0"},
      {"weights: {speed: 3}", "weights.speed: unknown key"},
      {"colour: blue", "colour: unknown key"},
      {"strategy: random", "strategy: must be binpack or spread"},
      {"sharing: {defaultIsolation: private}",
       "sharing.defaultIsolation: must be exclusive or shared"},
      {"sharing: {isolation: exclusive}", "sharing.isolation: unknown key"},
      {"sharing: {placement: random}", "sharing.placement: must be spread or pack"},
      {"scarceSets: {points: 101}", "scarceSets.points: must be <= 100"},
      {"scarceSets: {points: -1}", "scarceSets.points: must be >= 0"},
      {"scarceSets: {cost: 3}", "scarceSets.cost: unknown key"},
      {"scarceSets: 8", "scarceSets: must be a mapping"},
      {"groups: {sameModel: required}", "groups.sameModel: must be preferred or ignore"},
      {"groups: {sameModel: yes}", "groups.sameModel: must be preferred or ignore"},
      {"labelPrefix: gputopo.dev", "labelPrefix: must be a DNS subdomain followed by '/'"},
      {"labelPrefix: Bad_Prefix/", "labelPrefix: must be a DNS subdomain"},
      {"linkScores: {pix: 70}", "linkScores.pix: must not exceed linkScores.sameBoard"},
      {"linkScores: {sys: -5}", "linkScores.sys: must be >= 0"},
      {"linkScores: [1, 2]", "linkScores: must be a mapping"},
      {"unknownTopology: {allowMultiGpu: maybe}",
       "unknownTopology.allowMultiGpu: must be true or false"},
      {"wireScale: {linkFirst: perhaps}", "wireScale.linkFirst: must be true or false"},
      {"mig: {dynamic: yes please}", "mig.dynamic: must be true or false"},
      {"mig: {products: {}}", "mig.products: must be a sequence"},
      {"mig: {products: [{name: X, models: [X]}]}",
       "mig.products[0].profiles: must be a non-empty"},
      {"mig: {products: [{name: X, profiles: []}]}", "mig.products[0].models: must be a non-empty"},
      {"mig: {products: [{name: X, models: [X], profiles: [{name: 3g, code: \"2\", slices: 4, "
       "starts: [0, 5], maxInstances: 2}]}]}",
       "mig.products[0].profiles[0].starts[1]: start 5 + 4 slices exceeds 8"},
      {"mig: {products: [{name: X, models: [X], profiles: [{name: 3g, code: \"22\", slices: 4, "
       "starts: [0], maxInstances: 1}]}]}",
       "mig.products[0].profiles[0].code: must be one base-36 character"},
      {"mig: {products: [{name: X, models: [X], profiles: [{name: a, code: \"0\", slices: 1, "
       "starts: [0], maxInstances: 1}, {name: b, code: \"0\", slices: 1, starts: [1], "
       "maxInstances: 1}]}]}",
       "mig.products[0].profiles[1].code: duplicates profiles[0]"},
      {"mig: {products: [{name: X, models: [X], profiles: [{name: a, code: \"0\", starts: [0], "
       "maxInstances: 1}]}]}",
       "mig.products[0].profiles[0].slices: is required"},
      {"mig: {products: [{name: X, models: [X], profiles: [{name: a, code: \"0\", slices: 1, "
       "starts: [2, 1], maxInstances: 1}]}]}",
       "mig.products[0].profiles[0].starts[1]: starts must be strictly increasing"},
      {"groups: {holdTtl: 0s}", "groups.holdTtl: must be between 1s and 60m"},
      {"groups: {holdTtl: 2h}", "groups.holdTtl: must be a duration like 500ms, 60s or 2m"},
      {"groups: {holdTtl: 61m}", "groups.holdTtl: must be between 1s and 60m"},
      {"groups: {holdTtl: soon}", "groups.holdTtl: must be a duration"},
      {"groups: {levels: {}}", "groups.levels: must be a sequence"},
      {"groups: {levels: [{label: a, mode: required}, {label: b, mode: preferred}, {label: c, "
       "mode: preferred}, {label: d, mode: preferred}, {label: e, mode: preferred}]}",
       "groups.levels: must have at most 4 levels"},
      {"groups: {levels: [{label: 'bad key!', mode: required}]}",
       "groups.levels[0].label: must be a node-label key"},
      {"groups: {levels: [{label: rack, mode: strict}]}",
       "groups.levels[0].mode: must be required, preferred or ignore"},
      {"groups: {levels: [{mode: required}]}", "groups.levels[0].label: is required"},
      {"groups: {levels: [{label: rack, mode: required}, {label: rack, mode: preferred}]}",
       "groups.levels[1].label: duplicates levels[0]"},
      {"groups: {levels: [{label: rack, mode: required, weight: 3}]}",
       "groups.levels[0].weight: unknown key"},
      {"groups: {ttl: 5s}", "groups.ttl: unknown key"},
      {"weights: [", "YAML syntax error at line"},
      {"- 1\n- 2", "policy: must be a mapping"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    const Result<Policy> parsed = parsePolicyYaml(c.yaml);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(parsed.error().message, ContainsSubstring(c.message));
  }
}

TEST_CASE("the sharing section sets the isolation of pods without the annotation",
          "[policy][yaml]") {
  const Result<Policy> parsed = parsePolicyYaml("sharing: {defaultIsolation: exclusive}");
  REQUIRE(parsed.ok());
  CHECK(parsed->sharing.defaultIsolation == Isolation::kExclusive);
  CHECK(policyHash(*parsed) != policyHash(defaultPolicy()));
  // The default is today's behaviour: any GPU, shared or not; written out, it hashes as omitted.
  CHECK(defaultPolicy().sharing.defaultIsolation == Isolation::kShared);
  const Result<Policy> shared = parsePolicyYaml("sharing: {defaultIsolation: shared}");
  REQUIRE(shared.ok());
  CHECK(policyHash(*shared) == policyHash(defaultPolicy()));
  const Result<Policy> pack = parsePolicyYaml("sharing: {placement: pack}");
  REQUIRE(pack.ok());
  CHECK(pack->sharing.placement == SharedPlacement::kPack);
  CHECK(policyHash(*pack) != policyHash(defaultPolicy()));
}

TEST_CASE("groups.sameModel keeps or relaxes one GPU model per group", "[policy][yaml]") {
  CHECK(defaultPolicy().groups.sameModel == GroupLevelMode::kPreferred);
  const Result<Policy> ignore = parsePolicyYaml("groups: {sameModel: ignore}");
  REQUIRE(ignore.ok());
  CHECK(ignore->groups.sameModel == GroupLevelMode::kIgnored);
  CHECK(ignore->groups.levels == defaultPolicy().groups.levels);  // the other keys untouched
  CHECK(policyHash(*ignore) != policyHash(defaultPolicy()));
  const Result<Policy> same = parsePolicyYaml("groups: {sameModel: preferred}");
  REQUIRE(same.ok());
  CHECK(policyHash(*same) == policyHash(defaultPolicy()));
}

TEST_CASE("scarceSets.points sets what breaking the last set costs", "[policy][yaml]") {
  CHECK(defaultPolicy().scarceSets.points == 8);
  const Result<Policy> off = parsePolicyYaml("scarceSets: {points: 0}");
  REQUIRE(off.ok());
  CHECK(off->scarceSets.points == 0);
  CHECK(policyHash(*off) != policyHash(defaultPolicy()));
  // Written out at its default it hashes as omitted: hashes taken before the key existed stay.
  const Result<Policy> same = parsePolicyYaml("scarceSets: {points: 8}");
  REQUIRE(same.ok());
  CHECK(policyHash(*same) == policyHash(defaultPolicy()));
}

TEST_CASE("the health section refuses degraded GPUs or ignores degraded links", "[policy][yaml]") {
  CHECK(defaultPolicy().health.degradedGpus == DegradedGpus::kAvoid);
  CHECK(defaultPolicy().health.degradedLinks == DegradedLinks::kAvoid);
  const Result<Policy> strict = parsePolicyYaml("health: {degradedGpus: refuse}");
  REQUIRE(strict.ok());
  CHECK(strict->health.degradedGpus == DegradedGpus::kRefuse);
  CHECK(strict->health.degradedLinks == DegradedLinks::kAvoid);
  CHECK(policyHash(*strict) != policyHash(defaultPolicy()));
  const Result<Policy> lax = parsePolicyYaml("health: {degradedLinks: ignore}");
  REQUIRE(lax.ok());
  CHECK(lax->health.degradedLinks == DegradedLinks::kIgnore);
  CHECK(policyHash(*lax) != policyHash(*strict));
  // Written out at their defaults they hash as omitted.
  const Result<Policy> same =
      parsePolicyYaml("health: {degradedGpus: avoid, degradedLinks: avoid}");
  REQUIRE(same.ok());
  CHECK(policyHash(*same) == policyHash(defaultPolicy()));
  for (const auto& [yaml, says] : std::vector<std::pair<std::string, std::string>>{
           {"health: {degradedGpus: never}", "health.degradedGpus: must be avoid or refuse"},
           {"health: {degradedLinks: [avoid]}", "health.degradedLinks: must be a scalar"},
           {"health: {failedGpus: refuse}", "health.failedGpus: unknown key"},
           {"health: avoid", "health: must be a mapping"}}) {
    INFO(yaml);
    const Result<Policy> bad = parsePolicyYaml(yaml);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find(says) != std::string::npos);
  }
}

TEST_CASE("the groups section sets the hold time and replaces the levels", "[policy][yaml]") {
  const Result<Policy> parsed = parsePolicyYaml(R"(
groups:
  holdTtl: 90s
  levels:
    - {label: cloud.example.com/rack, mode: required}
    - {label: cloud.example.com/block, mode: ignore}
)");
  REQUIRE(parsed.ok());
  CHECK(parsed->groups.holdTtlMillis == 90'000);
  REQUIRE(parsed->groups.levels.size() == 2);
  CHECK(parsed->groups.levels[0] ==
        GroupLevel{"cloud.example.com/rack", GroupLevelMode::kRequired});
  CHECK(parsed->groups.levels[1].mode == GroupLevelMode::kIgnored);
  CHECK(policyHash(*parsed) != policyHash(defaultPolicy()));
  // No levels at all: groups are placed by per-node GPU sets alone.
  const Result<Policy> none = parsePolicyYaml("groups: {holdTtl: 1500ms, levels: []}");
  REQUIRE(none.ok());
  CHECK(none->groups.holdTtlMillis == 1500);
  CHECK(none->groups.levels.empty());
  // 2m = 120,000 ms.
  const Result<Policy> minutes = parsePolicyYaml("groups: {holdTtl: 2m}");
  REQUIRE(minutes.ok());
  CHECK(minutes->groups.holdTtlMillis == 120'000);
  CHECK(minutes->groups.levels == defaultPolicy().groups.levels);
}

TEST_CASE("the policy hash is stable and content-based", "[policy][hash]") {
  const std::string a = policyHash(defaultPolicy());
  CHECK(a.size() == 16);
  CHECK(a == policyHash(defaultPolicy()));
  // Spelling differences that do not change the policy do not change the hash.
  const Result<Policy> spelled = parsePolicyYaml("# only a comment\nweights: {linkQuality: 60}\n");
  REQUIRE(spelled.ok());
  CHECK(policyHash(*spelled) == a);
  Policy changed = defaultPolicy();
  changed.migProducts[0].profiles[0].maxInstances = 6;
  CHECK(policyHash(changed) != a);
}

// YAML leaves duplicate keys to the reader; yaml-cpp's lookup takes the first one, so an admin who
// appended a key below an older one saw the older value win, silently.
TEST_CASE("a key given twice in one mapping is an error naming it", "[policy][yaml]") {
  const Result<Policy> top = parsePolicyYaml("strategy: spread\nstrategy: binpack\n");
  REQUIRE_FALSE(top.ok());
  CHECK(top.error().message.find("strategy: given twice in the same mapping") != std::string::npos);
  const Result<Policy> nested =
      parsePolicyYaml("weights:\n  packing: 10\n  linkQuality: 5\n  packing: 900\n");
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.error().message.find("weights.packing: given twice in the same mapping") !=
        std::string::npos);
  CHECK(parsePolicyYaml("weights: {packing: 10, linkQuality: 5}\n").ok());
  // A key that is no name is refused as that, not as an unknown or repeated key.
  const Result<Policy> complex = parsePolicyYaml("weights:\n  ? [packing, linkQuality]\n  : 10\n");
  REQUIRE_FALSE(complex.ok());
  CHECK(complex.error().message.find(
            "weights: has a key that is a sequence or mapping, not a name") != std::string::npos);
}

TEST_CASE("a document of nothing, whitespace or comments is blank; {} is not", "[policy][yaml]") {
  CHECK(isBlankPolicy(""));
  CHECK(isBlankPolicy("\n  \n"));
  CHECK(isBlankPolicy("# every key commented out\n# strategy: spread\n"));
  CHECK_FALSE(isBlankPolicy("{}"));
  CHECK_FALSE(isBlankPolicy("strategy: spread\n"));
  CHECK_FALSE(isBlankPolicy("strategy: [\n"));  // a syntax error is reported by the parser
}

}  // namespace
}  // namespace gte
