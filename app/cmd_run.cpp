// `afasim run SCENARIO`: a scenario file (docs/scenarios.md) in virtual time: a system,
// volumes, fio workloads and a fault timeline, reported as tables or JSON.
#include <filesystem>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "config/file_text.h"
#include "app/commands.h"
#include "config/preset.h"
#include "reliability/reliability_report.h"
#include "reliability/reliability_scenario.h"
#include "reliability/simulate.h"
#include "workload/scenario.h"
#include "workload/scenario_runner.h"

namespace afasim::app {
namespace {

struct RunOptions {
  std::string scenario;
  std::string format = "text";
  std::string svg;
  std::string html;
  std::optional<std::uint64_t> seed;
  std::string config_dir;
  bool quiet = false;
};

// "a, b, c": the built-in scenarios, for --help (it listed 3 of 12; new-user trial 17).
std::string builtin_scenario_names() {
  std::string out;
  for (const std::string& name : workload::embedded_scenario_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Errors the array raises because of what the scenario asked are bad input (2); the ones
// that mean the run itself could not go on are run-time failures (1).
int exit_code_of(sim::Code code) {
  switch (code) {
    case sim::Code::kInternal:
    case sim::Code::kUnavailable:
    case sim::Code::kIoError:
    case sim::Code::kOutOfRange:
      return 1;
    default:
      return 2;
  }
}

// A reliability scenario (docs/reliability.md): lifetimes, not I/Os; no charts.
int run_reliability_command(const RunOptions& o, const workload::ScenarioSource& source,
                            const config::Catalog& catalog) {
  if (!o.svg.empty() || !o.html.empty())
    return fail_command("run", std::string(o.svg.empty() ? "--html" : "--svg") +
                                   ": a reliability scenario's report has no charts (text or --format json)", 2);
  auto scenario = reliability::parse_reliability(source.text, source.file_name, catalog);
  if (!scenario.is_ok()) return fail_command("run", scenario.status().message(), 2);
  if (o.seed) scenario->seed = *o.seed;
  reliability::ReliabilityRunOptions run_options;
  if (!o.quiet) run_options.progress = progress_printer("afasim run: ");
  auto report = reliability::run_reliability(*scenario, catalog, run_options);
  if (!report.is_ok()) return fail_command("run", report.status().message(), exit_code_of(report.status().code()));
  // The text report repeats the scenario's name and description: invisible and bidirectional
  // characters print as \xNN, as in every message (JSON escapes its own).
  const std::string out = o.format == "json" ? reliability::format_reliability_json(*report)
                                             : config::printable(reliability::format_reliability_text(*report), true);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

// The files a run reads: the scenario, its workloads' fio_file job files, their includes and
// read_iolog traces (re-test of hostile review 43: --html over a fio_file, --svg over a trace).
std::vector<std::string> scenario_inputs(const RunOptions& o, const workload::Scenario& s) {
  std::vector<std::string> inputs = workload::scenario_input_files(s);
  inputs.insert(inputs.begin(), o.scenario);
  return inputs;
}

int run_scenario_command(const RunOptions& o) {
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded()
                                      : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail_command("run", catalog.status().message(), 2);
  // A path on disk, else the name of a built-in scenario (config/scenarios/NAME.json); read
  // once: a pipe (`afasim run <(...)`) cannot be read again (hostile round 37).
  auto source = workload::read_scenario_source(o.scenario);
  if (!source.is_ok()) return fail_command("run", source.status().message(), 2);
  if (reliability::is_reliability_text(source->text)) return run_reliability_command(o, *source, *catalog);
  auto scenario = workload::parse_scenario_source(*source, *catalog);
  if (!scenario.is_ok()) return fail_command("run", scenario.status().message(), 2);
  if (o.seed) scenario->seed = *o.seed;
  // Before a long run, not after it: the charts' files must be writable, and two (hostile
  // review 42: the HTML was written over the SVG).
  if (!o.svg.empty() && !o.html.empty()) {
    std::error_code ec;
    if (written_path(o.svg) == written_path(o.html) || std::filesystem::equivalent(o.svg, o.html, ec))  // a hard link too
      return fail_command("run", "--svg and --html name the same file, " + o.html + ": give each its own", 2);
  }
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--svg", o.svg}, {"--html", o.html}}) {
    if (path.empty()) continue;
    if (const std::string bad = output_file_problem(path, scenario_inputs(o, *scenario), o.config_dir); !bad.empty())
      return fail_command("run", std::string(flag) + ": " + bad, 2);
  }
  for (const auto& w : scenario->warnings)
    std::fprintf(stderr, "afasim run: warning: %s\n", config::printable(w, true).c_str());

  workload::ScenarioRunOptions run_options;
  if (!o.quiet) run_options.progress = progress_printer("afasim run: ");
  auto report = workload::run_scenario(*scenario, *catalog, run_options);
  if (!report.is_ok()) return fail_command("run", report.status().message(), exit_code_of(report.status().code()));

  if (o.format == "json") {
    workload::write_scenario_json(*report, [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); });
  } else {
    const std::string out = config::printable(workload::format_scenario_text(*report), true);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  std::fflush(stdout);
  if (!o.svg.empty())
    if (const std::string bad = write_output_file(o.svg, workload::format_scenario_svg(*report));
        !bad.empty())
      return fail_command("run", "--svg: " + bad, 1);
  if (!o.html.empty())
    if (const std::string bad = write_output_file(o.html, workload::format_scenario_html(*report));
        !bad.empty())
      return fail_command("run", "--html: " + bad, 1);
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a scenario (system, volumes, fio workloads, fault timeline) in virtual time");
  cmd->add_option("scenario", o->scenario,
                  "Scenario file (JSON, docs/scenarios.md; or a reliability scenario, docs/reliability.md), "
                  "or the name of a built-in one (" + builtin_scenario_names() + ")")
      ->required();
  cmd->add_option("--format", o->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--svg", o->svg,
                  "Also write the charts (per-volume IOPS, MB/s, latency; rebuild; cache) to FILE (SVG)");
  cmd->add_option("--html", o->html, "Also write the report as one HTML page, charts included, to FILE");
  cmd->add_option("--seed", o->seed,
                  "Root seed, instead of the scenario's (same seed, same report)")
      ->check(seed_check());
  cmd->add_option("--config-dir", o->config_dir,
                  "Read presets from this folder instead of the built-in ones");
  cmd->add_flag("--quiet", o->quiet, "No progress lines on stderr");
  return [o] { return run_scenario_command(*o); };
}

}  // namespace afasim::app
