#include "reliability/lifetime.h"

#include <algorithm>
#include <cmath>

namespace afasim::reliability::detail {

Lifetime::Lifetime(const LifetimeModel& m, sim::Rng rng, ReliabilityReport& out)
    : m_(m), s_(*m.s), rng_(std::move(rng)), out_(out), n_(m.map->drives) {}

double Lifetime::run() {
  drives_.assign(static_cast<std::size_t>(n_), Drive{});
  for (int i = 0; i < n_; ++i) install(i, 0);
  shared_ = m_.map->shared;
  used_ = m_.map->used_chunks;
  packs_ = *std::max_element(m_.map->datapac.begin(), m_.map->datapac.end());
  spare_.assign(static_cast<std::size_t>(packs_) + 1, m_.spare_chunks_per_pack);
  pack_replacement_h_.assign(static_cast<std::size_t>(packs_) + 1, kInfinity);
  const config::ReliabilityParams& p = s_.model;
  latent_rate_h_ = s_.mechanisms.latent_errors ? p.latent_errors_per_drive_year * n_ / kHoursPerYear : 0;
  next_latent_h_ = latent_rate_h_ > 0 ? rng_.exponential(1 / latent_rate_h_) : kInfinity;
  next_scrub_h_ = s_.mechanisms.latent_errors ? rng_.uniform01() * p.scrub_interval_hours : kInfinity;
  for (int c = 0; c < 2; ++c) {
    controller_fail_h_[c] = s_.mechanisms.controllers ? rng_.exponential(p.controller_mtbf_hours) : kInfinity;
    controller_up_h_[c] = 0;
  }
  drives_changed_ = true;
  for (;;) {
    // The next event: the earliest of every clock; the horizon when none comes before it.
    Event kind = Event::kNone;
    int who = -1;
    double at = m_.horizon_h;
    auto consider = [&](double when, Event k, int i) {
      if (when < at) at = when, kind = k, who = i;
    };
    if (drives_changed_) next_drive_event();
    consider(next_drive_h_, next_drive_kind_, next_drive_);
    for (int pk = 1; pk <= packs_; ++pk) consider(pack_replacement_h_[static_cast<std::size_t>(pk)], Event::kPackReplaced, pk);
    consider(next_latent_h_, Event::kLatentError, -1);
    consider(next_scrub_h_, Event::kScrub, -1);
    for (int c = 0; c < 2; ++c) consider(controller_fail_h_[c], Event::kControllerFails, c);
    if (kind == Event::kNone) return m_.horizon_h;
    if (handle(kind, who, at)) return at;
  }
}

bool Lifetime::handle(Event e, int who, double t) {
  switch (e) {
    case Event::kDriveFails: return drive_failed(who, t);
    case Event::kRebuildEnds: rebuild_done(who, t); return false;
    case Event::kPackReplaced: replace_pack(who, t); return false;
    case Event::kLatentError: return latent_error(t);
    case Event::kScrub:
      for (Drive& d : drives_) {
        out_.latent_errors_scrubbed += d.latent_errors;
        d.latent_errors = 0;
      }
      next_scrub_h_ = t + s_.model.scrub_interval_hours;
      return false;
    case Event::kControllerFails: controller_failed(who, t); return false;
    case Event::kNone: break;
  }
  return false;
}

// The earliest SSD event (a failure or a rebuild's end), found again only after an SSD
// changed: latent errors and scrub passes, most of the events, leave it as it is.
void Lifetime::next_drive_event() {
  next_drive_h_ = kInfinity;
  next_drive_kind_ = Event::kNone;
  next_drive_ = -1;
  for (int i = 0; i < n_; ++i) {
    const Drive& d = drives_[static_cast<std::size_t>(i)];
    const bool up = d.state == DriveState::kUp;
    const double at = up ? d.fail_h : d.state == DriveState::kRebuilding ? d.rebuild_end_h : kInfinity;
    if (at < next_drive_h_) next_drive_h_ = at, next_drive_kind_ = up ? Event::kDriveFails : Event::kRebuildEnds, next_drive_ = i;
  }
  drives_changed_ = false;
}

// A new SSD in slot i at time t: its next random failure and its wear-out.
void Lifetime::install(int i, double t) {
  drives_changed_ = true;
  Drive& d = drives_[static_cast<std::size_t>(i)];
  d = Drive{};
  const double random_h = t + rng_.exponential(s_.model.drive_mtbf_hours);
  double wear_h = kInfinity;
  if (s_.mechanisms.wear_out && m_.wear_per_hour > 0) {
    // Weibull by inversion: life = scale × (−ln U)^(1/shape), in rated endurances.
    const double u = 1.0 - rng_.uniform01();
    const double life = s_.model.wear_out_weibull_scale * std::pow(-std::log(u), 1.0 / s_.model.wear_out_weibull_shape);
    wear_h = t + life / m_.wear_per_hour;
  }
  d.fail_h = std::min(random_h, wear_h);
  d.wear_out = wear_h < random_h;
}

bool Lifetime::degraded(int i) const {
  const DriveState st = drives_[static_cast<std::size_t>(i)].state;
  return st == DriveState::kRebuilding || st == DriveState::kWaitingForSpare;
}

double Lifetime::p_shared(int i, int j) const {
  const std::int64_t used = used_[static_cast<std::size_t>(j)];
  if (used <= 0) return 0;
  const double shared = static_cast<double>(shared_[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j)]);
  return std::min(1.0, shared / static_cast<double>(used));
}

bool Lifetime::drive_failed(int i, double t) {
  drives_changed_ = true;
  Drive& d = drives_[static_cast<std::size_t>(i)];
  ++out_.drive_failures;
  if (d.wear_out) ++out_.wear_out_failures;
  for (int j = 0; j < n_; ++j)
    if (j != i && degraded(j) && p_shared(i, j) > 0) {
      ++out_.first_loss.double_failure;
      return true;
    }
  if (s_.mechanisms.latent_errors) {
    for (int j = 0; j < n_; ++j) {
      const Drive& o = drives_[static_cast<std::size_t>(j)];
      if (j == i || o.state != DriveState::kUp || o.latent_errors == 0) continue;
      // Each latent error on SSD j lies in an extent shared with i with probability p.
      const double p = p_shared(i, j);
      if (p > 0 && rng_.bernoulli(1.0 - std::pow(1.0 - p, static_cast<double>(o.latent_errors)))) {
        ++out_.first_loss.latent_error;
        return true;
      }
    }
  }
  if (s_.mechanisms.rebuild_read_errors && s_.model.uncorrectable_bit_error_rate > 0) {
    const double bits = 8.0 * static_cast<double>(used_[static_cast<std::size_t>(i)]) *
                        static_cast<double>(m_.map->chunk_bytes) * m_.rebuild_readers;
    if (rng_.bernoulli(-std::expm1(-bits * s_.model.uncorrectable_bit_error_rate))) {
      ++out_.first_loss.rebuild_read_error;
      return true;
    }
  }
  d.latent_errors = 0;
  d.fail_h = kInfinity;
  if (s_.replacement == Replacement::kDatapac) {
    const int pack = m_.map->datapac[static_cast<std::size_t>(i)];
    spare_[static_cast<std::size_t>(pack)] -= m_.map->spare_chunks_per_drive;  // its own share is gone with it
    d.state = DriveState::kWaitingForSpare;
    if (!take_spare(i)) {
      if (pack_replacement_h_[static_cast<std::size_t>(pack)] == kInfinity)
        pack_replacement_h_[static_cast<std::size_t>(pack)] = t + s_.model.datapac_replacement_hours;
      return false;
    }
  }
  start_rebuild(i, t);
  return false;
}

// A latent error arrives on a random SSD slot (thinning: one drawn for an SSD that is not up
// is dropped). On a partner of a degraded SSD, in an extent not rebuilt yet, it is met by the
// rebuild: the extents still degraded are all of them while the SSD waits for spare or its
// rebuild is queued, the fraction left of it while the rebuild runs.
bool Lifetime::latent_error(double t) {
  next_latent_h_ = t + rng_.exponential(1 / latent_rate_h_);
  const int j = static_cast<int>(rng_.uniform(static_cast<std::uint64_t>(n_)));
  Drive& o = drives_[static_cast<std::size_t>(j)];
  if (o.state != DriveState::kUp) return false;
  ++o.latent_errors;
  ++out_.latent_errors;
  for (int i = 0; i < n_; ++i) {
    if (i == j || !degraded(i)) continue;
    const Drive& d = drives_[static_cast<std::size_t>(i)];
    double left = 1;
    if (d.state == DriveState::kRebuilding && t > d.rebuild_start_h)
      left = (d.rebuild_end_h - t) / (d.rebuild_end_h - d.rebuild_start_h);
    if (rng_.bernoulli(p_shared(i, j) * left)) {
      ++out_.first_loss.latent_error;
      return true;
    }
  }
  return false;
}

// Takes the spare for SSD i's chunks: RAID 10 from its own DataPac (pairs straddle the two),
// RAID 5 from its DataPac first, then the other's. A DataPac's spare goes negative when a
// failed SSD's own share held rebuilt data: that deficit counts against the next rebuild.
// False when the spare (signed, summed over the DataPacs RAID 5 may use) does not cover it.
bool Lifetime::take_spare(int i) {
  const std::int64_t need = used_[static_cast<std::size_t>(i)];
  const int pack = m_.map->datapac[static_cast<std::size_t>(i)];
  std::int64_t& own = spare_[static_cast<std::size_t>(pack)];
  if (s_.raid_type == raid::RaidType::kRaid10) {
    if (own < need) return false;
    own -= need;
    return true;
  }
  std::int64_t all = 0;
  for (int pk = 1; pk <= packs_; ++pk) all += spare_[static_cast<std::size_t>(pk)];
  if (all < need) return false;
  std::int64_t left = need;  // the positive spares cover it: they exceed need plus every deficit
  auto take_from = [&](int pk) {
    std::int64_t& sp = spare_[static_cast<std::size_t>(pk)];
    const std::int64_t take = std::min(left, std::max<std::int64_t>(0, sp));
    sp -= take;
    left -= take;
  };
  take_from(pack);
  for (int pk = 1; pk <= packs_; ++pk)
    if (pk != pack) take_from(pk);
  return true;
}

void Lifetime::start_rebuild(int i, double t) {
  drives_changed_ = true;
  Drive& d = drives_[static_cast<std::size_t>(i)];
  const double mean = m_.rebuild_h[static_cast<std::size_t>(i)];
  const double length = s_.repair == RepairDistribution::kExponential ? rng_.exponential(mean) : mean;
  // One rebuild at a time, as the array queues them.
  d.state = DriveState::kRebuilding;
  d.rebuild_start_h = std::max(t, rebuild_free_h_);
  d.rebuild_end_h = d.rebuild_start_h + length;
  rebuild_free_h_ = d.rebuild_end_h;
}

void Lifetime::rebuild_done(int i, double t) {
  ++out_.rebuilds;
  if (s_.replacement == Replacement::kDrive) {
    install(i, t);  // the replacement SSD now holds the rebuilt data
    return;
  }
  drives_changed_ = true;
  Drive& d = drives_[static_cast<std::size_t>(i)];
  d.state = DriveState::kRetired;  // its data lives in the survivors' spare
  d.rebuild_end_h = kInfinity;
  redistribute(i);
}

// SSD i's chunks now live in the spare of SSDs that held no member of their extents (the
// rebuild's rule, docs/raid.md): RAID 10 in i's DataPac, RAID 5 anywhere. Spread evenly over
// those SSDs, they take over i's loss pairs: a RAID 5 group's survivors now share extents
// with most of the array, as a declustered layout does.
void Lifetime::redistribute(int i) {
  const auto at = [&](int a, int b) -> std::int64_t& {
    return shared_[static_cast<std::size_t>(a) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(b)];
  };
  const int pack = m_.map->datapac[static_cast<std::size_t>(i)];
  std::vector<int> to;
  for (int k = 0; k < n_; ++k)
    if (k != i && drives_[static_cast<std::size_t>(k)].state == DriveState::kUp && at(i, k) == 0 &&
        (s_.raid_type != raid::RaidType::kRaid10 || m_.map->datapac[static_cast<std::size_t>(k)] == pack))
      to.push_back(k);
  if (!to.empty()) {
    const auto parts = static_cast<std::int64_t>(to.size());
    for (int j = 0; j < n_; ++j) {
      const std::int64_t share = at(i, j);
      for (std::size_t x = 0; x < to.size(); ++x) {
        const std::int64_t part = share / parts + (static_cast<std::int64_t>(x) < share % parts ? 1 : 0);
        at(to[x], j) += part;
        at(j, to[x]) += part;
      }
    }
    const std::int64_t used = used_[static_cast<std::size_t>(i)];
    for (std::size_t x = 0; x < to.size(); ++x)
      used_[static_cast<std::size_t>(to[x])] += used / parts + (static_cast<std::int64_t>(x) < used % parts ? 1 : 0);
  }
  for (int j = 0; j < n_; ++j) at(i, j) = at(j, i) = 0;
  used_[static_cast<std::size_t>(i)] = 0;
}

// A new DataPac: its SSDs are new, its spare whole, and the layout as placed at the start
// again for them (the data copied onto the new SSDs from the old, waiting ones included: the
// copy itself is not timed). SSDs still retired in the other DataPac stay spread out.
void Lifetime::replace_pack(int pack, double t) {
  ++out_.datapac_replacements;
  pack_replacement_h_[static_cast<std::size_t>(pack)] = kInfinity;
  for (int i = 0; i < n_; ++i)
    if (m_.map->datapac[static_cast<std::size_t>(i)] == pack) install(i, t);
  spare_[static_cast<std::size_t>(pack)] = m_.spare_chunks_per_pack;
  shared_ = m_.map->shared;
  used_ = m_.map->used_chunks;
  for (int i = 0; i < n_; ++i)
    if (drives_[static_cast<std::size_t>(i)].state == DriveState::kRetired) redistribute(i);
  // SSDs of the other DataPac waiting for spare (RAID 5 shares it) may go on now.
  for (int i = 0; i < n_; ++i)
    if (drives_[static_cast<std::size_t>(i)].state == DriveState::kWaitingForSpare && take_spare(i)) start_rebuild(i, t);
}

// Both controllers down at once makes the data unavailable (never lost: the write cache is
// mirrored and vaulted); the hours count up to the horizon.
void Lifetime::controller_failed(int c, double t) {
  ++out_.controller_failures;
  const double back = t + s_.model.controller_replacement_hours;
  const int other = 1 - c;
  if (controller_up_h_[other] > t) {
    ++out_.unavailability_events;
    out_.unavailable_hours += std::max(0.0, std::min({back, controller_up_h_[other], m_.horizon_h}) - t);
  }
  controller_up_h_[c] = back;
  controller_fail_h_[c] = back + rng_.exponential(s_.model.controller_mtbf_hours);
}

}  // namespace afasim::reliability::detail
