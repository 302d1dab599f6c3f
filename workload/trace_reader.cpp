#include "workload/trace_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "config/file_text.h"
#include "workload/trace_reader_internal.h"

namespace afasim::workload {
namespace trace_detail {

std::vector<std::string_view> tokens(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (sep == 0) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i == line.size()) break;
      std::size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
      out.push_back(line.substr(i, j - i));
      i = j;
    } else {
      std::size_t j = line.find(sep, i);
      if (j == std::string_view::npos) j = line.size();
      std::string_view t = line.substr(i, j - i);
      while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.remove_suffix(1);
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      out.push_back(t);
      i = j + 1;
      if (j == line.size()) break;
    }
  }
  return out;
}

std::optional<std::int64_t> integer(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

bool is_numeric_token(std::string_view s) { return number(s).has_value(); }

// What is wrong with `text` as the non-negative number `field` (`whole`: a whole number), as
// "FIELD \"TEXT\" is negative"; empty when nothing is.
std::string number_problem(std::string_view field, std::string_view text, bool whole) {
  if (whole ? integer(text).has_value() : number(text).has_value()) return {};
  const std::string head = std::string(field) + " \"" + std::string(text) + "\"";
  double v = 0;
  const std::string_view digits = text.starts_with('+') ? text.substr(1) : text;  // from_chars takes no '+'
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::invalid_argument || p != digits.data() + digits.size()) return head + " is not a number";
  if (ec == std::errc::result_out_of_range) return head + " is out of range";
  if (!std::isfinite(v)) return head + " is not a finite number";
  if (v < 0) return head + " is negative";
  if (v != std::floor(v)) return head + " is not a whole number";
  // "1e3", "+5": whole, but not in digits (hostile round 23: "1e3" was "too large").
  if (v < 9.2e18) return head + " is not written in digits (a whole number takes no exponent or sign)";
  return head + " is too large";
}

bool looks_like_blkparse(const std::vector<std::string_view>& t) {
  if (t.size() < 7) return false;
  const auto comma = t[0].find(',');
  return comma != std::string_view::npos && integer(t[0].substr(0, comma)) &&
         integer(t[0].substr(comma + 1)) && integer(t[1]) && number(t[3]);
}

// fio's iolog header (iolog.c: "fio version 2 iolog" or "fio version 3 iolog", alone on its
// line; blanks after it allowed): 2 or 3; 0 for a line that is no header; -1 for a line that
// begins as one and is not (hostile review 43: "fio version 3 iologXYZ junk" was a v3 header).
int fio_iolog_version(std::string_view line) {
  if (!line.starts_with("fio version ")) return 0;
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  if (line == "fio version 2 iolog") return 2;
  if (line == "fio version 3 iolog") return 3;
  return -1;
}

constexpr const char* kNotIologHeader =
    "not a fio iolog header: fio writes \"fio version 2 iolog\" or \"fio version 3 iolog\" alone on the line";

Result<TraceFormat> detect(std::string_view line, std::string_view name, std::int64_t line_no) {
  switch (fio_iolog_version(line)) {
    case 2:
      return TraceFormat::kFioIolog2;
    case 3:
      return TraceFormat::kFioIolog3;
    case -1:
      return sim::invalid_argument(std::string(name) + ":" + std::to_string(line_no) + ": " + kNotIologHeader);
    default:
      break;
  }
  const auto t = tokens(line);
  if (looks_like_blkparse(t)) return TraceFormat::kBlkparse;  // before MSR: "[a,b,c]" has commas
  const auto csv = tokens(line, ',');
  if (csv.size() == 7 && (csv[0] == "Timestamp" || integer(csv[0]))) return TraceFormat::kMsrCsv;
  if (t.size() == 5 && is_numeric_token(t[0]) && integer(t[1]) && integer(t[2]) && integer(t[3]) &&
      integer(t[4]))
    return TraceFormat::kDiskSim;
  return sim::invalid_argument(std::string(name) + ":" + std::to_string(line_no) +
                               ": cannot tell the trace format from this line (fio iolog, "
                               "blkparse, MSR CSV or DiskSim); name it with --format");
}

std::string bad(std::string_view what) { return std::string(what); }

// A record's bytes in whole logical blocks of the volume: fio with direct I/O on a block
// device gets EINVAL for anything else, and the array's data path works in sectors.
// A read or write is at most kMaxIoBytes (hostile round 23: one 1 TiB write took 3.7 GB);
// a trim of any size is cheap and traces discard whole devices.
sim::Status check_block_aligned(const TraceRecord& r) {
  if (!r.is_io || r.op == TraceOp::kFlush) return sim::Status::ok();
  const std::string what = std::string(to_string(r.op)) + " at " + std::to_string(r.offset_bytes) + " + " +
                           std::to_string(r.length_bytes);
  if (r.offset_bytes % kSectorBytes != 0 || r.length_bytes % kSectorBytes != 0)
    return sim::invalid_argument(what + ": offset and size must be multiples of 512 bytes, the logical block");
  if (r.op != TraceOp::kTrim && r.length_bytes > kMaxIoBytes)
    return sim::invalid_argument(what + ": an I/O larger than afasim's largest, 1 GiB (" +
                                 std::to_string(kMaxIoBytes) + " bytes)");
  return sim::Status::ok();
}

}  // namespace trace_detail

using namespace trace_detail;

std::string_view to_string(TraceFormat f) {
  static constexpr std::string_view kNames[] = {"fio-iolog-v2", "fio-iolog-v3", "blkparse",
                                                "msr-csv", "disksim"};
  return kNames[static_cast<int>(f)];
}

Result<TraceFormat> parse_trace_format(std::string_view name, std::string_view first_line) {
  if (name == "fio") return fio_iolog_version(first_line) == 3 ? TraceFormat::kFioIolog3 : TraceFormat::kFioIolog2;
  if (name == "blkparse") return TraceFormat::kBlkparse;
  if (name == "msr" || name == "snia") return TraceFormat::kMsrCsv;
  if (name == "disksim" || name == "mqsim") return TraceFormat::kDiskSim;
  return sim::invalid_argument("\"" + std::string(name) +
                               "\" is not a trace format (fio, blkparse, msr, disksim)");
}

std::string_view to_string(TraceOp op) {
  static constexpr std::string_view kNames[] = {"read", "write", "trim", "flush"};
  return kNames[static_cast<int>(op)];
}

Result<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& path,
                                                       const TraceReaderOptions& options) {
  // "-": standard input through a file stream of its own (std::cin's buffer is synced with
  // stdio, a character at a time: several times slower on a 10 GB pipe). A FIFO nobody writes
  // reads as an empty trace instead of hanging (hostile round 17).
  auto file = config::open_file_stream(path == "-" ? "/dev/stdin" : path, options.stop);
  if (!file.is_ok()) {
    if (file.status().code() == sim::Code::kInvalidArgument) return sim::invalid_argument("cannot read " + path + ": a directory");
    return sim::not_found(path + ": cannot open the trace: " + file.status().message());
  }
  return from_stream(std::move(file).value(), path, options);
}

Result<std::unique_ptr<TraceReader>> TraceReader::from_stream(std::unique_ptr<std::istream> in,
                                                              std::string name,
                                                              const TraceReaderOptions& options) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->in_ = std::move(in);
  r->name_ = std::move(name);
  r->skip_bad_ = options.skip_bad;
  r->max_pending_ = std::max<std::size_t>(2, options.max_pending_requests);
  // The first non-blank line tells the format (and is the fio header, or a record).
  while (true) {
    auto more = r->read_line();
    if (!more.is_ok()) return more.status();
    if (!*more) return sim::invalid_argument(r->name_ + ": the trace is empty");
    // Compressed data is no trace, whatever --skip-bad says (hostile round 32: a .csv.gz, as the
    // SNIA IOTTA traces ship, was "a NUL byte in the line").
    if (r->line_no_ == 1)
      if (const std::string_view kind = config::compression_of(r->line_); !kind.empty())
        return sim::invalid_argument(r->name_ + ": " + std::string(kind) +
                                     "-compressed data, not a trace: decompress it first (e.g. zcat " + r->name_ +
                                     " | afasim trace -)");
    if (!r->line_error_.empty()) {
      const std::string message = config::printable(r->name_ + ":" + std::to_string(r->line_no_) + ": " + r->line_error_);
      if (!r->skip_bad_) return sim::invalid_argument(message);
      r->count_bad(message);
      continue;
    }
    if (tokens(r->line_).empty()) continue;
    break;
  }
  if (options.format) {
    r->format_ = *options.format;
    if (r->format_ == TraceFormat::kFioIolog2 && fio_iolog_version(r->line_) == 3) r->format_ = TraceFormat::kFioIolog3;
  } else {
    auto f = detect(r->line_, r->name_, r->line_no_);
    if (!f.is_ok()) return f.status();
    r->format_ = *f;
  }
  const bool header = r->line_.starts_with("fio version ");
  if (header && fio_iolog_version(r->line_) < 0)
    return sim::invalid_argument(r->name_ + ":" + std::to_string(r->line_no_) + ": " + kNotIologHeader);
  // A fio iolog header under another --format: the records would be misread or dropped
  // (hostile round 32: --format blkparse on a fio iolog replayed 0 I/Os with success).
  if (header && r->format_ != TraceFormat::kFioIolog2 && r->format_ != TraceFormat::kFioIolog3)
    return sim::invalid_argument(r->name_ + ":" + std::to_string(r->line_no_) + ": a fio iolog header, but --format is " +
                                 std::string(to_string(r->format_)));
  if (!header) {
    r->pending_first_ = r->line_;
    r->has_pending_first_ = true;
  }
  return r;
}

Result<bool> TraceReader::read_line() {
  char buffer[kMaxLineBytes + 1];  // a line of kMaxLineBytes and its '\n' fit; one byte more does not
  while (true) {
    in_->getline(buffer, sizeof buffer);
    const std::streamsize n = in_->gcount();
    if (in_->bad()) return sim::io_error(name_ + ": read error after line " + std::to_string(line_no_));
    if (n == 0 && in_->eof()) return false;
    ++line_no_;
    if (in_->fail() && !in_->eof()) {  // longer than the buffer
      line_error_ = "line longer than " + std::to_string(kMaxLineBytes) + " bytes";
      // Skipping bad lines, read past the rest of it; else the line is an error already, and
      // its end may never come (/dev/zero, a stream without a newline).
      in_->clear();
      if (skip_bad_) in_->ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      return true;
    }
    // gcount() counts the '\n' when there was one; a NUL inside is kept (and refused).
    line_.assign(buffer, static_cast<std::size_t>(in_->eof() ? n : n - 1));
    // A UTF-8 byte-order mark, as Excel and Windows editors write it, is no part of the trace.
    if (line_no_ == 1 && line_.rfind("\xEF\xBB\xBF", 0) == 0) line_.erase(0, 3);
    line_error_.clear();
    if (line_.find('\0') != std::string::npos) line_error_ = "a NUL byte in the line";
    // A CR ends a line only before its '\n': one inside joins records (hostile review 43: a
    // file with CR-only line ends replayed its first record, or none, with success).
    if (const auto cr = line_.find('\r'); cr != std::string::npos && cr + 1 < line_.size())
      line_error_ = "a carriage return inside the line (are its lines ended by CR alone? tr '\\r' '\\n' converts it)";
    return true;
  }
}

Result<std::optional<TraceRecord>> TraceReader::next() {
  while (true) {
    std::string_view line;
    if (has_pending_first_) {
      has_pending_first_ = false;
      line_ = pending_first_;
    } else {
      auto more = read_line();
      if (!more.is_ok()) return more.status();
      if (!*more) return std::optional<TraceRecord>{};
    }
    line = line_;
    if (line_error_.empty() && tokens(line).empty()) continue;
    auto r = !line_error_.empty() ? Result<std::optional<TraceRecord>>(sim::invalid_argument(line_error_))
                                  : parse_line(line);
    if (r.is_ok() && r->has_value()) {
      if (sim::Status aligned = check_block_aligned(**r); !aligned.is_ok()) r = aligned;
    }
    if (!r.is_ok()) {
      const std::string message = config::printable(name_ + ":" + std::to_string(line_no_) + ": " + r.status().message());
      if (!skip_bad_) return sim::invalid_argument(message);
      if (bad_lines_++ == 0) first_bad_ = message;
      continue;
    }
    if (!r->has_value()) continue;  // a line that is no I/O (fio file actions, blkparse events)
    (*r)->line = line_no_;
    return r;
  }
}

std::optional<sim::Time> TraceReader::relative(__int128 time_ns) {
  if (time_ns > kMaxTimeNs) return std::nullopt;  // to_ns's "too late": never an origin either
  if (!origin_ns_) origin_ns_ = time_ns;
  const __int128 t = time_ns - *origin_ns_;
  if (t > kMaxSpanNs || t < -kMaxSpanNs) return std::nullopt;
  return static_cast<sim::Time>(t);
}

namespace trace_detail {
const char* beyond(__int128 ns) {
  return ns > TraceReader::kMaxTimeNs ? "a time past 2^63 ns (292 years) in the trace's own clock" : kBeyondSpan;
}
// A non-negative time in some unit (a double: fio µs, blkparse s, DiskSim ms), to whole
// nanoseconds; at or past 2^63 ns, kMaxTimeNs + 1, which relative() refuses. Not clamped to
// one value: records centuries apart, both past the clamp, replayed at one instant (hostile
// round 21). Below 2^63 a double's step is at most 2,048 ns; far above it, two times 31 years
// apart could no longer be told apart.
__int128 to_ns(double value, double ns_per_unit) {
  const double ns = value * ns_per_unit;
  if (!(ns < 0x1p63)) return TraceReader::kMaxTimeNs + 1;
  return static_cast<__int128>(std::round(ns));
}
}  // namespace trace_detail

Result<std::optional<TraceRecord>> TraceReader::parse_line(std::string_view line) {
  switch (format_) {
    case TraceFormat::kFioIolog2:
    case TraceFormat::kFioIolog3:
      return parse_fio(line);
    case TraceFormat::kBlkparse:
      return parse_blkparse(line);
    case TraceFormat::kMsrCsv:
      return parse_msr(line);
    case TraceFormat::kDiskSim:
      return parse_disksim(line);
  }
  return std::optional<TraceRecord>{};
}

// fio iolog.c read_iolog: v3 "USEC FILE ACTION [OFFSET LENGTH]", v2 without the time.
namespace {
// A fio iolog line of two fields: a file action (no I/O), or an error saying what is missing.
Result<std::optional<TraceRecord>> file_action(std::string_view action) {
  if (action == "add" || action == "open" || action == "close") return std::optional<TraceRecord>{};
  if (action == "read" || action == "write" || action == "trim" || action == "sync" || action == "datasync")
    return sim::invalid_argument("\"" + std::string(action) +
                                 "\" needs OFFSET LENGTH (fio writes a sync as FILE sync 0 0); only add, open and "
                                 "close stand alone");
  return sim::invalid_argument("\"" + std::string(action) + "\" is not add, open or close");
}
}  // namespace

Result<std::optional<TraceRecord>> TraceReader::parse_fio(std::string_view line) {
  if (line.rfind("fio version ", 0) == 0)
    return sim::invalid_argument("a second fio iolog header: traces written one after the other are not read as one "
                                 "(replay each, or remove the later headers)");
  auto t = tokens(line);
  const bool v3 = format_ == TraceFormat::kFioIolog3;
  std::optional<double> stamp_us;
  if (v3) {
    if (t.empty()) return sim::invalid_argument(bad("no timestamp (µs) first"));
    if (std::string problem = number_problem("timestamp (µs)", t[0], false); !problem.empty())
      return sim::invalid_argument(problem);
    stamp_us = number(t[0]);
    t.erase(t.begin());
  }
  // fio writes a wait as FILE wait USEC 0 and reads only four fields; the three-field form (a
  // hand-written log, docs/workloads.md) is read the same.
  if (t.size() == 3 && t[1] == "wait") t.push_back("0");
  if (t.size() != 2 && t.size() != 4)
    return sim::invalid_argument(bad("want FILE ACTION [OFFSET LENGTH] or FILE wait USEC, got " +
                                     std::to_string(t.size()) + " fields"));
  const std::string_view action = t[1];
  if (t.size() == 2) return file_action(action);
  // Byte counts: a field that is not one is named with its value (hostile round 13: "offset
  // and length are byte counts" said neither which nor why).
  const bool wait = action == "wait";
  const std::string_view names[2] = {wait && !v3 ? "delay (µs)" : "OFFSET", "LENGTH"};
  for (int i = 0; i < 2; ++i)
    if (std::string problem = number_problem(names[i], t[2 + static_cast<std::size_t>(i)], true); !problem.empty())
      return sim::invalid_argument(problem + (i == 0 && wait && !v3 ? " (want a non-negative whole number)"
                                                                     : " (want a non-negative whole number of bytes)"));
  const auto a = integer(t[2]);
  const auto b = integer(t[3]);
  for (int i = 0; i < 2; ++i)
    if (*(i == 0 ? a : b) > kMaxBytes)  // a v2 wait's delay: past 31 years (10^18 ns)
      return sim::invalid_argument(bad(std::string(names[i]) + " \"" + std::string(t[2 + static_cast<std::size_t>(i)]) +
                                       (i == 0 && wait && !v3 ? "\" is more than 31 years (10^18 ns)" : "\" is past 1 EiB")));
  if (wait) {
    if (!v3) {  // v2: OFFSET is the delay in µs
      const __int128 clock = static_cast<__int128>(fio_clock_ns_) + static_cast<__int128>(*a) * sim::kMicrosecond;
      if (clock > kMaxSpanNs) return sim::invalid_argument(bad(kBeyondSpan));
      fio_clock_ns_ = static_cast<sim::Time>(clock);
    }
    return std::optional<TraceRecord>{};  // v3: ignored, as fio does
  }
  TraceRecord r;
  if (action == "read") r.op = TraceOp::kRead;
  else if (action == "write") r.op = TraceOp::kWrite;
  else if (action == "trim") r.op = TraceOp::kTrim;
  else if (action == "sync" || action == "datasync") r.op = TraceOp::kFlush;
  else return sim::invalid_argument("\"" + std::string(action) + "\" is not read, write, trim, sync, datasync or wait");
  if (r.op != TraceOp::kFlush && *b == 0) return sim::invalid_argument(bad("an I/O of 0 bytes"));
  r.device = std::string(t[0]);
  r.offset_bytes = *a;
  r.length_bytes = r.op == TraceOp::kFlush ? 0 : *b;
  if (v3) {
    const __int128 at_ns = to_ns(*stamp_us, 1e3);
    const auto at = relative(at_ns);
    if (!at) return sim::invalid_argument(bad(beyond(at_ns)));
    r.time_ns = *at;
  } else {
    r.time_ns = fio_clock_ns_;
  }
  return std::optional<TraceRecord>(std::move(r));
}

// MSR Cambridge: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (100 ns units).
Result<std::optional<TraceRecord>> TraceReader::parse_msr(std::string_view line) {
  const auto t = tokens(line, ',');
  if (t.size() != 7) return sim::invalid_argument(bad("want 7 comma-separated fields"));
  if (t[0] == "Timestamp") return std::optional<TraceRecord>{};  // the header
  static constexpr std::pair<int, std::string_view> kWhole[] = {
      {0, "Timestamp"}, {2, "DiskNumber"}, {4, "Offset"}, {5, "Size"}, {6, "ResponseTime"}};
  for (const auto& [i, field] : kWhole)
    if (std::string problem = number_problem(field, t[i], true); !problem.empty())
      return sim::invalid_argument(problem + " (want a non-negative whole number)");
  const auto stamp = integer(t[0]);
  const auto offset = integer(t[4]);
  const auto size = integer(t[5]);
  const auto response = integer(t[6]);
  if (*size == 0) return sim::invalid_argument(bad("Size \"0\": an I/O of 0 bytes (want 1 or more)"));
  if (*offset > kMaxBytes || *size > kMaxBytes)
    return sim::invalid_argument(bad(std::string(*offset > kMaxBytes ? "Offset \"" + std::string(t[4])
                                                                     : "Size \"" + std::string(t[5])) +
                                     "\" is past 1 EiB"));
  // A CSV writer may quote the text fields ("hm"): the quotes are not part of the name.
  auto unquote = [](std::string_view f) {
    return f.size() >= 2 && f.front() == '"' && f.back() == '"' ? f.substr(1, f.size() - 2) : f;
  };
  TraceRecord r;
  const std::string_view type = unquote(t[3]);
  // MSR writes "Read" and "Write"; other exporters change the case (hostile review 43: "READ").
  const auto is = [type](std::string_view word) {
    return type.size() == word.size() &&
           std::equal(type.begin(), type.end(), word.begin(), [](char a, char b) { return std::tolower(a) == b; });
  };
  if (is("read")) r.op = TraceOp::kRead;
  else if (is("write")) r.op = TraceOp::kWrite;
  else return sim::invalid_argument("Type \"" + std::string(t[3]) + "\" is not Read or Write");
  const std::string_view host = unquote(t[1]);
  if (host.empty()) return sim::invalid_argument(bad("no Hostname"));
  r.device = std::string(host) + "_" + std::to_string(*integer(t[2]));  // "01" and "1": one disk
  r.offset_bytes = *offset;
  r.length_bytes = *size;
  const __int128 at_ns = static_cast<__int128>(*stamp) * 100;
  const auto at = relative(at_ns);
  if (!at) return sim::invalid_argument(bad(beyond(at_ns)));
  r.time_ns = *at;
  if (*response > kMaxBytes / 100) return sim::invalid_argument(bad("ResponseTime is too large"));
  r.recorded_latency_ns = *response * 100;
  return std::optional<TraceRecord>(std::move(r));
}

// DiskSim ASCII: ARRIVAL_MS DEVICE LBA SIZE_BLOCKS FLAGS.
Result<std::optional<TraceRecord>> TraceReader::parse_disksim(std::string_view line) {
  const auto t = tokens(line);
  if (t.size() != 5) return sim::invalid_argument(bad("want ARRIVAL_MS DEVICE LBA SIZE_BLOCKS FLAGS"));
  static constexpr std::string_view kFields[] = {"ARRIVAL_MS", "DEVICE", "LBA", "SIZE_BLOCKS", "FLAGS"};
  for (std::size_t i = 0; i < 5; ++i)
    if (std::string problem = number_problem(kFields[i], t[i], i > 0); !problem.empty())
      return sim::invalid_argument(problem + (i > 0 ? " (want a non-negative whole number)" : ""));
  const auto ms = number(t[0]);
  const auto lba = integer(t[2]);
  const auto blocks = integer(t[3]);
  const auto flags = integer(t[4]);
  if (*blocks == 0) return sim::invalid_argument(bad("SIZE_BLOCKS \"" + std::string(t[3]) + "\" is 0 (want 1 or more)"));
  if (*lba > kMaxBytes / kSectorBytes)
    return sim::invalid_argument(bad("LBA \"" + std::string(t[2]) + "\" is past 1 EiB (512-byte blocks)"));
  if (*blocks > kMaxBytes / kSectorBytes)
    return sim::invalid_argument(bad("SIZE_BLOCKS \"" + std::string(t[3]) + "\" is more than 1 EiB (512-byte blocks)"));
  TraceRecord r;
  r.op = (*flags & 1) ? TraceOp::kRead : TraceOp::kWrite;
  r.device = std::to_string(*integer(t[1]));  // "01" and "1": one device
  r.offset_bytes = *lba * kSectorBytes;
  r.length_bytes = *blocks * kSectorBytes;
  const __int128 at_ns = to_ns(*ms, 1e6);
  const auto at = relative(at_ns);
  if (!at) return sim::invalid_argument(bad(beyond(at_ns)));
  r.time_ns = *at;
  return std::optional<TraceRecord>(std::move(r));
}

}  // namespace afasim::workload
