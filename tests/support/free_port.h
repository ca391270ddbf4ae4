#pragma once
// A loopback TCP port that was free a moment ago, for tests that start servers (the extender, a
// fake or real API server, etcd) on ports chosen at run time.
#include <cstdint>

namespace gte::testing {

std::uint16_t freePort();

}  // namespace gte::testing
