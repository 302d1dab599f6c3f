#include "qos/admission.h"

#include <algorithm>
#include <cstdio>

namespace afasim::qos {

std::string with_thousands(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::int64_t share_ppm(const Reservation& r, const ReservableCapacity& capacity) {
  if (r.min_iops <= 0) return 0;
  auto it = capacity.iops.find(r.raid_type);
  if (it == capacity.iops.end() || it->second <= 0) return 2 * kPartsPerMillion;
  const __int128 n = static_cast<__int128>(r.min_iops) * kPartsPerMillion;
  return static_cast<std::int64_t>((n + it->second - 1) / it->second);
}

std::vector<std::int64_t> reserved_ppm(const std::vector<Reservation>& reservations,
                                       const ReservableCapacity& capacity) {
  std::vector<std::int64_t> ppm(capacity.resource_names.size(), 0);
  for (const Reservation& r : reservations)
    if (r.resource >= 0 && static_cast<std::size_t>(r.resource) < ppm.size())
      ppm[static_cast<std::size_t>(r.resource)] += share_ppm(r, capacity);
  return ppm;
}

std::string share_percent(std::int64_t ppm) {
  // One decimal, or as many as it takes (up to the ppm's four) for a share just over 100 %
  // not to print as "100.0 %" in a refusal.
  const int decimals = ppm > 1'000'000 && ppm < 1'000'500 ? 4 : 1;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %%", decimals, static_cast<double>(ppm) / 1e4);
  return buf;
}

namespace {

std::string percent(std::int64_t ppm) {
  return share_percent(ppm);
}

std::string refusal(std::size_t resource, std::int64_t ppm, const std::vector<Reservation>& after,
                    const ReservableCapacity& capacity) {
  const std::string& name = capacity.resource_names[resource];
  std::string m = "admission control: the reservations (min_iops) on " + name + " would need " +
                  percent(ppm) + " of what it can guarantee. " + name + " guarantees ";
  bool first = true;
  for (const auto& [type, iops] : capacity.iops) {
    if (iops <= 0) continue;
    m += std::string(first ? "" : " or ") + with_thousands(iops) + " " +
         std::string(raid::raid_type_name(type));
    first = false;
  }
  m += " 4 KiB IOPS to reservations";
  if (!capacity.basis.empty()) m += " (" + capacity.basis + ")";
  m += ". Reservations there: ";
  std::vector<const Reservation*> on;
  for (const Reservation& r : after)
    if (static_cast<std::size_t>(r.resource) == resource && r.min_iops > 0) on.push_back(&r);
  std::stable_sort(on.begin(), on.end(), [&](const Reservation* a, const Reservation* b) {
    return share_ppm(*a, capacity) > share_ppm(*b, capacity);
  });
  constexpr std::size_t kListed = 10;
  for (std::size_t i = 0; i < on.size() && i < kListed; ++i) {
    const Reservation& r = *on[i];
    m += std::string(i ? "; " : "") + "volume " + std::to_string(r.volume_id) + " \"" +
         r.volume_name + "\" " + with_thousands(r.min_iops) + " " +
         std::string(raid::raid_type_name(r.raid_type)) + " (" + percent(share_ppm(r, capacity)) +
         ")";
  }
  if (on.size() > kListed) m += "; and " + std::to_string(on.size() - kListed) + " more";
  return m + ".";
}

}  // namespace

sim::Status check_admission(const std::vector<Reservation>& before,
                            const std::vector<Reservation>& after,
                            const ReservableCapacity& capacity) {
  const std::vector<std::int64_t> was = reserved_ppm(before, capacity);
  const std::vector<std::int64_t> will = reserved_ppm(after, capacity);
  for (std::size_t i = 0; i < will.size(); ++i)
    if (will[i] > kPartsPerMillion && will[i] > was[i])
      return sim::unprocessable(refusal(i, will[i], after, capacity));
  return sim::Status::ok();
}

}  // namespace afasim::qos
