#include "workload/fio_logs.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "sim/assert.h"

namespace afasim::workload {

int fio_plat_index(std::uint64_t value) {
  const int msb = value == 0 ? 0 : 63 - std::countl_zero(value);
  if (msb <= kFioPlatBits) return static_cast<int>(value);
  const int error_bits = msb - kFioPlatBits;
  const int base = (error_bits + 1) << kFioPlatBits;
  const int offset = static_cast<int>((value >> error_bits) & ((1u << kFioPlatBits) - 1));
  return std::min(base + offset, kFioPlatCount - 1);
}

std::uint64_t fio_plat_value(int index) {
  AFASIM_ASSERT(index >= 0 && index < kFioPlatCount, "fio bin index in range");
  if (index < (2 << kFioPlatBits)) return static_cast<std::uint64_t>(index);
  const int error_bits = (index >> kFioPlatBits) - 1;
  const std::uint64_t base = std::uint64_t{1} << (error_bits + kFioPlatBits);
  const std::uint64_t k = static_cast<std::uint64_t>(index) % (1u << kFioPlatBits);
  return base + static_cast<std::uint64_t>((static_cast<double>(k) + 0.5) *
                                           static_cast<double>(std::uint64_t{1} << error_bits));
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> fio_plat_bins(const sim::Histogram& h) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bins;
  int last = -1;
  h.for_each_bucket([&](std::int64_t low, std::int64_t high, std::uint64_t count) {
    const int index = fio_plat_index(static_cast<std::uint64_t>(low));
    AFASIM_ASSERT(index == fio_plat_index(static_cast<std::uint64_t>(high)),
                  "a histogram bucket lies inside one fio bin");
    if (index == last) {
      bins.back().second += count;
    } else {
      bins.emplace_back(fio_plat_value(index), count);
      last = index;
    }
  });
  return bins;
}

namespace {

constexpr const char* kTypeNames[] = {"lat", "slat", "clat", "bw", "iops", "clat_hist"};

std::string log_name(const std::string& prefix, const char* type, int thread_number,
                     bool per_job) {
  return per_job ? prefix + "_" + type + "." + std::to_string(thread_number) + ".log"
                 : prefix + "_" + type + ".log";
}

}  // namespace

const std::string* escaping_log_prefix(const LogOptions& logs) {
  for (const std::string* p : {&logs.lat_prefix, &logs.bw_prefix, &logs.iops_prefix, &logs.hist_prefix}) {
    if (p->empty()) continue;
    if (p->front() == '/') return p;
    const std::filesystem::path path(*p);
    if (std::any_of(path.begin(), path.end(), [](const std::filesystem::path& part) { return part == ".."; })) return p;
  }
  return nullptr;
}

namespace {
std::array<std::string, 6> log_paths(const LogOptions& logs, const std::string& dir, int thread_number) {
  const std::string* prefixes[6] = {&logs.lat_prefix, &logs.lat_prefix,  &logs.lat_prefix,
                                    &logs.bw_prefix,  &logs.iops_prefix, &logs.hist_prefix};
  std::array<std::string, 6> paths;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    if (prefixes[k]->empty()) continue;
    // A relative name or path is under `dir` (the current folder when empty); an absolute one as it is.
    const bool absolute = prefixes[k]->front() == '/';
    paths[k] = (dir.empty() || absolute ? std::string() : dir + "/") +
               log_name(*prefixes[k], kTypeNames[k], thread_number, logs.per_job);
  }
  return paths;
}
}  // namespace

std::vector<std::string> FioLogWriter::paths(const LogOptions& logs, const std::string& dir, int thread_number) {
  std::vector<std::string> out;
  for (std::string& p : log_paths(logs, dir, thread_number))
    if (!p.empty()) out.push_back(std::move(p));
  return out;
}

sim::Result<std::unique_ptr<FioLogWriter>> FioLogWriter::open(const LogOptions& logs,
                                                             const std::string& dir,
                                                             int thread_number,
                                                             std::set<std::string>& opened,
                                                             const std::vector<std::string>& inputs) {
  std::unique_ptr<FioLogWriter> w(new FioLogWriter(logs));
  static_assert(kLogKinds == 6);
  w->paths_ = log_paths(logs, dir, thread_number);
  // Every path first: none is emptied when one of them is refused (review, round 23).
  for (int k = 0; k < kLogKinds; ++k) {
    if (w->paths_[k].empty()) continue;
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (std::filesystem::equivalent(w->paths_[k], input, ec))
        return sim::invalid_argument(w->paths_[k] + ": the log file would replace " + input +
                                     ", which this run reads: give the log another name");
    }
  }
  for (int k = 0; k < kLogKinds; ++k) {
    const std::string& path = w->paths_[k];
    if (path.empty()) continue;
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::create_directories(folder, ec) && ec)
      return sim::io_error(folder.string() + ": cannot create the logs' folder: " + ec.message());
    if (opened.insert(path).second) std::ofstream(path, std::ios::trunc);  // this run's file
    auto file = std::make_unique<std::ofstream>(path, std::ios::app);
    if (!*file) return sim::io_error(path + ": cannot create the log file: " + std::strerror(errno));
    w->files_[k] = std::move(file);
  }
  w->window_end_ns_ = logs.avg_ns;
  w->hist_end_ns_ = logs.hist_ns;
  if (!logs.hist_prefix.empty())
    for (auto& bins : w->hist_) bins.assign(kFioPlatCount, 0);
  return w;
}

void FioLogWriter::line(LogKind kind, sim::Time elapsed_ns, std::uint64_t value, Direction d,
                        std::int64_t bytes, std::int64_t offset) {
  std::ofstream* f = files_[kind].get();
  if (f == nullptr) return;
  char text[128];
  const auto ms = static_cast<unsigned long>(elapsed_ns / sim::kMillisecond);
  const int n = logs_.offset
                    ? std::snprintf(text, sizeof text, "%lu, %llu, %d, %lld, %lld, 0\n", ms,
                                    static_cast<unsigned long long>(value), index_of(d),
                                    static_cast<long long>(bytes), static_cast<long long>(offset))
                    : std::snprintf(text, sizeof text, "%lu, %llu, %d, %lld, 0\n", ms,
                                    static_cast<unsigned long long>(value), index_of(d),
                                    static_cast<long long>(bytes));
  f->write(text, n);
  // per_job_logs=0: clones append to one file; a line goes out whole (one O_APPEND write).
  if (!logs_.per_job) f->flush();
}

void FioLogWriter::record(sim::Time elapsed_ns, Direction d, std::int64_t bytes,
                          std::int64_t offset, sim::Time slat_ns, sim::Time clat_ns) {
  if (logs_.hist_ns > 0 && files_[kHist]) {
    close_hist_windows(elapsed_ns);
    ++hist_[index_of(d)][fio_plat_index(static_cast<std::uint64_t>(clat_ns))];
    hist_bs_[index_of(d)] = bytes;
  }
  const sim::Time lat_ns = slat_ns + clat_ns;
  if (logs_.avg_ns == 0) {
    line(kLat, elapsed_ns, static_cast<std::uint64_t>(lat_ns), d, bytes, offset);
    line(kSlat, elapsed_ns, static_cast<std::uint64_t>(slat_ns), d, bytes, offset);
    line(kClat, elapsed_ns, static_cast<std::uint64_t>(clat_ns), d, bytes, offset);
    // fio add_bw_sample: bytes × 10^6 / completion ns, i.e. kB/s over the I/O.
    const auto bw = clat_ns > 0 ? static_cast<std::uint64_t>(
                                      static_cast<__int128>(bytes) * 1'000'000 / clat_ns)
                                : 0;
    line(kBw, elapsed_ns, bw, d, bytes, offset);
    line(kIops, elapsed_ns, 1, d, bytes, offset);
    return;
  }
  close_avg_windows(elapsed_ns);
  Window& w = window_[index_of(d)];
  ++w.ios;
  w.bytes += static_cast<std::uint64_t>(bytes);
  w.latency_sum_ns[0] += static_cast<double>(lat_ns);
  w.latency_sum_ns[1] += static_cast<double>(slat_ns);
  w.latency_sum_ns[2] += static_cast<double>(clat_ns);
}

void FioLogWriter::close_avg_windows(sim::Time elapsed_ns) {
  while (elapsed_ns >= window_end_ns_) {
    write_avg_window(window_end_ns_, logs_.avg_ns);
    window_end_ns_ += logs_.avg_ns;
  }
}

void FioLogWriter::write_avg_window(sim::Time at_ns, sim::Time length_ns) {
  for (int d = 0; d < kDirections; ++d) {
    Window& w = window_[d];
    if (w.ios == 0) continue;
    const auto dir = static_cast<Direction>(d);
    for (int k = 0; k < 3; ++k) {  // stat.c __add_stat_to_log: the mean, rounded
      const auto mean = static_cast<std::uint64_t>(
          w.latency_sum_ns[k] / static_cast<double>(w.ios) + 0.5);
      line(static_cast<LogKind>(kLat + k), at_ns, mean, dir, 0, 0);
    }
    if (length_ns > 0) {  // stat.c __add_samples: KiB/s and IOPS over the window (none: no rate sample)
      const auto per_second = [length_ns](std::uint64_t n) {
        return static_cast<std::uint64_t>(static_cast<unsigned __int128>(n) * sim::kSecond / static_cast<std::uint64_t>(length_ns));
      };
      line(kBw, at_ns, per_second(w.bytes) / 1024, dir, 0, 0);
      line(kIops, at_ns, per_second(w.ios), dir, 0, 0);
    }
    w = Window{};
  }
}

void FioLogWriter::close_hist_windows(sim::Time elapsed_ns) {
  while (elapsed_ns >= hist_end_ns_) {
    for (int d = 0; d < kDirections; ++d) {
      auto& bins = hist_[d];
      bool any = false;
      for (auto c : bins) any |= c != 0;
      if (!any) continue;
      std::string text = std::to_string(hist_end_ns_ / sim::kMillisecond) + ", " +
                         std::to_string(d) + ", " + std::to_string(hist_bs_[d]);
      for (auto c : bins) text += ", " + std::to_string(c);
      text += "\n";
      files_[kHist]->write(text.data(), static_cast<std::streamsize>(text.size()));
      if (!logs_.per_job) files_[kHist]->flush();
      bins.assign(kFioPlatCount, 0);
    }
    hist_end_ns_ += logs_.hist_ns;
  }
}

int FioLogWriter::files_per_clone(const LogOptions& logs) {
  return 3 * !logs.lat_prefix.empty() + !logs.bw_prefix.empty() + !logs.iops_prefix.empty() +
         !logs.hist_prefix.empty();
}

sim::Status FioLogWriter::finish(sim::Time elapsed_ns) {
  if (logs_.avg_ns > 0) {
    // The last, partial window, as fio's finalize_logs writes what its windows hold at the
    // end: the latencies at the clone's end; bw and iops only when the window lasted a whole
    // log_avg_msec, less fio's LOG_MSEC_SLACK (1 ms), since fio takes a rate sample only
    // then (stat.c __add_samples). fio review 44: the I/Os that drained 0.3 ms after a 3 s run
    // were written at 3,500 ms as 64 KiB over a whole 500 ms window, a dip that was not there;
    // over their 0.3 ms, a spike.
    constexpr sim::Time kLogMsecSlackNs = sim::kMillisecond;
    close_avg_windows(elapsed_ns);
    const sim::Time tail_ns = elapsed_ns - (window_end_ns_ - logs_.avg_ns);
    write_avg_window(elapsed_ns, tail_ns >= logs_.avg_ns - kLogMsecSlackNs ? tail_ns : 0);
  }
  if (logs_.hist_ns > 0 && files_[kHist]) close_hist_windows(std::max(elapsed_ns, hist_end_ns_));
  sim::Status status;
  for (int k = 0; k < kLogKinds; ++k) {
    if (!files_[k]) continue;
    errno = 0;
    files_[k]->close();  // flushes; a write that failed earlier left the stream failed too
    if (files_[k]->fail() && status.is_ok())
      status = sim::io_error(paths_[k] + ": cannot write the log file: " +
                             (errno != 0 ? std::strerror(errno) : "a write failed"));
    files_[k].reset();
  }
  return status;
}

}  // namespace afasim::workload
