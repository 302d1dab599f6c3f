// controller::snapshot_problem — the consistency of a state loaded from the store, checked
// before the Array trusts it (hostile round 18 finding 5). The store checks that each row
// reads back (known enums, JSON that parses); this checks what the rows say together: id
// counters above the ids in use, sizes within the API's limits. A state directory edited by
// hand or restored inconsistently is refused at start with the row named, instead of an
// assertion later (a reused volume id), a silent overwrite (a reused host id replaced the
// host and took its mappings) or an overflow (event ids past 2^63-1).
// Pure function; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "config/preset.h"
#include "controller/journal.h"
#include "sim/time.h"

namespace afasim::controller {

// Largest id a counter may hand out: 2^53 - 1, the largest integer a JSON client that reads
// numbers as doubles (JavaScript) keeps exact. A create a microsecond would take 285 years to
// get there, and a counter there is far from the int64 overflow.
inline constexpr std::int64_t kMaxId = (std::int64_t{1} << 53) - 1;
// Largest volume id: the write cache keys a block by volume id and block number in 64 bits, 24
// of them the volume's, one value kept back (controller::WriteCache::key); 16,777,214 volumes
// created over an array's life. The per-volume tables (sim::IdTable) take memory for the ids
// in use only, and 0.5 bytes per id for each of their page tables up to the largest (8 MB a
// table at the ceiling; seven tables: 124 MB measured for one volume at the last id).
inline constexpr std::int64_t kMaxVolumeId = (std::int64_t{1} << 24) - 2;

// Latest simulated time a state may hold (its clock, an event's time): 100 years, as far as a
// fio job may run (workload::kMaxJobTimeNs); an int64 of nanoseconds overflows at 292 years,
// and a clock near there would overflow the first event scheduled after the load.
inline constexpr std::int64_t kMaxClockNs = sim::kClockCeiling;

// " (this system, NAME, has N SSDs, drive indexes 0..N-1, of SIZE; a state opens only with
// the presets it was made with: ...)" when a restored extent's `refusal` names a drive or
// chunk the system does not have, where a preset changed under a state (another
// --config-dir) shows up first (hostile round 28a, L6); "" for any other refusal.
std::string preset_shape_hint(const config::SystemPreset& preset, const std::string& refusal);

// What is wrong with QoS values `q`, as "<context>: <what>" (the API's 422 message), or "":
// each value 0..kMaxIops, min <= max <= burst, burst only with max (DESIGN.md "QoS semantics").
std::string qos_problem(const QosSettings& q, const std::string& context);

// "" when `s` is a state an array of `preset` can open; else what is wrong, naming the table
// or meta key, the row and the value, as one sentence without the "state: " prefix.
std::string snapshot_problem(const Snapshot& s, const config::SystemPreset& preset);

}  // namespace afasim::controller
