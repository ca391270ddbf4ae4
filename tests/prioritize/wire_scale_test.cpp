// The wire scale over one request's candidates: best link class first with a gap of two steps,
// min-max inside it, equal nodes equal, order kept.
#include <catch2/catch_test_macros.hpp>
#include <vector>

#include "prioritize/wire_scale.h"

using namespace gte;

namespace {

RankedScore fits(int linkQuality, int score) {
  return RankedScore{true, linkQuality, score};
}

}  // namespace

TEST_CASE("one link class: the lowest score maps to 0, the highest to 10, linearly") {
  const std::vector<RankedScore> c = {fits(1200, 76), fits(1200, 88), fits(1200, 82),
                                      fits(1200, 86)};
  CHECK(wireScores(c) == std::vector<int>{0, 10, 5, 8});
}

TEST_CASE("a weaker link class gets 0, the best class 2..10, whatever the packing says") {
  // The 2xT4 node scores 90 on packing, the HGX nodes 77 and 85 (the example): the PCIe
  // pair can no longer win.
  const std::vector<RankedScore> c = {fits(1000, 90), fits(1200, 77), fits(1200, 85)};
  CHECK(wireScores(c) == std::vector<int>{0, 2, 10});
}

TEST_CASE("equal nodes stay equal and a higher score never gets a lower wire score") {
  const std::vector<RankedScore> c = {fits(1200, 80), fits(1200, 80), fits(1200, 81),
                                      fits(1200, 93), fits(1200, 92)};
  const std::vector<int> wire = wireScores(c);
  CHECK(wire[0] == wire[1]);
  for (std::size_t i = 0; i < c.size(); ++i) {
    for (std::size_t j = 0; j < c.size(); ++j) {
      if (c[i].score > c[j].score) {
        CHECK(wire[i] >= wire[j]);
      }
    }
  }
  CHECK(wire[0] == 0);
  CHECK(wire[3] == 10);
}

TEST_CASE("a single candidate or identical candidates get 10; non-fitting ones 0") {
  CHECK(wireScores(std::vector<RankedScore>{fits(600, 40)}) == std::vector<int>{10});
  const std::vector<RankedScore> c = {fits(-1, 70), RankedScore{}, fits(-1, 70)};
  CHECK(wireScores(c) == std::vector<int>{10, 0, 10});
  CHECK(wireScores(std::vector<RankedScore>{RankedScore{}}) == std::vector<int>{0});
}

TEST_CASE("linkFirst off: one min-max over every fitting candidate's score") {
  // The PCIe node's higher score wins: the weights, not the link class, decide.
  const std::vector<RankedScore> c = {fits(1000, 90), fits(1200, 77), fits(1200, 85),
                                      RankedScore{}};
  CHECK(wireScores(c, false) == std::vector<int>{10, 0, 6, 0});
}
