// afasim: a simulator of all-flash storage array firmware (X-IO ISE 800 G3 kind).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "app/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"afasim: a simulator of all-flash storage array firmware modelled on the X-IO ISE 800 G3"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "afasim 0.1.0");
  std::map<std::string, afasim::app::Runner> runners;
  runners["capacity"] = afasim::app::add_capacity_command(app);
  runners["devices"] = afasim::app::add_devices_command(app);
  runners["fio"] = afasim::app::add_fio_command(app);
  runners["run"] = afasim::app::add_run_command(app);
  runners["serve"] = afasim::app::add_serve_command(app);
  runners["replay"] = afasim::app::add_replay_command(app);
  runners["trace"] = afasim::app::add_trace_command(app);
  runners["vdbench"] = afasim::app::add_vdbench_command(app);
  afasim::app::add_client_commands(app, runners);
  app.footer(
      "Client commands (volume, pool, ..., metrics) talk to a running array; their exit codes: 0 done, 1 an "
      "unexpected answer, 2 bad usage, 3 refused by the array, 4 array unreachable.");
  // CLI11 would say "A subcommand is required" for a misspelt one: name it instead.
  if (argc > 1 && argv[1][0] != '-' && runners.count(argv[1]) == 0) {
    std::string names;  // from the table above, so that a new command needs no edit here
    for (const auto& [name, runner] : runners) names += (names.empty() ? "" : ", ") + name;
    std::fprintf(stderr, "afasim: unknown command \"%s\" (commands: %s; --help)\n", argv[1], names.c_str());
    return 2;
  }
  // The same for a client command's verb ("afasim volume lst").
  if (argc > 2 && argv[2][0] != '-') {
    CLI::App* group = app.get_subcommand(argv[1]);
    const auto verbs = group->get_subcommands({});
    if (!verbs.empty() && std::none_of(verbs.begin(), verbs.end(), [&](const CLI::App* v) { return v->get_name() == argv[2]; })) {
      std::string names;
      for (const CLI::App* v : verbs) names += (names.empty() ? "" : ", ") + v->get_name();
      std::fprintf(stderr, "afasim %s: unknown command \"%s\" (%s commands: %s)\n", argv[1], argv[2], argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version, or the error
    return code == 0 ? 0 : 2;      // bad usage is exit code 2, whatever CLI11 calls it
  }
  for (auto* sub : app.get_subcommands()) {
    auto it = runners.find(sub->get_name());
    if (it != runners.end()) return it->second();
  }
  return 2;
}
