// `nvidia-smi mig -lgi`, `-lgip` and `-lgipp` text, alone or concatenated in one file.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

#include "agent/mig_listing_text.h"
#include "agent/mig_profile_code.h"
#include "agent/text_discovery.h"

namespace gte::agent {
namespace {

using Catch::Matchers::StartsWith;

const std::string kData = std::string(GTE_TEST_DATA_DIR) + "/agent/";

std::string load(const std::string& name) {
  auto text = readCaptureFile(kData + name);
  REQUIRE(text.ok());
  return *text;
}

TEST_CASE("mig -lgipp: both spellings of Placement(s) and padded profile IDs", "[agent][mig]") {
  auto listing = parseMigListing(load("a100-lgipp.txt"));
  REQUIRE(listing.ok());
  REQUIRE(listing->placements.size() == 7);
  CHECK(listing->placements[0].profileId == 19);
  CHECK(listing->placements[0].starts == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  CHECK(listing->placements[0].size == 1);
  CHECK(listing->placements[4].profileId == 9);
  CHECK(listing->placements[4].starts == std::vector<int>{0, 4});
  CHECK(listing->placements[6].profileId == 0);
  CHECK(listing->placements[6].size == 8);
}

TEST_CASE("mig -lgip: profile rows, continuation lines skipped", "[agent][mig]") {
  auto listing = parseMigListing(load("a100-lgip.txt"));
  REQUIRE(listing.ok());
  REQUIRE(listing->profiles.size() == 7);
  CHECK(listing->profiles[1].profile == "1g.5gb+me");
  CHECK(listing->profiles[1].profileId == 20);
  CHECK(listing->profiles[2].totalInstances == 4);
}

TEST_CASE("mig -lgi then -lgipp in one file", "[agent][mig]") {
  auto listing = parseMigListing(load("dgx-a100-mig.txt"));
  REQUIRE(listing.ok());
  REQUIRE(listing->instances.size() == 11);
  CHECK(listing->instances[0].profile == "2g.20gb");
  CHECK(listing->instances[0].start == 0);
  CHECK(listing->instances[0].size == 2);
  CHECK(listing->instances[3].profileId == 9);
  CHECK(listing->instances[10].gpu == 1);
  CHECK(listing->placements.size() == 14);
}

TEST_CASE("empty answers are valid", "[agent][mig]") {
  auto listing = parseMigListing("No MIG-enabled devices found.\n");
  REQUIRE(listing.ok());
  CHECK(listing->instances.empty());
}

TEST_CASE("partial MIG listings are rejected with the line", "[agent][mig]") {
  CHECK_THAT(parseMigListing(load("dgx-a100-mig-partial.txt")).error().message,
             StartsWith("11: table ends without its closing border"));
  CHECK_THAT(parseMigListing("GPU  0 Profile ID 19 Placements: {0,1,2\n").error().message,
             StartsWith("1: unreadable placement line"));
  const std::string cut =
      "| GPU instances:                |\n"
      "|   0  MIG 1g.5gb   19   7    |\n";
  CHECK_THAT(parseMigListing(cut).error().message, StartsWith("2: unreadable MIG table row"));
}

TEST_CASE("profile codes from the name and the memory slices", "[agent][mig]") {
  CHECK(profileCode("1g.10gb", 1) == '0');
  CHECK(profileCode("1g.10gb+me", 1) == '7');
  CHECK(profileCode("1g.20gb", 2) == '9');
  CHECK(profileCode("2g.20gb", 2) == '1');
  CHECK(profileCode("3g.40gb", 4) == '2');
  CHECK(profileCode("4g.40gb", 4) == '3');
  CHECK(profileCode("7g.80gb", 8) == '4');
  CHECK_FALSE(profileCode("1g.24gb+gfx", 1));
  CHECK_FALSE(profileCode("1g.10gb-me", 1));
  CHECK_FALSE(profileCode("1c.3g.20gb", 4));
  CHECK_FALSE(profileCode("3g.40gb", 3));
}

}  // namespace
}  // namespace gte::agent
