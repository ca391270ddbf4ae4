#pragma once
// How a GPU is named outside its index: its PCI address and its NVML UUID. labels-v1 carries both
// per GPU (keys `bus` and `uuid`, docs/labels-v1.md) so that devices published by a DRA driver,
// which name GPUs by these and not by index, can be mapped to the node's topology graph
// (docs/dra.md). One parser per identity, shared by the labels codec, the node agent (NVML's
// spellings) and the DRA mapping (the driver's attribute values).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gte {

// A PCI function address packed as domain << 16 | bus << 8 | device << 3 | function. Domains
// above 0xffff (VMD) are not representable: parsePciBusId refuses them.
using PciAddress = std::uint32_t;

// "[domain:]bus:device.function" in hex, either case: "0000:18:00.0" (sysfs, the DRA standard
// attribute `resource.kubernetes.io/pciBusID`), "00000000:18:00.0" (NVML), "18:00.0" (domain 0).
// Domain up to 8 digits with a value <= 0xffff, bus 1-2 digits, device 1-2 digits <= 0x1f,
// function one digit 0-7. nullopt for anything else.
std::optional<PciAddress> parsePciBusId(std::string_view text) noexcept;

// "0000:18:00.0": the sysfs spelling, lowercase.
std::string pciBusIdText(PciAddress address);

// The labels-v1 token: 9 lowercase hex digits, domain (4) bus (2) device (2) function (1):
// 0000:18:00.0 is "000018000".
inline constexpr std::size_t kPciAddressTokenLength = 9;
std::string pciAddressToken(PciAddress address);
std::optional<PciAddress> parsePciAddressToken(std::string_view token) noexcept;

// A GPU UUID's 128 bits. NVML writes "GPU-8c5f4d9e-1b2a-4c3d-9e8f-0a1b2c3d4e5f"; labels-v1
// writes the 32 hex digits alone, lowercase.
using GpuUuid = std::array<std::uint8_t, 16>;
inline constexpr std::size_t kGpuUuidTokenLength = 32;

// Accepts an optional "GPU-" prefix, 32 hex digits in either case, dashes anywhere between
// them (NVML's 8-4-4-4-12 grouping). nullopt for anything else (a "MIG-" UUID included).
std::optional<GpuUuid> parseGpuUuid(std::string_view text) noexcept;
std::string gpuUuidToken(const GpuUuid& uuid);
// The labels-v1 token only: exactly 32 lowercase hex digits.
std::optional<GpuUuid> parseGpuUuidToken(std::string_view token) noexcept;

}  // namespace gte
