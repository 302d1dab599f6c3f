// Option checks and the progress line of long runs (app/commands.h).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "config/file_text.h"
#include "app/commands.h"
#include "config/size.h"
#include "controller/objects.h"
#include "workload/fio_job.h"

namespace afasim::app {

std::unique_ptr<Cli> make_cli() {
  auto cli = std::make_unique<Cli>();
  cli->app.require_subcommand(1);
  cli->app.set_version_flag("--version", "afasim 0.1.0");
  cli->runners["capacity"] = add_capacity_command(cli->app);
  cli->runners["calibrate"] = add_calibrate_command(cli->app);
  cli->runners["devices"] = add_devices_command(cli->app);
  cli->runners["fio"] = add_fio_command(cli->app);
  cli->runners["run"] = add_run_command(cli->app);
  cli->runners["serve"] = add_serve_command(cli->app);
  cli->runners["sweep"] = add_sweep_command(cli->app);
  cli->runners["replay"] = add_replay_command(cli->app);
  cli->runners["trace"] = add_trace_command(cli->app);
  cli->runners["vdbench"] = add_vdbench_command(cli->app);
  add_client_commands(cli->app, cli->runners);
  cli->app.footer(
      "Client commands (volume, pool, ..., metrics) talk to a running array; their exit codes: 0 done, 1 an "
      "unexpected answer, 2 bad usage, 3 refused by the array, 4 array unreachable.");
  return cli;
}

namespace {

// The first path option of `cmd` or its verbs given an empty value: `--record ''` or
// `--config-dir ''` started as if it were absent, without a word (hostile round 18).
const CLI::Option* empty_path_option(const CLI::App& cmd) {
  // And names an empty value would make mean "none": `fio --device ''` ran on the array
  // (hostile round 23), `capacity --system ''` printed every system, `calibrate --only ''`
  // ran every figure (hostile round 28).
  static const std::set<std::string> kPaths = {"--config-dir", "--record", "--state",         "--out",
                                               "--output",     "--html",   "--svg",           "--json",
                                               "--password-file", "--device", "--system",
                                               "--nbd-socket", "--only", "--format"};
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || kPaths.count(opt->get_name()) == 0) continue;
    for (const std::string& value : opt->results())
      if (value.empty()) return opt;
  }
  for (const CLI::App* verb : cmd.get_subcommands())
    if (const CLI::Option* empty = empty_path_option(*verb)) return empty;
  return nullptr;
}

}  // namespace

std::variant<Runner, int> parse_cli(Cli& cli, int argc, const char* const* argv) {
  // CLI11 would say "A subcommand is required" for a misspelt one: name it instead.
  if (argc > 1 && argv[1][0] != '-' && cli.runners.count(argv[1]) == 0) {
    std::string names;  // from the table, so that a new command needs no edit here
    for (const auto& [name, runner] : cli.runners) names += (names.empty() ? "" : ", ") + name;
    std::fprintf(stderr, "afasim: unknown command \"%s\" (commands: %s; --help)\n", argv[1],
                 names.c_str());
    return 2;
  }
  // Before the command only --help and --version are options ("afasim -x volume").
  if (argc > 1 && argv[1][0] == '-') {
    const std::string_view first = argv[1];
    if (first != "-h" && first != "--help" && first != "--version") {
      std::fprintf(stderr,
                   "afasim: option \"%s\" before the command; a command's options follow it "
                   "(afasim volume list --url URL; afasim --help)\n",
                   argv[1]);
      return 2;
    }
  }
  // The same for a client command's verb ("afasim volume lst"); argv[1] may be an option
  // ("afasim -x y": CLI11 refuses it below), which get_subcommand would throw on (make fuzz).
  if (argc > 2 && argv[2][0] != '-' && cli.runners.count(argv[1]) != 0) {
    CLI::App* group = cli.app.get_subcommand(argv[1]);
    const auto verbs = group->get_subcommands({});
    if (!verbs.empty() &&
        std::none_of(verbs.begin(), verbs.end(), [&](const CLI::App* v) { return v->get_name() == argv[2]; })) {
      std::string names;
      for (const CLI::App* v : verbs) names += (names.empty() ? "" : ", ") + v->get_name();
      std::fprintf(stderr, "afasim %s: unknown command \"%s\" (%s commands: %s)\n", argv[1], argv[2], argv[1],
                   names.c_str());
      return 2;
    }
  }
  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = cli.app.exit(e);  // prints help, the version, or the error
    return code == 0 ? 0 : 2;          // bad usage is exit code 2, whatever CLI11 calls it
  } catch (const std::exception& e) {
    std::fprintf(stderr, "afasim: %s\n", e.what());
    return 2;
  }
  for (auto* sub : cli.app.get_subcommands()) {
    if (const CLI::Option* empty = empty_path_option(*sub)) {
      // A required option has no default to fall back on (hostile review 42: `sweep --out ''`
      // was told to leave it out).
      std::fprintf(stderr, "afasim %s: %s: an empty value (%s)\n", sub->get_name().c_str(), empty->get_name().c_str(),
                   empty->get_required() ? "it needs one" : "leave the option out for its default");
      return 2;
    }
    auto it = cli.runners.find(sub->get_name());
    if (it != cli.runners.end()) return it->second;
  }
  return 2;
}

int fail_command(const char* command, const std::string& message, int code) {
  // A message may quote what a user's file holds (a device name, an option): no control
  // characters reach the terminal (hostile round 23).
  std::fprintf(stderr, "afasim %s: %s\n", command, config::printable(message, true).c_str());
  return code;
}

std::string output_is_input(const std::string& path, const std::vector<std::string>& inputs) {
  std::error_code ec;
  for (const std::string& input : inputs)
    if (!input.empty() && std::filesystem::equivalent(path, input, ec))
      return path + " is " + input + ", which this command reads: give another file";
  return "";
}

std::filesystem::path written_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  // A link is followed even when what it names does not exist yet (hostile re-test 42:
  // `--svg L --html X`, L a link to the X the run was about to create); 40 hops, as the kernel.
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = (target.is_absolute() ? target : p.parent_path() / target).lexically_normal();
  }
  const fs::path resolved = fs::weakly_canonical(p, ec);
  return ec ? p : resolved;
}

std::string output_in_config_dir(const std::string& path, const std::string& config_dir) {
  // The folder's presets are read by the command (hostile review 43: an SVG went over
  // DIR/calibration/ise-860-g3.json and DIR/ssds/*.json).
  namespace fs = std::filesystem;
  if (config_dir.empty()) return "";
  const fs::path out = written_path(path), dir = written_path(config_dir);
  if (std::mismatch(dir.begin(), dir.end(), out.begin(), out.end()).first == dir.end())
    return path + " is inside --config-dir " + config_dir + ", whose presets this command reads: write it elsewhere";
  // A hard link to one of its files is that file (re-test of hostile review 43).
  std::error_code ec;
  if (!fs::is_regular_file(out, ec) || fs::hard_link_count(out, ec) < 2) return "";
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (std::error_code e; it->is_regular_file(e) && fs::equivalent(it->path(), out, e))
      return path + " is " + it->path().string() + " of --config-dir " + config_dir +
             ", whose presets this command reads: write it elsewhere";
  return "";
}

namespace {

// FIFOs output_file_problem opened for writing, by path, kept open until write_output_file
// writes them: closing the probe would hand the reader an end of file before the report.
std::map<std::string, int>& held_fifos() {
  static std::map<std::string, int> fds;
  return fds;
}

}  // namespace

std::string output_file_problem(const std::string& path, const std::vector<std::string>& inputs,
                                const std::string& config_dir) {
  namespace fs = std::filesystem;
  if (std::string same = output_is_input(path, inputs); !same.empty()) return same;
  if (std::string inside = output_in_config_dir(path, config_dir); !inside.empty()) return inside;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) return path + " is a folder, not a file";
  const fs::path dir = fs::path(path).parent_path();
  if (!fs::exists(st) && !dir.empty() && !fs::is_directory(dir, ec))
    return "no folder " + dir.string() + " to write " + path + " into";
  if (fs::is_fifo(st)) {
    // Written after the run: without a reader then, the write would wait forever (hostile
    // round 44: `--html FIFO` hung after the report). Its reader must be there now; the FIFO is
    // held open from here so that it stays.
    if (held_fifos().contains(path)) return "";
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      return errno == ENXIO ? path + " is a FIFO with no reader: start its reader first, or give a file"
                            : "cannot write " + path + ": " + std::strerror(errno);
    held_fifos()[path] = fd;
    return "";
  }
  if (fs::exists(st) && !fs::is_regular_file(st)) {  // a device: opening may block
    if (::access(path.c_str(), W_OK) != 0)
      return "cannot write " + path + ": " + std::strerror(errno);
    return "";
  }
  const bool existed = fs::exists(fs::symlink_status(path, ec));  // a dangling link stays
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return "cannot write " + path + ": " + std::strerror(errno);
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return "";
}

std::string write_output_file(const std::string& path, const std::string& text) {
  std::FILE* f = nullptr;
  if (auto held = held_fifos().find(path); held != held_fifos().end()) {
    const int fd = held->second;
    held_fifos().erase(held);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // the reader sets the pace
    f = ::fdopen(fd, "wb");
    if (f == nullptr) ::close(fd);
  } else {
    f = std::fopen(path.c_str(), "wb");
  }
  // A pipe whose reader has gone fails the write with EPIPE, said as any failed write is,
  // instead of ending the process without a word (re-test of round 44: exit 141).
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &before);
  struct Restore {
    struct sigaction& to;
    ~Restore() { ::sigaction(SIGPIPE, &to, nullptr); }
  } restore{before};
  if (f == nullptr) return "cannot write " + path + ": " + std::strerror(errno);
  const bool written =
      std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int error = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed)
    return "cannot write " + path + ": " + std::strerror(written ? errno : error);
  return "";
}

std::optional<HostPort> parse_host_port(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return std::nullopt;
  HostPort hp;
  hp.host = s.substr(0, colon);
  if (hp.host.size() > 2 && hp.host.front() == '[' && hp.host.back() == ']')
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  const std::string port = s.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  hp.port = std::stoi(port);
  if (hp.port > 65535) return std::nullopt;
  return hp;
}

CLI::Validator seed_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ptr != end || ec != std::errc())
          return "a seed is a whole number from 0 to 18446744073709551615, got " + text;
        return {};
      },
      "SEED");
}

CLI::Validator finite_range_check(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (text.empty() || used != text.size() || !std::isfinite(v) || v < lo || v > hi)
          return "must be a number from " + CLI::detail::to_string(lo) + " to " + CLI::detail::to_string(hi) +
                 ", got " + text;
        return {};
      },
      "NUMBER in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

CLI::Validator count_check(std::int64_t lo, std::int64_t hi) {
  const std::string range = "from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        const bool digits = !text.empty() && std::isdigit(static_cast<unsigned char>(text.back())) &&
                            (std::isdigit(static_cast<unsigned char>(text[0])) || (text[0] == '-' && text.size() > 1));
        if (!digits || ptr != end || ec == std::errc::invalid_argument)
          return "must be a whole number " + range + ", written in digits; got " + text;
        if (ec == std::errc::result_out_of_range || v < lo || v > hi) return "must be " + range + ", got " + text;
        return {};
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

namespace {
std::atomic<bool> g_interrupted{false};
volatile std::sig_atomic_t g_interrupt_signal = 0;

std::atomic<std::int64_t> g_first_interrupt_ns{0};
// A second signal this long after the first ends the process; one sooner is the first again:
// coreutils' timeout sends its signal to the command and then to its process group, so the
// command got two at once, and the second killed it before its report (the fresh-clone run
// of the forty-third session: "interrupted by SIGTERM" missing under load).
constexpr std::int64_t kSecondSignalAfterNs = 500'000'000;

extern "C" void on_interrupt(int signal_number) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe, as are signal() and raise()
  const std::int64_t ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  if (!g_interrupted.load(std::memory_order_relaxed)) {
    g_first_interrupt_ns.store(ns, std::memory_order_relaxed);
    g_interrupt_signal = signal_number;
    g_interrupted.store(true, std::memory_order_relaxed);
  } else if (ns - g_first_interrupt_ns.load(std::memory_order_relaxed) >= kSecondSignalAfterNs) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
}
}  // namespace

const std::atomic<bool>& catch_interrupts() {
  static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
  static_assert(std::atomic<std::int64_t>::is_always_lock_free, "set from a signal handler");
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // A second signal, half a second or more after the first, ends the process; system calls
  // interrupted by the first carry on (the input's wait, poll(2), is cut short all the same:
  // config::open_file_stream).
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return g_interrupted;
}

int interrupt_signal() { return g_interrupt_signal; }

const char* stop_signal_name(int signal_number) {
  return signal_number == SIGINT ? "SIGINT" : signal_number == SIGHUP ? "SIGHUP" : "SIGTERM";
}

std::function<void(const std::string&)> progress_printer(std::string prefix) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  return [prefix = std::move(prefix), start, last = start](const std::string& line) mutable {
    const Clock::time_point now = Clock::now();
    if (now - last < std::chrono::seconds(1)) return;
    last = now;
    std::fprintf(stderr, "%s%s (%.0f s wall)\n", prefix.c_str(), line.c_str(),
                 std::chrono::duration<double>(now - start).count());
  };
}

// --volume-size: whole 512-byte logical blocks, at most the array's largest volume.
sim::Result<std::int64_t> parse_volume_size(const std::string& text) {
  auto size = workload::parse_fio_size(text, 1024);
  if (!size.is_ok() || *size <= 0) return sim::invalid_argument("--volume-size " + text + ": not a size");
  if (*size < 512 || *size % 512 != 0)
    return sim::invalid_argument("--volume-size " + text + ": " + config::byte_count(*size) +
                                 " is not a whole number of 512-byte blocks (the logical block)");
  if (*size > controller::kMaxVolumeBytes)
    return sim::invalid_argument("--volume-size " + text + ": more than the array's largest volume, " +
                                 std::to_string(controller::kMaxVolumeBytes) + " bytes (1 PiB)");
  return *size;
}

void add_volume_options(CLI::App* cmd, const std::string& creator, std::string& raid_type, std::string& provisioning,
                        std::string& config_dir, bool& quiet) {
  cmd->add_option("--raid-type", raid_type, "RAID type of the volumes the " + creator + " creates")
      ->check(CLI::IsMember({"RAID10", "RAID5"}))
      ->capture_default_str();
  cmd->add_option("--provisioning", provisioning, "thin or fixed volumes")
      ->check(CLI::IsMember({"thin", "fixed"}))
      ->capture_default_str();
  cmd->add_option("--config-dir", config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_flag("--quiet", quiet, "No progress lines on stderr");
}

}  // namespace afasim::app
