#include "dra/class_catalog.h"

#include <algorithm>

namespace gte::dra {

ClassCatalog::ClassCatalog(std::vector<DeviceClassConstSharedPtr> classes) {
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
  for (auto& object : classes) {
    CompiledClass compiled;
    if (object->unknownSelector) compiled.uninterpretable = "a selector that is not CEL";
    for (const std::string& expression : object->selectors) {
      Result<CelProgram> program = CelProgram::compile(expression);
      if (!program.ok()) {
        if (compiled.uninterpretable.empty()) compiled.uninterpretable = program.error().message;
        continue;
      }
      compiled.selectors.push_back(std::move(program).value());
    }
    compiled.object = std::move(object);
    classes_.push_back(std::move(compiled));
  }
}

int ClassCatalog::find(std::string_view name) const noexcept {
  const auto it = std::lower_bound(
      classes_.begin(), classes_.end(), name,
      [](const CompiledClass& c, std::string_view n) { return c.object->name < n; });
  if (it == classes_.end() || it->object->name != name) return -1;
  return static_cast<int>(it - classes_.begin());
}

int ClassCatalog::forExtendedResource(std::string_view resource) const noexcept {
  int chosen = -1;
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const DeviceClass& dc = *classes_[i].object;
    if (dc.extendedResourceName != resource) continue;
    if (chosen < 0) {
      chosen = static_cast<int>(i);
      continue;
    }
    // Newer wins; classes are in name order, so on equal timestamps the first (lower) name stays.
    const DeviceClass& current = *classes_[static_cast<std::size_t>(chosen)].object;
    if (dc.creationTimestamp > current.creationTimestamp) chosen = static_cast<int>(i);
  }
  if (chosen >= 0) return chosen;
  constexpr std::string_view kImplicit = "deviceclass.resource.kubernetes.io/";
  if (resource.starts_with(kImplicit)) return find(resource.substr(kImplicit.size()));
  return -1;
}

ClassMatches matchClasses(const NodeDevices& devices, const ClassCatalog& catalog) {
  ClassMatches matches;
  const std::size_t n = devices.devices.size();
  matches.packed.assign(n, 0);
  if (catalog.size() > static_cast<std::size_t>(ClassMatches::kPacked)) {
    matches.overflow.assign(catalog.size() - ClassMatches::kPacked, std::vector<CelOutcome>(n));
  }
  for (std::size_t c = 0; c < catalog.size(); ++c) {
    const CompiledClass& compiled = catalog.at(static_cast<int>(c));
    for (std::size_t d = 0; d < n; ++d) {
      const NodeDevice& device = devices.devices[d];
      CelOutcome outcome =
          compiled.uninterpretable.empty() ? CelOutcome::kTrue : CelOutcome::kUninterpretable;
      const SliceDevice view(*device.slice, device.index);
      for (std::size_t s = 0; s < compiled.selectors.size() && outcome == CelOutcome::kTrue; ++s) {
        outcome = compiled.selectors[s].evaluate(view);
      }
      if (c < static_cast<std::size_t>(ClassMatches::kPacked)) {
        matches.packed[d] |= static_cast<std::uint64_t>(outcome) << (2 * c);
      } else {
        matches.overflow[c - ClassMatches::kPacked][d] = outcome;
      }
    }
  }
  return matches;
}

}  // namespace gte::dra
