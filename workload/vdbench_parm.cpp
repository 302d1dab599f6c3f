#include "workload/vdbench_parm.h"
#include "config/file_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace afasim::workload {
namespace {

// A figure in a message as a person writes it: 120, 99.5 (std::to_string gave "120.000000").
std::string shortest(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// The largest transfer a VDBench file may ask for: a 1 GiB I/O is already 16 extents' worth of
// SSD work at once; above it a run is a mistake, not a workload.
constexpr std::int64_t kMaxTransferBytes = std::int64_t{1} << 30;
// Bounds on what a file may ask for, each far beyond a study's (a VDBench study runs tens of
// runs of a few hundred intervals over a few sds) and within memory and time (hostile round 22).
constexpr std::int64_t kMaxIntervals = 1'000'000;      // per run
constexpr std::int64_t kMaxRuns = 10'000;               // for-loop combinations and curve points
constexpr std::size_t kMaxStorageDefinitions = 1'024;   // sds
constexpr std::size_t kMaxWorkloadDefinitions = 1'024;  // wds
// sd streams of one rd (each wd's sds, over its wds): an I/O may scan them, and 60,000 wds
// named in one rd ran for minutes before an I/O (hostile review 43).
constexpr std::size_t kMaxRunStreams = 4'096;

// The runs an rd makes: its for-loops' combinations, and a curve's points after its max run.
double runs_of(const VdRun& r) {
  const auto n = [](std::size_t k) { return static_cast<double>(std::max<std::size_t>(1, k)); };
  return n(r.forthreads.size()) * n(r.forxfersize.size()) * n(r.forrdpct.size()) * n(r.forseekpct.size()) *
         (r.rate == VdRate::kCurve ? 1.0 + static_cast<double>(r.curve.size()) : 1.0);
}

// Thrown inside this file only; parse_vdbench turns it into a Status.
struct ParmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Param {
  std::string key;
  std::string value;  // a list keeps its parentheses
  int line = 0;
};

struct Definition {
  std::string kind;  // "sd", "wd", "rd"
  std::string name;
  int line = 0;
  std::vector<Param> params;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  // The message is cut at 256 bytes: a value 10,000 parentheses deep was echoed whole, a
  // 20 KB line (hostile round 25).
  [[noreturn]] void fail(int line, const std::string& key, const std::string& what) const {
    constexpr std::size_t kMaxWhatBytes = 256;
    const std::string cut = what.size() <= kMaxWhatBytes
                                ? what
                                : what.substr(0, kMaxWhatBytes) + "... (" + std::to_string(what.size()) + " bytes in all)";
    throw ParmError(file_ + ":" + std::to_string(line) + ": " + (key.empty() ? "" : key + ": ") + cut);
  }

  // Splits a line on commas outside parentheses into key=value pairs.
  std::vector<Param> split(const std::string& text, int line) const {
    std::vector<Param> out;
    std::string cur;
    int depth = 0;
    auto flush = [&] {
      const std::string t = trim(cur);
      cur.clear();
      if (t.empty()) return;
      const auto eq = t.find('=');
      if (eq == std::string::npos) fail(line, t, "expected keyword=value");
      Param p{lower(trim(t.substr(0, eq))), trim(t.substr(eq + 1)), line};
      if (p.key.empty()) fail(line, "", "a value without a keyword: \"" + t + "\"");
      if (p.value.empty()) fail(line, p.key, "no value");
      out.push_back(std::move(p));
    };
    for (char c : text) {
      if (c == '(') ++depth;
      if (c == ')') {
        if (--depth < 0) fail(line, "", "')' without '('");
      }
      if (c == ',' && depth == 0) {
        flush();
      } else {
        cur += c;
      }
    }
    if (depth != 0) fail(line, "", "'(' without ')'");
    flush();
    return out;
  }

  std::vector<Definition> definitions(const std::string& text) const {
    std::vector<Definition> defs;
    std::istringstream in(text);
    std::string raw;
    int line = 0;
    bool continues = false;  // the last line read ended in ','
    while (std::getline(in, raw)) {
      ++line;
      // A UTF-8 byte-order mark, as Windows editors write it, is no part of the first line (it
      // was read as part of "sd": "unknown or unsupported parameter"; hostile round 25).
      if (line == 1 && raw.starts_with("\xEF\xBB\xBF")) raw.erase(0, 3);
      std::string t = trim(raw);
      if (t.empty() || t[0] == '*' || t[0] == '#' || t.rfind("//", 0) == 0) continue;
      // A comment after the parameters: VDBench ignores what follows whitespace + '*'... keep
      // it simple and strict: '*' only starts comment lines.
      auto params = split(t, line);
      // A line after one that ends in ',' continues its definition, whatever its first keyword
      // (hostile review 43: "wd=wd1," then " sd=sd9" defined an sd9, and wd1 took every sd).
      const bool continued = std::exchange(continues, t.back() == ',');
      if (params.empty()) continue;
      const std::string& first = params.front().key;
      if ((first == "sd" || first == "wd" || first == "rd") && !(continued && !defs.empty())) {
        Definition d{first, params.front().value, line, {}};
        d.params.assign(params.begin() + 1, params.end());
        defs.push_back(std::move(d));
      } else if (first == "hd" || first == "fsd" || first == "fwd" || first == "include") {
        fail(line, first, "not supported (afasim reads sd=, wd= and rd= definitions)");
      } else if (defs.empty()) {
        fail(line, first, "unknown or unsupported parameter");
      } else {
        for (auto& p : params) defs.back().params.push_back(std::move(p));
      }
    }
    return defs;
  }

  // --- values ---
  std::vector<std::string> list(const Param& p) const {
    std::string v = p.value;
    if (v.front() != '(') return {v};
    if (v.back() != ')') fail(p.line, p.key, "a list must end with ')'");
    v = v.substr(1, v.size() - 2);
    std::vector<std::string> out;
    std::string cur;
    for (char c : v + ",") {
      if (c == ',') {
        const std::string t = trim(cur);
        if (t.empty()) fail(p.line, p.key, "an empty item in the list");
        out.push_back(t);
        cur.clear();
      } else {
        cur += c;
      }
    }
    return out;
  }

  double number(const Param& p, const std::string& text, double lo, double hi) const {
    std::size_t used = 0;
    double d = 0;
    try {
      d = std::stod(text, &used);
    } catch (...) {
      fail(p.line, p.key, "\"" + text + "\" is not a number");
    }
    // VDBench's range form, (1-64,d) or (1-10,1): not read (hostile round 32: "is not a number").
    if (used > 0 && used < text.size() && text[used] == '-')
      fail(p.line, p.key, "\"" + text + "\": VDBench's range form (FROM-TO,STEP) is not read; list the values, "
                          "as (1,2,4,8,16,32,64)");
    if (used != text.size() || !std::isfinite(d)) fail(p.line, p.key, "\"" + text + "\" is not a number");
    if (d < lo || d > hi) {
      std::ostringstream os;
      os << "\"" << text << "\" is outside [" << lo << ", " << hi << "]";
      fail(p.line, p.key, os.str());
    }
    return d;
  }

  int integer(const Param& p, const std::string& text, double lo, double hi) const {
    const double d = number(p, text, lo, hi);
    if (d != std::floor(d)) fail(p.line, p.key, "\"" + text + "\" is not a whole number");
    return static_cast<int>(d);
  }

  // VDBench sizes: a number with an optional k, m, g or t (powers of 1024).
  std::int64_t size(const Param& p, const std::string& text) const {
    std::string t = lower(text);
    double mult = 1;
    if (!t.empty()) {
      switch (t.back()) {
        case 'k': mult = 1024.0; break;
        case 'm': mult = 1024.0 * 1024; break;
        case 'g': mult = 1024.0 * 1024 * 1024; break;
        case 't': mult = 1024.0 * 1024 * 1024 * 1024; break;
        default: break;
      }
      if (mult != 1) t.pop_back();
    }
    std::size_t used = 0;
    double d = 0;
    try {
      d = std::stod(t, &used);
    } catch (...) {
      fail(p.line, p.key, "\"" + text + "\" is not a size");
    }
    if (used != t.size() || !(d > 0)) fail(p.line, p.key, "\"" + text + "\" is not a size");
    if (d * mult > 1e18) fail(p.line, p.key, "\"" + text + "\" is too large (at most 10^18 bytes)");
    // Whole bytes: "0.2" rounded to 0 (a transfer of 0 bytes divided by zero; a size of 0 is
    // the whole device) and "0.3k" to 307 (hostile review 43).
    const double bytes = d * mult;
    if (bytes < 1 || std::abs(bytes - std::round(bytes)) > 1e-6)
      fail(p.line, p.key, "\"" + text + "\" is " + shortest(bytes) + " bytes, not a whole number of bytes");
    return static_cast<std::int64_t>(std::llround(bytes));
  }

  sim::Time seconds(const Param& p, const std::string& text, double lo) const {
    std::string t = lower(text);
    double mult = 1;
    if (!t.empty() && (t.back() == 's' || t.back() == 'm' || t.back() == 'h')) {
      mult = t.back() == 'm' ? 60 : t.back() == 'h' ? 3600 : 1;
      t.pop_back();
    }
    // The bound on the seconds, after the unit: 1e7h overflowed the clock (hostile round 22).
    // Said in seconds, with the value as written (hostile round 37: "\"9999999\" is outside
    // [0.001, 2777.78]", the unit dropped and the bound silently in hours).
    const double d = number(p, t, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()) * mult;
    if (d < lo || d > 1e7) {
      std::ostringstream os;
      os << "\"" << text << "\" is outside [" << lo << " s, 10000000 s]";
      fail(p.line, p.key, os.str());
    }
    return static_cast<sim::Time>(std::llround(d * 1e9));
  }

  std::vector<VdSizeShare> xfersize(const Param& p) const {
    const auto items = list(p);
    std::vector<VdSizeShare> out;
    if (items.size() == 1) {
      out.push_back({size(p, items[0]), 100});
    } else {
      if (items.size() % 2 != 0)
        fail(p.line, p.key, "a distribution is (size,percent,size,percent,...)");
      double total = 0;
      for (std::size_t i = 0; i < items.size(); i += 2) {
        VdSizeShare s{size(p, items[i]), number(p, items[i + 1], 0, 100)};
        total += s.percent;
        out.push_back(s);
      }
      if (std::abs(total - 100) > 1e-6) fail(p.line, p.key, "the percentages add up to " + shortest(total) + ", not 100");
    }
    for (const auto& s : out) check_transfer(p, s.size_bytes);
    return out;
  }

  // A transfer size: whole 512-byte sectors, at most kMaxTransferBytes (xfersize=4t ran 8
  // threads of 4 TiB transfers for 71 s and reported no I/O: hostile round 18).
  void check_transfer(const Param& p, std::int64_t bytes) const {
    if (bytes <= 0 || bytes % 512 != 0) fail(p.line, p.key, std::to_string(bytes) + " is not a multiple of 512");
    if (bytes > kMaxTransferBytes)
      fail(p.line, p.key, std::to_string(bytes) + " bytes is above afasim's largest transfer, 1 GiB (1073741824)");
  }

  std::pair<double, double> range(const Param& p) const {
    const auto items = list(p);
    if (items.size() != 2) fail(p.line, p.key, "expected (from%,to%)");
    const double a = number(p, items[0], 0, 100), b = number(p, items[1], 0, 100);
    if (!(a < b)) fail(p.line, p.key, "the range must go up: (" + items[0] + "," + items[1] + ")");
    return {a, b};
  }

  // seekpct: a percentage or a word.
  void seekpct(const Param& p, VdWorkload& w) const {
    const std::string v = lower(p.value);
    w.eof = false;
    if (v == "eof") {
      w.seekpct = 0;
      w.eof = true;
    } else if (v == "seq" || v == "sequential") {
      w.seekpct = 0;
    } else if (v == "random" || v == "rand") {
      w.seekpct = 100;
    } else {
      w.seekpct = number(p, p.value, 0, 100);
    }
  }

  // A list of names with wildcards (`sd*`) resolved against `known`, in known order.
  std::vector<std::string> names(const Param& p, const std::vector<std::string>& known,
                                 const std::string& kind) const {
    std::vector<std::string> out;
    for (const auto& item : list(p)) {
      bool matched = false;
      const bool wild = !item.empty() && item.back() == '*';
      const std::string prefix = wild ? item.substr(0, item.size() - 1) : item;
      for (const auto& k : known)
        if ((wild && k.rfind(prefix, 0) == 0) || (!wild && k == item)) {
          if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
          matched = true;
        }
      if (!matched) fail(p.line, p.key, "no " + kind + " named \"" + item + "\"");
    }
    return out;
  }

  void apply_sd(const Param& p, VdStorage& s) const {
    if (p.key == "lun") s.lun = p.value;
    else if (p.key == "size") s.size_bytes = size(p, p.value);
    else if (p.key == "range") std::tie(s.range_from, s.range_to) = range(p);
    else if (p.key == "threads") s.threads = integer(p, p.value, 1, 4096);
    else if (p.key == "openflags") {
      for (const auto& f : list(p)) {
        const std::string l = lower(f);
        if (l != "o_direct" && l != "directio" && l != "o_dsync" && l != "o_sync")
          fail(p.line, p.key, "\"" + f + "\" is not supported (o_direct, directio, o_dsync, o_sync)");
      }
    } else fail(p.line, p.key, "unknown or unsupported parameter of sd=");
  }

  void apply_wd(const Param& p, VdWorkload& w, const std::vector<std::string>& sd_names) const {
    if (p.key == "sd") w.sds = names(p, sd_names, "sd");
    else if (p.key == "xfersize") w.xfersize = xfersize(p);
    else if (p.key == "rdpct") w.rdpct = number(p, p.value, 0, 100);
    else if (p.key == "seekpct") seekpct(p, w);
    else if (p.key == "skew") w.skew = number(p, p.value, 0, 100);
    else if (p.key == "range") w.range = range(p);
    else fail(p.line, p.key, "unknown or unsupported parameter of wd=");
  }

  void apply_rd(const Param& p, VdRun& r, const std::vector<std::string>& wd_names) const {
    if (p.key == "wd") r.wds = names(p, wd_names, "wd");
    else if (p.key == "iorate") {
      const std::string v = lower(p.value);
      if (v == "max") r.rate = VdRate::kMax;
      else if (v == "curve") r.rate = VdRate::kCurve;
      else {
        r.rate = VdRate::kFixed;
        r.iorate = number(p, p.value, 1e-3, 1e10);
      }
    } else if (p.key == "curve") {
      r.curve.clear();
      for (const auto& c : list(p)) r.curve.push_back(number(p, c, 0.1, 1000));
    } else if (p.key == "elapsed") r.elapsed = seconds(p, p.value, 1e-3);
    else if (p.key == "interval") r.interval = seconds(p, p.value, 1e-3);
    else if (p.key == "warmup") r.warmup = seconds(p, p.value, 0);
    else if (p.key == "forthreads" || p.key == "threads") {
      r.forthreads.clear();
      for (const auto& t : list(p)) r.forthreads.push_back(integer(p, t, 1, 4096));
    } else if (p.key == "forxfersize") {
      r.forxfersize.clear();
      for (const auto& t : list(p)) {
        r.forxfersize.push_back({{size(p, t), 100}});
        check_transfer(p, r.forxfersize.back().front().size_bytes);
      }
    } else if (p.key == "forrdpct") {
      r.forrdpct.clear();
      for (const auto& t : list(p)) r.forrdpct.push_back(number(p, t, 0, 100));
    } else if (p.key == "forseekpct") {
      r.forseekpct.clear();
      for (const auto& t : list(p)) r.forseekpct.push_back(number(p, t, 0, 100));
    } else fail(p.line, p.key, "unknown or unsupported parameter of rd=");
  }

  // A parameter given twice in one definition (`rdpct=0,rdpct=100`) is refused: VDBench's
  // own reading of it is undocumented and taking the last silently hid the first (hostile
  // round 22). rd's `threads` is `forthreads` under another name.
  void check_once(const Definition& d) const {
    std::set<std::string> seen;
    for (const auto& p : d.params) {
      const std::string key = d.kind == "rd" && p.key == "threads" ? "forthreads" : p.key;
      if (!seen.insert(key).second)
        fail(p.line, p.key, "given twice in " + d.kind + "=" + d.name);
    }
  }

  VdbenchFile parse(const std::string& text) const {
    VdbenchFile f;
    f.file_name = file_;
    VdStorage sd_default;
    VdWorkload wd_default;
    VdRun rd_default;
    std::vector<std::string> sd_names, wd_names;
    std::set<std::string> rd_names;
    for (const Definition& d : definitions(text)) {
      check_once(d);
      const bool is_default = lower(d.name) == "default";
      if (d.kind == "sd") {
        VdStorage s = sd_default;
        for (const auto& p : d.params) apply_sd(p, s);
        if (is_default) { sd_default = s; continue; }
        check_new_name(d, sd_names, kMaxStorageDefinitions);
        s.name = d.name;
        s.line = d.line;
        sd_names.push_back(d.name);
        f.sds.push_back(s);
      } else if (d.kind == "wd") {
        VdWorkload w = wd_default;
        for (const auto& p : d.params) apply_wd(p, w, sd_names);
        if (is_default) { wd_default = w; continue; }
        check_new_name(d, wd_names, kMaxWorkloadDefinitions);
        if (w.sds.empty()) {
          if (sd_names.empty()) fail(d.line, "sd", "wd=" + d.name + " names no sd and none is defined");
          w.sds = sd_names;  // VDBench: all sds
        }
        w.name = d.name;
        w.line = d.line;
        wd_names.push_back(d.name);
        f.wds.push_back(w);
      } else {
        VdRun r = rd_default;
        for (const auto& p : d.params) apply_rd(p, r, wd_names);
        if (is_default) { rd_default = r; continue; }  // its curve= may serve later iorate=curve rds
        for (const auto& p : d.params)
          if (p.key == "curve" && r.rate != VdRate::kCurve)
            fail(p.line, "curve", "is used only with iorate=curve, and rd=" + d.name + "'s iorate is not curve");
        if (!rd_names.insert(d.name).second) fail(d.line, "rd", "\"" + d.name + "\" is defined twice");
        if (r.wds.empty()) {
          if (wd_names.empty()) fail(d.line, "wd", "rd=" + d.name + " names no wd and none is defined");
          r.wds = wd_names;
        }
        if (r.interval > r.elapsed) fail(d.line, "interval", "longer than elapsed");
        // Every interval is a row kept and printed (elapsed=1e4,interval=0.001 took 3.1 GB).
        if (r.elapsed / r.interval > kMaxIntervals)
          fail(d.line, "interval", "elapsed / interval is over " + std::to_string(kMaxIntervals) + " intervals");
        if (r.warmup && *r.warmup >= r.elapsed) fail(d.line, "warmup", "not shorter than elapsed");
        r.name = d.name;
        r.line = d.line;
        f.rds.push_back(r);
      }
    }
    if (f.rds.empty()) fail(1, "rd", "the file defines no run (rd=)");
    check_bounds(f);
    for (const auto& r : f.rds) {
      double skew = 0;
      int unskewed = 0;
      for (const auto& w : r.wds) {
        skew += f.wd(w)->skew;
        unskewed += f.wd(w)->skew == 0;
      }
      if (skew > 100 + 1e-6 || (unskewed == 0 && std::abs(skew - 100) > 1e-6))
        fail(r.line, "skew", "the skews of rd=" + r.name + "'s workloads add up to " + shortest(skew) + ", not 100");
    }
    return f;
  }

 private:
  // Every run's results are kept to the end: for-loops multiply (a 16 KB file asked for 10^12
  // runs), so their number is bounded. Each sd is a stream each I/O may scan.
  // A new sd or wd: not defined before, and not past `most` of its kind (checked as each comes:
  // each name is compared with those before it).
  void check_new_name(const Definition& d, const std::vector<std::string>& names, std::size_t most) const {
    if (std::count(names.begin(), names.end(), d.name)) fail(d.line, d.kind, "\"" + d.name + "\" is defined twice");
    if (names.size() == most) fail(d.line, d.kind, "more than " + std::to_string(most) + " " + d.kind + "s");
  }

  // Every interval of every run is a row kept to the end, so the file's rows are bounded as a
  // run's are (hostile review 43: a 100-byte file's for-loops asked for terabytes).
  void check_bounds(const VdbenchFile& f) const {
    double runs = 0, rows = 0;
    for (const auto& r : f.rds) {
      runs += runs_of(r);
      if (runs > static_cast<double>(kMaxRuns))
        fail(r.line, "rd", "the runs its for-loops and curve make come to over " + std::to_string(kMaxRuns));
      rows += runs_of(r) * static_cast<double>(r.elapsed / r.interval);
      if (rows > static_cast<double>(kMaxIntervals))
        fail(r.line, "rd", "the file's runs come to over " + std::to_string(kMaxIntervals) +
                               " intervals in all (each is a row kept and printed)");
      std::size_t streams = 0;
      for (const auto& w : r.wds) streams += f.wd(w)->sds.size();
      if (streams > kMaxRunStreams)
        fail(r.line, "rd", "its wds name " + std::to_string(streams) + " sd streams in all; at most " +
                               std::to_string(kMaxRunStreams));
    }
  }

  std::string file_;
};

}  // namespace

const VdStorage* VdbenchFile::sd(const std::string& name) const {
  for (const auto& s : sds)
    if (s.name == name) return &s;
  return nullptr;
}

const VdWorkload* VdbenchFile::wd(const std::string& name) const {
  for (const auto& w : wds)
    if (w.name == name) return &w;
  return nullptr;
}

sim::Result<VdbenchFile> parse_vdbench(const std::string& text, const std::string& file_name) {
  // A NUL would end the message printed about it (and stay inside a lun= value): refused as
  // the trace reader refuses one.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    return sim::invalid_argument(file_name + ":" + std::to_string(line) + ": a NUL byte in the line");
  }
  try {
    return Parser(file_name).parse(text);
  } catch (const ParmError& e) {
    return sim::invalid_argument(e.what());
  }
}

sim::Status check_run_overrides(const VdbenchFile& file, sim::Time elapsed, sim::Time interval) {
  if (elapsed <= 0 && interval <= 0) return sim::Status::ok();
  const std::string flags = elapsed > 0 && interval > 0 ? "--elapsed / --interval" : elapsed > 0 ? "--elapsed" : "--interval";
  double rows = 0;
  for (const VdRun& rd : file.rds) {
    const sim::Time e = elapsed > 0 ? elapsed : rd.elapsed;
    const sim::Time i = std::min(interval > 0 ? interval : rd.interval, e);  // one longer than the run is cut to it
    if ((rows += runs_of(rd) * static_cast<double>(e / i)) > static_cast<double>(kMaxIntervals) && e / i <= kMaxIntervals)
      return sim::invalid_argument(flags + ": the file's runs would come to over " + std::to_string(kMaxIntervals) +
                                   " intervals in all (each is a row kept)");
    if (e / i > kMaxIntervals) {
      char detail[160];
      std::snprintf(detail, sizeof detail, " would run %lld intervals of %g s over %g s; at most %lld per run",
                    static_cast<long long>(e / i), sim::to_seconds(i), sim::to_seconds(e),
                    static_cast<long long>(kMaxIntervals));
      return sim::invalid_argument(flags + ": rd=" + rd.name + detail + " (each interval is a row kept)");
    }
  }
  return sim::Status::ok();
}

sim::Result<VdbenchFile> load_vdbench_file(const std::string& path) {
  // Bounded as fio job files are: /dev/zero or a 300 MB file was read whole (GBs of memory).
  // "-" is standard input, as afasim fio and afasim trace read it (hostile round 32).
  auto text = config::read_file_text(path == "-" ? "/dev/stdin" : path, kMaxVdbenchFileBytes);  // a directory is an error there
  if (!text.is_ok()) {
    // With the system's reason, as the other commands' files (hostile round 28: none was given).
    return sim::Status(text.status().code(), text.status().message() + " (the parameter file)");
  }
  if (text->size() > kMaxVdbenchFileBytes) return sim::invalid_argument(path + ": larger than 1 MiB");
  return parse_vdbench(*text, path);
}

}  // namespace afasim::workload
