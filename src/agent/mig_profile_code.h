#pragma once
// The labels-v1 profile code (the NVML GPU-instance profile constant in base 36) of a profile as
// nvidia-smi names it, given the memory slices its placement covers. The name alone is ambiguous:
// "1g.20gb" on H100 is the two-slice 1g (rev2, code 9) while "1g.10gb" is the one-slice 1g (code
// 0), and the memory figure differs per product; the slice count settles it on every product.
#include <optional>
#include <string_view>

namespace gte::agent {

// "1g.10gb" + 1 slice -> '0', "1g.10gb+me" -> '7', "1g.20gb" + 2 -> '9', "2g.*" + 2 -> '1',
// "3g.*" + 4 -> '2', "4g.*" + 4 -> '3', "7g.*" + 8 -> '4'. nullopt for anything else.
std::optional<char> profileCode(std::string_view profileName, int memorySlices);

}  // namespace gte::agent
