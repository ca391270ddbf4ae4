#include "topology/mig_sharing.h"

namespace gte {

MigReplicas migReplicasByCode(std::span<const SharedMigProfile> shared, const MigProduct& product) {
  MigReplicas out;
  for (const SharedMigProfile& profile : shared) {
    const MigProfile* known = product.findByName(profile.profile);
    if (known != nullptr && profile.sharing.replicas > 1) {
      out.insert_or_assign(known->code, profile.sharing.replicas);
    }
  }
  return out;
}

}  // namespace gte
