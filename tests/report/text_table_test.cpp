// Aligned columns: each as wide as its widest cell plus two spaces, nothing trailing.
#include "report/text_table.h"

#include <catch2/catch_test_macros.hpp>

using gte::report::alignedColumns;
using gte::report::orDash;

TEST_CASE("columns align on their widest cell; no trailing spaces") {
  CHECK(alignedColumns({{"NODE", "GPUS"}, {"dgx-a100-1", "8"}, {"n", ""}}) ==
        "NODE        GPUS\n"
        "dgx-a100-1  8\n"
        "n\n");
  // Rows of different lengths: a missing cell is an empty one.
  CHECK(alignedColumns({{"", "[running]", "", "[proposed]"}, {"POD", "NODE", "GPUS", "NODE"}}) ==
        "     [running]        [proposed]\n"
        "POD  NODE       GPUS  NODE\n");
  CHECK(alignedColumns({}).empty());
  CHECK(orDash("") == "-");
  CHECK(orDash("x") == "x");
}
