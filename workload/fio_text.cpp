// fio's value syntax: sizes, times, numbers, and the small text helpers of the parser.
#include "workload/fio_job_internal.h"

#include "config/file_text.h"

#include <charconv>
#include <cmath>

namespace afasim::workload::fio_detail {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Quotes a value for a message, escaping what would not print.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "\"";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

// An unsigned decimal integer, the whole of `s`; nullopt on anything else or overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A plain decimal floating-point number ("1.2", "0.25", "99.99"), the whole of `s`.
std::optional<double> parse_double(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  for (char c : s) {
    if (!is_digit(c) && c != '.') return std::nullopt;  // no sign, no exponent, no "inf"
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// What fio's size syntax cannot express, with a message naming the value.
Status refuse_expression(std::string_view text) {
  if (!text.empty() && text.front() == '(') {
    return sim::invalid_argument(quoted(text) + ": arithmetic expressions are not supported");
  }
  if (text.find('$') != std::string_view::npos) {
    return sim::invalid_argument(quoted(text) +
                                 ": environment variables and $keywords are not expanded");
  }
  return Status::ok();
}



Result<ParsedSize> parse_size_detail(std::string_view text, int kb_base) {
  AFASIM_ASSERT(kb_base == 1000 || kb_base == 1024, "kb_base is 1000 or 1024");
  AFASIM_RETURN_IF_ERROR(refuse_expression(text));
  const std::string not_a_size = quoted(text) + " is not a size";
  if (text.empty()) return sim::invalid_argument(not_a_size);
  std::uint64_t value = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string_view hex = text.substr(2);
    const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    if (ec != std::errc() || ptr != hex.data() + hex.size()) {
      return sim::invalid_argument(not_a_size + " (a 0x number takes no unit)");
    }
    if (value > static_cast<std::uint64_t>(kMaxBytes)) {
      return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
    }
    return ParsedSize{static_cast<std::int64_t>(value), false};
  }
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  if (digits == 0) return sim::invalid_argument(not_a_size);
  const auto number = parse_u64(text.substr(0, digits));
  if (!number) return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
  value = *number;
  // A fraction ("1.5g"): up to 9 digits, kept as numerator / 10^k until the unit applies.
  std::uint64_t fraction = 0;
  std::uint64_t fraction_scale = 1;
  std::size_t end = digits;
  if (end < text.size() && text[end] == '.') {
    ++end;
    while (end < text.size() && is_digit(text[end])) {
      if (fraction_scale == 1'000'000'000)
        return sim::invalid_argument(quoted(text) + ": more than 9 digits after the point");
      fraction = fraction * 10 + static_cast<std::uint64_t>(text[end] - '0');
      fraction_scale *= 10;
      ++end;
    }
    if (fraction_scale == 1) return sim::invalid_argument(not_a_size);
  }
  const std::string suffix = to_lower(text.substr(end));
  int power = 0;
  bool iec = false;
  if (!suffix.empty() && suffix != "b") {
    static constexpr std::string_view kPrefixes = "kmgtp";
    const auto at = kPrefixes.find(suffix[0]);
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (at == std::string_view::npos ||
        !(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) {
      return sim::invalid_argument(not_a_size + " (units: k m g t p, ki mi gi ti pi, optional B)");
    }
    power = static_cast<int>(at) + 1;
    iec = rest == "ib";  // fio flips the base only for the full "kib" form (parse.c)
  }
  const std::uint64_t base = iec ? (kb_base == 1024 ? 1000 : 1024) : kb_base;
  unsigned __int128 multiplier = 1;
  for (int i = 0; i < power; ++i) multiplier *= base;
  // Whole bytes, rounded down: 1.5k = 1536, 0.1k = 102 (fio 3.33 would read both as 1).
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(value) * multiplier + fraction * multiplier / fraction_scale;
  if (bytes > static_cast<std::uint64_t>(kMaxBytes)) {
    return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
  }
  ParsedSize out{static_cast<std::int64_t>(bytes), iec && kb_base == 1024};
  out.fractional = fraction_scale > 1;
  return out;
}

// filename='s files: separated by ':', where "\:" is a colon inside a name (fio's escape, for
// paths such as /dev/disk/by-path/pci-0000\:00\:1f.2-ata-1; hostile round 32 split them).
std::vector<std::string> split_file_names(std::string_view v) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == ':') {
      parts.back() += ':';
      ++i;
    } else if (v[i] == ':') {
      parts.emplace_back();
    } else {
      parts.back() += v[i];
    }
  }
  return parts;
}

}  // namespace afasim::workload::fio_detail

namespace afasim::workload {

using namespace fio_detail;
using sim::Result;

Result<std::int64_t> parse_fio_size(std::string_view text, int kb_base) {
  auto v = parse_size_detail(text, kb_base);
  if (!v.is_ok()) return v.status();
  return v->bytes;
}

Result<SizeOrPercent> parse_fio_size_or_percent(std::string_view text, int kb_base) {
  if (!text.empty() && text.back() == '%') {
    const std::string_view number = trim(text.substr(0, text.size() - 1));
    const auto v = parse_double(number);
    if (!v || *v <= 0 || *v > 100) {
      return sim::invalid_argument(quoted(text) + " is not a percentage in 1..100");
    }
    return SizeOrPercent{0, *v, true};
  }
  auto v = parse_fio_size(text, kb_base);
  if (!v.is_ok()) return v.status();
  return SizeOrPercent{*v, 0, false};
}

namespace {

// fio drops a time's fraction; the message says what the same time is in a smaller unit
// ("1.5ms" -> 1500us, "1.5m" -> 90s), or that it is below fio's microsecond.
sim::Status fractional_time_error(std::string_view text, sim::Time default_unit) {
  std::size_t end = 0;
  while (end < text.size() && (is_digit(text[end]) || text[end] == '.')) ++end;
  const auto value = parse_double(text.substr(0, end));
  const std::string unit_text = to_lower(text.substr(end));
  struct Unit {
    const char* name;
    sim::Time ns;
  };
  static constexpr Unit kUnits[] = {{"d", sim::kDay},          {"h", sim::kHour},   {"m", sim::kMinute},
                                    {"s", sim::kSecond},       {"ms", sim::kMillisecond},
                                    {"us", sim::kMicrosecond}};
  sim::Time unit = unit_text.empty() ? default_unit : 0;
  for (const Unit& u : kUnits)
    if (unit_text == u.name || (unit_text == "msec" && u.ns == sim::kMillisecond) ||
        (unit_text == "usec" && u.ns == sim::kMicrosecond))
      unit = u.ns;
  std::string message = quoted(text) + " is not a whole number (fio would drop the fraction)";
  if (!value || unit == 0 || *value * static_cast<double>(unit) > static_cast<double>(kMaxDuration))
    return sim::invalid_argument(message);
  const double ns = *value * static_cast<double>(unit);
  for (const Unit& u : kUnits) {
    if (u.ns >= unit) continue;
    const double n = ns / static_cast<double>(u.ns);
    if (std::abs(n - std::round(n)) < 1e-6 * std::max(1.0, n))
      return sim::invalid_argument(message + "; write " + std::to_string(static_cast<long long>(std::round(n))) + u.name);
  }
  return sim::invalid_argument(message + "; times are whole microseconds");
}

}  // namespace

Result<sim::Time> parse_fio_time(std::string_view text, sim::Time default_unit) {
  AFASIM_RETURN_IF_ERROR(refuse_expression(text));
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  if (digits == 0) return sim::invalid_argument(quoted(text) + " is not a time");
  if (digits < text.size() && text[digits] == '.') return fractional_time_error(text, default_unit);
  const auto number = parse_u64(text.substr(0, digits));
  const std::string unit_text = to_lower(text.substr(digits));
  sim::Time unit = default_unit;
  if (unit_text.empty())
    unit = default_unit;
  else if (unit_text == "us" || unit_text == "usec")
    unit = sim::kMicrosecond;
  else if (unit_text == "ms" || unit_text == "msec")
    unit = sim::kMillisecond;
  else if (unit_text == "s")
    unit = sim::kSecond;
  else if (unit_text == "m")
    unit = sim::kMinute;
  else if (unit_text == "h")
    unit = sim::kHour;
  else if (unit_text == "d")
    unit = sim::kDay;
  else if (unit_text == "sec") {
    return sim::invalid_argument(quoted(text) +
                                 ": fio 3.33 reads the unit \"sec\" as microseconds; write s");
  } else {
    return sim::invalid_argument(quoted(text) + " is not a time (units: d h m s ms us)");
  }
  if (!number || *number > static_cast<std::uint64_t>(kMaxDuration / unit)) {
    return sim::invalid_argument(quoted(text) + " is longer than 10 years");
  }
  return static_cast<sim::Time>(*number) * unit;
}

void drop_byte_order_mark(std::string& text) {
  if (text.starts_with(kUtf8Bom)) text.erase(0, kUtf8Bom.size());
}

Result<std::string> read_job_text(const std::string& path) {
  auto text = config::read_file_text(path, kMaxFileBytes);  // a directory is an error there
  if (!text.is_ok()) {
    if (text.status().code() == sim::Code::kNotFound) {
      const std::string why = text.status().message();  // "cannot read PATH: reason"
      const std::string prefix = "cannot read " + path + ": ";
      return sim::not_found(path + ": cannot open the job file" +
                            (why.rfind(prefix, 0) == 0 ? " (" + why.substr(prefix.size()) + ")" : ""));
    }
    return text.status();
  }
  drop_byte_order_mark(*text);  // before joining several files
  if (text->size() > kMaxFileBytes) return sim::invalid_argument(path + ": larger than 1 MiB");
  return text;
}

}  // namespace afasim::workload
