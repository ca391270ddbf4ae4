// PCI addresses and GPU UUIDs in every spelling the extender meets: NVML's, sysfs's (the DRA
// standard attribute), the older NVIDIA DRA driver's, and the labels-v1 tokens; anything else is
// refused, never half-read.
#include <catch2/catch_test_macros.hpp>

#include "topology/gpu_identity.h"

namespace gte {
namespace {

TEST_CASE("PCI bus ids: NVML, sysfs and short spellings are one address", "[topology][identity]") {
  const auto sysfs = parsePciBusId("0000:18:00.0");
  REQUIRE(sysfs.has_value());
  // domain 0, bus 0x18, device 0, function 0: 0x18 << 8.
  CHECK(*sysfs == 0x1800u);
  CHECK(parsePciBusId("00000000:18:00.0") == sysfs);  // NVML's 8-digit domain
  CHECK(parsePciBusId("18:00.0") == sysfs);           // no domain: domain 0
  CHECK(parsePciBusId("0000:18:0.0") == sysfs);
  // Upper case from NVML, lower case from go-nvlib: the same address.
  CHECK(parsePciBusId("0000:DB:00.0") == parsePciBusId("0000:db:00.0"));
  // domain 0x1a2b, bus 0xc4, device 0x1f, function 7: 0x1a2b << 16 | 0xc4 << 8 | 0x1f << 3 | 7.
  CHECK(parsePciBusId("1a2b:c4:1f.7") == 0x1a2bc4ffu);
  CHECK(pciBusIdText(0x1a2bc4ffu) == "1a2b:c4:1f.7");
  CHECK(pciBusIdText(*sysfs) == "0000:18:00.0");
}

TEST_CASE("PCI bus ids out of range or misspelt are refused", "[topology][identity]") {
  for (const char* bad :
       {"", "0000:18:00", "0000:18:20.0" /* device > 0x1f */, "0000:18:00.8" /* function > 7 */,
        "10000:18:00.0" /* VMD domain */, "0000:118:00.0", "0000:18:00.00", "0000:g8:00.0",
        "0000::00.0", "0000:18:00.0 ", "pci0000:18", "0000-18-00.0"}) {
    INFO(bad);
    CHECK_FALSE(parsePciBusId(bad).has_value());
  }
}

TEST_CASE("labels-v1 PCI address tokens: 9 lowercase hex digits", "[topology][identity]") {
  const PciAddress address = *parsePciBusId("0000:9a:00.0");
  CHECK(pciAddressToken(address) == "00009a000");
  CHECK(parsePciAddressToken("00009a000") == address);
  CHECK(pciAddressToken(0x1a2bc4ffu) == "1a2bc41f7");
  CHECK(parsePciAddressToken("1a2bc41f7") == 0x1a2bc4ffu);
  CHECK_FALSE(parsePciAddressToken("00009A000").has_value());  // one spelling per address
  CHECK_FALSE(parsePciAddressToken("00009a00").has_value());
  CHECK_FALSE(parsePciAddressToken("000018200").has_value());  // device 0x20
  CHECK_FALSE(parsePciAddressToken("000018008").has_value());  // function 8
}

TEST_CASE("GPU UUIDs: NVML's spelling and the 32-digit token", "[topology][identity]") {
  const auto nvml = parseGpuUuid("GPU-8c5f4d9e-1b2a-4c3d-9e8f-0a1b2c3d4e5f");
  REQUIRE(nvml.has_value());
  CHECK(gpuUuidToken(*nvml) == "8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f");
  CHECK(parseGpuUuid("8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f") == nvml);
  CHECK(parseGpuUuid("GPU-8C5F4D9E-1B2A-4C3D-9E8F-0A1B2C3D4E5F") == nvml);
  // The labels-v1 token: lowercase, no prefix, no dashes.
  CHECK(parseGpuUuidToken("8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f") == nvml);
  CHECK_FALSE(parseGpuUuidToken("8C5F4D9E1B2A4C3D9E8F0A1B2C3D4E5F").has_value());
  CHECK_FALSE(parseGpuUuidToken("GPU-8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e").has_value());
  for (const char* bad : {"", "GPU-", "GPU-dgx1v-3", "MIG-8c5f4d9e-1b2a-4c3d-9e8f-0a1b2c3d4e5f",
                          "GPU-8c5f4d9e-1b2a-4c3d-9e8f-0a1b2c3d4e5", "GPU-8c5f4d9e--1b2a-4c3d-9e8f",
                          "-8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f", "8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f-",
                          "8c5f4d9e1b2a4c3d9e8f0a1b2c3d4e5f0"}) {
    INFO(bad);
    CHECK_FALSE(parseGpuUuid(bad).has_value());
  }
}

}  // namespace
}  // namespace gte
