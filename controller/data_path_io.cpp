// The I/O half of DataPath: planning host I/O onto RAID members, payload, and timing.
#include <algorithm>
#include <cstring>

#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using datapac::SsdOp;
using pool::ChunkAddr;
using raid::RaidType;
using sim::Status;
using sim::Time;

namespace {
bool is_missing(std::uint16_t mask, int m) { return (mask >> m) & 1u; }
}  // namespace

// ---------------------------------------------------------------------------------------
// Members

Status DataPath::read_member(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                             Work& w) {
  if (!is_missing(e.missing, m)) {
    const ChunkAddr a = e.members[static_cast<std::size_t>(m)];
    w.ops.push_back({a, offset, length, SsdOp::kRead, 0});
    if (has_payload() && out != nullptr)
      return ssds_[static_cast<std::size_t>(a.drive)]->read_payload(
          a.offset_bytes(allocator_.chunk_bytes()) + offset, {out, static_cast<std::size_t>(length)});
    return Status::ok();
  }
  if (e.type == RaidType::kRaid10) {
    const int mirror = raid::Layout::mirror_of(m);
    if (is_missing(e.missing, mirror)) return sim::io_error("both copies of a RAID10 strip are lost");
    return read_member(e, mirror, offset, length, out, w);
  }
  if (e.type != RaidType::kRaid5) return sim::io_error("a RAID0 member is lost");
  // RAID 5: the lost member's bytes are the XOR of every other member's.
  if (has_payload() && out != nullptr) std::memset(out, 0, static_cast<std::size_t>(length));
  std::vector<std::uint8_t>& tmp = scratch_[2];
  if (static_cast<std::int64_t>(tmp.size()) < length) tmp.resize(static_cast<std::size_t>(length));
  for (int o = 0; o < e.member_count; ++o) {
    if (o == m) continue;
    if (is_missing(e.missing, o)) return sim::io_error("two members of a RAID5 stripe are lost");
    const bool bytes = has_payload() && out != nullptr;
    AFASIM_RETURN_IF_ERROR(read_member(e, o, offset, length, bytes ? tmp.data() : nullptr, w));
    if (bytes) raid::xor_into(out, tmp.data(), length);
    w.xor_bytes += length;
  }
  return Status::ok();
}

Status DataPath::write_member(Extent& e, int m, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                              Work& w) {
  if (is_missing(e.missing, m)) return Status::ok();  // lost with its SSD; parity or mirror covers it
  const ChunkAddr a = e.members[static_cast<std::size_t>(m)];
  w.ops.push_back({a, offset, length, SsdOp::kWrite, 1});
  e.written_bytes[static_cast<std::size_t>(m)] += length;  // wear leveler heat
  wake_writers();
  const std::uint8_t* src = data;
  if (has_payload() && src == nullptr) {  // a write without data writes zeros
    if (static_cast<std::int64_t>(zeros_.size()) < length) zeros_.resize(static_cast<std::size_t>(length), 0);
    src = zeros_.data();
  }
  if (e.moving_member == m) AFASIM_RETURN_IF_ERROR(write_move_target(e, offset, length, src, w));
  if (has_payload())
    return note_payload_write(ssds_[static_cast<std::size_t>(a.drive)]->write_payload(
                                  a.offset_bytes(allocator_.chunk_bytes()) + offset, {src, static_cast<std::size_t>(length)}),
                              a.drive);
  return Status::ok();
}

Status DataPath::note_payload_write(Status st, int drive) {
  if (st.is_ok()) {
    if (host_disk_full_) {
      host_disk_full_ = false;
      emit(Severity::kInfo, "system", "", "host file system has space again: payload writes succeed");
    }
    return st;
  }
  if (st.code() == sim::Code::kNoSpace && !host_disk_full_) {
    host_disk_full_ = true;
    emit(Severity::kCritical, "system", "drive/" + std::to_string(drive + 1),
         "host file system full: the payload of drive " + std::to_string(drive + 1) +
             " cannot be written (" + st.message() + "); writes fail with ENOSPC until space is freed");
  }
  return st;
}

// ---------------------------------------------------------------------------------------
// Extents

Status DataPath::read_extent(Extent& e, std::int64_t offset, std::int64_t length, std::uint8_t* out, Work& w) {
  const raid::Layout& l = layout(e.type);
  Status st;
  l.for_each_piece(offset, length, [&](const raid::Piece& p) {
    if (!st.is_ok()) return;
    int m = p.member;
    if (e.type == RaidType::kRaid10) {
      // Alternate the copies by strip so that both sides of each pair serve reads.
      const int preferred = (p.row + p.data_index) % 2 == 0 ? m : raid::Layout::mirror_of(m);
      m = is_missing(e.missing, preferred) ? raid::Layout::mirror_of(preferred) : preferred;
    }
    st = read_member(e, m, p.member_offset, p.length, out ? out + p.buffer_offset : nullptr, w);
  });
  return st;
}

Status DataPath::write_extent(Extent& e, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                              Work& w) {
  const raid::Layout& l = layout(e.type);
  if (e.type == RaidType::kRaid5) {
    const std::int64_t row_bytes = l.row_data_bytes();
    std::int64_t pos = offset;
    while (pos < offset + length) {
      const std::int64_t row = pos / row_bytes;
      const std::int64_t in_row = pos % row_bytes;
      const std::int64_t n = std::min(row_bytes - in_row, offset + length - pos);
      AFASIM_RETURN_IF_ERROR(write_raid5_row(e, row, in_row, n, data ? data + (pos - offset) : nullptr, w));
      pos += n;
    }
    return Status::ok();
  }
  Status st;
  l.for_each_piece(offset, length, [&](const raid::Piece& p) {
    if (!st.is_ok()) return;
    const std::uint8_t* src = data ? data + p.buffer_offset : nullptr;
    st = write_member(e, p.member, p.member_offset, p.length, src, w);
    if (st.is_ok() && e.type == RaidType::kRaid10)
      st = write_member(e, raid::Layout::mirror_of(p.member), p.member_offset, p.length, src, w);
  });
  return st;
}

Status DataPath::write_raid5_row(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                 const std::uint8_t* data, Work& w) {
  const raid::Layout& l = raid5_;
  const std::int64_t S = l.strip_bytes();
  const int k = l.data_members();
  const int pm = l.parity_member(row);
  const std::int64_t base = row * S;  // offset of this row within each member's chunk
  const bool payload = has_payload();
  std::uint8_t* parity = scratch_[0].data();
  std::uint8_t* old = scratch_[1].data();
  ++w.parity_rows;

  if (row_offset == 0 && length == k * S) {
    // Full-stripe write: parity from the new data alone, no reads.
    if (payload) {
      std::memset(parity, 0, static_cast<std::size_t>(S));
      if (data != nullptr)
        for (int j = 0; j < k; ++j) raid::xor_into(parity, data + j * S, S);
    }
    w.xor_bytes += k * S;
    for (int j = 0; j < k; ++j)
      AFASIM_RETURN_IF_ERROR(write_member(e, l.data_member(row, j), base, S, data ? data + j * S : nullptr, w));
    AFASIM_RETURN_IF_ERROR(write_member(e, pm, base, S, payload ? parity : nullptr, w));
  } else {
    // Read-modify-write: new parity = old parity ^ old data ^ new data over the touched
    // bytes of the strip; a lost data member's old bytes are reconstructed first.
    const std::int64_t first = row_offset / S;
    const std::int64_t last = (row_offset + length - 1) / S;
    const std::int64_t lo = first == last ? row_offset % S : 0;
    const std::int64_t hi = first == last ? row_offset % S + length : S;
    const bool parity_lost = is_missing(e.missing, pm);
    if (!parity_lost) AFASIM_RETURN_IF_ERROR(read_member(e, pm, base + lo, hi - lo, payload ? parity + lo : nullptr, w));
    for (std::int64_t j = first; j <= last; ++j) {
      const std::int64_t start = std::max(row_offset, j * S);
      const std::int64_t end = std::min(row_offset + length, (j + 1) * S);
      const std::int64_t within = start - j * S;
      const std::int64_t n = end - start;
      const int m = l.data_member(row, static_cast<int>(j));
      if (parity_lost) continue;  // no parity to keep: just write the data below
      AFASIM_RETURN_IF_ERROR(read_member(e, m, base + within, n, payload ? old : nullptr, w));
      if (payload) {
        raid::xor_into(parity + within, old, n);
        if (data != nullptr) raid::xor_into(parity + within, data + (start - row_offset), n);
      }
      w.xor_bytes += 2 * n;
    }
    for (std::int64_t j = first; j <= last; ++j) {
      const std::int64_t start = std::max(row_offset, j * S);
      const std::int64_t end = std::min(row_offset + length, (j + 1) * S);
      AFASIM_RETURN_IF_ERROR(write_member(e, l.data_member(row, static_cast<int>(j)), base + (start - j * S),
                                          end - start, data ? data + (start - row_offset) : nullptr, w));
    }
    if (!parity_lost)
      AFASIM_RETURN_IF_ERROR(write_member(e, pm, base + lo, hi - lo, payload ? parity + lo : nullptr, w));
  }
  if (invariants_.enabled() && payload && e.missing == 0) {
    std::string bad = check_row_parity(e, row);
    if (!bad.empty()) invariants_.violation(sim_.now(), "raid5.parity", bad);
  }
  return Status::ok();
}

std::string DataPath::check_row_parity(const Extent& e, std::int64_t row) const {
  const std::int64_t S = raid5_.strip_bytes();
  std::vector<std::uint8_t> acc(static_cast<std::size_t>(S), 0), tmp(static_cast<std::size_t>(S));
  for (int m = 0; m < e.member_count; ++m) {
    const ChunkAddr a = e.members[static_cast<std::size_t>(m)];
    Status st = ssds_[static_cast<std::size_t>(a.drive)]->read_payload(
        a.offset_bytes(allocator_.chunk_bytes()) + row * S, {tmp.data(), tmp.size()});
    if (!st.is_ok()) return "reading member " + std::to_string(m) + ": " + st.to_string();
    raid::xor_into(acc.data(), tmp.data(), S);
  }
  for (std::int64_t i = 0; i < S; ++i)
    if (acc[static_cast<std::size_t>(i)] != 0)
      return "volume " + std::to_string(e.volume_id) + " extent " + std::to_string(e.index) + " row " +
             std::to_string(row) + ": parity does not match the data at byte " + std::to_string(i);
  return "";
}

std::string DataPath::check_all_parity() const {
  if (!has_payload()) return "";
  for (const Extent& e : extents_) {
    if (e.member_count == 0 || e.type != RaidType::kRaid5 || e.missing != 0) continue;
    for (std::int64_t row = 0; row < raid5_.rows(); ++row) {
      std::string bad = check_row_parity(e, row);
      if (!bad.empty()) return bad;
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// Timing

Time DataPath::run_plan(const Work& w, Time start, Id c) {
  Time phase0_done = start;
  for (const auto& op : w.ops)
    if (op.phase == 0) phase0_done = std::max(phase0_done, backend(start, c, op.addr, op.offset_in_chunk, op.length, op.op));
  Time done = phase0_done;
  for (const auto& op : w.ops)
    if (op.phase == 1) done = std::max(done, backend(phase0_done, c, op.addr, op.offset_in_chunk, op.length, op.op));
  return done;
}

void DataPath::complete(IoCallback& done, Status status, Time submit, Time at) {
  sim_.at(at, [cb = std::move(done), status = std::move(status), submit, at]() mutable {
    cb(IoCompletion{std::move(status), submit, at});
  });
}

// ---------------------------------------------------------------------------------------
// Host I/O

void DataPath::complete_on(Id c, const HostIo& io, IoCallback& done, Status status, Time submit, Time at) {
  const std::uint64_t epoch = ctl(c).epoch;
  const std::uint64_t power = power_epoch_;
  sim_.at(at, [this, c, epoch, power, io, cb = std::move(done), status = std::move(status), submit]() mutable {
    if (power != power_epoch_) {
      cb(IoCompletion{sim::unavailable("the array lost power"), submit, sim_.now()});
      return;
    }
    if (epoch != ctl(c).epoch) {
      // The controller failed before it could answer: the host's multipath retries on the
      // survivor, which answers once it owns the volume (the work itself was done).
      if (parked_.size() >= kMaxParked) {
        cb(IoCompletion{sim::unavailable("no path to volume " + std::to_string(io.volume_id)), submit, sim_.now()});
        return;
      }
      parked_.push_back(Parked{io, false, std::move(status), std::move(cb), submit});
      release_parked();
      return;
    }
    cb(IoCompletion{std::move(status), submit, sim_.now()});
  });
}

void DataPath::submit(const HostIo& io, IoCallback done) { submit_at(io, std::move(done), sim_.now()); }

Status DataPath::allocate_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
  // All or nothing: a write that needs a new extent and finds none is refused before any
  // byte lands.
  const std::int64_t ext = extent_bytes(v.raid_type);
  const std::int64_t end = offset + length;
  std::vector<std::int64_t> fresh;
  for (std::int64_t idx = offset / ext; idx <= (end - 1) / ext; ++idx) {
    if (v.map[static_cast<std::size_t>(idx)] != kNoExtent) continue;
    auto e = allocate_extent(v, idx);
    Status persisted = e.is_ok() ? notify_extent(ExtentChange::kAllocated, extents_[*e]) : Status::ok();
    if (!e.is_ok() || !persisted.is_ok()) {
      if (e.is_ok()) release_extent(*e);
      for (std::int64_t f : fresh) {
        const std::uint32_t fid = v.map[static_cast<std::size_t>(f)];
        (void)notify_extent(ExtentChange::kReleased, extents_[fid]);
        release_extent(fid);
      }
      return !e.is_ok() ? sim::no_space("pool has no free extent for volume " + std::to_string(v.id) + ": " +
                                        e.status().message())
                        : persisted;
    }
    fresh.push_back(idx);
  }
  return Status::ok();
}

void DataPath::submit_at(const HostIo& io, IoCallback done, Time submitted) {
  const Time now = sim_.now();
  VolumeRuntime* v = find_volume(io.volume_id);
  const CostModel& cost = options_.cost;
  if (v == nullptr) {
    complete(done, sim::not_found("no volume " + std::to_string(io.volume_id)), submitted, now);
    return;
  }
  if (!mains_on_) {
    complete(done, sim::unavailable("the array is powered off"), submitted, now);
    return;
  }
  const Id c = owner(io.volume_id);
  if (c == 0) {
    // No controller owns the volume: a takeover or a boot is under way. The host's
    // multipath driver retries until a path answers; a bounded queue stands for that.
    const bool coming = serving(1) || serving(2);
    if (!coming || parked_.size() >= kMaxParked) {
      complete(done, sim::unavailable("no controller serves volume " + std::to_string(v->id) + " now"), submitted, now);
      return;
    }
    parked_.push_back(Parked{io, true, Status::ok(), std::move(done), submitted});
    return;
  }
  const auto ci = static_cast<std::size_t>(c - 1);
  sim::Station& cpu = cores_[ci];
  ControllerIoStats& cstats = controller_stats_[ci];
  ++cstats.host_ios;
  // ALUA: I/O that arrives at the other controller is forwarded over the link (active/
  // non-optimized), paying its latency each way and the payload's transfer.
  Time start = now, back = 0;
  const Id arrival = io.arrival_controller;
  if (arrival != 0 && arrival != c && link_up_ && serving(arrival)) {
    ++controller_stats_[static_cast<std::size_t>(arrival - 1)].forwarded_ios;
    auto& link = interconnect_[static_cast<std::size_t>(arrival - 1)];
    start = (io.op == IoOp::kWrite ? link.transfer(now, io.length_bytes) : now) + cost.interconnect_latency_ns;
    back = cost.interconnect_latency_ns + (io.op == IoOp::kRead ? sim::transfer_time(io.length_bytes, cost.interconnect_bytes_per_second) : 0);
  }
  auto finish = [&](Status st, Time at) { complete_on(c, io, done, std::move(st), submitted, at + back); };
  auto fail = [&](Status st) {
    ++v->stats.errors;
    finish(std::move(st), cpu.serve(start, cost.host_io_ns));
  };
  if (io.op != IoOp::kFlush) {
    if (io.length_bytes <= 0) return fail(sim::invalid_argument("empty I/O"));
    if (io.offset_bytes < 0 || io.offset_bytes > v->capacity_bytes - io.length_bytes)
      return fail(Status(sim::Code::kOutOfRange, "I/O [" + std::to_string(io.offset_bytes) + ", +" +
                                                    std::to_string(io.length_bytes) + ") past the end of volume " +
                                                    std::to_string(v->id) + " (" + std::to_string(v->capacity_bytes) +
                                                    " bytes)"));
  }
  if (v->lost_extents > 0)
    return fail(sim::io_error("volume " + std::to_string(v->id) + " has failed: data lost beyond what " +
                              std::string(raid::raid_type_name(v->raid_type)) + " tolerates"));

  const std::int64_t ext = extent_bytes(v->raid_type);
  Work& w = work_;
  w.clear();
  Status st;
  switch (io.op) {
    case IoOp::kFlush: {
      ++v->stats.other_ops;
      flush_volume(*v, c, io, done, start, submitted);
      return;
    }
    case IoOp::kTrim:
    case IoOp::kWriteZeroes: {
      do_trim(*v, io, c);
      ++v->stats.other_ops;
      if (io.op == IoOp::kWriteZeroes) {
        // The partial extents at either end are written with zeros.
        const std::int64_t end = io.offset_bytes + io.length_bytes;
        for (std::int64_t pos = io.offset_bytes; pos < end && st.is_ok();) {
          const std::int64_t idx = pos / ext;
          const std::int64_t within = pos % ext;
          const std::int64_t n = std::min(ext - within, end - pos);
          if (v->map[static_cast<std::size_t>(idx)] != kNoExtent && n < ext)
            st = write_through(*v, c, pos, n, nullptr, w);
          pos += n;
        }
      }
      Time t = cpu.serve(start, cost.host_io_ns + static_cast<Time>(w.ops.size()) * cost.backend_op_ns +
                                    static_cast<Time>(w.parity_rows) * cost.parity_op_ns + cost.parity_xor_ns(w.xor_bytes));
      t = run_plan(w, t, c) + cost.host_port_latency_ns;
      if (!st.is_ok()) ++v->stats.errors;
      finish(st, t);
      return;
    }
    case IoOp::kRead: {
      const bool hit = cache_read(*v, io.offset_bytes, io.length_bytes, nullptr, false);
      const std::int64_t end = io.offset_bytes + io.length_bytes;
      for (std::int64_t pos = io.offset_bytes; pos < end && st.is_ok() && !hit;) {
        const std::int64_t idx = pos / ext;
        const std::int64_t within = pos % ext;
        const std::int64_t n = std::min(ext - within, end - pos);
        std::uint8_t* out = io.read_buffer ? io.read_buffer + (pos - io.offset_bytes) : nullptr;
        const std::uint32_t id = v->map[static_cast<std::size_t>(idx)];
        if (id == kNoExtent) {
          if (out) std::memset(out, 0, static_cast<std::size_t>(n));  // a hole reads as zeros
        } else {
          st = read_extent(extents_[id], within, n, out, w);
        }
        pos += n;
      }
      if (!st.is_ok()) return fail(st);
      // What the cache holds is newer than the SSDs: it goes over what they returned.
      if (io.read_buffer != nullptr && has_payload()) cache_read(*v, io.offset_bytes, io.length_bytes, io.read_buffer, true);
      Time t = cpu.serve(start, cost.host_io_ns + static_cast<Time>(w.ops.size()) * cost.backend_op_ns +
                                    cost.parity_xor_ns(w.xor_bytes));
      t = run_plan(w, t, c);
      t = data_movers_[ci].transfer(t, io.length_bytes);
      auto& ports = host_ports_out_[ci];
      auto port = std::min_element(ports.begin(), ports.end(),
                                   [](const datapac::Link& a, const datapac::Link& b) { return a.busy_until() < b.busy_until(); });
      t = port->transfer(t, io.length_bytes) + cost.host_port_latency_ns;
      ++v->stats.read_ops;
      v->stats.read_bytes += io.length_bytes;
      v->stats.read_latency_ns.record(t + back - submitted);
      cstats.read_bytes += io.length_bytes;
      finish(Status::ok(), t);
      return;
    }
    case IoOp::kWrite: {
      if (Status a = allocate_range(*v, io.offset_bytes, io.length_bytes); !a.is_ok()) return fail(a);
      const bool cached = ctl(c).mode == CacheMode::kWriteBack && !io.fua &&
                          io.length_bytes < options_.cache.bypass_bytes;
      std::int64_t new_blocks = 0;
      st = cached ? write_back(*v, c, io, w, new_blocks)
                  : write_through(*v, c, io.offset_bytes, io.length_bytes, io.write_data, w);
      if (!st.is_ok()) return fail(st);
      auto& ports = host_ports_in_[ci];
      auto port = std::min_element(ports.begin(), ports.end(),
                                   [](const datapac::Link& a, const datapac::Link& b) { return a.busy_until() < b.busy_until(); });
      Time t = port->transfer(start, io.length_bytes);
      t = data_movers_[ci].transfer(t, io.length_bytes);
      // Write-back: the owner's cores take the host I/O and the mirror's cost (the fill reads
      // of partial blocks too); the SSD work is the destage's. Write-through: the SSD work
      // is done now and the ack waits for it.
      t = cpu.serve(t, cost.host_io_ns + (cached ? cost.mirror_ns : 0) +
                           static_cast<Time>(w.ops.size()) * cost.backend_op_ns +
                           static_cast<Time>(w.parity_rows) * cost.parity_op_ns + cost.parity_xor_ns(w.xor_bytes));
      t = run_plan(w, t, c);
      if (cached) t = interconnect_[ci].transfer(t, io.length_bytes) + cost.interconnect_latency_ns;
      t += cost.host_port_latency_ns;
      ++v->stats.write_ops;
      v->stats.write_bytes += io.length_bytes;
      cstats.write_bytes += io.length_bytes;
      ControllerRuntime& cr = ctl(c);
      if (cached && new_blocks > 0 &&
          (!cr.waiting.empty() || cr.dirty_blocks - cr.waiting_blocks > cache_blocks_cap_)) {
        // The cache is full: the write is in it (and mirrored) but is acknowledged only when
        // destage has made room for it — the host sees the back end's rate.
        if (cr.waiting.size() >= options_.cache.max_waiting_writes) {
          ++v->stats.errors;
          finish(sim::unavailable("write cache of controller " + ctl_name(c) + " is full"), t);
        } else {
          cr.waiting.push_back(Waiter{v->id, new_blocks, t + back, submitted, std::move(done)});
          cr.waiting_blocks += new_blocks;
        }
      } else {
        v->stats.write_latency_ns.record(t + back - submitted);
        finish(Status::ok(), t);
      }
      if (cached) evict_clean(c);
      pump_destage(c);
      return;
    }
  }
}

void DataPath::do_trim(VolumeRuntime& v, const HostIo& io, Id c) {
  // Only whole extents are unmapped (docs/capacity.md): a thin volume gives them back to the
  // pool; a fixed one keeps them and zeroes their members so that parity stays whole. Cached
  // blocks of those extents go with them.
  const std::int64_t ext = extent_bytes(v.raid_type);
  const std::int64_t first = (io.offset_bytes + ext - 1) / ext;
  const std::int64_t last = (io.offset_bytes + io.length_bytes) / ext;  // exclusive
  if (first < last) drop_range(v, first * ext / kCacheBlock, last * ext / kCacheBlock, c);
  for (std::int64_t idx = first; idx < last; ++idx) {
    const std::uint32_t id = v.map[static_cast<std::size_t>(idx)];
    if (id == kNoExtent) continue;
    check_writer(v, c);
    if (v.provisioning == Provisioning::kThin) {
      if (notify_extent(ExtentChange::kReleased, extents_[id]).is_ok()) release_extent(id);
      continue;
    }
    abort_move(id, "the extent was trimmed");
    Extent& e = extents_[id];
    for (int m = 0; m < e.member_count; ++m) {
      if (is_missing(e.missing, m)) continue;
      const ChunkAddr a = e.members[static_cast<std::size_t>(m)];
      work_.ops.push_back({a, 0, allocator_.chunk_bytes(), SsdOp::kTrim, 1});
      if (has_payload())
        (void)ssds_[static_cast<std::size_t>(a.drive)]->trim_payload(a.offset_bytes(allocator_.chunk_bytes()),
                                                                     allocator_.chunk_bytes());
    }
  }
}

}  // namespace afasim::controller
