#include "model/gpu_request.h"

#include <catch2/catch_test_macros.hpp>

using gte::gpuRequestFrom;
using gte::parseQuantity;
using gte::ResourceList;

TEST_CASE("GPU requests come from nvidia.com/gpu and nvidia.com/mig-<profile>") {
  ResourceList r;
  r.set("nvidia.com/gpu", *parseQuantity("4"));
  r.set("nvidia.com/mig-3g.40gb", *parseQuantity("1"));
  r.set("nvidia.com/mig-1g.10gb", *parseQuantity("2"));
  r.set("nvidia.com/mig-2g.20gb", *parseQuantity("0"));
  r.set("cpu", *parseQuantity("100m"));
  auto req = gpuRequestFrom(r);
  REQUIRE(req.ok());
  CHECK(req->gpus == 4);
  REQUIRE(req->mig.size() == 2);
  CHECK(req->mig[0] == gte::MigRequest{"1g.10gb", 2});
  CHECK(req->mig[1] == gte::MigRequest{"3g.40gb", 1});
}

TEST_CASE("Fractional or negative GPU requests are errors") {
  ResourceList r;
  r.set("nvidia.com/gpu", *parseQuantity("500m"));
  CHECK_FALSE(gpuRequestFrom(r).ok());
  ResourceList n;
  n.set("nvidia.com/gpu", *parseQuantity("-1"));
  CHECK_FALSE(gpuRequestFrom(n).ok());
}
