#include "sweep/sweep_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sweep/sweep_plot.h"
#include "config/json_text.h"

namespace afasim::sweep {
namespace {

namespace fs = std::filesystem;

std::string header_line(const SweepPlan& plan) {
  nlohmann::ordered_json h;
  h["schema"] = kRowsSchema;
  h["sweep"] = plan.file.name;
  h["fingerprint"] = plan.fingerprint;
  return config::dump_json(h);
}

sim::Status not_a_header(const std::string& path) {
  return sim::invalid_argument(path + ":1: not a rows.jsonl header (" + std::string(kRowsSchema) + ")");
}

sim::Status check_header(const std::string& path, const std::string& line, const SweepPlan& plan) {
  const auto parsed = config::parse_json_strict(line);  // a NUL byte is no end of the line
  if (!parsed.is_ok()) return not_a_header(path);
  const nlohmann::json& h = *parsed;
  if (!h.is_object() || !h.contains("schema") || h["schema"] != kRowsSchema ||
      !h.contains("fingerprint") || !h["fingerprint"].is_string())
    return not_a_header(path);
  const std::string theirs = h["fingerprint"].get<std::string>();
  if (theirs != plan.fingerprint)
    return sim::conflict(path + ": the rows of another sweep (fingerprint " + theirs + ", this sweep " +
                         plan.fingerprint + ": its base, the job files or presets it reads, set or points differ); use another --out folder or remove it");
  return sim::Status::ok();
}

// rows.jsonl is read whole: 1 GiB is millions of rows (a row is a few hundred bytes).
constexpr std::int64_t kMaxRowsBytes = std::int64_t{1} << 30;

sim::Status too_large(const std::string& path) {
  return sim::invalid_argument(path + " is over " + std::to_string(kMaxRowsBytes >> 30) +
                               " GiB, more than any sweep's rows; is it this sweep's journal?");
}

// Reads the whole lines of the rows file `path` (open as `fd`, a regular file) of `plan`,
// after checking its header: a last line without its newline (a run killed mid-write) is then
// cut off the file. A file that is not this sweep's rows is refused untouched, a first line
// without its newline included unless it is the start of this sweep's header (hostile round
// 16: a note without a final newline was cut to nothing and replaced).
sim::Result<std::vector<std::string>> whole_lines(int fd, const std::string& path, const SweepPlan& plan) {
  std::string text;
  char buffer[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sim::io_error("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    at += n;
    if (static_cast<std::int64_t>(text.size()) > kMaxRowsBytes) return too_large(path);
  }
  const std::size_t whole = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < whole) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (!lines.empty()) AFASIM_RETURN_IF_ERROR(check_header(path, lines[0], plan));
  if (lines.empty() && !text.empty() && !header_line(plan).starts_with(text))
    return not_a_header(path);
  if (whole != text.size() && ::ftruncate(fd, static_cast<off_t>(whole)) != 0)
    return sim::io_error("cannot cut the torn last line of " + path + ": " + std::strerror(errno));
  return lines;
}

// What `print` hands its sink, piece by piece, into PATH.tmp (made new), not yet renamed.
sim::Status write_tmp(const fs::path& path, const std::function<void(const TextSink&)>& print) {
  const fs::path tmp = path.string() + ".tmp";
  // A new file, never through what is there: a symlink left at the .tmp name had the text
  // written to its target, outside --out (hostile round 21).
  std::error_code ec;
  fs::remove(tmp, ec);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return sim::io_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  std::string why;  // the first write's failure; later pieces are dropped
  print([&](std::string_view text) {
    for (std::size_t done = 0; why.empty() && done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) why = std::strerror(errno);
      else done += static_cast<std::size_t>(n);
    }
  });
  if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (!why.empty()) {
    fs::remove(tmp, ec);  // no half-written PATH.tmp left beside the old PATH (review, round 25)
    return sim::io_error("cannot write " + tmp.string() + ": " + why);
  }
  return sim::Status::ok();
}

sim::Status write_tmp(const fs::path& path, const std::string& text) {
  return write_tmp(path, [&](const TextSink& sink) { sink(text); });
}

sim::Status rename_tmp(const fs::path& path) {
  std::error_code ec;
  fs::rename(path.string() + ".tmp", path, ec);
  if (ec) return sim::io_error("cannot rename " + path.string() + ".tmp to " + path.string() + ": " + ec.message());
  return sim::Status::ok();
}

sim::Status write_whole(const fs::path& path, const std::string& text) {
  AFASIM_RETURN_IF_ERROR(write_tmp(path, text));
  return rename_tmp(path);
}

}  // namespace

sim::Result<std::unique_ptr<RowJournal>> RowJournal::open(const std::string& dir, const SweepPlan& plan,
                                                         std::vector<SweepRow>* rows) {
  std::error_code ec;
  // A path that is there and not a folder is the caller's mistake (exit 2), and says what it
  // is; one that cannot be made says why (hostile round 37: "cannot create the folder X").
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return sim::invalid_argument(dir + " exists and is not a folder: give a folder for the sweep's results");
  fs::create_directories(dir, ec);
  if (ec) return sim::io_error("cannot create the folder " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) return sim::io_error("cannot create the folder " + dir);
  // The flock is on the folder itself: on a DIR/LOCK file, deleting the file let a second sweep
  // run beside the first (as it let a second server start: hostile round 25b).
  const int lock_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd < 0) return sim::io_error("cannot open the folder " + dir + ": " + std::strerror(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd);
    if (err == EWOULDBLOCK)
      return sim::unavailable(dir + " is in use by another afasim sweep (the folder is locked); wait for it, or "
                              "give another --out");
    return sim::io_error("cannot lock the folder " + dir + ": " + std::strerror(err));
  }
  struct CloseOnError {
    int fd;
    bool keep = false;
    ~CloseOnError() {
      if (!keep) ::close(fd);
    }
  } lock{lock_fd};
  const std::string path = (fs::path(dir) / "rows.jsonl").string();
  // Checked on the open file, not by its name first (a FIFO blocked the open for ever, and
  // /dev/zero behind a symlink grew the sweep until memory ran out: hostile round 21).
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    // A folder there fails the open with EISDIR (hostile review 42: exit 1, "cannot open");
    // it is the same mistake as a symlink or a FIFO.
    if (fd >= 0 || err == ELOOP || err == ENXIO || err == EISDIR)
      return sim::invalid_argument(path + " is not a regular file (a folder, a symlink, a FIFO or a device); the "
                                          "sweep's journal must be one: remove it, or give another --out");
    return sim::io_error("cannot open " + path + ": " + std::strerror(err));
  }
  std::FILE* file = ::fdopen(fd, "ab");
  if (file == nullptr) {
    ::close(fd);
    return sim::io_error("cannot open " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<RowJournal> journal(new RowJournal(path, file, plan.file.kind, lock_fd));
  lock.keep = true;
  if (st.st_size > kMaxRowsBytes) return too_large(path);
  auto read = whole_lines(fd, path, plan);
  if (!read.is_ok()) return read.status();
  const std::vector<std::string> lines = std::move(read).value();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto row = row_from_line(lines[i], plan.file.points.size(), plan.file.kind);
    if (!row.is_ok()) return sim::invalid_argument(path + ":" + std::to_string(i + 1) + ": " + row.status().message());
    rows->push_back(std::move(row).value());
  }
  if (lines.empty()) {
    const std::string header = header_line(plan) + "\n";
    if (std::fwrite(header.data(), 1, header.size(), file) != header.size() || std::fflush(file) != 0)
      return sim::io_error("cannot write " + path);
  }
  return journal;
}

RowJournal::~RowJournal() {
  std::fclose(file_);
  ::close(lock_fd_);
}

sim::Status RowJournal::append(const SweepRow& row) {
  if (row.retry_on_resume()) return sim::Status::ok();
  const std::string line = row_to_line(row, kind_) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    return sim::io_error("cannot append to " + path_ + ": " + std::strerror(errno));
  return sim::Status::ok();
}

sim::Status check_results_paths(const std::string& dir, const std::vector<std::string>& plots) {
  const auto folder_at = [&](const std::string& name, const std::string& what) {
    const fs::path path = fs::path(dir) / name;
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path, ec))) return sim::Status::ok();
    return sim::invalid_argument(path.string() + " is a folder: " + what + " there; remove it, or give another --out");
  };
  for (const char* name : {"results.csv", "results.json", "summary.csv"})
    AFASIM_RETURN_IF_ERROR(folder_at(name, "the sweep writes its results"));
  for (const std::string& figure : plots)
    AFASIM_RETURN_IF_ERROR(folder_at("plot-" + figure + ".svg", "--plot " + figure + " writes its chart"));
  return sim::Status::ok();
}

sim::Status write_results(const std::string& dir, const SweepFile& file, const std::vector<SweepRow>& rows) {
  // All three written before any replaces the old: a failure (a full disk, memory) leaves the
  // last complete set, not a new results.csv beside an old results.json (hostile round 24).
  const fs::path csv = fs::path(dir) / "results.csv", json = fs::path(dir) / "results.json",
                 summary = fs::path(dir) / "summary.csv";
  AFASIM_RETURN_IF_ERROR(check_results_paths(dir));
  // A failure removes the .tmp files already written as well: the old set stays, alone.
  sim::Status st = write_tmp(csv, [&](const TextSink& sink) { results_csv(file, rows, sink); });
  if (st.is_ok()) st = write_tmp(json, [&](const TextSink& sink) { results_json(file, rows, sink); });
  if (st.is_ok()) st = write_tmp(summary, summary_csv(file, rows));
  if (!st.is_ok()) {
    std::error_code ec;
    for (const fs::path& path : {csv, json, summary}) fs::remove(path.string() + ".tmp", ec);
    return st;
  }
  for (const fs::path& path : {csv, json, summary}) {
    if (st = rename_tmp(path); st.is_ok()) continue;
    std::error_code ec;
    for (const fs::path& left : {csv, json, summary}) fs::remove(left.string() + ".tmp", ec);
    return st;
  }
  return sim::Status::ok();
}

sim::Status write_plot(const std::string& path, const SweepFile& file, const std::vector<SweepRow>& rows,
                       const std::string& figure) {
  auto svg = plot_svg(file, rows, figure);
  if (!svg.is_ok()) return svg.status();
  return write_whole(path, *svg);
}

}  // namespace afasim::sweep
