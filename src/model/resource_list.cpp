#include "model/resource_list.h"

#include <algorithm>

namespace gte {
namespace {

template <typename Vec>
auto lowerBound(Vec& v, std::string_view name) {
  return std::lower_bound(
      v.begin(), v.end(), name,
      [](const ResourceList::Entry& e, std::string_view n) { return e.first < n; });
}

}  // namespace

void ResourceList::set(std::string name, Quantity q) {
  auto it = lowerBound(entries_, name);
  if (it != entries_.end() && it->first == name) {
    it->second = q;
    return;
  }
  entries_.insert(it, Entry{std::move(name), q});
}

void ResourceList::add(std::string_view name, const Quantity& q) {
  auto it = lowerBound(entries_, name);
  if (it != entries_.end() && it->first == name) {
    it->second += q;
    return;
  }
  entries_.insert(it, Entry{std::string(name), q});
}

const Quantity* ResourceList::find(std::string_view name) const noexcept {
  auto it = lowerBound(entries_, name);
  return (it != entries_.end() && it->first == name) ? &it->second : nullptr;
}

Quantity ResourceList::get(std::string_view name) const noexcept {
  const Quantity* q = find(name);
  return q ? *q : Quantity{};
}

}  // namespace gte
