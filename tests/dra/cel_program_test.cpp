// The CEL subset, evaluated on a device of the NVIDIA-shaped H100 slice (gpu-1: NUMA node 1,
// driver 570.124.6, compute capability 9.0.0, 81559Mi of memory) with CEL's own rules: a missing
// attribute is an error, `&&`/`||` absorb an error when the other side decides, `==` across types
// is false. Expressions outside the subset do not compile, and say why.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "dra/cel_program.h"
#include "dra/resource_slice_json.h"
#include "dra/semver.h"
#include "support/dra_fixtures.h"

namespace gte::dra {
namespace {

using Catch::Matchers::ContainsSubstring;

struct Case {
  const char* expression;
  CelOutcome outcome;
};

TEST_CASE("CEL subset on an H100 device", "[dra][cel]") {
  const auto slice = testing::draSlice("hgx-h100-slice.json");
  const SliceDevice device(*slice, 0);
  constexpr auto T = CelOutcome::kTrue;
  constexpr auto F = CelOutcome::kFalse;
  constexpr auto E = CelOutcome::kError;
  const std::vector<Case> cases = {
      // The NVIDIA chart's classes.
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", T},
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", F},
      // Another driver's class never reads our attributes: false && error is false.
      {"device.driver == 'compute-domain.nvidia.com' && "
       "device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
       F},
      {"device.attributes['compute-domain.nvidia.com'].type == 'daemon' && device.driver == 'x'",
       F},
      // A missing attribute on its own is an error; has() asks without failing.
      {"device.attributes['gpu.nvidia.com'].partition8 == 3", E},
      {"has(device.attributes['gpu.nvidia.com'].partition8)", F},
      {"has(device.attributes['gpu.nvidia.com'].uuid)", T},
      {"!has(device.attributes['gpu.nvidia.com'].partition8) || "
       "device.attributes['gpu.nvidia.com'].partition8 == 1",
       T},
      {"true || device.attributes['x'].y", T},
      {"device.attributes['x'].y || false", E},
      // Index forms, standard attributes, ints and relations.
      {"device.attributes['resource.kubernetes.io']['numaNode'] == 1", T},
      {"device.attributes[\"resource.kubernetes.io\"].numaNode >= 1 && "
       "device.attributes['resource.kubernetes.io'].numaNode < 2",
       T},
      {"device.attributes['resource.kubernetes.io'].numaNode != 0", T},
      {"device.attributes['resource.kubernetes.io'].numaNode == -1", F},
      {"device.attributes['resource.kubernetes.io'].pcieRoot in ['pci0000:a8', 'pci0000:b9']", T},
      {"device.attributes['resource.kubernetes.io'].pcieRoot in ['pci0000:15']", F},
      // Heterogeneous equality is false; ordering across types is an error.
      {"device.attributes['resource.kubernetes.io'].numaNode == '1'", F},
      {"device.attributes['resource.kubernetes.io'].numaNode < 'a'", E},
      // Strings.
      {"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')", T},
      {"device.attributes['gpu.nvidia.com'].productName.endsWith('HBM3')", T},
      {"device.attributes['gpu.nvidia.com'].productName.contains('A100')", F},
      {"device.attributes['gpu.nvidia.com'].productName < 'O'", T},
      // Versions: semver literals and methods; a version is not its string.
      {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('565.0.0'))", T},
      {"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('570.124.6')) == 0", T},
      {"device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('9.0.0-rc.1'))",
       F},
      {"device.attributes['gpu.nvidia.com'].driverVersion == semver('570.124.6')", T},
      {"device.attributes['gpu.nvidia.com'].driverVersion == '570.124.6'", F},
      {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('not-a-version'))",
       E},
      // Capacity: quantities compare with methods.
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) < 0", T},
      {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))", T},
      {"device.capacity['gpu.nvidia.com'].memory == quantity('81559Mi')", T},
      {"has(device.capacity['gpu.nvidia.com'].memory)", T},
      {"device.capacity['gpu.nvidia.com'].cores.isGreaterThan(quantity('1'))", E},
      // Negation, grouping, the other device fields.
      {"!(device.driver == 'gpu.nvidia.com')", F},
      {"!device.allowMultipleAllocations", T},
      {"(device.driver == 'a' || device.driver == 'gpu.nvidia.com') && !false", T},
      // A selector that is not a boolean is an error.
      {"device.driver", E},
      {"device.attributes['resource.kubernetes.io'].numaNode", E},
  };
  for (const Case& c : cases) {
    INFO(c.expression);
    const auto program = CelProgram::compile(c.expression);
    REQUIRE(program.ok());
    CHECK(program->evaluate(device) == c.outcome);
  }
}

TEST_CASE("expressions outside the subset do not compile, and say what", "[dra][cel]") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"device.attributes['a'].b + 1 > 2", "arithmetic"},
      {"device.driver == 'a' ? true : false", "conditional"},
      {"device.attributes['gpu.nvidia.com'].productName.matches('H1.*')", "the method .matches()"},
      {"cel.bind(d, device.attributes['a'], d.b == 1)", "the method .bind()"},
      {"device.attributes.exists(d, d == 'a')", "the method .exists()"},
      {"size(device.attributes['a']) > 0", "the function size()"},
      {"device.attributes['a'] == {}", "map literals"},
      {"device.attributes['a'].b == 1.5", "floating-point"},
      {"device.attributes['a'].b == 1u", "not a signed 64-bit integer"},
      {"device.attributes['a'].b == b'x'", "raw and bytes"},
      {"device.attributes['a'].b == '\\u00e9'", "the string escape \\u"},
      {"device.attributes['a'].b == null", "null"},
      {"other.driver == 'a'", "not device.attributes/capacity"},
      {"other == 'a'", "the identifier 'other'"},
      {"device.attributes['a'] == 'x'", "not device.attributes/capacity"},
      {"has(device.attributes['a'])", "the function has() with these arguments"},
      {"device.name == 'gpu-0'", "device.name as a value"},
      {"device.driver == 'a' &&", "unexpected end"},
      {"device.driver == 'a", "unterminated string"},
      {"(device.driver == 'a'", "expected ')'"},
      {"device.driver == 'a' & true", "unexpected '&'"},
  };
  for (const auto& [expression, why] : cases) {
    INFO(expression);
    const auto program = CelProgram::compile(expression);
    REQUIRE_FALSE(program.ok());
    CHECK_THAT(program.error().message, ContainsSubstring("outside the CEL subset"));
    CHECK_THAT(program.error().message, ContainsSubstring(why));
  }
}

TEST_CASE("deep nesting is refused, not a stack overflow", "[dra][cel]") {
  const std::string deep = std::string(5000, '(') + "true" + std::string(5000, ')');
  const auto program = CelProgram::compile(deep);
  REQUIRE_FALSE(program.ok());
  CHECK_THAT(program.error().message, ContainsSubstring("nested more than"));
  const std::string nots = std::string(5000, '!') + "true";
  CHECK_FALSE(CelProgram::compile(nots).ok());
}

TEST_CASE("a device with a version attribute that is no version fails every expression",
          "[dra][cel]") {
  const auto slice = parseResourceSliceJson(
      R"({"metadata":{"name":"s"},"spec":{"driver":"d","nodeName":"n","pool":{"name":"n"},)"
      R"("devices":[{"name":"x","attributes":{"v":{"version":"1.2"},"t":{"string":"a"}}}]}})");
  REQUIRE(slice.ok());
  const auto program = CelProgram::compile("device.driver == 'd'");
  REQUIRE(program.ok());
  // CEL builds every attribute before evaluating, and "1.2" is no semantic version.
  CHECK(program->evaluate(SliceDevice(**slice, 0)) == CelOutcome::kError);
}

TEST_CASE("semantic version precedence", "[dra][cel][semver]") {
  const auto v = [](const char* text) { return parseSemVer(text).value(); };
  CHECK(v("1.0.0-alpha") < v("1.0.0-alpha.1"));
  CHECK(v("1.0.0-alpha.1") < v("1.0.0-alpha.beta"));
  CHECK(v("1.0.0-alpha.beta") < v("1.0.0-beta"));
  CHECK(v("1.0.0-beta.2") < v("1.0.0-beta.11"));
  CHECK(v("1.0.0-rc.1") < v("1.0.0"));
  CHECK(v("1.0.0+build.5") == v("1.0.0"));
  CHECK(v("570.124.6") > v("565.57.1"));
  for (const char* bad : {"1.2", "v1.2.3", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "1..3"}) {
    INFO(bad);
    CHECK_FALSE(parseSemVer(bad).has_value());
  }
}

}  // namespace
}  // namespace gte::dra
