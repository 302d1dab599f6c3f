#include "workload/vdbench_runner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "sim/assert.h"
#include "sim/rng.h"

namespace afasim::workload {
namespace {

// One resolved run: what every I/O of it draws from.
struct RunPlan {
  const VdRun* rd = nullptr;
  struct Stream {
    const VdWorkload* wd = nullptr;
    std::vector<VdSizeShare> xfersize;
    double rdpct = 100;
    double seekpct = 100;
    bool eof = false;
    double share = 0;           // fraction of the run's I/Os
    std::int64_t from = 0;      // byte range on the target
    std::int64_t to = 0;
    std::int64_t cursor = 0;    // sequential position
    bool done = false;          // eof reached
  };
  std::vector<Stream> streams;
  int threads = 0;
  double target_rate = 0;       // 0: max
  sim::Time elapsed = 0, interval = 0, warmup = 0;
  bool warmup_set = false;
  std::string for_loops;
};

struct Accum {
  std::int64_t ios = 0, reads = 0, bytes = 0;
  double resp = 0, resp_sq = 0, read_resp = 0, write_resp = 0, resp_max = 0;
  void add(bool read, std::int64_t b, double ms) {
    ++ios;
    reads += read;
    bytes += b;
    resp += ms;
    resp_sq += ms * ms;
    (read ? read_resp : write_resp) += ms;
    resp_max = std::max(resp_max, ms);
  }
  void merge(const Accum& o) {
    ios += o.ios;
    reads += o.reads;
    bytes += o.bytes;
    resp += o.resp;
    resp_sq += o.resp_sq;
    read_resp += o.read_resp;
    write_resp += o.write_resp;
    resp_max = std::max(resp_max, o.resp_max);
  }
  VdInterval finish(double seconds) const {
    VdInterval v;
    v.ios = ios;
    v.rate = seconds > 0 ? static_cast<double>(ios) / seconds : 0;
    v.mb_per_second = seconds > 0 ? static_cast<double>(bytes) / seconds / (1024.0 * 1024.0) : 0;
    if (ios > 0) {
      const double n = static_cast<double>(ios);
      v.bytes_per_io = static_cast<double>(bytes) / n;
      v.read_pct = 100.0 * static_cast<double>(reads) / n;
      v.resp_ms = resp / n;
      v.read_resp_ms = reads > 0 ? read_resp / static_cast<double>(reads) : 0;
      v.write_resp_ms = ios > reads ? write_resp / static_cast<double>(ios - reads) : 0;
      v.resp_max_ms = resp_max;
      v.resp_stddev_ms = std::sqrt(std::max(0.0, resp_sq / n - v.resp_ms * v.resp_ms));
      v.queue_depth = v.rate * v.resp_ms / 1000.0;
    }
    return v;
  }
};

// Executes one planned run in the simulator.
class Execution {
 public:
  Execution(IoTarget& target, sim::Simulator& sim, RunPlan plan, std::uint64_t seed)
      : target_(target), sim_(sim), plan_(std::move(plan)), rng_(seed) {}

  VdRunResult run(VdRunResult result) {
    start_ = sim_.now();
    end_ = start_ + plan_.elapsed;
    const auto n = static_cast<std::size_t>((plan_.elapsed + plan_.interval - 1) / plan_.interval);
    intervals_.assign(n, Accum{});
    free_threads_ = plan_.threads;
    if (plan_.target_rate <= 0) {
      for (int i = 0; i < plan_.threads; ++i) issue(new_io());
    } else {
      schedule_arrival();
    }
    while ((issuing() || in_flight_ > 0) && sim_.step()) {
    }
    // A run lasts its elapsed time even when its last arrival came early (iorate=1, say): the
    // device idles to its end, and the next run starts after it (hostile review 43: the next
    // run began at the last completion, and a slow rd meant as a pause gave no idle time).
    if (!eof_ && sim_.now() < end_) sim_.run_until(end_);
    result.start = start_;
    result.elapsed = plan_.elapsed;
    result.interval = plan_.interval;
    result.reached_eof = eof_;
    const sim::Time measured_end = eof_ ? std::min(end_, last_completion_) : end_;
    for (std::size_t i = 0; i < intervals_.size(); ++i) {
      const sim::Time from = start_ + static_cast<sim::Time>(i) * plan_.interval;
      if (from >= measured_end && i > 0) break;
      const sim::Time to = std::min(from + plan_.interval, measured_end);
      VdInterval v = intervals_[i].finish(sim::to_seconds(std::max<sim::Time>(1, to - from)));
      v.index = static_cast<int>(i) + 1;
      v.end = to;
      result.intervals.push_back(v);
    }
    // avg_: the intervals after the warm-up (VDBench's default: all but the first).
    const int count = static_cast<int>(result.intervals.size());
    int first = plan_.warmup_set
                    ? static_cast<int>((plan_.warmup + plan_.interval - 1) / plan_.interval) + 1
                    : 2;
    first = std::clamp(first, 1, count);
    Accum total;
    for (int i = first; i <= count; ++i) total.merge(intervals_[static_cast<std::size_t>(i - 1)]);
    const sim::Time span = result.intervals.back().end -
                           (start_ + static_cast<sim::Time>(first - 1) * plan_.interval);
    result.avg = total.finish(sim::to_seconds(std::max<sim::Time>(1, span)));
    result.avg_from = first;
    result.avg_to = count;
    return result;
  }

 private:
  struct Io {
    bool read = true;
    std::int64_t offset = 0;
    std::int64_t bytes = 0;
    bool valid = false;
  };

  bool issuing() const { return !stopped_ && sim_.now() < end_; }

  Io new_io() {
    Io io;
    // The stream: by share among those not at their end.
    double pick = rng_.uniform01();
    RunPlan::Stream* s = nullptr;
    double total = 0;
    for (auto& st : plan_.streams)
      if (!st.done) total += st.share;
    if (total <= 0) {
      stopped_ = true;
      eof_ = true;
      return io;
    }
    pick *= total;
    for (auto& st : plan_.streams) {
      if (st.done) continue;
      s = &st;
      if ((pick -= st.share) < 0) break;
    }
    std::int64_t size = s->xfersize.back().size_bytes;
    if (s->xfersize.size() > 1) {
      double q = rng_.uniform01() * 100;
      for (const auto& x : s->xfersize)
        if ((q -= x.percent) < 0) {
          size = x.size_bytes;
          break;
        }
    }
    size = std::min(size, s->to - s->from);
    io.read = rng_.uniform01() * 100 < s->rdpct;
    io.bytes = size;
    const bool random = s->seekpct >= 100 || (s->seekpct > 0 && rng_.uniform01() * 100 < s->seekpct);
    if (random) {
      const std::int64_t slots = std::max<std::int64_t>(1, (s->to - s->from) / size);
      io.offset = s->from + static_cast<std::int64_t>(rng_.uniform(static_cast<std::uint64_t>(slots))) * size;
    } else {
      if (s->cursor + size > s->to) {
        if (s->eof) {
          s->done = true;
          return new_io();
        }
        s->cursor = s->from;
      }
      io.offset = s->cursor;
      s->cursor += size;
    }
    io.valid = true;
    return io;
  }

  // Open loop: arrivals at the rate, exponential gaps. An arrival that finds every thread busy
  // waits for one, counted only: its I/O is drawn when a thread takes it (a list of drawn
  // I/Os took 34 bytes per arrival: iorate=1e9 grew to 13 GB in a minute). At most
  // kMaxWaitingArrivals wait; at that bound the arrivals pause until a thread takes one (an
  // offered rate the device cannot reach runs at the rate it reaches, as VDBench reports).
  static constexpr std::int64_t kMaxWaitingArrivals = 1 << 20;
  void schedule_arrival() {
    const double gap_s = rng_.exponential(1.0 / plan_.target_rate);
    const auto gap = std::max<sim::Time>(1, static_cast<sim::Time>(gap_s * 1e9));
    if (sim_.now() + gap >= end_) return;
    sim_.after(gap, [this] {
      if (!issuing()) return;
      if (free_threads_ > 0) {
        issue(new_io());
      } else {
        ++waiting_;
        if (waiting_ >= kMaxWaitingArrivals) {
          arrivals_paused_ = true;
          return;
        }
      }
      schedule_arrival();
    });
  }

  void issue(const Io& io) {
    if (!io.valid) return;
    --free_threads_;
    ++in_flight_;
    controller::HostIo h;
    h.op = io.read ? controller::IoOp::kRead : controller::IoOp::kWrite;
    h.volume_id = 1;
    h.offset_bytes = io.offset;
    h.length_bytes = io.bytes;
    const bool read = io.read;
    const std::int64_t bytes = io.bytes;
    target_.submit(h, [this, read, bytes](const controller::IoCompletion& c) {
      complete(read, bytes, c);
    });
  }

  void complete(bool read, std::int64_t bytes, const controller::IoCompletion& c) {
    --in_flight_;
    ++free_threads_;
    last_completion_ = c.complete_time;
    if (c.status.is_ok() && c.complete_time < end_) {
      const auto i = static_cast<std::size_t>((c.complete_time - start_) / plan_.interval);
      if (i < intervals_.size())
        intervals_[i].add(read, bytes, static_cast<double>(c.latency()) / 1e6);
    }
    if (!c.status.is_ok()) stopped_ = true;
    if (!issuing()) return;
    if (plan_.target_rate <= 0) {
      issue(new_io());
    } else if (waiting_ > 0) {
      --waiting_;
      issue(new_io());
      if (arrivals_paused_) {
        arrivals_paused_ = false;
        schedule_arrival();
      }
    }
  }

  IoTarget& target_;
  sim::Simulator& sim_;
  RunPlan plan_;
  sim::Rng rng_;
  sim::Time start_ = 0, end_ = 0, last_completion_ = 0;
  std::vector<Accum> intervals_;
  std::int64_t waiting_ = 0;  // arrivals waiting for a thread
  bool arrivals_paused_ = false;
  int free_threads_ = 0;
  int in_flight_ = 0;
  bool stopped_ = false;
  bool eof_ = false;
};

std::string size_label(std::int64_t b) {
  if (b % (1 << 20) == 0) return std::to_string(b >> 20) + "m";
  if (b % 1024 == 0) return std::to_string(b >> 10) + "k";
  return std::to_string(b);
}

sim::Result<RunPlan> plan_run(const VdbenchFile& f, const VdRun& rd, std::int64_t capacity,
                              int threads, const std::vector<VdSizeShare>* xfer,
                              const double* rdpct, const double* seekpct,
                              const VdbenchRunOptions& o) {
  RunPlan p;
  p.rd = &rd;
  p.elapsed = o.elapsed > 0 ? o.elapsed : rd.elapsed;
  p.interval = o.interval > 0 ? o.interval : rd.interval;
  p.interval = std::min(p.interval, p.elapsed);
  if (o.elapsed > 0 || o.interval > 0) {
    p.warmup = p.interval;
    p.warmup_set = true;
  } else if (rd.warmup) {
    p.warmup = *rd.warmup;
    p.warmup_set = true;
  }
  double skewed = 0;
  int unskewed = 0;
  for (const auto& name : rd.wds) {
    const VdWorkload* w = f.wd(name);
    skewed += w->skew;
    unskewed += w->skew == 0;
  }
  std::vector<std::string> sds_used;
  for (const auto& name : rd.wds) {
    const VdWorkload* w = f.wd(name);
    const double wd_share = w->skew > 0 ? w->skew / 100 : (100 - skewed) / 100 / std::max(1, unskewed);
    for (const auto& sd_name : w->sds) {
      const VdStorage* sd = f.sd(sd_name);
      const std::int64_t size = sd->size_bytes > 0 ? sd->size_bytes : capacity;
      if (size > capacity)
        return sim::invalid_argument(f.file_name + ":" + std::to_string(sd->line) + ": size: sd=" +
                                     sd->name + " needs " + std::to_string(size) +
                                     " bytes; the device has " + std::to_string(capacity));
      const auto [lo, hi] = w->range ? *w->range : std::pair<double, double>{sd->range_from, sd->range_to};
      RunPlan::Stream s;
      s.wd = w;
      s.xfersize = xfer ? *xfer : w->xfersize;
      s.rdpct = rdpct ? *rdpct : w->rdpct;
      s.seekpct = seekpct ? *seekpct : w->seekpct;
      s.eof = w->eof && !seekpct;
      s.share = wd_share / static_cast<double>(w->sds.size());
      s.from = static_cast<std::int64_t>(static_cast<double>(size) * lo / 100) / 4096 * 4096;
      s.to = static_cast<std::int64_t>(static_cast<double>(size) * hi / 100) / 4096 * 4096;
      s.cursor = s.from;
      // Every size of a distribution, not only the first, fits (hostile round 22).
      std::int64_t largest = 0;
      for (const auto& x : s.xfersize) largest = x.percent > 0 ? std::max(largest, x.size_bytes) : largest;
      if (s.to - s.from < largest)  // the line of the size: the rd's forxfersize, else the wd's
        return sim::invalid_argument(f.file_name + ":" + std::to_string(xfer ? rd.line : w->line) + ": range: wd=" +
                                     w->name + " covers " + std::to_string(s.to - s.from) +
                                     " bytes of sd=" + sd->name + " (its " + std::to_string(size) + " bytes, the range's ends rounded "
                                     "down to whole 4 KiB blocks), less than its largest transfer (" + std::to_string(largest) + " bytes)");
      p.streams.push_back(s);
      if (std::find(sds_used.begin(), sds_used.end(), sd_name) == sds_used.end()) {
        sds_used.push_back(sd_name);
        p.threads += threads > 0 ? threads : sd->threads;
      }
    }
  }
  // The threads are per sd and the sds' add up (2,000 sds x 4,096 threads put 8.2 M I/Os in
  // flight: hostile round 22); afasim trace's bound on I/Os in flight.
  constexpr int kMaxThreads = 65'536;
  if (p.threads > kMaxThreads)
    return sim::invalid_argument(f.file_name + ":" + std::to_string(rd.line) + ": threads: rd=" + rd.name + "'s sds keep " +
                                 std::to_string(p.threads) + " I/Os in flight; afasim takes at most " +
                                 std::to_string(kMaxThreads));
  p.for_loops = "threads=" + std::to_string(p.threads);
  if (xfer) p.for_loops += " xfersize=" + size_label(xfer->front().size_bytes);
  if (rdpct) p.for_loops += " rdpct=" + std::to_string(static_cast<int>(*rdpct));
  if (seekpct) p.for_loops += " seekpct=" + std::to_string(static_cast<int>(*seekpct));
  return p;
}

}  // namespace

sim::Result<VdbenchReport> run_vdbench(IoTarget& target, std::int64_t capacity_bytes,
                                       sim::Simulator& sim, const VdbenchFile& file,
                                       const VdbenchRunOptions& options) {
  VdbenchReport report;
  report.file = file.file_name;
  report.target = target.name();
  report.seed = options.seed;
  std::uint64_t run_index = 0;
  for (const VdRun& rd : file.rds) {
    // For-loops: every combination, threads outermost.
    const std::vector<int> threads = rd.forthreads.empty() ? std::vector<int>{0} : rd.forthreads;
    const std::size_t nx = std::max<std::size_t>(1, rd.forxfersize.size());
    const std::size_t nr = std::max<std::size_t>(1, rd.forrdpct.size());
    const std::size_t ns = std::max<std::size_t>(1, rd.forseekpct.size());
    for (int t : threads)
      for (std::size_t xi = 0; xi < nx; ++xi)
        for (std::size_t ri = 0; ri < nr; ++ri)
          for (std::size_t si = 0; si < ns; ++si) {
            const auto* xfer = rd.forxfersize.empty() ? nullptr : &rd.forxfersize[xi];
            const double* rdpct = rd.forrdpct.empty() ? nullptr : &rd.forrdpct[ri];
            const double* seekpct = rd.forseekpct.empty() ? nullptr : &rd.forseekpct[si];
            auto plan = plan_run(file, rd, capacity_bytes, t, xfer, rdpct, seekpct, options);
            if (!plan.is_ok()) return plan.status();
            // The rates to run: max, or max then the curve.
            std::vector<double> pcts;
            if (rd.rate == VdRate::kCurve) pcts = rd.curve;
            double max_rate = 0;
            auto execute = [&](double rate, double pct, bool curve) {
              RunPlan p = *plan;
              p.target_rate = rate;
              VdRunResult r;
              r.rd = rd.name;
              r.curve = curve;
              r.curve_pct = pct;
              r.target_rate = rate;
              r.threads = p.threads;
              r.for_loops = p.for_loops;
              if (rate <= 0)
                r.rate_label = curve ? "Uncontrolled curve" : "Uncontrolled MAX";
              else if (curve) {
                char b[48];
                std::snprintf(b, sizeof b, "Controlled curve %g%% (%.0f)", pct, rate);
                r.rate_label = b;
              } else {
                char b[32];
                std::snprintf(b, sizeof b, "%.0f", rate);
                r.rate_label = b;
              }
              Execution e(target, sim, std::move(p), sim::mix64(options.seed ^ (++run_index * 0x9e3779b97f4a7c15ULL)));
              VdRunResult done = e.run(std::move(r));
              if (options.progress)
                options.progress("vdbench: rd=" + rd.name + " " + done.rate_label + ": " +
                                 std::to_string(static_cast<long long>(done.avg.rate)) + " I/O/s");
              report.runs.push_back(done);
              return done.avg.rate;
            };
            if (rd.rate == VdRate::kFixed) {
              execute(rd.iorate, 0, false);
            } else {
              max_rate = execute(0, 0, rd.rate == VdRate::kCurve);
              for (double pct : pcts) execute(std::max(1.0, max_rate * pct / 100), pct, true);
            }
          }
  }
  return report;
}

}  // namespace afasim::workload
