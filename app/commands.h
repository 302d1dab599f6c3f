// The `afasim` subcommands. Each registers its options on the CLI11 app and returns the
// exit code of its run: 0 success, 1 runtime failure, 2 bad usage or bad input files.
#pragma once

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <variant>

#include "sim/status.h"

namespace afasim::app {

using Runner = std::function<int()>;

// The whole command line: every subcommand registered on one CLI11 app.
struct Cli {
  CLI::App app{"afasim: a simulator of all-flash storage array firmware modelled on the X-IO ISE 800 G3"};
  std::map<std::string, Runner> runners;
};
std::unique_ptr<Cli> make_cli();
// Parses argv: the runner of the chosen subcommand, or the exit code when there is nothing
// to run (0 after --help or --version; 2 for bad usage, with the message on stderr).
// Never throws.
std::variant<Runner, int> parse_cli(Cli& cli, int argc, const char* const* argv);

// Prints "afasim COMMAND: MESSAGE" on stderr and returns `code`, the command's exit code.
int fail_command(const char* command, const std::string& message, int code);

// Checks, before a long run, that `path` (an output flag's file) can be written, so that a
// typo costs nothing: "" when it can, else why not ("/tmp is a folder, not a file", "no
// folder /x to write /x/y.html into", "cannot write /proc/y: No such file or directory").
// A file that did not exist is created to try and removed again; an existing one is left
// as it was (a run that fails loses nothing). A device (/dev/stdout) is checked for write
// permission only, without opening it; /dev/full passes and fails at the write. A FIFO must
// have its reader now: it is opened and held open for write_output_file ("X is a FIFO with
// no reader" else; a write after the run would wait forever).
// `inputs`: the files the command reads; an output that is one of them (by any name: a link,
// ./x) is refused, not written over (hostile round 22: `vdbench P.vdb --svg P.vdb`).
// "" unless `path` lies inside `config_dir` (the --config-dir a command reads presets from;
// none when empty), else which.
std::string output_in_config_dir(const std::string& path, const std::string& config_dir);
// `config_dir`: the --config-dir the command reads presets from; an output inside it is refused.
std::string output_file_problem(const std::string& path, const std::vector<std::string>& inputs = {},
                                const std::string& config_dir = "");
// The file a write to `path` lands in: absolute, links followed (a dangling one too, to what
// it names), `.` and `..` resolved. Two outputs with one written_path are one file.
std::filesystem::path written_path(const std::string& path);
// Only the first check of output_file_problem: "" unless `path` is the same file as one of
// `inputs` (a link to it included).
std::string output_is_input(const std::string& path, const std::vector<std::string>& inputs);

// Writes `text` over the file at `path`: "" when done, else "cannot write PATH: reason".
std::string write_output_file(const std::string& path, const std::string& text);

// "HOST:PORT" or "[V6]:PORT", port 0..65535; nullopt otherwise.
struct HostPort {
  std::string host;
  int port = 0;
};
std::optional<HostPort> parse_host_port(const std::string& s);

// Registers the subcommand; the returned runner is valid once CLI11 has parsed.
Runner add_capacity_command(CLI::App& app);
Runner add_serve_command(CLI::App& app);
Runner add_fio_command(CLI::App& app);
Runner add_run_command(CLI::App& app);
Runner add_replay_command(CLI::App& app);
Runner add_trace_command(CLI::App& app);
Runner add_calibrate_command(CLI::App& app);
Runner add_devices_command(CLI::App& app);
Runner add_vdbench_command(CLI::App& app);
Runner add_sweep_command(CLI::App& app);

// A bare device for `--device NAME` runs: the catalog's device in `start` state
// ("fresh" | "filled" | "steady"), behind the host NVMe queue model. Prints the error
// (prefixed with `who`) and returns null on a bad name or state.
struct DeviceRun;
std::unique_ptr<DeviceRun> open_device_run(const std::string& who, const std::string& config_dir,
                                           const std::string& device, const std::string& start,
                                           std::uint64_t seed);

// The client commands (volume, pool, host, mapping, qos-policy, fault, event, alert, system,
// controller, metrics), each under its own name in `runners` (app/client.h: exit codes).
void add_client_commands(CLI::App& app, std::map<std::string, Runner>& runners);

// Checks for option values, before CLI11 converts them (its conversions let "-1" wrap to
// 2^64 - 1 for an unsigned seed and "nan" through a numeric range):
// a seed is a decimal integer 0..2^64-1;
CLI::Validator seed_check();

// The options of a command that builds its own array and volumes (fio, trace): --raid-type
// (RAID10, RAID5), --provisioning (thin, fixed), --config-dir and --quiet. `creator` names
// what creates the volumes in the help text ("job", "replay").
void add_volume_options(CLI::App* cmd, const std::string& creator, std::string& raid_type, std::string& provisioning,
                        std::string& config_dir, bool& quiet);
// --volume-size (trace, fio): whole 512-byte logical blocks, at most the array's largest
// volume (controller::kMaxVolumeBytes). kInvalidArgument "--volume-size TEXT: why".
sim::Result<std::int64_t> parse_volume_size(const std::string& text);
// a finite number in [lo, hi].
CLI::Validator finite_range_check(double lo, double hi);
// a whole number in [lo, hi] written in decimal digits ("1e2" and "+5" are refused as not
// whole numbers, where CLI11's range check called them out of range).
CLI::Validator count_check(std::int64_t lo, std::int64_t hi);

// A progress callback for long runs: prints "<prefix><line> (N s wall)" to stderr at most
// once per wall-clock second.
std::function<void(const std::string&)> progress_printer(std::string prefix);

// From now on SIGINT and SIGTERM set the returned flag instead of ending the process, once: the
// handler is reset by the first, so a second ends it. For commands that run a simulation to its
// end (fio, trace): they stop early and report what ran, as fio does on Ctrl-C.
const std::atomic<bool>& catch_interrupts();
// The signal that set the flag, 0 when none has.
int interrupt_signal();
// "SIGINT", "SIGHUP" or "SIGTERM" (any other number) for the commands' messages.
const char* stop_signal_name(int signal_number);
// Exit code of a run stopped by a signal: 128 + the signal, as a shell reports it.
inline int interrupted_exit_code() { return 128 + interrupt_signal(); }

}  // namespace afasim::app
