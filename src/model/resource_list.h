#pragma once
// A resource name -> quantity map (a Kubernetes ResourceList), kept sorted for cheap lookups.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/quantity.h"

namespace gte {

class ResourceList {
 public:
  using Entry = std::pair<std::string, Quantity>;

  // Inserts or replaces.
  void set(std::string name, Quantity q);
  // Adds to an existing entry or inserts.
  void add(std::string_view name, const Quantity& q);
  const Quantity* find(std::string_view name) const noexcept;
  // Zero when absent.
  Quantity get(std::string_view name) const noexcept;
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  bool empty() const noexcept { return entries_.empty(); }
  friend bool operator==(const ResourceList&, const ResourceList&) = default;

 private:
  std::vector<Entry> entries_;  // sorted by name
};

}  // namespace gte
