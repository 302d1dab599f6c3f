// blkparse's default output (blkparse -i DEV, its text): Q lines are I/Os, C lines their
// recorded completions. TraceReader's blkparse members (trace_reader.h).
#include <algorithm>
#include <string>
#include <vector>

#include "workload/trace_reader.h"
#include "workload/trace_reader_internal.h"

namespace afasim::workload {

using namespace trace_detail;

namespace {
// blkparse's closing summary begins at "CPU0 (8,0):" or "Total (8,0):" (blkparse.c
// show_device_and_cpu_stats), or, with -s, at a process's "NAME (PID)" (show_process_stats).
bool is_blkparse_summary_header(const std::vector<std::string_view>& t) {
  if (t.size() < 2 || t[1].front() != '(') return false;
  if (t[0] == "Total") return true;
  if (t[0].size() > 3 && t[0].rfind("CPU", 0) == 0 && integer(t[0].substr(3))) return true;
  return t.size() == 2 && t[1].size() > 2 && t[1].back() == ')' && integer(t[1].substr(1, t[1].size() - 2));
}

// The letters of blkparse's RWBS field (blkparse_fmt.c fill_rwbs, the kernel's blk_fill_rwbs):
// F flush or FUA, R read, W write, D discard, E secure erase, N no data, A ahead, S sync, M meta.
bool is_rwbs(std::string_view s) { return !s.empty() && s.find_first_not_of("FRWDENASM") == std::string_view::npos; }
bool has(std::string_view rwbs, char c) { return rwbs.find(c) != std::string_view::npos; }
}  // namespace

// blkparse default output: Q lines are I/Os, C lines their recorded completions.
Result<std::optional<TraceRecord>> TraceReader::parse_blkparse(std::string_view line) {
  const auto t = tokens(line);
  if (blk_summary_line_ == 0 && is_blkparse_summary_header(t)) blk_summary_line_ = line_no_;
  if (blk_summary_line_ > 0) {  // the per-CPU and total summary after the events: free text
    if (!looks_like_blkparse(t)) return std::optional<TraceRecord>{};
    return sim::invalid_argument("an event line after the summary that begins at line " +
                                 std::to_string(blk_summary_line_) + " (blkparse prints its summary last)");
  }
  if (!looks_like_blkparse(t)) {
    // blkparse's device, CPU and sequence, then a time that is not one: name the time (hostile
    // round 15: "-0.0001" and "inf" were "not a blkparse event line").
    const auto comma = t.size() >= 7 ? t[0].find(',') : std::string_view::npos;
    if (comma != std::string_view::npos && integer(t[0].substr(0, comma)) && integer(t[0].substr(comma + 1)) &&
        integer(t[1]))
      if (std::string problem = number_problem("SECONDS", t[3], false); !problem.empty())
        return sim::invalid_argument(problem);
    return sim::invalid_argument(bad("not a blkparse event line"));
  }
  const std::string_view action = t[5];
  if (action != "Q" && action != "C") return std::optional<TraceRecord>{};
  const std::string_view rwbs = t[6];
  if (!is_rwbs(rwbs))
    return sim::invalid_argument("RWBS \"" + std::string(rwbs) + "\" is not made of blkparse's letters F R W D E N A S M");
  // The kernel sets one of W, D, E or R (blk_fill_rwbs): two of them say nothing replayable.
  if ((has(rwbs, 'R') ? 1 : 0) + (has(rwbs, 'W') ? 1 : 0) + (has(rwbs, 'D') || has(rwbs, 'E') ? 1 : 0) > 1)
    return sim::invalid_argument("RWBS \"" + std::string(rwbs) + "\" names more than one of read (R), write (W) and discard (D, E)");
  const bool ranged = t.size() >= 8 && t[7].front() != '[';
  // What follows the event is "[PROCESS]" (a Q) or "[ERROR]" (a C), or nothing: more after it
  // is another line run into this one (hostile review 43: the records after it were dropped).
  if (const std::size_t tail = ranged ? 10 : 7; t.size() > tail) {
    const std::string_view rest(t[tail].data(), static_cast<std::size_t>(t.back().data() + t.back().size() - t[tail].data()));
    // A process name may hold ']' ("[post]gres]"): refused only when what follows a ']' begins
    // another event (re-test of hostile review 43).
    const auto close = rest.find(']');
    const std::string_view after = close == std::string_view::npos ? std::string_view{} : rest.substr(close + 1);
    if (rest.front() != '[' || rest.back() != ']' || looks_like_blkparse(tokens(after)))
      return sim::invalid_argument("\"" + std::string(rest.substr(0, 40)) +
                                   "\" after the event: blkparse ends it with [PROCESS] or [ERROR] alone (two lines run into one?)");
  }
  if (!ranged) return blkparse_no_sector(t, action, rwbs);
  return blkparse_ranged(t, action, rwbs);
}

// A Q or C line without SECTOR + COUNT: a flush ("Q FWS [kworker/0:1H]"), or no data (N).
Result<std::optional<TraceRecord>> TraceReader::blkparse_no_sector(const std::vector<std::string_view>& t,
                                                                   std::string_view action,
                                                                   std::string_view rwbs) {
  if (action != "Q") return std::optional<TraceRecord>{};
  if (!has(rwbs, 'F')) {
    if (has(rwbs, 'R') || has(rwbs, 'W') || has(rwbs, 'D') || has(rwbs, 'E'))
      return sim::invalid_argument("a Q " + std::string(rwbs) + " line without SECTOR + COUNT");
    return std::optional<TraceRecord>{};
  }
  const __int128 at_ns = to_ns(*number(t[3]), 1e9);
  const auto at = relative(at_ns);
  if (!at) return sim::invalid_argument(bad(beyond(at_ns)));
  TraceRecord r;
  r.op = TraceOp::kFlush;
  r.device = std::string(t[0]);
  r.time_ns = *at;
  return std::optional<TraceRecord>(std::move(r));
}

// A Q line with SECTOR + COUNT is an I/O; a C line gives the response of the Q it completes.
Result<std::optional<TraceRecord>> TraceReader::blkparse_ranged(const std::vector<std::string_view>& t,
                                                                std::string_view action,
                                                                std::string_view rwbs) {
  const auto sector = integer(t[7]);
  if (!sector) return sim::invalid_argument("SECTOR \"" + std::string(t[7]) + "\" is not a sector number");
  if (*sector > kMaxBytes / kSectorBytes)
    return sim::invalid_argument("SECTOR \"" + std::string(t[7]) + "\" is past 1 EiB (512-byte sectors)");
  if (t.size() < 10 || t[8] != "+") return sim::invalid_argument(bad("want SECTOR + COUNT after the RWBS"));
  const auto count = integer(t[9]);
  if (!count || *count > kMaxBytes / kSectorBytes)
    return sim::invalid_argument("COUNT \"" + std::string(t[9]) + "\" after '+' is not a sector count");
  const __int128 relative_at_ns = to_ns(*number(t[3]), 1e9);
  const auto relative_at = relative(relative_at_ns);
  if (!relative_at) return sim::invalid_argument(bad(beyond(relative_at_ns)));
  const sim::Time at = *relative_at;
  const std::string key = std::string(t[0]) + " " + std::string(t[7]);
  if (action == "C") return blkparse_completion(key, std::string(t[0]), at);
  TraceRecord r;
  if (has(rwbs, 'D') || has(rwbs, 'E')) r.op = TraceOp::kTrim;
  else if (has(rwbs, 'R')) r.op = TraceOp::kRead;
  else if (has(rwbs, 'W')) r.op = TraceOp::kWrite;
  else if (has(rwbs, 'F')) r.op = TraceOp::kFlush;
  else return std::optional<TraceRecord>{};  // N: no data
  if (*count == 0) {
    if (!has(rwbs, 'F')) return sim::invalid_argument("a Q " + std::string(rwbs) + " of 0 sectors");
    r.op = TraceOp::kFlush;  // "FWS 0 + 0": a flush with no data
  }
  r.device = std::string(t[0]);
  r.offset_bytes = r.op == TraceOp::kFlush ? 0 : *sector * kSectorBytes;
  r.length_bytes = r.op == TraceOp::kFlush ? 0 : *count * kSectorBytes;
  r.time_ns = at;
  if (r.op == TraceOp::kWrite) {
    const std::size_t op_at = rwbs.find('W');
    r.preflush = rwbs.find('F') < op_at;
    r.fua = rwbs.find('F', op_at) != std::string_view::npos;
  }
  if (queued_.size() >= max_pending_) abandon_older_half();
  queued_[key] = at;
  return std::optional<TraceRecord>(std::move(r));
}

// The queued requests that are waiting longest are given up: their Q time at or below the
// median's (hostile round 32: new Q lines were no longer stored once the map was full, so every
// later C of every device was unpaired and the recorded latencies stopped). Linear in the map,
// once per kMaxPendingRequests / 2 Q lines.
void TraceReader::abandon_older_half() {
  std::vector<sim::Time> times;
  times.reserve(queued_.size());
  for (const auto& [key, at] : queued_) times.push_back(at);
  auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), middle, times.end());
  const sim::Time cut = *middle;
  abandoned_ += static_cast<std::int64_t>(std::erase_if(queued_, [cut](const auto& q) { return q.second <= cut; }));
}

Result<std::optional<TraceRecord>> TraceReader::blkparse_completion(const std::string& key,
                                                                    std::string device, sim::Time at) {
  auto it = queued_.find(key);
  // No Q before it, or one later than it (a C cannot precede its Q: its time says the pair
  // is not one request): unpaired, not a response of 0 µs.
  if (it == queued_.end() || at < it->second) {
    ++unpaired_;
    return std::optional<TraceRecord>{};
  }
  TraceRecord r;
  r.is_io = false;
  r.device = std::move(device);
  r.time_ns = it->second;
  r.recorded_latency_ns = at - it->second;
  queued_.erase(it);
  return std::optional<TraceRecord>(std::move(r));
}

}  // namespace afasim::workload
