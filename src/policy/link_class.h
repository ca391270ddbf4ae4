#pragma once
// The vocabulary of GPU-to-GPU links, shared by the policy (which scores them), the topology
// reader (which decodes them from labels) and pod annotations (which set a floor on them).
#include <cstdint>
#include <optional>
#include <string_view>

namespace gte {

// PCIe common ancestor of two GPUs (labels-v1 `pci`), ordered worst to best so that comparisons
// read naturally: a larger value is a closer pair.
enum class PcieLevel : std::uint8_t {
  kUnknown = 0,  // `U`
  kSys,          // `S`: across the SMP interconnect between NUMA nodes
  kNode,         // `N`: across host bridges inside one NUMA node
  kPhb,          // `H`: through one host bridge
  kPxb,          // `Q`: several PCIe switches, no host bridge
  kPix,          // `P`: one PCIe switch
  kSameBoard,    // `O`: two GPUs on one board
};
inline constexpr int kPcieLevelCount = 7;

// The class of a pair as a whole: NVLink when any NVLink joins it, else its PCIe level. This is
// what `<prefix>min-link` names and what "weakest link of a set" ranks.
enum class LinkClass : std::uint8_t {
  kUnknown = 0,
  kSys,
  kNode,
  kPhb,
  kPxb,
  kPix,
  kSameBoard,
  kNvlink,
};
inline constexpr int kLinkClassCount = 8;

constexpr LinkClass linkClassOf(PcieLevel level) noexcept {
  return static_cast<LinkClass>(static_cast<std::uint8_t>(level));
}

// Label character of a PCIe level (`O P Q H N S U`), and back. nullopt for any other character.
char pcieLevelCode(PcieLevel level) noexcept;
std::optional<PcieLevel> pcieLevelFromCode(char code) noexcept;

// Names used by annotations, YAML and docs: nvlink, sameboard, pix, pxb, phb, node, sys, unknown.
std::string_view linkClassName(LinkClass cls) noexcept;
std::optional<LinkClass> linkClassFromName(std::string_view name) noexcept;

}  // namespace gte
