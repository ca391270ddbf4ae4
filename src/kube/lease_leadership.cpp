#include "kube/lease_leadership.h"

#include <algorithm>

#include "kube/api_status.h"
#include "kube/resource_path.h"
#include "log/logger.h"

namespace gte::kube {
namespace {

std::string millis(std::chrono::milliseconds d) {
  return std::to_string(d.count()) + "ms";
}

}  // namespace

LeaseLeadership::LeaseLeadership(std::shared_ptr<ApiTransport> transport,
                                 LeaseLeadershipOptions options, Listener listener)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      listener_(std::move(listener)) {}

LeaseLeadership::~LeaseLeadership() {
  stop();
}

std::string LeaseLeadership::leaseName() const {
  return options_.ns + "/" + options_.name;
}

void LeaseLeadership::start() {
  if (thread_.joinable()) return;
  log::info(options_.role == LeaseRole::kHold ? "leader election: competing for the lease"
                                              : "leader election: following the lease",
            {{"lease", leaseName()},
             {"identity", options_.identity},
             {"lease_duration", millis(options_.leaseDuration)},
             {"renew_deadline", millis(options_.renewDeadline)},
             {"retry_period", millis(options_.retryPeriod)}});
  thread_ = std::thread([this] { run(); });
}

void LeaseLeadership::run() {
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    tick();
    auto period = options_.retryPeriod;
    if (!holds()) {
      // Standbys spread their reads over up to a fifth more, so they do not stampede together.
      std::uniform_int_distribution<std::int64_t> extra(0, period.count() / 5);
      period += std::chrono::milliseconds(extra(random_));
    }
    UniqueLock lock(wakeMutex_);
    wake_.wait_for(lock, period,
                   [this]() GTE_REQUIRES(wakeMutex_) { return stopping_ || nudged_; });
    // Nudges come with every bind a standby is asked for: at most one extra read per tenth of
    // the period, however many arrive.
    wake_.wait_until(lock, started + options_.retryPeriod / 10,
                     [this]() GTE_REQUIRES(wakeMutex_) { return stopping_; });
    if (stopping_) return;
    nudged_ = false;
  }
}

void LeaseLeadership::nudge() {
  {
    MutexLock lock(wakeMutex_);
    nudged_ = true;
  }
  wake_.notify_all();
}

void LeaseLeadership::stop() {
  {
    MutexLock lock(wakeMutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  MutexLock tick(tickMutex_);
  if (options_.role == LeaseRole::kHold) release();
  loseLeadership("stopping");
}

bool LeaseLeadership::holds(std::chrono::steady_clock::time_point now) const {
  MutexLock lock(mutex_);
  return leading_ && now < validUntil_;
}

LeadershipStatus LeaseLeadership::status() const {
  MutexLock lock(mutex_);
  LeadershipStatus out;
  out.leading = leading_ && options_.now() < validUntil_;
  out.term = term_;
  out.startedLeading = startedLeading_;
  out.holder = last_ ? last_->spec.holderIdentity : std::string();
  out.lastChange = lastChange_;
  out.lastError = lastError_;
  return out;
}

void LeaseLeadership::tick() {
  MutexLock tick(tickMutex_);
  const TimePoint started = options_.now();
  {
    // Past the fence, leadership is over whatever this round finds: the listener hears it now.
    UniqueLock lock(mutex_);
    if (leading_ && started >= validUntil_) {
      lock.unlock();
      loseLeadership("no renew confirmed within the renew deadline");
    }
  }
  if (options_.role == LeaseRole::kHold) {
    tickHold(started);
  } else {
    tickFollow(started);
  }
}

Result<std::optional<Lease>> LeaseLeadership::read() {
  auto response = transport_->send("GET", objectPath(kLeases, options_.ns, options_.name));
  if (!response) return std::move(response).error();
  if (response->status == 404) return std::optional<Lease>();
  if (!response->success()) return statusError("get lease " + leaseName(), *response);
  auto lease = parseLeaseJson(response->body);
  if (!lease) return std::move(lease).error();
  return std::optional<Lease>(std::move(*lease));
}

Result<std::optional<Lease>> LeaseLeadership::write(const Lease& lease, bool create) {
  auto response =
      create ? transport_->send("POST", collectionPath(kLeases, options_.ns), leaseJson(lease))
             : transport_->send("PUT", objectPath(kLeases, options_.ns, options_.name),
                                leaseJson(lease));
  if (!response) return std::move(response).error();
  // 409: someone wrote (or created) it since we read it. Either way it is theirs this round.
  if (response->status == 409) return std::optional<Lease>();
  if (!response->success()) {
    return statusError((create ? "create lease " : "update lease ") + leaseName(), *response);
  }
  auto written = parseLeaseJson(response->body);
  if (!written) return std::move(written).error();
  return std::optional<Lease>(std::move(*written));
}

void LeaseLeadership::observe(const Lease& lease, TimePoint readStarted) {
  MutexLock lock(mutex_);
  if (!last_ || last_->spec != lease.spec) lastChange_ = readStarted;
  last_ = lease;
}

void LeaseLeadership::fail(const std::string& what, const Error& error) {
  {
    MutexLock lock(mutex_);
    lastError_ = what + ": " + error.message;
  }
  log::warn("leader election: request failed",
            {{"lease", leaseName()}, {"request", what}, {"error", error.message}});
}

void LeaseLeadership::lead(TimePoint validUntil, bool newTerm) {
  std::uint64_t term = 0;
  {
    MutexLock lock(mutex_);
    validUntil_ = validUntil;
    if (leading_ && !newTerm) return;
    leading_ = true;
    term = ++term_;
    ++startedLeading_;
    lastError_.clear();
  }
  log::info(
      "leader election: leading",
      {{"lease", leaseName()}, {"identity", options_.identity}, {"term", std::to_string(term)}});
  if (listener_) listener_(true, term);
}

void LeaseLeadership::loseLeadership(const std::string& why) {
  std::uint64_t term = 0;
  std::string holder;
  {
    MutexLock lock(mutex_);
    if (!leading_) return;
    leading_ = false;
    term = term_;
    followedTerm_.clear();
    holder = last_ ? last_->spec.holderIdentity : std::string();
  }
  log::warn(
      "leader election: not leading any more",
      {{"lease", leaseName()}, {"term", std::to_string(term)}, {"why", why}, {"holder", holder}});
  if (listener_) listener_(false, term);
}

void LeaseLeadership::tickHold(TimePoint started) {
  const auto wall = options_.wallNow();
  const std::int64_t durationSeconds = std::max<std::int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.leaseDuration).count());
  std::optional<Lease> current;
  {
    MutexLock lock(mutex_);
    if (leading_ && last_ && last_->spec.holderIdentity == options_.identity) current = last_;
  }
  // While leading, renew straight from the Lease last written: one request a round. A 409 means
  // someone else wrote it; the read below then says who.
  if (current) {
    Lease renewed = *current;
    renewed.spec.renewTime = formatMicroTime(wall);
    renewed.spec.leaseDurationSeconds = durationSeconds;
    auto written = write(renewed, false);
    if (written && *written) {
      observe(**written, started);
      lead(started + options_.renewDeadline, false);
      return;
    }
    if (!written) return fail("renew", written.error());
  }
  auto read = this->read();
  if (!read) return fail("read", read.error());
  if (!*read) {
    Lease created;
    created.name = options_.name;
    created.ns = options_.ns;
    created.spec.holderIdentity = options_.identity;
    created.spec.leaseDurationSeconds = durationSeconds;
    created.spec.acquireTime = created.spec.renewTime = formatMicroTime(wall);
    auto written = write(created, true);
    if (!written) return fail("create", written.error());
    if (!*written) return;  // another candidate created it first
    observe(**written, started);
    return lead(started + options_.renewDeadline, true);
  }
  const Lease& lease = **read;
  observe(lease, started);
  const std::string& holder = lease.spec.holderIdentity;
  if (!holder.empty() && holder != options_.identity) {
    TimePoint changed;
    {
      MutexLock lock(mutex_);
      changed = *lastChange_;
    }
    const auto duration = lease.spec.leaseDurationSeconds > 0
                              ? std::chrono::milliseconds(lease.spec.leaseDurationSeconds * 1000)
                              : options_.leaseDuration;
    if (started < changed + duration) {
      return loseLeadership("the lease is held by " + holder);
    }
    log::info("leader election: the holder has not renewed for the lease's duration; taking over",
              {{"lease", leaseName()}, {"holder", holder}});
  }
  Lease taken = lease;
  taken.spec.renewTime = formatMicroTime(wall);
  taken.spec.leaseDurationSeconds = durationSeconds;
  const bool alreadyOurs = holder == options_.identity;
  bool newTerm = false;
  {
    MutexLock lock(mutex_);
    newTerm = !leading_;
  }
  if (!alreadyOurs) {
    taken.spec.holderIdentity = options_.identity;
    taken.spec.acquireTime = taken.spec.renewTime;
    ++taken.spec.leaseTransitions;
  }
  auto written = write(taken, false);
  if (!written) return fail("acquire", written.error());
  if (!*written) return loseLeadership("another candidate wrote the lease first");
  observe(**written, started);
  lead(started + options_.renewDeadline, newTerm);
}

bool LeaseLeadership::followedHolder(const std::string& holder) const {
  const std::string& id = options_.identity;
  if (holder.empty() || id.empty()) return false;
  return holder == id ||
         (holder.size() > id.size() + 1 && holder.starts_with(id) && holder[id.size()] == '_');
}

void LeaseLeadership::tickFollow(TimePoint started) {
  auto read = this->read();
  if (!read) return fail("read", read.error());
  std::string holder;
  std::string termKey;
  std::int64_t durationSeconds = 0;
  std::optional<TimePoint> renewedAfter;
  {
    MutexLock lock(mutex_);
    if (*read) {
      const Lease& lease = **read;
      // A changed record was written after the previous successful read was sent (that read saw
      // the old one); the first record ever read has no such bound, so it leads to nothing yet.
      if (!last_ || last_->spec != lease.spec) {
        lastChange_ = started;
        renewedAfter_ = last_ ? lastReadStarted_ : std::nullopt;
      }
      last_ = lease;
      holder = lease.spec.holderIdentity;
      durationSeconds = lease.spec.leaseDurationSeconds;
      termKey = holder + "#" + std::to_string(lease.spec.leaseTransitions);
    } else {
      last_.reset();
      renewedAfter_.reset();
    }
    lastReadStarted_ = started;
    renewedAfter = renewedAfter_;
  }
  if (!followedHolder(holder)) {
    return loseLeadership(holder.empty() ? "nobody holds the followed lease"
                                         : "the followed lease is held by " + holder);
  }
  // The fence is safe only while it ends before a successor may start: the holder's duration
  // after that renew. A renew deadline at or past it (flags not matching the scheduler's lease)
  // could bind alongside the next leader, so this process does not lead at all.
  if (durationSeconds > 0 && options_.renewDeadline >= std::chrono::seconds(durationSeconds)) {
    return refuseFollowing("the followed lease's duration (" + std::to_string(durationSeconds) +
                           "s) is not above --leader-elect-renew-deadline (" +
                           millis(options_.renewDeadline) + ")");
  }
  if (!renewedAfter || started >= *renewedAfter + options_.renewDeadline) {
    return loseLeadership("no renew of the followed lease seen within the renew deadline");
  }
  bool newTerm = false;
  {
    MutexLock lock(mutex_);
    newTerm = !leading_ || followedTerm_ != termKey;
    followedTerm_ = termKey;
  }
  if (newTerm) loseLeadership("the followed lease changed hands");
  {
    MutexLock lock(mutex_);
    followedTerm_ = termKey;
  }
  lead(*renewedAfter + options_.renewDeadline, newTerm);
}

void LeaseLeadership::refuseFollowing(const std::string& why) {
  bool changed = false;
  {
    MutexLock lock(mutex_);
    changed = lastError_ != why;
    lastError_ = why;
  }
  // Once per cause, not at every read.
  if (changed) {
    log::error("leader election: not following the lease, binding nothing",
               {{"lease", leaseName()}, {"why", why}});
  }
  loseLeadership(why);
}

void LeaseLeadership::release() {
  std::optional<Lease> held;
  {
    MutexLock lock(mutex_);
    if (leading_ && last_ && last_->spec.holderIdentity == options_.identity) held = last_;
  }
  if (!held) return;
  Lease released = *held;
  released.spec.holderIdentity.clear();
  released.spec.leaseDurationSeconds = 1;
  released.spec.renewTime = formatMicroTime(options_.wallNow());
  auto written = write(released, false);
  if (!written) return fail("release", written.error());
  if (*written) observe(**written, options_.now());
  log::info("leader election: lease released", {{"lease", leaseName()}});
}

}  // namespace gte::kube
