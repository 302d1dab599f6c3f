#include "config/size.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace afasim::config {
namespace {

struct Unit {
  std::string_view name;  // lower case
  std::int64_t bytes;
};

constexpr std::int64_t kKi = 1024;
constexpr std::int64_t kK = 1000;

// Case-insensitive unit names. One-letter units are binary, as qemu-img and fio read them.
constexpr std::array<Unit, 20> kUnits = {{
    {"", 1},
    {"b", 1},
    {"k", kKi},
    {"kib", kKi},
    {"kb", kK},
    {"m", kKi* kKi},
    {"mib", kKi* kKi},
    {"mb", kK* kK},
    {"g", kKi* kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"gb", kK* kK* kK},
    {"t", kKi* kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"tb", kK* kK* kK* kK},
    {"p", kKi* kKi* kKi* kKi* kKi},
    {"pib", kKi* kKi* kKi* kKi* kKi},
    {"pb", kK* kK* kK* kK* kK},
    {"e", kKi* kKi* kKi* kKi* kKi* kKi},
    {"eib", kKi* kKi* kKi* kKi* kKi* kKi},
    {"eb", kK* kK* kK* kK* kK* kK},
}};

// Significant digits before the point beyond this many make the value absurd (at least 10^19
// of any unit is past int64 bytes); leading zeros do not count ("0001GiB" is 1 GiB). With at
// most kMaxFractionDigits after the point, the mantissa (at most 37 digits) and every product
// below stay exact in __int128.
constexpr int kMaxWholeDigits = 19;
constexpr int kMaxFractionDigits = 18;

sim::Status bad(std::string_view text, const std::string& why) {
  return sim::invalid_argument("size \"" + std::string(text) + "\" " + why +
                               " (examples: 1073741824, \"100GiB\", \"2TB\", \"1.5TiB\")");
}

// bytes = mantissa × unit_bytes / 10^fraction_digits, exactly or not at all (`text` names the
// input in errors). The mantissa is split into whole and fractional parts so that no product
// can overflow: whole is checked against the int64 range first, fraction < 10^18 and
// unit_bytes <= 2^60.
sim::Result<std::int64_t> scale_exactly(std::string_view text, __int128 mantissa,
                                        int fraction_digits, std::int64_t unit_bytes) {
  __int128 divisor = 1;
  for (int k = 0; k < fraction_digits; ++k) divisor *= 10;
  const __int128 limit = std::numeric_limits<std::int64_t>::max();
  const __int128 whole = mantissa / divisor;
  const __int128 fraction = mantissa % divisor;
  if (whole > limit / unit_bytes) {
    return sim::unprocessable("size \"" + std::string(text) + "\" is absurdly large");
  }
  const __int128 fraction_scaled = fraction * unit_bytes;
  if (fraction_scaled % divisor != 0) {
    return sim::unprocessable("size \"" + std::string(text) + "\" is not a whole number of bytes");
  }
  const __int128 bytes = whole * unit_bytes + fraction_scaled / divisor;
  if (bytes > limit) {
    return sim::unprocessable("size \"" + std::string(text) + "\" is absurdly large");
  }
  return static_cast<std::int64_t>(bytes);
}

}  // namespace

sim::Result<std::int64_t> parse_size(std::string_view text) {
  if (text.empty()) return bad(text, "is empty");
  if (text.size() > kSizeStringMaxChars) {
    return sim::invalid_argument("size string is longer than " +
                                 std::to_string(kSizeStringMaxChars) + " characters");
  }
  std::size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  __int128 mantissa = 0;
  int digits = 0;
  int whole_digits = 0;  // significant ones
  int fraction_digits = 0;
  bool in_fraction = false;
  for (; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch >= '0' && ch <= '9') {
      ++digits;
      if (in_fraction && fraction_digits == kMaxFractionDigits) {
        if (ch == '0') continue;  // a zero past the last digit kept changes nothing
        ++fraction_digits;        // a digit that would: refused below, saying so
        break;
      }
      if (in_fraction) ++fraction_digits;
      if (!in_fraction && (mantissa > 0 || ch != '0') && ++whole_digits > kMaxWholeDigits) {
        return sim::unprocessable("size \"" + std::string(text) + "\" is absurdly large");
      }
      mantissa = mantissa * 10 + (ch - '0');
    } else if (ch == '.' && !in_fraction && digits > 0) {
      in_fraction = true;
    } else {
      break;
    }
  }
  if (digits == 0) return bad(text, "does not start with a number");
  if (in_fraction && fraction_digits == 0) return bad(text, "has a '.' with no digits after it");
  if (fraction_digits > kMaxFractionDigits) {
    return bad(text,
               "has more than " + std::to_string(kMaxFractionDigits) + " digits after the point");
  }
  const bool spaced = i < text.size() && text[i] == ' ';
  if (spaced) ++i;
  std::string unit;
  const std::size_t unit_at = i;
  for (; i < text.size(); ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (!std::isalpha(ch)) return bad(text, "has an unexpected character after the number");
    unit += static_cast<char>(std::tolower(ch));
  }
  if (spaced && unit.empty()) return bad(text, "ends with a space");
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    // The unit as written (matched without case): a new user saw "XB" quoted as "xb".
    return bad(text, "has an unknown unit \"" + std::string(text.substr(unit_at)) +
                         "\" (B; K, M, G, T, P, E or KiB ... EiB: powers of 1024; kB, MB, GB, TB, PB, EB: "
                         "of 1000; any case)");
  }
  const auto scaled = scale_exactly(text, mantissa, fraction_digits, found->bytes);
  if (!scaled.is_ok()) return scaled.status();
  const std::int64_t bytes = scaled.value();
  if (negative && bytes != 0) {
    return sim::unprocessable("size \"" + std::string(text) + "\" is negative");
  }
  return bytes;
}

std::string byte_count(std::int64_t bytes) {
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string human_bytes(std::int64_t bytes, int decimals) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", u == 0 ? 0 : std::clamp(decimals, 0, 6), v, units[u]);
  return buf;
}

}  // namespace afasim::config
