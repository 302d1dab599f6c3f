// The data path of one host I/O: owner, forwarding, thin map, cache, RAID, timing. The QoS
// gate in front of it: io_qos.cpp.
#include "controller/io_orchestrator.h"

#include <algorithm>
#include <tuple>
#include <cstring>

#include "controller/controller_pair.h"
#include "controller/extent_mover.h"
#include "controller/write_cache.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

IoOrchestrator::IoOrchestrator(ArrayContext& ctx, ControllerPair& pair, WriteCache& cache, ExtentMover& mover)
    : ctx_(ctx), pair_(pair), cache_(cache), mover_(mover) {}

IoOrchestrator::~IoOrchestrator() = default;

// ---------------------------------------------------------------------------------------
// Completion and parking

void IoOrchestrator::complete(IoCallback& done, Status status, Time submitted, Time at) {
  ctx_.sim.at(at, [cb = std::move(done), status = std::move(status), submitted, at]() mutable {
    cb(IoCompletion{std::move(status), submitted, at});
  });
}

void IoOrchestrator::complete_on(Id c, Id volume_id, IoCallback& done, Status status, Time submitted, Time at) {
  complete_on(c, pair_.epoch(c), pair_.power_epoch(), volume_id, done, std::move(status), submitted, at);
}

void IoOrchestrator::complete_on(Id c, std::uint64_t epoch, std::uint64_t power, Id volume_id, IoCallback& done,
                                 Status status, Time submitted, Time at) {
  ctx_.sim.at(at, [this, c, epoch, power, volume_id, cb = std::move(done), status = std::move(status), submitted]() mutable {
    if (power != pair_.power_epoch()) {
      cb(IoCompletion{sim::unavailable("the array lost power"), submitted, ctx_.sim.now()});
      return;
    }
    if (epoch != pair_.epoch(c)) {
      // The controller failed before it could answer: the host's multipath retries on the
      // survivor, which answers once it owns the volume (the work itself was done).
      if (parked_.size() >= kMaxParked) {
        cb(IoCompletion{sim::unavailable("no path to volume " + std::to_string(volume_id)), submitted,
                        ctx_.sim.now()});
        return;
      }
      HostIo io;
      io.volume_id = volume_id;
      parked_.push_back(Parked{io, false, std::move(status), std::move(cb), submitted});
      release_parked();
      return;
    }
    cb(IoCompletion{std::move(status), submitted, ctx_.sim.now()});
  });
}

void IoOrchestrator::park_acknowledged(CacheWaiter& w) {
  HostIo io;
  io.op = IoOp::kWrite;
  io.volume_id = w.volume_id;
  parked_.push_back(Parked{io, false, Status::ok(), std::move(w.done), w.submitted});
}

void IoOrchestrator::release_parked() {
  const std::size_t n = parked_.size();
  for (std::size_t i = 0; i < n && !parked_.empty(); ++i) {
    Parked p = std::move(parked_.front());
    parked_.pop_front();
    const Id o = pair_.mains_on() ? pair_.owner(p.io.volume_id) : 0;
    if (o == 0) {
      if (pair_.mains_on() && (pair_.serving(1) || pair_.serving(2))) parked_.push_back(std::move(p));
      else
        p.done(IoCompletion{sim::unavailable("no controller serves volume " + std::to_string(p.io.volume_id)),
                            p.submitted, ctx_.sim.now()});
    } else if (p.execute) {
      run(p.io, std::move(p.done), p.submitted);
    } else {
      const Time t = ctx_.hw.cores(o).serve(ctx_.sim.now(), ctx_.options.cost.core_ns(Work::host())) +
                     ctx_.options.cost.host_port_latency_ns;
      complete_on(o, p.io.volume_id, p.done, std::move(p.status), p.submitted, t);
    }
  }
}

void IoOrchestrator::fail_parked(const Status& status) {
  std::deque<Parked> parked = std::move(parked_);
  parked_.clear();
  for (Parked& p : parked) p.done(IoCompletion{status, p.submitted, ctx_.sim.now()});
}

void IoOrchestrator::fail_parked(Id volume_id, const Status& status) {
  // Taken out first: a callback may submit I/O that parks.
  std::vector<Parked> gone;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->io.volume_id != volume_id) {
      ++it;
      continue;
    }
    gone.push_back(std::move(*it));
    it = parked_.erase(it);
  }
  for (Parked& p : gone) p.done(IoCompletion{status, p.submitted, ctx_.sim.now()});
}

// ---------------------------------------------------------------------------------------
// The route

[[gnu::hot]] void IoOrchestrator::run(const HostIo& io, IoCallback&& done, Time submitted) {
  const Time now = ctx_.sim.now();
  VolumeRuntime* v = ctx_.volumes.find(io.volume_id);
  if (v == nullptr) return complete(done, sim::not_found("no volume " + std::to_string(io.volume_id)), submitted, now);
  if (!pair_.mains_on()) return complete(done, sim::unavailable("the array is powered off"), submitted, now);
  const Id c = ControllerPair::owner_of(*v);
  if (c == 0) {
    // No controller owns the volume: a takeover or a boot is under way. The host's
    // multipath driver retries until a path answers; a bounded queue stands for that.
    const bool coming = pair_.serving(1) || pair_.serving(2);
    if (!coming || parked_.size() >= kMaxParked)
      return complete(done, sim::unavailable("no controller serves volume " + std::to_string(v->id) + " now"),
                      submitted, now);
    parked_.push_back(Parked{io, true, Status::ok(), std::move(done), submitted});
    return;
  }
  ++ctx_.hw.stats(c).host_ios;
  // ALUA: I/O that arrives at the other controller is forwarded over the link (active/
  // non-optimized), paying its latency each way and the payload's transfer.
  const CostModel& cost = ctx_.options.cost;
  Request r{io, done, submitted, *v, c, now, 0};
  const Id arrival = io.arrival_controller;
  if (arrival != 0 && arrival != c && pair_.link_up() && pair_.serving(arrival)) {
    ++ctx_.hw.stats(arrival).forwarded_ios;
    datapac::Link& link = ctx_.hw.interconnect(arrival);
    r.start = (io.op == IoOp::kWrite ? link.transfer(now, io.length_bytes) : now) + cost.interconnect_latency_ns;
    r.back = cost.interconnect_latency_ns +
             (io.op == IoOp::kRead ? sim::transfer_time(io.length_bytes, cost.interconnect_bytes_per_second) : 0);
  }
  if (!admit(r)) return;
  plan_.clear();
  switch (io.op) {
    case IoOp::kFlush: return run_flush(r);
    case IoOp::kTrim:
    case IoOp::kWriteZeroes: return run_trim(r);
    case IoOp::kRead: return run_read(r);
    case IoOp::kWrite: return run_write(r);
  }
}

// Inline in run(), its one caller (its refusals are out of line: refuse()).
[[gnu::hot, gnu::always_inline]] inline bool IoOrchestrator::admit(Request& r) {
  const HostIo& io = r.io;
  const pool::ThinVolume& t = *r.v.thin;
  if (io.op != IoOp::kFlush) {
    if (io.length_bytes <= 0) return refuse(r, Refusal::kEmpty);
    if (io.offset_bytes < 0 || io.offset_bytes > t.capacity_bytes - io.length_bytes)
      return refuse(r, Refusal::kOutOfRange);
  }
  if (t.lost_extents > 0) return refuse(r, Refusal::kVolumeFailed);
  return true;
}

// Out of admit()'s line: building a message in it made every I/O's admit save registers and
// set up a frame for the strings.
[[gnu::cold, gnu::noinline]] bool IoOrchestrator::refuse(Request& r, Refusal why) {
  const HostIo& io = r.io;
  const pool::ThinVolume& t = *r.v.thin;
  switch (why) {
    case Refusal::kEmpty:
      fail(r, sim::invalid_argument("empty I/O"));
      break;
    case Refusal::kOutOfRange:
      fail(r, Status(sim::Code::kOutOfRange, "I/O [" + std::to_string(io.offset_bytes) + ", +" +
                                                 std::to_string(io.length_bytes) + ") past the end of volume " +
                                                 std::to_string(r.v.id) + " (" + std::to_string(t.capacity_bytes) +
                                                 " bytes)"));
      break;
    case Refusal::kVolumeFailed:
      fail(r, sim::io_error("volume " + std::to_string(r.v.id) + " has failed: data lost beyond what " +
                            std::string(raid::raid_type_name(t.raid_type)) + " tolerates"));
      break;
  }
  return false;
}

void IoOrchestrator::finish(Request& r, Status status, Time at) {
  complete_on(r.c, r.io.volume_id, r.done, std::move(status), r.submitted, at + r.back);
}

void IoOrchestrator::fail(Request& r, Status status) {
  ++r.v.stats.errors;
  finish(r, std::move(status), ctx_.hw.cores(r.c).serve(r.start, ctx_.options.cost.core_ns(Work::host())));
}

[[gnu::hot]] void IoOrchestrator::run_read(Request& r) {
  const HostIo& io = r.io;
  VolumeRuntime& v = r.v;
  // Data the array lost (an acknowledged write with no copy left, a block with no readable
  // source): the SSDs hold bytes that are not the data.
  if (std::int64_t at; ctx_.lost_data.touches(v, io.offset_bytes, io.length_bytes, at)) [[unlikely]]
    return fail(r, sim::io_error("volume " + std::to_string(v.id) + " byte " + std::to_string(at) +
                                 ": its data was lost (docs/faults.md \"Lost data\"); it reads as an error until "
                                 "written again"));
  const sim::Divisor& ext_div = ctx_.thin.extent_divisor(v.raid_type());
  const std::int64_t ext = ext_div.value();
  const bool hit = cache_.read(v, io.offset_bytes, io.length_bytes, nullptr, false);
  // A hit on blocks whose bytes went at their destage (WriteCache::mark_clean) reads them from
  // the SSDs all the same, in a plan of its own: bytes only, the timing is the hit's.
  const bool refetch = hit && io.read_buffer != nullptr && ctx_.has_payload() &&
                       cache_.lacks_bytes(v, io.offset_bytes, io.length_bytes);
  raid::Plan& plan = hit ? bytes_plan_ : plan_;
  if (refetch) bytes_plan_.clear();
  const std::int64_t end = io.offset_bytes + io.length_bytes;
  Status st;
  for (std::int64_t pos = io.offset_bytes; pos < end && st.is_ok() && (!hit || refetch);) {
    const std::int64_t within = ext_div.mod(pos);
    const std::int64_t n = std::min(ext - within, end - pos);
    std::uint8_t* out = io.read_buffer ? io.read_buffer + (pos - io.offset_bytes) : nullptr;
    const std::uint32_t id = v.thin->map[static_cast<std::size_t>(ext_div.div(pos))];
    if (id != pool::ThinMap::kNoExtent) st = ctx_.raid.plan_read(ctx_.thin.extents()[id], within, n, out, plan);
    else if (out) std::memset(out, 0, static_cast<std::size_t>(n));  // a hole reads as zeros
    pos += n;
  }
  if (st.is_ok()) st = ctx_.execute(plan_);
  if (st.is_ok() && refetch) st = ctx_.execute(bytes_plan_);
  if (st.code() == sim::Code::kIoError && io.read_buffer != nullptr && ctx_.has_payload() && v.cache.cached_blocks != 0)
    st = read_around_cache(v, io);
  if (!st.is_ok()) return fail(r, st);
  // What the cache holds is newer than the SSDs: it goes over what they returned.
  if (io.read_buffer != nullptr && ctx_.has_payload()) cache_.read(v, io.offset_bytes, io.length_bytes, io.read_buffer, true);
  // The bytes are in place; the time is the performance model's (controller/timing.h): the
  // read cache and read-ahead, the cores, DRAM, the SSDs, the host port.
  const Timing::ReadStart start = ctx_.timing.begin_read(r.c, v.id, io.offset_bytes, io.length_bytes, hit);
  if (start.ahead_length > 0) plan_read_ahead(v, r.c, start.ahead_offset, start.ahead_length);
  ++v.stats.read_ops;
  v.stats.read_bytes += io.length_bytes;
  ctx_.hw.stats(r.c).read_bytes += io.length_bytes;
  const std::uint32_t id = start_timed(r);
  ctx_.timing.host_read(r.c, v.id, io.offset_bytes, io.length_bytes, start, plan_,
                        [this, id](Time) { read_timed(id); });
}

bool IoOrchestrator::touches_media_error(VolumeRuntime& v, const HostIo& io) {
  // A write into rows with an unreadable block goes through, not into the cache: when it cannot
  // reach the SSDs (two unreadable blocks of one RAID 5 column, a rebuild's punctured one among
  // them, and the write covering one) the host hears so now. Cached, it was acknowledged, its
  // destage failed for ever, and a stop lost it (review 39).
  if (!ctx_.raid.any_media_error()) return false;
  const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
  const std::int64_t end = io.offset_bytes + io.length_bytes;
  for (std::int64_t pos = io.offset_bytes; pos < end;) {
    const std::int64_t n = std::min(ext - pos % ext, end - pos);
    if (const raid::Extent* e = ctx_.thin.extent_at(*v.thin, pos); e != nullptr && ctx_.raid.rows_have_media_error(*e, pos % ext, n))
      return true;
    pos += n;
  }
  return false;
}

Status IoOrchestrator::read_around_cache(VolumeRuntime& v, const HostIo& io) {
  // The SSDs failed a read whose range the write cache partly holds: the failure may lie
  // under a cached block (an unreadable block a rewrite covers, its destage not yet done), and
  // a cached block needs no bytes from the SSDs. Read again, the runs the cache lacks only
  // (bytes only: the timing stays the whole read's). Until 2026-12-06 such a read failed
  // though every byte it returns was readable.
  const sim::Divisor& ext_div = ctx_.thin.extent_divisor(v.raid_type());
  bytes_plan_.clear();
  AFASIM_RETURN_IF_ERROR(cache_.for_each_uncached_run(
      v, io.offset_bytes, io.offset_bytes + io.length_bytes, ext_div.value(), [&](std::int64_t pos, std::int64_t n) {
        const std::uint32_t id = v.thin->map[static_cast<std::size_t>(ext_div.div(pos))];
        std::uint8_t* out = io.read_buffer + (pos - io.offset_bytes);
        if (id != pool::ThinMap::kNoExtent) return ctx_.raid.plan_read(ctx_.thin.extents()[id], ext_div.mod(pos), n, out, bytes_plan_);
        std::memset(out, 0, static_cast<std::size_t>(n));  // a hole reads as zeros
        return Status::ok();
      }));
  return ctx_.execute(bytes_plan_);
}

[[gnu::hot, gnu::always_inline]] inline void IoOrchestrator::prefetch_descriptor(const pool::ThinMap::MapView& map,
                                                                             std::size_t index) {
  if (index >= map.extent_count) return;
  if (const std::uint32_t id = map.extent_ids[index]; id != pool::ThinMap::kNoExtent) ctx_.thin.extents().prefetch(id);
}

[[gnu::hot]] void IoOrchestrator::prefetch(const HostIo& io, Id owner) {
  if (io.op != IoOp::kRead) return;
  // The map entry through the pool's table of maps, not through the volume's runtime and thin
  // volume: a volume among many finds all three cold, and their lines (the runtime's, read by
  // owner() below; the thin volume's, read by admit() after the QoS gate) then come in beside
  // the map entry's instead of one after the other.
  const pool::ThinMap::MapView map = ctx_.thin.map_view(io.volume_id);
  if (map.extent_ids == nullptr || io.offset_bytes < 0) return;
  sim::prefetch(ctx_.thin.address(io.volume_id));
  // The first extent's descriptor, read by the RAID plan: a random read finds it cold.
  const sim::Divisor& ext_div = ctx_.thin.extent_divisor(map.raid_type);
  const auto index = static_cast<std::size_t>(ext_div.div(io.offset_bytes));
  prefetch_descriptor(map, index);
  if (owner != 0) ctx_.timing.prefetch_read(owner, io.volume_id, io.offset_bytes);
}

[[gnu::hot]] void IoOrchestrator::hint(const HostIo& io) {
  if (io.offset_bytes < 0) return;
  if (io.op == IoOp::kRead) return hint_read(io);
  if (io.op != IoOp::kWrite) return;
  cache_.prefetch(io.volume_id, io.offset_bytes / WriteCache::kBlockBytes);
  if (const Id c = pair_.owner(io.volume_id); c != 0) ctx_.timing.prefetch_cache_slot(c, io.volume_id, io.offset_bytes);
}

[[gnu::hot]] void IoOrchestrator::hint_read(const HostIo& io) {
  // Step 2 of the read hinted before: its map entry has come in (or the map changed since:
  // the entry is read as it is now, and a stale index is checked against the map's size), and
  // its volume's runtime, so its owner is known without a wait: its read-cache slot and its
  // volume's stream lines.
  if (const HintedRead prior = hinted_read_; prior.volume_id != 0) {
    prefetch_descriptor(ctx_.thin.map_view(prior.volume_id), prior.index);
    if (const Id c = pair_.owner(prior.volume_id); c != 0) ctx_.timing.prefetch_read(c, prior.volume_id, prior.offset_bytes);
  }
  // Step 1 of this one: its map entry's address, which takes no load but the view's, and the
  // lines of its volume the read will touch first (a volume among many finds them cold): its
  // runtime (id, thin map, claims, counters; then the write cache's count), its thin volume,
  // its QoS state.
  hinted_read_.volume_id = 0;
  const pool::ThinMap::MapView map = ctx_.thin.map_view(io.volume_id);
  if (map.extent_ids == nullptr) return;
  const std::int64_t index = ctx_.thin.extent_divisor(map.raid_type).div(io.offset_bytes);
  if (index >= static_cast<std::int64_t>(map.extent_count)) return;
  sim::prefetch(&map.extent_ids[index]);
  hinted_read_ = HintedRead{io.volume_id, static_cast<std::uint32_t>(index), io.offset_bytes};
  if (const VolumeRuntime* v = ctx_.volumes.address(io.volume_id); v != nullptr) {
    sim::prefetch(v);
    sim::prefetch(&v->cache);
  }
  sim::prefetch(ctx_.thin.address(io.volume_id));
  if (qos_) qos_->prefetch(io.volume_id);
}

void IoOrchestrator::plan_read_ahead(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length) {
  // What the stream detector reads ahead: the allocated extents of the range, within the
  // volume (a hole or the end reads nothing), less the segments the read cache already holds
  // or is filling (a stream declared again after the detector evicted it asks for the window
  // its old self read; model review 17: 16 sequential readers on one LUN, 4,124 IOPS against
  // 140,623 random, each host read behind up to 4 MiB of SSD and DRAM work). Timing only: no
  // bytes move.
  std::tie(offset, length) = ctx_.timing.read_ahead_span(c, v.id, offset, length);
  const std::int64_t end = std::min(offset + length, v.thin->capacity_bytes);
  const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
  ahead_plan_.clear();
  for (std::int64_t pos = offset; pos < end;) {
    const std::int64_t within = pos % ext;
    const std::int64_t n = std::min(ext - within, end - pos);
    const std::uint32_t id = v.thin->map[static_cast<std::size_t>(pos / ext)];
    if (id != pool::ThinMap::kNoExtent && !ctx_.raid.plan_read(ctx_.thin.extents()[id], within, n, nullptr, ahead_plan_).is_ok())
      return;
    pos += n;
  }
  if (end > offset) ctx_.timing.read_ahead(c, v.id, offset, end - offset, ahead_plan_);
}

// Inline at each caller (a read's and a write's are one each): the call and its register
// saves cost about as much as the stores.
[[gnu::hot, gnu::always_inline]] inline std::uint32_t IoOrchestrator::start_timed(Request& r) {
  const std::uint32_t id = inflight_.acquire();
  InFlight& f = inflight_[id];
  f.volume_id = r.io.volume_id;
  f.done = std::move(r.done);
  f.submitted = r.submitted;
  f.back = r.back;
  f.c = r.c;
  f.epoch = pair_.epoch(r.c);
  f.power = pair_.power_epoch();
  f.cached = false;
  f.new_blocks = 0;
  return id;
}

// Inline at each caller: a reset and a push onto the free list, less than a call's cost.
[[gnu::hot, gnu::always_inline]] inline void IoOrchestrator::free_timed(std::uint32_t id) {
  inflight_[id].done.reset();  // (not `= nullptr`: that builds an empty callback and moves it in)
  inflight_.release(id);
}

[[gnu::hot]] void IoOrchestrator::read_timed(std::uint32_t id) {
  InFlight& f = inflight_[id];
  complete_timed(id, ctx_.sim.now() + f.back);
}

[[gnu::hot]] void IoOrchestrator::complete_timed(std::uint32_t id, Time at) {
  InFlight& f = inflight_[id];
  if (at == ctx_.sim.now() && f.power == pair_.power_epoch() && f.epoch == pair_.epoch(f.c)) {
    // Answered from the timing model's own completion event (no forwarding leg): no second
    // event at the same time. The callback runs from its slot, which is freed once it returns
    // (an I/O the host submits meanwhile takes another slot): moving it out first was a call, a
    // copy of its storage and a destruction more per read.
    f.done(IoCompletion{Status::ok(), f.submitted, at});
    free_timed(id);
    return;
  }
  complete_on(f.c, f.epoch, f.power, f.volume_id, f.done, Status::ok(), f.submitted, at);
  free_timed(id);
}

void IoOrchestrator::run_write(Request& r) {
  const HostIo& io = r.io;
  VolumeRuntime& v = r.v;
  if (Status a = ctx_.thin.allocate_range(*v.thin, io.offset_bytes, io.length_bytes); !a.is_ok()) return fail(r, a);
  const bool cached = pair_.mode(r.c) == CacheMode::kWriteBack && !io.fua &&
                      io.length_bytes < ctx_.options.cache.bypass_bytes && !touches_media_error(v, io);
  std::int64_t new_blocks = 0;
  Status st;
  if (cached) {
    st = cache_.write_back(v, r.c, io, plan_, new_blocks);
  } else {
    st = plan_write_through(v, r.c, io.offset_bytes, io.length_bytes, io.write_data, plan_);
    if (st.is_ok()) st = ctx_.execute(plan_);
    cache_.end_write_through(v, st.is_ok());
  }
  if (!st.is_ok()) return fail(r, st);
  ctx_.lost_data.clear(v, io.offset_bytes, io.length_bytes);  // the new bytes are in place
  if (io.fua) save_lost_data_changes();
  ++v.stats.write_ops;
  v.stats.write_bytes += io.length_bytes;
  ctx_.hw.stats(r.c).write_bytes += io.length_bytes;
  // Write-back: FC in, DRAM, the core's command and mirroring work, the mirror into the
  // peer's DRAM, the acknowledgement; the SSD work is the destage's. Write-through: the SSD
  // work is done now and the ack waits for it (controller/timing.h).
  const std::uint32_t id = start_timed(r);
  inflight_[id].cached = cached;
  inflight_[id].new_blocks = new_blocks;
  if (cached)
    ctx_.timing.host_write(r.c, v.id, io.offset_bytes, io.length_bytes, plan_, [this, id](Time) { write_timed(id); });
  else
    ctx_.timing.write_through(r.c, v.id, io.offset_bytes, io.length_bytes, plan_, [this, id](Time) { write_timed(id); });
  if (cached) cache_.evict_clean(r.c);
  cache_.pump_destage(r.c);
}

void IoOrchestrator::write_timed(std::uint32_t id) {
  InFlight& f = inflight_[id];
  const Time at = ctx_.sim.now() + f.back;
  VolumeRuntime* v = ctx_.volumes.find(f.volume_id);
  // The cache is full: the write is in it (and mirrored) but is acknowledged only when
  // destage has made room for it — the host sees the back end's rate.
  if (v != nullptr && f.cached && f.epoch == pair_.epoch(f.c) && cache_.must_wait(f.c, f.new_blocks)) {
    if (cache_.waiting_full(f.c)) {
      ++v->stats.errors;
      complete_on(f.c, f.epoch, f.power, f.volume_id, f.done,
                  sim::unavailable("write cache of controller " + ArrayContext::controller_name(f.c) + " is full"),
                  f.submitted, at);
    } else {
      cache_.add_waiter(f.c, CacheWaiter{v->id, f.new_blocks, at, f.submitted, std::move(f.done)});
    }
    return free_timed(id);
  }
  complete_timed(id, at);
}

void IoOrchestrator::run_trim(Request& r) {
  const HostIo& io = r.io;
  VolumeRuntime& v = r.v;
  ++v.stats.other_ops;
  Status st = unmap(v, io, r.c, plan_);
  if (io.op == IoOp::kWriteZeroes) {
    // The partial extents at either end are written with zeros.
    const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
    const std::int64_t end = io.offset_bytes + io.length_bytes;
    for (std::int64_t pos = io.offset_bytes; pos < end && st.is_ok();) {
      const std::int64_t within = pos % ext;
      const std::int64_t n = std::min(ext - within, end - pos);
      if (ctx_.thin.extent_at(*v.thin, pos) != nullptr && n < ext)
        st = plan_write_through(v, r.c, pos, n, nullptr, plan_);
      pos += n;
    }
  }
  const Status done = ctx_.execute(plan_);
  if (st.is_ok()) st = done;
  cache_.end_write_through(v, st.is_ok());
  const CostModel& cost = ctx_.options.cost;
  Time t = ctx_.hw.cores(r.c).serve(r.start, cost.core_ns(Work::of(plan_).plus_host()));
  t = ctx_.hw.run_plan(plan_, t, r.c) + cost.host_port_latency_ns;
  if (!st.is_ok()) ++v.stats.errors;
  else ctx_.lost_data.clear(v, io.offset_bytes, io.length_bytes);  // the host gave the bytes up
  finish(r, st, t);
}

void IoOrchestrator::run_flush(Request& r) {
  // FLUSH: every block of the volume dirty now reaches the SSDs before the reply.
  ++r.v.stats.other_ops;
  const std::uint32_t id = start_timed(r);
  cache_.flush(r.v, r.c, [this, id](Time) { flush_timed(id); });
}

void IoOrchestrator::flush_timed(std::uint32_t id) {
  InFlight& f = inflight_[id];
  Status st;
  if (ctx_.options.payload == datapac::PayloadKind::kFile)
    for (int d = 0; d < ctx_.hw.drive_count(); ++d)
      if (ctx_.hw.ssd(d).state() == datapac::SsdState::kHealthy) st = ctx_.hw.ssd(d).flush_payload();
  VolumeRuntime* v = ctx_.volumes.find(f.volume_id);
  // Acknowledged writes of the volume that a destage could not put on the SSDs (a full host
  // disk): the FLUSH cannot say they are durable (hostile round 17: it replied success and
  // they were lost at the next start).
  if (v != nullptr && v->cache.failed_blocks > 0)
    st = Status(v->cache.destage_error, std::to_string(v->cache.failed_blocks * WriteCache::kBlockBytes) +
                                            " bytes of the volume's acknowledged writes could not be destaged");
  if (st.is_ok()) save_lost_data_changes();
  if (!st.is_ok() && v != nullptr) ++v->stats.errors;
  // The command on a core, then the reply (errors and flushes: the analytic cost model).
  const CostModel& cost = ctx_.options.cost;
  const Time t = ctx_.hw.cores(f.c).serve(ctx_.sim.now(), cost.core_ns(Work::host())) + cost.host_port_latency_ns;
  complete_on(f.c, f.epoch, f.power, f.volume_id, f.done, st, f.submitted, t + f.back);
  free_timed(id);
}

void IoOrchestrator::save_lost_data_changes() {
  // Lost data made readable again by writes since the last save: durable before a FLUSH or FUA
  // reply (hostile round 41: a kill -9 after a successful FLUSH brought the marks back).
  if (ctx_.lost_data.changes() == lost_changes_saved_) return;
  lost_changes_saved_ = ctx_.lost_data.changes();
  if (ctx_.save_state) ctx_.save_state();
}

Status IoOrchestrator::plan_write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                                          const std::uint8_t* data, raid::Plan& plan) {
  pair_.check_writer(v, c);
  std::int64_t lo, hi;
  const std::uint8_t* src = cache_.merge_write_through(v, c, offset, length, data, lo, hi, plan);
  const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
  for (std::int64_t pos = lo; pos < hi;) {
    const std::int64_t within = pos % ext;
    const std::int64_t n = std::min(ext - within, hi - pos);
    raid::Extent* e = ctx_.thin.extent_at(*v.thin, pos);
    AFASIM_ASSERT(e != nullptr, "write-through to an unallocated extent");
    AFASIM_RETURN_IF_ERROR(ctx_.raid.plan_write(*e, within, n, src ? src + (pos - lo) : nullptr, plan));
    pos += n;
  }
  return Status::ok();
}

Status IoOrchestrator::unmap(VolumeRuntime& v, const HostIo& io, Id c, raid::Plan& plan) {
  // Only whole extents are unmapped (docs/capacity.md): a thin volume gives them back to the
  // pool; a fixed one keeps them and zeroes their members so that parity stays whole. Cached
  // blocks of those extents go with them.
  const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
  const std::int64_t first = (io.offset_bytes + ext - 1) / ext;
  const std::int64_t last = (io.offset_bytes + io.length_bytes) / ext;  // exclusive
  if (first < last) cache_.drop_range(v, first * ext / WriteCache::kBlockBytes, last * ext / WriteCache::kBlockBytes, c);
  for (std::int64_t idx = first; idx < last; ++idx) {
    const std::uint32_t id = v.thin->map[static_cast<std::size_t>(idx)];
    if (id == pool::ThinMap::kNoExtent) continue;
    pair_.check_writer(v, c);
    raid::Extent& e = ctx_.thin.extents()[id];
    if (!v.thin->fixed) {
      if (ctx_.thin.notify(pool::ThinMap::Change::kReleased, e).is_ok()) {
        ctx_.thin.release(id);
        continue;
      }
      // The release could not be committed (a full host disk): the extent stays mapped with
      // its data. A TRIM may leave it so; a WRITE_ZEROES must read back zeros, so they are
      // written (it answered success and the old bytes stayed: hostile round 18).
      if (io.op == IoOp::kWriteZeroes) AFASIM_RETURN_IF_ERROR(plan_write_through(v, c, idx * ext, ext, nullptr, plan));
      continue;
    }
    mover_.abort(id, "the extent was trimmed");
    ctx_.raid.plan_trim(e, plan);
  }
  return Status::ok();
}

}  // namespace afasim::controller
