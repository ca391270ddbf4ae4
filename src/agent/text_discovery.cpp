#include "agent/text_discovery.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/capture_error.h"
#include "agent/mig_listing_text.h"
#include "agent/mig_profile_code.h"
#include "agent/topo_matrix_text.h"

namespace gte::agent {
namespace {

Error inFile(const std::string& path, const Error& error) {
  return invalidArgument(path + ":" + error.message);
}

Error atLine(const std::string& path, int line, const std::string& what) {
  return inFile(path, captureError(line, what));
}

// Every pair showing the same NV# on more than two GPUs is an NVSwitch fabric as far as text can
// tell (a two-GPU bridge is a mesh of one pair). Only NVML sees the switches themselves.
std::string fabricOf(const TopoMatrixText& matrix) {
  if (matrix.nvlinks.empty()) {
    return "none";
  }
  const bool any = std::any_of(matrix.nvlinks.begin(), matrix.nvlinks.end(),
                               [](int links) { return links > 0; });
  const bool allEqual = std::all_of(matrix.nvlinks.begin(), matrix.nvlinks.end(), [&](int links) {
    return links > 0 && links == matrix.nvlinks.front();
  });
  if (allEqual && matrix.gpuCount > 2) {
    return "nvsw";
  }
  return any ? "mesh" : "none";
}

// `topo -m` hides the PCIe level of NVLink pairs; `topo -mp` shows it. Where `topo -m` does show a
// PCIe level the two must agree, or the captures come from different machines.
Status mergePcieOnly(Discovery& out, const TopoMatrixText& best, const CaptureFile& file) {
  auto pcie = parseTopoMatrix(file.text, MatrixKind::kPcieOnly);
  if (!pcie.ok()) {
    return inFile(file.path, pcie.error());
  }
  if (pcie->gpuCount != best.gpuCount) {
    return atLine(file.path, pcie->headerLine,
                  std::to_string(pcie->gpuCount) + " GPUs, but topo -m shows " +
                      std::to_string(best.gpuCount));
  }
  const int n = best.gpuCount;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const auto k = static_cast<std::size_t>(pairIndex(i, j, n));
      const PcieLevel shown = best.pcie[k];
      if (shown != PcieLevel::kUnknown && shown != pcie->pcie[k]) {
        return atLine(file.path, pcie->rowLines[static_cast<std::size_t>(i)],
                      "GPU" + std::to_string(i) + "/GPU" + std::to_string(j) +
                          " PCIe level differs from topo -m (captures of different machines?)");
      }
      out.topology.pcie[k] = pcie->pcie[k];
    }
    int& numa = out.topology.numa[static_cast<std::size_t>(i)];
    if (numa < 0) {
      numa = pcie->numa[static_cast<std::size_t>(i)];
    }
  }
  return Ok{};
}

Status checkGpu(const CaptureFile& file, int gpu, int line, int n) {
  if (gpu < 0 || gpu >= n) {
    return atLine(file.path, line,
                  "GPU " + std::to_string(gpu) + " but topo -m shows " + std::to_string(n));
  }
  return Ok{};
}

// -lgipp names the legal placements per GPU and profile ID; an instance elsewhere means the
// listings do not belong together.
bool placementListed(const MigListing& listing, const GpuInstanceRow& instance) {
  bool profileListed = false;
  for (const PlacementRow& row : listing.placements) {
    if (row.gpu != instance.gpu || row.profileId != instance.profileId) {
      continue;
    }
    profileListed = true;
    if (row.size == instance.size &&
        std::find(row.starts.begin(), row.starts.end(), instance.start) != row.starts.end()) {
      return true;
    }
  }
  return !profileListed;
}

Status mergeMig(Discovery& out, const CaptureFile& file) {
  auto listing = parseMigListing(file.text);
  if (!listing.ok()) {
    return inFile(file.path, listing.error());
  }
  const int n = out.topology.gpuCount;
  const auto enable = [&](int gpu, int line) -> Status {
    if (auto status = checkGpu(file, gpu, line, n); !status.ok()) {
      return status;
    }
    out.topology.migMode[static_cast<std::size_t>(gpu)] = MigMode::kEnabled;
    out.topology.used[static_cast<std::size_t>(gpu)] = GpuUse::kMigMode;
    return Ok{};
  };
  for (const ProfileRow& row : listing->profiles) {
    if (auto status = enable(row.gpu, row.line); !status.ok()) {
      return status;
    }
  }
  for (const PlacementRow& row : listing->placements) {
    if (auto status = enable(row.gpu, row.line); !status.ok()) {
      return status;
    }
  }
  for (const GpuInstanceRow& row : listing->instances) {
    if (auto status = enable(row.gpu, row.line); !status.ok()) {
      return status;
    }
    const auto code = profileCode(row.profile, row.size);
    if (!code) {
      return atLine(file.path, row.line,
                    "profile " + row.profile + " covering " + std::to_string(row.size) +
                        " memory slices has no labels-v1 code");
    }
    if (!placementListed(*listing, row)) {
      return atLine(file.path, row.line,
                    "placement " + std::to_string(row.start) + ":" + std::to_string(row.size) +
                        " of profile ID " + std::to_string(row.profileId) +
                        " is not among the -lgipp placements");
    }
    auto& instances = out.topology.migInstances[static_cast<std::size_t>(row.gpu)];
    instances.push_back(MigInstance{*code, row.start, MigInstanceState::kFree});
    std::sort(instances.begin(), instances.end(),
              [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
  }
  return Ok{};
}

}  // namespace

Result<Discovery> discoverFromText(const TextCaptures& captures, const std::string& model,
                                   const std::vector<MigProduct>& products) {
  auto best = parseTopoMatrix(captures.topo.text, MatrixKind::kBestPath);
  if (!best.ok()) {
    return inFile(captures.topo.path, best.error());
  }
  // A capture cannot say which GPUs are in MIG mode: a MIG-capable model starts with MIG disabled,
  // and the -lgi listing (mergeMig) enables it where instances exist.
  const bool migCapable = findMigProduct(products, model) != nullptr;
  Discovery out;
  out.topology = blankTopology(TopologySource::kLabelsV1, best->gpuCount,
                               migCapable ? MigMode::kDisabled : MigMode::kNotCapable);
  GpuTopology& topo = out.topology;
  topo.model = model;
  topo.fabric = fabricOf(*best);
  topo.linksKnown = true;
  for (std::size_t k = 0; k < best->nvlinks.size(); ++k) {
    topo.nvlinks[k] = static_cast<std::uint8_t>(best->nvlinks[k]);
    topo.pcie[k] = best->pcie[k];
  }
  topo.numa = best->numa;
  if (captures.topoMp) {
    if (auto status = mergePcieOnly(out, *best, *captures.topoMp); !status.ok()) {
      return status.error();
    }
  }
  if (captures.mig) {
    if (auto status = mergeMig(out, *captures.mig); !status.ok()) {
      return status.error();
    }
  }
  return out;
}

Result<std::string> readCaptureFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return invalidArgument(path + ":0: cannot open the file");
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace gte::agent
