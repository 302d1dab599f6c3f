// QoS admission control (docs/qos.md "Admission control"): whether the array can honour every
// volume's min_iops at once.
//
// A reservation runs on the cores of one resource (the controller that owns the volume). Each
// resource can guarantee, to reservations, a number of 4 KiB IOPS per RAID type — the caller
// derives it from the performance model (the Array: a share of the controller's cores divided
// by the core time of one 4 KiB write of that RAID type, the dearer of read and write, so that a
// reservation holds whatever the read/write mix). A volume's reservation takes
// min_iops / guaranteed_iops(its RAID type) of its resource; the shares on one resource may not
// add up to more than 100 %.
//
// Pure functions of their inputs; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qos/cost.h"
#include "raid/raid_type.h"
#include "sim/status.h"

namespace afasim::qos {

// One volume's reservation, as the array would hold it.
struct Reservation {
  std::int64_t volume_id = 0;
  std::string volume_name;
  int resource = 0;  // index into ReservableCapacity::resource_names
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  std::int64_t min_iops = 0;
};

// What each resource can guarantee. Every resource is alike (the ISE's two controllers are).
struct ReservableCapacity {
  std::vector<std::string> resource_names;      // "controller A", "controller B"
  std::map<raid::RaidType, std::int64_t> iops;  // 4 KiB IOPS per resource, per RAID type
  std::string basis;  // how `iops` was derived, one sentence, quoted in refusals
};

// The share of its resource `r` takes, in parts per million, rounded up; a RAID type the
// capacity does not list (or lists as 0) makes any positive min_iops take "everything and more"
// (2 × kPartsPerMillion).
std::int64_t share_ppm(const Reservation& r, const ReservableCapacity& capacity);

// Reserved share of each resource, ppm (index = resource).
std::vector<std::int64_t> reserved_ppm(const std::vector<Reservation>& reservations,
                                       const ReservableCapacity& capacity);

// ok when no resource whose reserved share grows from `before` to `after` ends above 100 %
// (a state that is already over — restored from an older configuration — does not block
// changes that do not add to it). Otherwise kUnprocessable whose message gives the resource,
// its share, what it can guarantee per RAID type and the reservations on it, largest first.
sim::Status check_admission(const std::vector<Reservation>& before,
                            const std::vector<Reservation>& after,
                            const ReservableCapacity& capacity);

// A share in ppm as "103.1 %" (four decimals just above 100 %, so it never reads 100.0 %).
std::string share_percent(std::int64_t ppm);

// 1234567 → "1,234,567".
std::string with_thousands(std::int64_t n);

}  // namespace afasim::qos
