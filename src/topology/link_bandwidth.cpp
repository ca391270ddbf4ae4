#include "topology/link_bandwidth.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>

#include "topology/pair_table.h"

namespace gte {
namespace {

bool sameToken(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

struct NamedGeneration {
  std::string_view token;
  GpuGeneration generation;
};

// Product tokens of the sanitised model name ("NVIDIA-A100-SXM4-80GB" -> "A100").
constexpr std::array<NamedGeneration, 37> kTokens = {{
    {"P100", GpuGeneration::kPascal},
    {"P40", GpuGeneration::kPascal},
    {"P4", GpuGeneration::kPascal},
    {"V100", GpuGeneration::kVolta},
    {"V100S", GpuGeneration::kVolta},
    {"T4", GpuGeneration::kTuring},
    {"A100", GpuGeneration::kAmpere},
    {"A800", GpuGeneration::kAmpere},
    {"A30", GpuGeneration::kAmpere},
    {"A40", GpuGeneration::kAmpere},
    {"A10", GpuGeneration::kAmpere},
    {"A10G", GpuGeneration::kAmpere},
    {"A16", GpuGeneration::kAmpere},
    {"A2", GpuGeneration::kAmpere},
    {"A4000", GpuGeneration::kAmpere},
    {"A5000", GpuGeneration::kAmpere},
    {"A6000", GpuGeneration::kAmpere},
    {"L4", GpuGeneration::kAda},
    {"L20", GpuGeneration::kAda},
    {"L40", GpuGeneration::kAda},
    {"L40S", GpuGeneration::kAda},
    {"Ada", GpuGeneration::kAda},
    {"H100", GpuGeneration::kHopper},
    {"H800", GpuGeneration::kHopper},
    {"H200", GpuGeneration::kHopper},
    {"H20", GpuGeneration::kHopper},
    {"GH200", GpuGeneration::kHopper},
    {"B100", GpuGeneration::kBlackwell},
    {"B200", GpuGeneration::kBlackwell},
    {"GB200", GpuGeneration::kBlackwell},
    {"B300", GpuGeneration::kBlackwell},
    {"GB300", GpuGeneration::kBlackwell},
    {"Blackwell", GpuGeneration::kBlackwell},
    {"Hopper", GpuGeneration::kHopper},
    {"Ampere", GpuGeneration::kAmpere},
    {"Turing", GpuGeneration::kTuring},
    {"Volta", GpuGeneration::kVolta},
}};

// GeForce and Quadro RTX numbers: 20xx Turing, 30xx Ampere, 40xx Ada, 50xx Blackwell.
GpuGeneration fromRtxNumber(std::string_view token) noexcept {
  if (token.size() != 4 || !std::all_of(token.begin(), token.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      })) {
    return GpuGeneration::kUnknown;
  }
  switch ((token[0] - '0') * 10 + (token[1] - '0')) {
    case 20:
      return GpuGeneration::kTuring;
    case 30:
      return GpuGeneration::kAmpere;
    case 40:
      return GpuGeneration::kAda;
    case 50:
      return GpuGeneration::kBlackwell;
    default:
      return GpuGeneration::kUnknown;
  }
}

GpuGeneration fromToken(std::string_view token) noexcept {
  for (const NamedGeneration& named : kTokens) {
    if (sameToken(named.token, token)) return named.generation;
  }
  return fromRtxNumber(token);
}

}  // namespace

GpuGeneration gpuGenerationOf(std::string_view model) noexcept {
  std::size_t start = 0;
  while (start <= model.size()) {
    const std::size_t end = std::min(model.find_first_of("-_. ", start), model.size());
    const GpuGeneration generation = fromToken(model.substr(start, end - start));
    if (generation != GpuGeneration::kUnknown) return generation;
    start = end + 1;
  }
  return GpuGeneration::kUnknown;
}

std::string_view gpuGenerationName(GpuGeneration generation) noexcept {
  switch (generation) {
    case GpuGeneration::kPascal:
      return "pascal";
    case GpuGeneration::kVolta:
      return "volta";
    case GpuGeneration::kTuring:
      return "turing";
    case GpuGeneration::kAmpere:
      return "ampere";
    case GpuGeneration::kAda:
      return "ada";
    case GpuGeneration::kHopper:
      return "hopper";
    case GpuGeneration::kBlackwell:
      return "blackwell";
    case GpuGeneration::kUnknown:
      break;
  }
  return "unknown";
}

int nvlinkGBpsPerLink(GpuGeneration generation) noexcept {
  switch (generation) {
    case GpuGeneration::kPascal:
      return 20;  // NVLink 1.0: 4 links, 160 GB/s both ways
    case GpuGeneration::kBlackwell:
      return 50;                  // NVLink 5.0: 18 links, 1.8 TB/s both ways
    case GpuGeneration::kVolta:   // NVLink 2.0: 6 links, 300 GB/s both ways
    case GpuGeneration::kTuring:  // NVLink 2.0 bridges
    case GpuGeneration::kAmpere:  // NVLink 3.0: 12 links, 600 GB/s both ways
    case GpuGeneration::kAda:     // no NVLink; a label claiming one is taken at 25
    case GpuGeneration::kHopper:  // NVLink 4.0: 18 links, 900 GB/s both ways
    case GpuGeneration::kUnknown:
      break;
  }
  return 25;
}

int pcieGeneration(GpuGeneration generation) noexcept {
  switch (generation) {
    case GpuGeneration::kPascal:
    case GpuGeneration::kVolta:
    case GpuGeneration::kTuring:
      return 3;
    case GpuGeneration::kHopper:
    case GpuGeneration::kBlackwell:
      return 5;
    case GpuGeneration::kAmpere:
    case GpuGeneration::kAda:
    case GpuGeneration::kUnknown:
      break;
  }
  return 4;
}

int pcieGBps(PcieLevel level, int gen) noexcept {
  // x16 one way: 15.75 (Gen3), 31.5 (Gen4), 63 (Gen5) GB/s, rounded; each generation doubles.
  const int link = gen <= 3 ? 16 : gen == 4 ? 32 : 63;
  switch (level) {
    case PcieLevel::kSameBoard:
    case PcieLevel::kPix:
    case PcieLevel::kPxb:
      return link;  // peer to peer through PCIe switches: the link rate
    case PcieLevel::kPhb:
      return link * 3 / 4;  // through the CPU's root complex
    case PcieLevel::kNode:
      return link * 5 / 8;  // across root complexes of one socket
    case PcieLevel::kSys:
      return link * 7 / 16;  // across the inter-socket link
    case PcieLevel::kUnknown:
      break;
  }
  return 0;
}

PairBandwidths::PairBandwidths(const GpuTopology& topology) noexcept {
  if (!topology.linksKnown) return;
  const GpuGeneration generation = gpuGenerationOf(topology.model);
  const int perLink = nvlinkGBpsPerLink(generation);
  const int gen = pcieGeneration(generation);
  const int n = std::min(topology.gpuCount, kMaxGpus);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const int links = topology.nvlinkCount(i, j);
      const int gbps = links > 0 ? links * perLink : pcieGBps(topology.pcieLevel(i, j), gen);
      const auto value = static_cast<std::uint16_t>(std::min(gbps, 65535));
      table_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = value;
      table_[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = value;
    }
  }
}

int PairBandwidths::set(GpuMask gpus) const noexcept {
  if (gpuCountOf(gpus) < 2) return 0;
  int weakest = std::numeric_limits<int>::max();
  forEachPair(gpus, [&](int i, int j) { weakest = std::min(weakest, pair(i, j)); });
  return weakest;
}

}  // namespace gte
