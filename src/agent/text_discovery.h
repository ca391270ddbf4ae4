#pragma once
// Discovery from nvidia-smi text: `topo -m` gives GPUs, NVLink counts and NUMA; `topo -mp` (when
// given) the PCIe level of every pair, including those `topo -m` hides behind NV#; `mig -lgi`,
// `-lgip`, `-lgipp` (when given) MIG mode and GPU instances. Errors read "<file>:<line>: <what>".
#include <optional>
#include <string>
#include <vector>

#include "agent/discovery.h"
#include "base/result.h"
#include "policy/mig_product.h"

namespace gte::agent {

struct CaptureFile {
  std::string path;
  std::string text;
};

struct TextCaptures {
  CaptureFile topo;                   // nvidia-smi topo -m
  std::optional<CaptureFile> topoMp;  // nvidia-smi topo -mp
  std::optional<CaptureFile> mig;     // nvidia-smi mig -lgi / -lgip / -lgipp
};

// `model` is the sanitised product name (text captures do not carry it); with a MIG product
// table entry for it, GPUs absent from the MIG listing are MIG-capable but disabled, otherwise
// not MIG-capable. GPUs the listing names are MIG-enabled.
Result<Discovery> discoverFromText(const TextCaptures& captures, const std::string& model,
                                   const std::vector<MigProduct>& products);

// Reads a whole file; errors name it.
Result<std::string> readCaptureFile(const std::string& path);

}  // namespace gte::agent
