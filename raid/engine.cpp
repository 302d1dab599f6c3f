#include "raid/engine.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "sim/buggify.h"

namespace afasim::raid {

using sim::Status;

namespace {
bool power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace

// ---------------------------------------------------------------------------------------
// Construction

Status Engine::validate(const Geometry& g) {
  if (g.raid5_data_members < 2 || g.raid5_data_members > kMaxMembers - 1)
    return sim::invalid_argument("raid5 width must be 2+1 to " + std::to_string(kMaxMembers - 1) + "+1, got " +
                                 std::to_string(g.raid5_data_members) + "+1");
  if (g.raid10_pairs < 1 || g.raid10_pairs * 2 > kMaxMembers)
    return sim::invalid_argument("raid10_pairs must be 1 to " + std::to_string(kMaxMembers / 2));
  if (!power_of_two(g.strip_bytes) || g.strip_bytes < 4096 || g.chunk_bytes % g.strip_bytes != 0)
    return sim::invalid_argument("strip_bytes must be a power of two of at least 4096 that divides the " +
                                 std::to_string(g.chunk_bytes) + "-byte chunk, got " +
                                 std::to_string(g.strip_bytes));
  return Status::ok();
}

Engine::Engine(const Geometry& g, MemberStore* store)
    : geometry_(g),
      raid10_(Layout::raid10(g.raid10_pairs, g.strip_bytes, g.chunk_bytes)),
      raid5_(Layout::raid5(g.raid5_data_members, g.strip_bytes, g.chunk_bytes)),
      raid0_(Layout::raid0(g.raid5_data_members, g.strip_bytes, g.chunk_bytes)),
      store_(store) {}

const std::uint8_t* Engine::zeros(std::int64_t length) {
  if (static_cast<std::int64_t>(zeros_.size()) < length) zeros_.resize(static_cast<std::size_t>(length), 0);
  return zeros_.data();
}

// ---------------------------------------------------------------------------------------
// Members

Status Engine::read_lost_member(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                                Plan& plan) {
  if (e.type == RaidType::kRaid10) {
    const int mirror = Layout::mirror_of(m);
    if (e.is_missing(mirror)) return sim::io_error("both copies of a RAID10 strip are lost");
    return read_member(e, mirror, offset, length, out, plan);
  }
  if (e.type != RaidType::kRaid5) return sim::io_error("a RAID0 member is lost");
  // RAID 5: the lost member's bytes are the XOR of every other member's.
  if (out != nullptr) plan.steps.push_back({PlanStep::kZero, out, nullptr, length});
  for (int o = 0; o < e.member_count; ++o) {
    if (o == m) continue;
    if (e.is_missing(o)) return sim::io_error("two members of a RAID5 stripe are lost");
    std::uint8_t* tmp = out != nullptr ? plan.scratch(length) : nullptr;
    AFASIM_RETURN_IF_ERROR(read_member(e, o, offset, length, tmp, plan));
    if (out != nullptr) plan.steps.push_back({PlanStep::kXor, out, tmp, length});
    plan.xor_bytes += length;
  }
  return Status::ok();
}

void Engine::write_member(Extent& e, int m, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                          Plan& plan) {
  if (e.is_missing(m)) return;  // lost with its SSD; parity or mirror covers it
  MemberOp op = member_op(e, m, offset, length, MemberOpKind::kWrite);
  op.data = data;
  plan.ops.push_back(op);
  plan.member_writes = true;
  e.written_bytes[static_cast<std::size_t>(m)] += length;  // wear leveler heat
  if (e.moving_member != m) return;
  // A member being moved: the part already copied goes to the new chunk too (the copy
  // carries the rest when it gets there).
  const std::int64_t end = std::min(offset + length, e.move_copied_bytes);
  if (end <= offset) return;
  MemberOp target = op;
  target.addr = e.move_target;
  target.length = end - offset;
  target.member = -1;
  plan.ops.push_back(target);
  plan.move_target_bytes += end - offset;
}

// ---------------------------------------------------------------------------------------
// Extents

[[gnu::hot]] Status Engine::plan_read(Extent& e, std::int64_t offset, std::int64_t length, std::uint8_t* out, Plan& plan) {
  if (!has_payload()) out = nullptr;
  const Layout& l = layout(e.type);
  Status st;
  l.for_each_piece(offset, length, [&](const Piece& p) {
    if (!st.is_ok()) return;
    int m = p.member;
    if (e.type == RaidType::kRaid10) {
      // Alternate the copies by strip so that both sides of each pair serve reads.
      const int preferred = (p.row + p.data_index) % 2 == 0 ? m : Layout::mirror_of(m);
      m = e.is_missing(preferred) ? Layout::mirror_of(preferred) : preferred;
    }
    st = read_member(e, m, p.member_offset, p.length, out ? out + p.buffer_offset : nullptr, plan);
  });
  return st;
}

Status Engine::plan_write(Extent& e, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                          Plan& plan) {
  if (!has_payload()) data = nullptr;
  const Layout& l = layout(e.type);
  if (e.type == RaidType::kRaid5) {
    const std::int64_t row_bytes = l.row_data_bytes();
    std::int64_t pos = offset;
    while (pos < offset + length) {
      const std::int64_t row = pos / row_bytes;
      const std::int64_t in_row = pos % row_bytes;
      const std::int64_t n = std::min(row_bytes - in_row, offset + length - pos);
      AFASIM_RETURN_IF_ERROR(write_raid5_row(e, row, in_row, n, data ? data + (pos - offset) : nullptr, plan));
      pos += n;
    }
    return Status::ok();
  }
  l.for_each_piece(offset, length, [&](const Piece& p) {
    const std::uint8_t* src = data ? data + p.buffer_offset : nullptr;
    write_member(e, p.member, p.member_offset, p.length, src, plan);
    if (e.type == RaidType::kRaid10) write_member(e, Layout::mirror_of(p.member), p.member_offset, p.length, src, plan);
  });
  return Status::ok();
}

Status Engine::write_raid5_row(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                               const std::uint8_t* data, Plan& plan) {
  const Layout& l = raid5_;
  const std::int64_t S = l.strip_bytes();
  const int k = l.data_members();
  ++plan.parity_rows;
  if (row_offset == 0 && length == k * S) {
    // Full-stripe write: parity from the new data alone, no reads.
    const std::int64_t base = row * S;  // offset of this row within each member's chunk
    std::uint8_t* parity = has_payload() ? plan.scratch(S) : nullptr;
    if (parity != nullptr) {
      plan.steps.push_back({PlanStep::kZero, parity, nullptr, S});
      if (data != nullptr)
        for (int j = 0; j < k; ++j) plan.steps.push_back({PlanStep::kXor, parity, data + j * S, S});
    }
    plan.xor_bytes += k * S;
    for (int j = 0; j < k; ++j) write_member(e, l.data_member(row, j), base, S, data ? data + j * S : nullptr, plan);
    write_member(e, l.parity_member(row), base, S, parity, plan);
  } else {
    AFASIM_RETURN_IF_ERROR(write_raid5_partial(e, row, row_offset, length, data, plan));
  }
  if (invariants_ != nullptr && invariants_->enabled() && has_payload() && e.missing == 0)
    plan.parity_checks.push_back({&e, row});
  return Status::ok();
}

Status Engine::write_raid5_partial(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                   const std::uint8_t* data, Plan& plan) {
  // Read-modify-write: new parity = old parity ^ old data ^ new data over the touched bytes
  // of the strip; a lost data member's old bytes are reconstructed first.
  const Layout& l = raid5_;
  const std::int64_t S = l.strip_bytes();
  const int pm = l.parity_member(row);
  const std::int64_t base = row * S;
  const bool payload = has_payload();
  const std::int64_t first = row_offset / S;
  const std::int64_t last = (row_offset + length - 1) / S;
  const std::int64_t lo = first == last ? row_offset % S : 0;
  const std::int64_t hi = first == last ? row_offset % S + length : S;
  const bool parity_lost = e.is_missing(pm);
  if (payload && e.missing == 0 && !store_->media_errors_none() &&
      prefer_reconstruct_write(e, row, row_offset, length, lo, hi))
    return write_raid5_reconstruct(e, row, row_offset, length, lo, hi, data, plan);
  std::uint8_t* parity = payload ? plan.scratch(S) : nullptr;
  if (!parity_lost) AFASIM_RETURN_IF_ERROR(read_member(e, pm, base + lo, hi - lo, payload ? parity + lo : nullptr, plan));
  for (std::int64_t j = first; j <= last && !parity_lost; ++j) {
    const std::int64_t start = std::max(row_offset, j * S);
    const std::int64_t end = std::min(row_offset + length, (j + 1) * S);
    const std::int64_t within = start - j * S;
    const std::int64_t n = end - start;
    std::uint8_t* old = payload ? plan.scratch(n) : nullptr;
    AFASIM_RETURN_IF_ERROR(read_member(e, l.data_member(row, static_cast<int>(j)), base + within, n, old, plan));
    if (payload) {
      plan.steps.push_back({PlanStep::kXor, parity + within, old, n});
      if (data != nullptr) plan.steps.push_back({PlanStep::kXor, parity + within, data + (start - row_offset), n});
    }
    plan.xor_bytes += 2 * n;
  }
  for (std::int64_t j = first; j <= last; ++j) {
    const std::int64_t start = std::max(row_offset, j * S);
    const std::int64_t end = std::min(row_offset + length, (j + 1) * S);
    write_member(e, l.data_member(row, static_cast<int>(j)), base + (start - j * S), end - start,
                 data ? data + (start - row_offset) : nullptr, plan);
  }
  if (!parity_lost) write_member(e, pm, base + lo, hi - lo, payload ? parity + lo : nullptr, plan);
  return Status::ok();
}

namespace {
// The part of data strip `j` of a row that a write of [row_offset, +length) of the row covers,
// as offsets within the strip; empty (begin == end) when it covers none.
std::pair<std::int64_t, std::int64_t> written_in_strip(std::int64_t j, std::int64_t S, std::int64_t row_offset,
                                                       std::int64_t length) {
  const std::int64_t begin = std::max(row_offset, j * S), end = std::min(row_offset + length, (j + 1) * S);
  return begin < end ? std::pair{begin - j * S, end - j * S} : std::pair{std::int64_t{0}, std::int64_t{0}};
}
}  // namespace

bool Engine::prefer_reconstruct_write(const Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                      std::int64_t lo, std::int64_t hi) const {
  // Read-modify-write reads the parity over [lo, hi) and the old data the write replaces; a
  // reconstruct-write reads the data the write leaves, over [lo, hi) of every strip. When a
  // block the first needs is unreadable and none the second needs is, the second can write
  // what the first cannot (a partial write over a rebuild's unreadable block heals it).
  const Layout& l = raid5_;
  const std::int64_t S = l.strip_bytes(), base = row * S;
  auto bad = [&](int m, std::int64_t from, std::int64_t to) {
    return from < to && store_->has_media_error(e.members[static_cast<std::size_t>(m)], base + from, to - from);
  };
  bool rmw_blocked = bad(l.parity_member(row), lo, hi);
  for (int j = 0; j < l.data_members(); ++j) {
    const auto [ws, we] = written_in_strip(j, S, row_offset, length);
    const int m = l.data_member(row, j);
    if (ws < we) rmw_blocked |= bad(m, ws, we);
    if (ws < we ? bad(m, lo, ws) || bad(m, we, hi) : bad(m, lo, hi)) return false;
  }
  return rmw_blocked;
}

Status Engine::write_raid5_reconstruct(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                       std::int64_t lo, std::int64_t hi, const std::uint8_t* data, Plan& plan) {
  // New parity over [lo, hi) = the XOR of every data strip there: the new bytes where the
  // write covers it, the member's present bytes (read) where it does not.
  const Layout& l = raid5_;
  const std::int64_t S = l.strip_bytes(), base = row * S;
  std::uint8_t* parity = plan.scratch(S);
  plan.steps.push_back({PlanStep::kZero, parity + lo, nullptr, hi - lo});
  auto read_into_parity = [&](int m, std::int64_t from, std::int64_t to) -> Status {
    if (from >= to) return Status::ok();
    std::uint8_t* old = plan.scratch(to - from);
    AFASIM_RETURN_IF_ERROR(read_member(e, m, base + from, to - from, old, plan));
    plan.steps.push_back({PlanStep::kXor, parity + from, old, to - from});
    return Status::ok();
  };
  for (int j = 0; j < l.data_members(); ++j) {
    const auto [ws, we] = written_in_strip(j, S, row_offset, length);
    const int m = l.data_member(row, j);
    if (ws == we) {
      AFASIM_RETURN_IF_ERROR(read_into_parity(m, lo, hi));
    } else {
      AFASIM_RETURN_IF_ERROR(read_into_parity(m, lo, ws));
      AFASIM_RETURN_IF_ERROR(read_into_parity(m, we, hi));
      if (data != nullptr) plan.steps.push_back({PlanStep::kXor, parity + ws, data + (j * S + ws - row_offset), we - ws});
    }
    plan.xor_bytes += hi - lo;
  }
  for (int j = 0; j < l.data_members(); ++j) {
    const auto [ws, we] = written_in_strip(j, S, row_offset, length);
    if (ws < we) write_member(e, l.data_member(row, j), base + ws, we - ws, data ? data + (j * S + ws - row_offset) : nullptr, plan);
  }
  write_member(e, l.parity_member(row), base + lo, hi - lo, parity + lo, plan);
  return Status::ok();
}

void Engine::plan_trim(Extent& e, Plan& plan) {
  for (int m = 0; m < e.member_count; ++m) {
    if (!e.is_missing(m)) plan.ops.push_back(member_op(e, m, 0, chunk_bytes(), MemberOpKind::kTrim));
  }
}

// ---------------------------------------------------------------------------------------
// Execution

Status Engine::execute_payload(Plan& plan) {
  const std::size_t planned = plan.ops.size();
  for (std::size_t i = 0; i < planned; ++i) {
    const MemberOp op = plan.ops[i];  // a copy: retries and repairs append to plan.ops
    if (op.op != MemberOpKind::kRead || op.out == nullptr) continue;
    Status st = read_retrying(op.addr, op.offset_in_chunk, {op.out, static_cast<std::size_t>(op.length)}, plan);
    if (st.code() == sim::Code::kIoError) st = recover_read(plan, i);
    AFASIM_RETURN_IF_ERROR(st);
  }
  for (const PlanStep& s : plan.steps) {
    if (s.kind == PlanStep::kZero) std::memset(s.dst, 0, static_cast<std::size_t>(s.length));
    else xor_into(s.dst, s.src, s.length);
  }
  AFASIM_RETURN_IF_ERROR(apply_writes(plan));
  if (invariants_ != nullptr)
    for (const Plan::RowCheck& c : plan.parity_checks)
      if (std::string bad = check_row_parity(*c.extent, c.row); !bad.empty())
        invariants_->violation(sim_ ? sim_->now() : 0, "raid5.parity", bad);
  return Status::ok();
}

Status Engine::apply_writes(Plan& plan) {
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const MemberOp& op = plan.ops[i];
    if (op.op == MemberOpKind::kWrite) {
      if (op.extent == nullptr && op.member == -2) continue;  // a repair, written when it was found
      const std::uint8_t* src = op.data != nullptr ? op.data : zeros(op.length);
      AFASIM_RETURN_IF_ERROR(store_->write(op.addr, op.offset_in_chunk, {src, static_cast<std::size_t>(op.length)}));
    } else if (op.op == MemberOpKind::kTrim) {
      AFASIM_RETURN_IF_ERROR(store_->trim(op.addr, op.offset_in_chunk, op.length));
    }
  }
  return Status::ok();
}

Status Engine::reconstruct_now(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                               Plan& plan) {
  auto read_now = [&](int o, std::uint8_t* into) -> Status {
    if (e.is_missing(o)) return sim::io_error("member " + std::to_string(o) + " is lost");
    MemberOp op = member_op(e, o, offset, length, MemberOpKind::kRead);
    op.extent = nullptr;     // done here: execute() must not read it again
    plan.ops.push_back(op);  // timing only
    return read_retrying(op.addr, offset, {into, static_cast<std::size_t>(length)}, plan);
  };
  if (e.type == RaidType::kRaid10) return read_now(Layout::mirror_of(m), out);
  if (e.type != RaidType::kRaid5) return sim::io_error("RAID0 has no redundancy");
  std::memset(out, 0, static_cast<std::size_t>(length));
  std::uint8_t* tmp = plan.scratch(length);
  for (int o = 0; o < e.member_count; ++o) {
    if (o == m) continue;
    AFASIM_RETURN_IF_ERROR(read_now(o, tmp));
    xor_into(out, tmp, length);
    plan.xor_bytes += length;
  }
  return Status::ok();
}

Status Engine::read_retrying(ChunkAddr addr, std::int64_t offset, std::span<std::uint8_t> out, Plan& plan) {
  Status st = store_->read(addr, offset, out);
  for (int attempt = 1; attempt < kMediaReadAttempts && st.code() == sim::Code::kIoError; ++attempt) {
    MemberOp retry;  // timing only: the bytes land in `out` here
    retry.addr = addr;
    retry.offset_in_chunk = offset;
    retry.length = static_cast<std::int64_t>(out.size());
    retry.op = MemberOpKind::kRead;
    plan.ops.push_back(retry);
    st = store_->read(addr, offset, out);
  }
  return st;
}

Status Engine::recover_read(Plan& plan, std::size_t i) {
  const MemberOp op = plan.ops[i];
  if (op.extent == nullptr || op.member < 0) return sim::io_error("unrecoverable read error on drive " +
                                                                  std::to_string(op.addr.drive + 1));
  Extent& e = *op.extent;
  Status st = reconstruct_now(e, op.member, op.offset_in_chunk, op.length, op.out, plan);
  if (!st.is_ok()) {
    ++stats_.unrecoverable_reads;
    return sim::io_error("unrecoverable read error: volume " + std::to_string(e.volume_id) + " extent " +
                         std::to_string(e.index) + " member " + std::to_string(op.member) + " on drive " +
                         std::to_string(op.addr.drive + 1) + " has a media error that " +
                         std::string(raid_type_name(e.type)) + " redundancy does not cover (" + st.message() + ")");
  }
  // Read repair: the reconstructed bytes go back to the member (the SSD remaps the block).
  AFASIM_RETURN_IF_ERROR(store_->write(op.addr, op.offset_in_chunk, {op.out, static_cast<std::size_t>(op.length)}));
  MemberOp repair = op;
  repair.op = MemberOpKind::kWrite;
  repair.phase = 1;
  repair.extent = nullptr;
  repair.member = -2;  // written already (apply_writes skips it)
  repair.out = nullptr;
  plan.ops.push_back(repair);
  ++stats_.read_repairs;
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Scrub

void Engine::plan_scrub_row(Extent& e, std::int64_t row, Plan& plan) {
  const std::int64_t S = layout(e.type).strip_bytes();
  for (int m = 0; m < e.member_count; ++m) {
    // Timing: the verification reads the bytes itself.
    if (!e.is_missing(m)) plan.ops.push_back(member_op(e, m, row * S, S, MemberOpKind::kRead));
  }
  // RAID 5: the parity check XORs every member's strip of the row (what a rebuild's piece
  // costs the parity engine, docs/raid.md "Scrub").
  if (e.type == RaidType::kRaid5) {
    plan.parity_rows = 1;
    plan.xor_bytes = static_cast<std::int64_t>(plan.ops.size()) * S;
  }
}

namespace {
// One 4 KiB block column of a row: each member's block, and which failed to read.
struct Column {
  static constexpr std::int64_t kBytes = DriveMembers::kMediaBlockBytes;
  std::vector<std::vector<std::uint8_t>> blocks;
  std::vector<bool> bad;
  int bad_count = 0;
};
}  // namespace

RowVerdict Engine::scrub_row(Extent& e, std::int64_t row, Plan& plan) {
  RowVerdict v;
  if (!has_payload() || e.missing != 0 || e.lost) return v;
  const std::int64_t S = layout(e.type).strip_bytes();
  const std::int64_t B = Column::kBytes;
  Column col;
  col.blocks.assign(e.member_count, std::vector<std::uint8_t>(static_cast<std::size_t>(B)));
  auto repair = [&](int m, std::int64_t at, const std::uint8_t* bytes) {
    MemberOp op = member_op(e, m, at, B, MemberOpKind::kWrite);
    op.extent = nullptr;
    op.member = -2;  // written here: execute() skips it
    plan.ops.push_back(op);
    return store_->write(op.addr, at, {bytes, static_cast<std::size_t>(B)}).is_ok();
  };
  for (std::int64_t at = row * S; at < (row + 1) * S; at += B) {
    col.bad.assign(e.member_count, false);
    col.bad_count = 0;
    for (int m = 0; m < e.member_count; ++m) {
      Status st = store_->read(e.members[static_cast<std::size_t>(m)], at, col.blocks[static_cast<std::size_t>(m)]);
      if (!st.is_ok()) {
        col.bad[static_cast<std::size_t>(m)] = true;
        ++col.bad_count;
      }
    }
    v.media_errors += col.bad_count;
    if (e.type == RaidType::kRaid5) {
      scrub_raid5_column(col.blocks, col.bad, col.bad_count, at, v, repair);
    } else if (e.type == RaidType::kRaid10) {
      for (int m = 0; m < e.member_count; m += 2) scrub_mirror_column(col.blocks, col.bad, m, at, v, repair);
    } else {
      v.unrecoverable += col.bad_count;
    }
  }
  return v;
}

template <typename Repair>
void Engine::scrub_raid5_column(std::vector<std::vector<std::uint8_t>>& blocks, const std::vector<bool>& bad,
                                int bad_count, std::int64_t at, RowVerdict& v, Repair& repair) {
  const std::size_t B = blocks[0].size();
  const int n = static_cast<int>(blocks.size());
  if (bad_count > 1) {
    v.unrecoverable += bad_count;
    v.detail = std::to_string(bad_count) + " unreadable blocks in one RAID5 column at chunk byte " + std::to_string(at);
    return;
  }
  // The XOR of the readable members: zero when parity is whole, the missing block when one
  // is unreadable.
  std::vector<std::uint8_t> acc(B, 0);
  int bad_member = -1;
  for (int m = 0; m < n; ++m) {
    if (bad[static_cast<std::size_t>(m)]) bad_member = m;
    else xor_into(acc.data(), blocks[static_cast<std::size_t>(m)].data(), static_cast<std::int64_t>(B));
  }
  if (bad_member >= 0) {
    if (repair(bad_member, at, acc.data())) ++v.repaired;
    v.detail = "member " + std::to_string(bad_member) + " unreadable at chunk byte " + std::to_string(at);
    return;
  }
  if (std::all_of(acc.begin(), acc.end(), [](std::uint8_t b) { return b == 0; })) return;
  ++v.mismatches;
  v.detail = "parity does not match the data at chunk byte " + std::to_string(at);
  // Parity is rewritten from the data (the parity member's block XOR the difference).
  const int parity_member = raid5_.parity_member(at / raid5_.strip_bytes());
  xor_into(acc.data(), blocks[static_cast<std::size_t>(parity_member)].data(), static_cast<std::int64_t>(B));
  repair(parity_member, at, acc.data());
}

template <typename Repair>
void Engine::scrub_mirror_column(std::vector<std::vector<std::uint8_t>>& blocks, const std::vector<bool>& bad,
                                 int m, std::int64_t at, RowVerdict& v, Repair& repair) {
  const auto a = static_cast<std::size_t>(m), b = static_cast<std::size_t>(m + 1);
  if (bad[a] && bad[b]) {
    v.unrecoverable += 2;
    v.detail = "both copies of members " + std::to_string(m) + " and " + std::to_string(m + 1) +
               " unreadable at chunk byte " + std::to_string(at);
  } else if (bad[a] || bad[b]) {
    const int broken = bad[a] ? m : m + 1;
    if (repair(broken, at, blocks[bad[a] ? b : a].data())) ++v.repaired;
    v.detail = "member " + std::to_string(broken) + " unreadable at chunk byte " + std::to_string(at);
  } else if (blocks[a] != blocks[b]) {
    ++v.mismatches;
    v.detail = "copies of members " + std::to_string(m) + " and " + std::to_string(m + 1) +
               " differ at chunk byte " + std::to_string(at);
    repair(m + 1, at, blocks[a].data());
  }
}

}  // namespace afasim::raid
