// What the API server sends the group-size owner watches: a PodGroup, Job or JobSet object (read
// where it stands, as a list item or a watch event's object is) and discovery's APIResourceList.
// The first byte picks the shape (0: PodGroup, 1: Job, 2: JobSet, 3: APIResourceList, the byte
// modulo 4); the rest is the body. An object that reads has a name and a namespace and a size that
// is not negative, and the whole-text parse agrees; one that does not read says why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/group_owner_sizes.h"
#include "fuzz_check.h"
#include "json/json_reader.h"
#include "kube/api_discovery.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const unsigned shape = data[0] % 4u;
  if (shape == 3) {
    const auto names = gte::kube::parseApiResourceNames(body);
    check(names || !names.error().message.empty(), "a resource list that does not read says why");
    return 0;
  }
  const auto kind = static_cast<gte::GroupOwnerKind>(shape);
  gte::json::JsonReader reader(body);
  const auto owner = gte::cluster::readGroupOwner(reader, kind);
  if (!owner) {
    check(!owner.error().message.empty(), "an object that does not read says why");
    return 0;
  }
  check(owner->kind == kind, "the object is of the kind asked for");
  check(!owner->name.empty() && !owner->ns.empty(),
        "an object that reads has a name and namespace");
  check(!owner->size || *owner->size >= 0, "a size is never negative");
  const auto whole = gte::cluster::parseGroupOwner(body, kind);
  check(!whole || whole->size == owner->size, "the whole-text parse agrees with the reader's");
  // The same object in the cache: stored and looked up as read (or unknown when out of range).
  gte::cluster::GroupOwnerSizes sizes;
  sizes.put(*owner);
  const auto kept = sizes.groupSize(kind, owner->ns, owner->name);
  check(!kept || kept == owner->size, "a kept size is the object's");
  return 0;
}
