#include "app/claim_template_command.h"

#include <cstdio>

#include "dra/claim_shaping.h"

namespace gte::app {

Result<std::string> claimTemplateText(const ClaimTemplateOptions& options) {
  dra::ShapedClaimOptions shaped;
  shaped.gpus = options.gpus;
  shaped.name = options.name;
  shaped.ns = options.ns;
  shaped.deviceClass = options.deviceClass;
  shaped.nvswitchPartition = options.nvswitchPartition;
  shaped.nvlinkIsland = options.nvlinkIsland;
  shaped.companionClass = options.companionClass;
  shaped.companionDriver = options.companionDriver;
  auto spec = dra::shapedClaimSpec(shaped);
  if (!spec.ok()) return std::move(spec).error();
  return options.output == ManifestFormat::kJson ? dra::claimTemplateJson(shaped, *spec)
                                                 : dra::claimTemplateYaml(shaped, *spec);
}

int runClaimTemplateCommand(const ClaimTemplateOptions& options) {
  const auto text = claimTemplateText(options);
  if (!text.ok()) {
    std::fprintf(stderr, "gpu-topology-extender claim-template: %s\n",
                 text.error().message.c_str());
    return 2;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace gte::app
