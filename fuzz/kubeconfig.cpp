// Kubeconfig (--kubeconfig). An accepted file must name a server without a trailing '/' and carry
// a client certificate only together with its key.
//
// Credentials may be files the kubeconfig names. Inputs that could name a device, kernel or
// runtime file ("/dev/zero" never ends; "/dev/stdin" and the FIFOs under /run block) are skipped:
// a path to one needs "/dev", "/proc", "/sys" or "/run" in the text, or a YAML escape ('\') to
// spell it. Relative paths resolve against an empty scratch directory.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "kube/kubeconfig_file.h"

namespace {

bool mayNameSpecialFile(std::string_view text) {
  return text.find('\\') != std::string_view::npos || text.find("/dev") != std::string_view::npos ||
         text.find("/proc") != std::string_view::npos ||
         text.find("/sys") != std::string_view::npos || text.find("/run") != std::string_view::npos;
}

const std::string& emptyDir() {
  static const std::string dir = [] {
    const auto path = std::filesystem::temp_directory_path() / "gte-fuzz-kubeconfig-empty";
    std::filesystem::create_directories(path);
    return path.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (mayNameSpecialFile(text)) return 0;
  const auto config = gte::kube::parseKubeconfig(text, emptyDir());
  if (!config) {
    check(!config.error().message.empty(), "a refused kubeconfig says why");
    return 0;
  }
  check(!config->server.empty() && config->server.back() != '/',
        "an accepted kubeconfig names a server without a trailing '/'");
  check(config->clientCertPem.empty() == config->clientKeyPem.empty(),
        "a client certificate comes with its key");
  return 0;
}
