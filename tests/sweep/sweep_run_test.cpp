// Running sweeps (sweep/sweep_plan.h, sweep_runner.h, sweep_store.h) on a tiny base
// scenario, and `afasim sweep` itself on a cut-down config/sweeps/raid-vs-rebuild-rate.json.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sweep/sweep_plan.h"
#include "sweep/sweep_plot.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"
#include "workload/scenario.h"
#include "workload/scenario_runner.h"

namespace afasim::sweep {
namespace {

namespace fs = std::filesystem;

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::embedded().value();
  return c;
}

// One second: a 1 GiB volume under a light random load, drive 7 failing at 0.1 s (its
// rebuild, a few chunks, is done well before the end).
constexpr const char* kBase = R"({
  "schema": "afasim.scenario/1", "name": "tiny", "duration_s": 1,
  "options": {"rebuild_bytes_per_second": "200MB/s"},
  "volumes": [{"name": "v", "capacity": "1GiB", "raid_type": "RAID10", "provisioning": "fixed"},
              {"name": "w", "capacity": "1GiB", "raid_type": "RAID10", "provisioning": "fixed"}],
  "workloads": [{"name": "l", "fio": ["[l]", "filename=v", "size=1g", "rw=randrw", "bs=8k", "iodepth=4",
                                      "rate_iops=1000", "time_based", "runtime=1s"]}],
  "timeline": [{"at_s": 0.1, "fault": {"type": "drive_fail", "drive": 7}}]
})";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// A fresh folder holding base.json and sweep.json (`body` inside the sweep's braces).
fs::path folder_with(const std::string& name, const std::string& body) {
  const fs::path dir = fs::temp_directory_path() / ("afasim-sweep-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  spit(dir / "base.json", kBase);
  spit(dir / "sweep.json", R"({"schema": "afasim.sweep/1", "name": ")" + name + R"(", "base": "base.json", )" + body + "}");
  return dir;
}

SweepPlan plan_in(const fs::path& dir) {
  auto file = load_sweep_file((dir / "sweep.json").string());
  REQUIRE_MESSAGE(file.is_ok(), file.status().message());
  auto plan = prepare_sweep(std::move(file).value(), catalog());
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().message());
  return std::move(plan).value();
}

std::vector<SweepRow> run_all(const SweepPlan& plan, int jobs, std::vector<SweepRow> done = {}) {
  SweepRunOptions options;
  options.jobs = jobs;
  auto rows = run_sweep(plan, catalog(), std::move(done), options);
  REQUIRE_MESSAGE(rows.is_ok(), rows.status().message());
  return std::move(rows).value();
}

Figures run_directly(const std::string& text, std::uint64_t seed) {
  auto s = workload::parse_scenario(text, "base.json", catalog(), nullptr);
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  s->seed = seed;
  auto report = workload::run_scenario(*s, catalog());
  REQUIRE_MESSAGE(report.is_ok(), report.status().message());
  return figures_of(*report);
}

const std::string kRaidAxis = R"("axes": [{"field": "/volumes/*/raid_type", "values": ["RAID10", "RAID5"]}])";

}  // namespace

TEST_CASE("a point runs exactly as afasim run would with its fields set and its seed") {
  const fs::path dir = folder_with("exact", kRaidAxis + R"(, "seeds": [5])");
  const SweepPlan plan = plan_in(dir);
  const SweepRow raid10 = run_point(plan, 0, 5, catalog());
  const SweepRow raid5 = run_point(plan, 1, 5, catalog());
  REQUIRE_MESSAGE(!raid5.failed(), raid5.error);
  // The same scenario edited by hand: both volumes RAID5 (the * set both), seed 5.
  std::string edited = kBase;
  for (std::size_t at; (at = edited.find("\"RAID10\"")) != std::string::npos;) edited.replace(at, 8, "\"RAID5\"");
  CHECK(raid5.figures == run_directly(edited, 5));
  CHECK(raid10.figures == run_directly(kBase, 5));
  CHECK(raid10.figures != raid5.figures);  // the field reached the run
  REQUIRE(raid5.figures[8]);               // a rebuild completed in both
  CHECK(*raid5.figures[8] > 0);
  CHECK(*raid10.figures[8] != *raid5.figures[8]);
  fs::remove_all(dir);
}

TEST_CASE("rows come in table order and --jobs 1 and 2 give the same bytes") {
  const fs::path dir = folder_with("order", kRaidAxis + R"(, "seeds": [3, 1, 2])");
  const SweepPlan plan = plan_in(dir);
  const std::vector<SweepRow> one = run_all(plan, 1);
  const std::vector<SweepRow> two = run_all(plan, 2);
  REQUIRE(one.size() == 6);
  for (std::size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].point == i / 3);
    CHECK(one[i].seed == 1 + i % 3);
  }
  CHECK(results_csv(plan.file, one) == results_csv(plan.file, two));
  CHECK(results_json(plan.file, one) == results_json(plan.file, two));
  // Printed row by row (hostile round 24: the whole tree of 10^6 runs took ~3 GB), byte for
  // byte as the library prints the parsed document, for the rows and for none.
  for (const std::vector<SweepRow>& table : {one, std::vector<SweepRow>{}}) {
    const std::string text = results_json(plan.file, table);
    const auto parsed = nlohmann::ordered_json::parse(text);
    CHECK(parsed["rows"].size() == table.size());
    CHECK(parsed.dump(2) + "\n" == text);
  }
  CHECK(summary_csv(plan.file, one) == summary_csv(plan.file, two));
  // Different seeds give different runs: the seed reached the run.
  CHECK(one[0].figures != one[1].figures);
  fs::remove_all(dir);
}

TEST_CASE("plots: one marker per point at its mean over the seeds, x by the first field; a bad figure is refused") {
  const fs::path dir = folder_with("plot", kRaidAxis + R"(, "seeds": [1, 2])");
  const SweepPlan plan = plan_in(dir);
  const std::vector<SweepRow> rows = run_all(plan, 1);
  auto svg = plot_svg(plan.file, rows, "latency_us_mean");
  REQUIRE_MESSAGE(svg.is_ok(), svg.status().message());
  // latency_us_mean is figure 4; each point's mean over its two seeds, worked out here.
  double mean[2] = {0, 0};
  for (const SweepRow& r : rows) mean[r.point] += *r.figures[4] / 2;
  CHECK(mean[0] != mean[1]);
  double cy[2] = {0, 0};
  for (std::size_t p = 0; p < 2; ++p) {
    char title[160];
    std::snprintf(title, sizeof title, "point %zu: %s: %.6g ± ", p, p == 0 ? "RAID10" : "RAID5", mean[p]);
    const std::size_t at = svg->find(title);
    REQUIRE_MESSAGE(at != std::string::npos, title);
    const std::size_t circle = svg->rfind("<circle cx=\"", at);
    const std::size_t y = svg->find("cy=\"", circle) + 4;
    cy[p] = std::stod(svg->substr(y));
  }
  CHECK(std::count(svg->begin(), svg->end(), '\n') > 10);
  CHECK((svg->find("<circle") != svg->rfind("<circle")));  // two markers
  // SVG y grows downwards: the larger mean is drawn higher.
  CHECK((mean[0] > mean[1]) == (cy[0] < cy[1]));
  // The y ticks (right-aligned at x=84) are round: equal steps of 1, 2 or 5 × 10^k, each a
  // multiple of the step (a new user saw 256681 and 9.24).
  std::vector<double> ticks;
  for (std::size_t at = svg->find("<text x=\"84\""); at != std::string::npos; at = svg->find("<text x=\"84\"", at + 1))
    ticks.push_back(std::stod(svg->substr(svg->find('>', at) + 1)));
  REQUIRE(ticks.size() >= 3);
  const double step = ticks[1] - ticks[0];
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  CHECK((mantissa == doctest::Approx(1) || mantissa == doctest::Approx(2) || mantissa == doctest::Approx(5)));
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    CHECK(ticks[i] - ticks[0] == doctest::Approx(step * static_cast<double>(i)));
    CHECK(std::remainder(ticks[i], step) == doctest::Approx(0).epsilon(1e-6).scale(step));
  }
  CHECK(ticks.back() >= std::max(mean[0], mean[1]));
  auto bad = plot_svg(plan.file, rows, "colour");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().rfind("colour: not a figure of this sweep (figures: iops, read_iops,", 0) == 0);
  CHECK(check_figure(plan.file.kind, "colour").message() == bad.status().message());
  CHECK(check_figure(plan.file.kind, "iops").is_ok());
  // A control character in the name or a value is shown as \xNN: the plot stays XML (hostile
  // round 24: "nightly\x1b[31m" made it not well-formed).
  SweepFile odd = plan.file;
  odd.name = "night\tly\x1b[31m";
  auto odd_svg = plot_svg(odd, rows, "iops");
  REQUIRE(odd_svg.is_ok());
  CHECK(odd_svg->find("night\tly\\x1b[31m: iops") != std::string::npos);  // a tab is XML: kept
  CHECK(std::none_of(odd_svg->begin(), odd_svg->end(),
                     [](char c) { return (c >= 0 && c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }));
  fs::remove_all(dir);
}

TEST_CASE("a failed point is a row with its error; the other points run") {
  const fs::path dir = folder_with("fail", R"("axes": [{"field": "/volumes/*/raid_type", "values": ["RAID6", "RAID10"]}],
                                              "seeds": [1, 2])");
  const SweepPlan plan = plan_in(dir);
  const std::vector<SweepRow> rows = run_all(plan, 2);
  REQUIRE(rows.size() == 4);
  for (int i = 0; i < 2; ++i) {
    CHECK(rows[i].failed());
    CHECK(rows[i].error.find("base.json: volumes[0].raid_type: ") != std::string::npos);
    CHECK(!rows[i].figures[0]);
    CHECK_MESSAGE(!rows[i + 2].failed(), rows[i + 2].error);
    CHECK(rows[i + 2].figures[0]);
  }
  const std::string csv = results_csv(plan.file, rows);
  CHECK(csv.find("\n0,RAID6,1,failed,,,,") != std::string::npos);
  CHECK(csv.find("\n1,RAID10,2,ok,") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("resume: a sweep cut short, its torn last line dropped, ends with the same results") {
  const fs::path dir = folder_with("resume", kRaidAxis + R"(, "seeds": {"first": 1, "count": 3})");
  const SweepPlan plan = plan_in(dir);
  const std::string whole = results_csv(plan.file, run_all(plan, 1));
  const fs::path out = dir / "out";
  {
    std::vector<SweepRow> done;
    auto journal = RowJournal::open(out.string(), plan, &done);
    REQUIRE(journal.is_ok());
    CHECK(done.empty());
    SweepRunOptions options;
    options.max_runs = 4;
    options.on_row = [&](const SweepRow& r) { return (*journal)->append(r); };
    auto rows = run_sweep(plan, catalog(), {}, options);
    REQUIRE(rows.is_ok());
    CHECK(rows->size() == 4);
  }
  std::ofstream(out / "rows.jsonl", std::ios::app) << R"({"point":1,"seed":3,"err)";  // killed mid-line
  std::vector<SweepRow> done;
  auto journal = RowJournal::open(out.string(), plan, &done);
  REQUIRE_MESSAGE(journal.is_ok(), journal.status().message());
  CHECK(done.size() == 4);
  // rows.jsonl holds rows in the order runs finished, which on many workers is any order.
  std::reverse(done.begin(), done.end());
  std::size_t ran = 0;
  SweepRunOptions options;
  options.on_row = [&](const SweepRow& r) { ++ran; return (*journal)->append(r); };
  auto rows = run_sweep(plan, catalog(), done, options);
  REQUIRE(rows.is_ok());
  CHECK(ran == 2);  // only the runs not done
  CHECK(results_csv(plan.file, *rows) == whole);
  CHECK(rows_left_out(plan, *rows).rows == 0);
  std::vector<SweepRow> other_seeds = *rows;
  other_seeds[0].seed = 9;
  other_seeds[1].seed = 7;
  other_seeds[2].seed = 9;
  // A run twice with different results is counted (hostile review 42: silently the first).
  CHECK(conflicting_rows(plan, *rows) == 0);
  std::vector<SweepRow> twice = *rows;
  twice.push_back(twice[0]);
  CHECK(conflicting_rows(plan, twice) == 0);  // the same row twice: no conflict
  twice.back().error = "another result";
  CHECK(conflicting_rows(plan, twice) == 1);
  const RowsLeftOut left_out = rows_left_out(plan, other_seeds);
  CHECK(left_out.rows == 3);
  CHECK(left_out.seeds == std::vector<std::uint64_t>{7, 9});
  // The journal now holds the header and six whole rows.
  const std::string text = slurp(out / "rows.jsonl");
  CHECK(std::count(text.begin(), text.end(), '\n') == 7);
  CHECK(text.back() == '\n');
  fs::remove_all(dir);
}

TEST_CASE("a run that ran out of memory is reported but not journalled: a resume runs it again (hostile review 42)") {
  // Under --jobs 1024 and a memory limit, 7 of 48 runs failed with std::bad_alloc, and every
  // resume kept them failed: a shortage of that moment became the run's result.
  const fs::path dir = folder_with("oom", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  const fs::path out = dir / "out";
  {
    std::vector<SweepRow> done;
    auto journal = RowJournal::open(out.string(), plan, &done);
    REQUIRE(journal.is_ok());
    SweepRow starved{0, 1, SweepRow::kOutOfMemoryError, {}};
    SweepRow refused{1, 1, "base.json: volumes[0].raid_type: no", {}};
    CHECK(starved.retry_on_resume());
    CHECK_FALSE(refused.retry_on_resume());
    REQUIRE((*journal)->append(starved).is_ok());
    REQUIRE((*journal)->append(refused).is_ok());
  }
  std::vector<SweepRow> done;
  REQUIRE(RowJournal::open(out.string(), plan, &done).is_ok());
  REQUIRE(done.size() == 1);
  CHECK(done[0].point == 1);
  const RunsLeft left = runs_left(plan, done, plan.file.runs());
  CHECK(left.todo == std::vector<std::size_t>{0});  // the starved run, again
  fs::remove_all(dir);
}

TEST_CASE("a point that makes the scenario too large names the point, not the base file (hostile review 42)") {
  // "base.json: larger than 4194304 bytes" for a base of a few KB.
  const fs::path dir = folder_with("large", R"("axes": [{"field": "/timeline/0/note", "values": [")" +
                                               std::string(200000, 'n') + R"("]}], "seeds": [1])");
  std::string base = kBase;  // 4,050,000 bytes, within the bound: a description and three notes of ~1 MB
  base.insert(base.find("\"duration_s\""), "\"description\": \"" + std::string(1000000, 'd') + "\", ");
  for (const char* at : {"0.2", "0.3", "0.4"})
    base.insert(base.rfind("]"), std::string(", {\"at_s\": ") + at + R"(, "fault": {"type": "supercap_degrade"}, "note": ")" +
                                    std::string(1000000, 'n') + "\"}");
  REQUIRE(base.size() < workload::kMaxScenarioFileBytes);
  spit(dir / "base.json", base);
  const SweepPlan plan = plan_in(dir);
  const SweepRow row = run_point(plan, 0, 1, catalog());
  CHECK(row.error.find("sweep.json: point 0: the base with its values is ") != std::string::npos);
  CHECK(row.error.find("larger than a scenario may be (4194304)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a rows.jsonl that is not a sweep's is refused untouched, with or without a final newline (hostile round 16)") {
  const fs::path dir = folder_with("foreign", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  fs::create_directories(dir / "out");
  for (const std::string& notes : {std::string("my important notes without newline"),
                                  std::string("my notes\nline 2 without newline"), std::string(100, '\0')}) {
    spit(dir / "out" / "rows.jsonl", notes);
    std::vector<SweepRow> done;
    auto journal = RowJournal::open((dir / "out").string(), plan, &done);
    REQUIRE(!journal.is_ok());
    CHECK(journal.status().message().find("rows.jsonl:1: not a rows.jsonl header") != std::string::npos);
    CHECK(slurp(dir / "out" / "rows.jsonl") == notes);
  }
  // A header cut short (a sweep killed while writing it) is its own: started again.
  spit(dir / "out" / "rows.jsonl", R"({"schema":)");
  std::vector<SweepRow> done;
  auto journal = RowJournal::open((dir / "out").string(), plan, &done);
  REQUIRE_MESSAGE(journal.is_ok(), journal.status().message());
  journal->reset();
  CHECK(slurp(dir / "out" / "rows.jsonl").starts_with(R"({"schema":"afasim.sweep-rows)"));
  fs::remove_all(dir);
}

TEST_CASE("a resumed row with a negative figure, or a figure JSON cannot hold, is refused with its line (hostile round 18)") {
  const fs::path dir = folder_with("badfig", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  const fs::path out = dir / "out";
  {
    std::vector<SweepRow> done;
    auto journal = RowJournal::open(out.string(), plan, &done);
    REQUIRE(journal.is_ok());
    SweepRunOptions options;
    options.max_runs = 1;
    options.on_row = [&](const SweepRow& r) { return (*journal)->append(r); };
    REQUIRE(run_sweep(plan, catalog(), {}, options).is_ok());
  }
  const std::string good = slurp(out / "rows.jsonl");
  const std::size_t iops = good.find(R"("iops":)");
  REQUIRE(iops != std::string::npos);
  const std::size_t end = good.find_first_of(",}", iops);
  // 1e308 (hostile round 37): two of them summed to inf in the summary and nan in the plots.
  for (const std::string& value : {std::string("-5"), std::string("-0.001"), std::string("1e999"), std::string("1e308")}) {
    spit(out / "rows.jsonl", good.substr(0, iops) + R"("iops":)" + value + good.substr(end));
    std::vector<SweepRow> done;
    auto journal = RowJournal::open(out.string(), plan, &done);
    REQUIRE(!journal.is_ok());
    const std::string expected = value == "1e999"   ? "rows.jsonl:2: not a JSON object"
                                 : value == "1e308" ? "rows.jsonl:2: figure iops is 1e+308: beyond any figure a run gives"
                                                    : "rows.jsonl:2: figure iops is -";
    CHECK_MESSAGE(journal.status().message().find(expected) != std::string::npos, journal.status().message());
  }
  // A NUL byte and what follows it are no part to skip (review 41: the row read as valid).
  const std::size_t row_end = good.find('\n', good.find('\n') + 1);
  REQUIRE(row_end != std::string::npos);
  spit(out / "rows.jsonl", good.substr(0, row_end) + std::string("\0garbage", 8) + good.substr(row_end));
  {
    std::vector<SweepRow> done;
    auto journal = RowJournal::open(out.string(), plan, &done);
    REQUIRE(!journal.is_ok());
    CHECK_MESSAGE(journal.status().message().find("rows.jsonl:2: not a JSON object") != std::string::npos,
                  journal.status().message());
  }
  spit(out / "rows.jsonl", good);  // the row as written reads back
  std::vector<SweepRow> done;
  REQUIRE(RowJournal::open(out.string(), plan, &done).is_ok());
  CHECK(done.size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("--out that is a file is refused as such, naming it (hostile round 37: \"cannot create the folder X\")") {
  const fs::path dir = folder_with("outfile", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  spit(dir / "afile", "x");
  std::vector<SweepRow> done;
  auto journal = RowJournal::open((dir / "afile").string(), plan, &done);
  REQUIRE(!journal.is_ok());
  CHECK(journal.status().code() == sim::Code::kInvalidArgument);
  CHECK(journal.status().message() == (dir / "afile").string() + " exists and is not a folder: give a folder for the sweep's results");
  fs::remove_all(dir);
}

TEST_CASE("a job file the base reads is in the fingerprint: rows of the job before an edit are another sweep's") {
  // Hostile round 21: the fingerprint covered the base's text, not its fio_file, and a resumed
  // sweep put the edited job's rows beside the old job's in one results.csv.
  const fs::path dir = folder_with("jobfile", kRaidAxis + R"(, "seeds": [1])");
  std::string base = kBase;
  const std::string inline_job = base.substr(base.find("\"fio\": ["), base.find("]}],") + 1 - base.find("\"fio\": ["));
  base.replace(base.find(inline_job), inline_job.size(), R"("fio_file": "job.fio")");
  spit(dir / "base.json", base);
  spit(dir / "job.fio", "[l]\nfilename=v\nsize=1g\nrw=randrw\nbs=8k\niodepth=4\nrate_iops=1000\ntime_based\nruntime=1s\n");
  const SweepPlan plan = plan_in(dir);
  std::vector<SweepRow> done;
  REQUIRE(RowJournal::open((dir / "out").string(), plan, &done).is_ok());
  CHECK(plan_in(dir).fingerprint == plan.fingerprint);  // the same files: the same sweep, resumed
  {  // and the same whatever the path the sweep file is given by (review of round 21)
    const fs::path cwd = fs::current_path();
    fs::current_path(dir);
    auto relative = prepare_sweep(load_sweep_file("./sweep.json").value(), catalog());
    fs::current_path(cwd);
    REQUIRE(relative.is_ok());
    CHECK(relative->fingerprint == plan.fingerprint);
  }
  spit(dir / "job.fio", "[l]\nfilename=v\nsize=1g\nrw=randrw\nbs=8k\niodepth=4\nrate_iops=50000\ntime_based\nruntime=1s\n");
  auto edited = RowJournal::open((dir / "out").string(), plan_in(dir), &done);
  REQUIRE(!edited.is_ok());
  CHECK(edited.status().code() == sim::Code::kConflict);
  CHECK(edited.status().message().find("the job files or presets it reads") != std::string::npos);
  // The trace a job replays (read_iolog=, beside the job file) is read by content too (review
  // 41: a resumed sweep put an edited trace's rows beside the old trace's).
  spit(dir / "t.log", "fio version 2 iolog\nv add\nv open\nv read 0 4096\nv close\n");
  spit(dir / "job.fio", "[l]\nfilename=v\nsize=1g\nread_iolog=t.log\n");
  const SweepPlan with_trace = plan_in(dir);
  CHECK(plan_in(dir).fingerprint == with_trace.fingerprint);
  spit(dir / "t.log", "fio version 2 iolog\nv add\nv open\nv read 0 4096\nv write 0 4096\nv close\n");
  CHECK(plan_in(dir).fingerprint != with_trace.fingerprint);
  fs::remove_all(dir);
}

TEST_CASE("rows.jsonl must be a regular file; results go to new files, never through a .tmp left there") {
  // Hostile round 21: a FIFO at rows.jsonl blocked the sweep for ever, /dev/zero behind a
  // symlink grew it until memory ran out; a results.csv.tmp symlink had the CSV written to
  // its target outside --out.
  const fs::path dir = folder_with("foreign", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  fs::create_directories(dir / "out");
  spit(dir / "elsewhere.jsonl", "");
  fs::create_symlink(dir / "elsewhere.jsonl", dir / "out" / "rows.jsonl");
  std::vector<SweepRow> done;
  auto linked = RowJournal::open((dir / "out").string(), plan, &done);
  REQUIRE(!linked.is_ok());
  CHECK(linked.status().message().find("rows.jsonl is not a regular file") != std::string::npos);
  fs::remove(dir / "out" / "rows.jsonl");
  REQUIRE(::mkfifo((dir / "out" / "rows.jsonl").c_str(), 0644) == 0);
  CHECK(!RowJournal::open((dir / "out").string(), plan, &done).is_ok());
  CHECK(slurp(dir / "elsewhere.jsonl").empty());
  // A folder there is the same mistake (exit 2), not a failure to open (hostile review 42: exit 1).
  fs::remove(dir / "out" / "rows.jsonl");
  fs::create_directory(dir / "out" / "rows.jsonl");
  auto folder = RowJournal::open((dir / "out").string(), plan, &done);
  REQUIRE(!folder.is_ok());
  CHECK(folder.status().code() == sim::Code::kInvalidArgument);
  CHECK(folder.status().message().find("rows.jsonl is not a regular file (a folder,") != std::string::npos);
  fs::remove(dir / "out" / "rows.jsonl");

  spit(dir / "victim.txt", "not afasim's");
  fs::create_symlink(dir / "victim.txt", dir / "out" / "results.csv.tmp");
  REQUIRE(write_results((dir / "out").string(), plan.file, {}).is_ok());
  CHECK(slurp(dir / "victim.txt") == "not afasim's");
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "out" / "results.csv")));
  CHECK(slurp(dir / "out" / "results.csv").starts_with("point,"));
  // A folder at results.json: refused before anything is written, no .tmp left behind
  // (hostile review 42: three .tmp files stayed after the failed rename).
  fs::create_directory(dir / "out" / "results.json.d");
  fs::remove(dir / "out" / "results.json");
  fs::rename(dir / "out" / "results.json.d", dir / "out" / "results.json");
  const sim::Status results_folder = write_results((dir / "out").string(), plan.file, {});
  CHECK(results_folder.code() == sim::Code::kInvalidArgument);
  CHECK(results_folder.message().find("results.json is a folder") != std::string::npos);
  for (const char* tmp : {"results.csv.tmp", "results.json.tmp", "summary.csv.tmp"}) CHECK(!fs::exists(dir / "out" / tmp));
  // A folder at a plot's name is refused up front, naming the plot; other plots pass.
  fs::remove_all(dir / "out" / "results.json");
  fs::create_directory(dir / "out" / "plot-iops.svg");
  CHECK(check_results_paths((dir / "out").string(), {"latency"}).is_ok());
  const sim::Status plot_folder = check_results_paths((dir / "out").string(), {"latency", "iops"});
  CHECK(plot_folder.code() == sim::Code::kInvalidArgument);
  CHECK(plot_folder.message().find("plot-iops.svg is a folder: --plot iops writes its chart there") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("rows of another sweep are refused; a bad base or a pointer that names nothing is the sweep file's error") {
  const fs::path dir = folder_with("other", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  std::vector<SweepRow> done;
  REQUIRE(RowJournal::open((dir / "out").string(), plan, &done).is_ok());
  spit(dir / "sweep.json", R"({"schema": "afasim.sweep/1", "name": "other", "base": "base.json", "set": {"/duration_s": 0.5},)" +
                               kRaidAxis + R"(, "seeds": [1]})");
  auto other = RowJournal::open((dir / "out").string(), plan_in(dir), &done);
  REQUIRE(!other.is_ok());
  CHECK(other.status().code() == sim::Code::kConflict);
  CHECK(other.status().message().find("rows.jsonl: the rows of another sweep") != std::string::npos);

  auto prepare = [&](const std::string& body) {
    spit(dir / "sweep.json", R"({"schema": "afasim.sweep/1", "name": "x", )" + body + "}");
    auto file = load_sweep_file((dir / "sweep.json").string());
    REQUIRE_MESSAGE(file.is_ok(), file.status().message());
    auto p = prepare_sweep(std::move(file).value(), catalog());
    REQUIRE(!p.is_ok());
    return p.status().message();
  };
  const std::string s = (dir / "sweep.json").string();
  CHECK(prepare(R"("base": "nothing/here.json", "points": [{}], "seeds": [1])") ==
        s + ": base: cannot read " + (dir / "nothing/here.json").string() + ": No such file or directory");
  spit(dir / "bad.json", R"({"schema": "afasim.scenario/1", "name": "b", "duration_s": -1})");
  CHECK(prepare(R"("base": "bad.json", "points": [{}], "seeds": [1])").find(s + ": base: " + (dir / "bad.json").string() +
                                                                        ": duration_s: ") == 0);
  CHECK(prepare(R"("base": "base.json", "points": [{}, {"/volumes/5/name": "x"}], "seeds": [1])") ==
        s + ": points[1][\"/volumes/5/name\"]: /volumes/5/name: no element 5 (the array has 2) (at /volumes), in point 1");
  CHECK(prepare(R"("base": "base.json", "set": {"/volumes": []}, "axes": [{"field": "/volumes/*/name", "values": ["a"]}], "seeds": [1])") ==
        s + ": axes[0].field: /volumes/*/name: * on an empty array sets nothing (at /volumes)");
  // A misspelt field adds a member the scenario does not have: the sweep file's error too, not
  // every run's (hostile round 28: "/duraton_s" failed each point with the loader's message, exit 1).
  const std::string misspelt = prepare(R"("base": "base.json", "axes": [{"field": "/duraton_s", "values": [1, 2]}], "seeds": [1])");
  CHECK(misspelt.find(s + ": a field sets a key the scenario does not have (the fields of point 0: /duraton_s): ") == 0);
  CHECK(misspelt.find("duraton_s: unknown key (expected one of: ") != std::string::npos);
  // A sweep file as the base says so (hostile review 42: its keys were unknown scenario keys).
  spit(dir / "inner.json", R"({"schema": "afasim.sweep/1", "name": "i", "base": "base.json", )" + kRaidAxis + R"(, "seeds": [1]})");
  const std::string nested = prepare(R"("base": "inner.json", )" + kRaidAxis + R"(, "seeds": [1])");
  CHECK(nested.find("inner.json is a sweep file (schema afasim.sweep/1); a base is a scenario") != std::string::npos);
  // A value the loader refuses stays the point's own error: the plan is made.
  spit(dir / "sweep.json", R"({"schema": "afasim.sweep/1", "name": "x", "base": "base.json",
                              "axes": [{"field": "/duration_s", "values": [-1, 1]}], "seeds": [1]})");
  auto values = load_sweep_file((dir / "sweep.json").string());
  REQUIRE(values.is_ok());
  CHECK(prepare_sweep(std::move(values).value(), catalog()).is_ok());
  fs::remove_all(dir);
}

namespace {

struct Cli {
  int exit_code = -1;
  std::string err;
};

Cli afasim(const std::string& args, const fs::path& dir) {
  const char* binary = std::getenv("AFASIM_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "AFASIM_BINARY is not set (run through ctest)");
  const std::string cmd = std::string(binary) + " " + args + " >/dev/null 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "err")};
}

}  // namespace

TEST_CASE("afasim sweep: the shipped raid-vs-rebuild-rate with 2 seeds, --jobs 1 and 2 give the same files") {
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const fs::path dir = folder_with("cli", kRaidAxis + R"(, "seeds": [1])");
  const std::string sweep = (fs::path(source) / "config/sweeps/raid-vs-rebuild-rate.json").string();
  const Cli one = afasim("sweep " + sweep + " --seed-count 2 --jobs 1 --plot rebuild_s --out " + (dir / "one").string(), dir);
  CHECK_MESSAGE(one.exit_code == 0, one.err);
  CHECK(one.err.find("sweep: 12/12 runs, 0 running, 0 failed\n") != std::string::npos);
  CHECK(slurp(dir / "one" / "plot-rebuild_s.svg").find("raid-vs-rebuild-rate: rebuild_s") != std::string::npos);
  const Cli bad_plot = afasim("sweep " + sweep + " --plot colour --out " + (dir / "p").string(), dir);
  CHECK(bad_plot.exit_code == 2);
  CHECK(bad_plot.err.find("--plot colour: not a figure of this sweep") != std::string::npos);
  CHECK(!fs::exists(dir / "p" / "rows.jsonl"));  // refused before anything ran
  // A figure asked for twice was drawn twice (hostile round 44).
  const Cli twice = afasim("sweep " + sweep + " --plot rebuild_s --plot rebuild_s --out " + (dir / "t").string(), dir);
  CHECK(twice.exit_code == 2);
  CHECK(twice.err.find("--plot rebuild_s is given twice") != std::string::npos);
  // The sweep file cannot be one of the outputs (review, round 23: DIR/results.json was replaced).
  fs::create_directories(dir / "self");
  fs::copy_file(sweep, dir / "self" / "results.json");
  const Cli self = afasim("sweep " + (dir / "self" / "results.json").string() + " --out " + (dir / "self").string(), dir);
  CHECK(self.exit_code == 2);
  CHECK(self.err.find("which this command reads: give another file") != std::string::npos);
  CHECK(slurp(dir / "self" / "results.json") == slurp(sweep));
  // Nor the base scenario, its job files or anything under DIR/logs (hostile round 44: a base
  // named DIR/results.json and a job file named DIR/summary.csv were replaced, exit 0).
  fs::create_directories(dir / "own" / "logs");
  spit(dir / "own" / "results.json", kBase);
  spit(dir / "own-sweep.json", R"({"schema": "afasim.sweep/1", "name": "o", "base": "own/results.json",
                                   "axes": [{"field": "/duration_s", "values": [1, 2]}], "seeds": [1]})");
  const Cli base_out = afasim("sweep " + (dir / "own-sweep.json").string() + " --quiet --out " + (dir / "own").string(), dir);
  CHECK(base_out.exit_code == 2);
  CHECK(base_out.err.find("--out: " + (dir / "own").string() + "/results.json is " + (dir / "own" / "results.json").string() +
                          ", which this command reads: give another file") != std::string::npos);
  CHECK(slurp(dir / "own" / "results.json") == kBase);
  std::string with_job = kBase;
  const std::string inline_fio = with_job.substr(with_job.find("\"fio\": ["), with_job.find("]}]") + 1 - with_job.find("\"fio\": ["));
  with_job.replace(with_job.find(inline_fio), inline_fio.size(), "\"fio_file\": \"own/summary.csv\"");
  const std::string job = "[l]\nfilename=v\nsize=1g\nrw=randrw\nbs=8k\nrate_iops=1000\ntime_based\nruntime=1s\n";
  spit(dir / "own" / "summary.csv", job);
  spit(dir / "job-base.json", with_job);
  spit(dir / "job-sweep.json", R"({"schema": "afasim.sweep/1", "name": "j", "base": "job-base.json",
                                   "axes": [{"field": "/duration_s", "values": [1, 2]}], "seeds": [1]})");
  const Cli job_out = afasim("sweep " + (dir / "job-sweep.json").string() + " --quiet --out " + (dir / "own").string(), dir);
  CHECK(job_out.exit_code == 2);
  CHECK(job_out.err.find("/summary.csv, which this command reads: give another file") != std::string::npos);
  CHECK(slurp(dir / "own" / "summary.csv") == job);
  fs::rename(dir / "own" / "summary.csv", dir / "own" / "logs" / "summary.csv");
  spit(dir / "job-base.json", with_job.replace(with_job.find("own/summary.csv"), 15, "own/logs/summary.csv"));
  const Cli logs_out = afasim("sweep " + (dir / "job-sweep.json").string() + " --quiet --out " + (dir / "own").string(), dir);
  CHECK(logs_out.exit_code == 2);
  CHECK(logs_out.err.find("/logs/summary.csv is inside " + (dir / "own" / "logs").string() +
                          ", where the runs write their fio logs") != std::string::npos);
  // A point's own job file too (re-test of round 44: only the base's was checked).
  spit(dir / "own" / "results.csv", job);
  spit(dir / "point-sweep.json", R"({"schema": "afasim.sweep/1", "name": "p", "base": "job-base.json",
                                     "points": [{"/workloads/0/fio_file": "own/results.csv"}], "seeds": [1]})");
  const Cli point_out = afasim("sweep " + (dir / "point-sweep.json").string() + " --quiet --out " + (dir / "own").string(), dir);
  CHECK(point_out.exit_code == 2);
  CHECK(point_out.err.find("/results.csv, which this command reads: give another file") != std::string::npos);
  CHECK(slurp(dir / "own" / "results.csv") == job);
  // Beside them, elsewhere: it runs.
  const Cli elsewhere = afasim("sweep " + (dir / "job-sweep.json").string() + " --quiet --out " + (dir / "else").string(), dir);
  CHECK_MESSAGE(elsewhere.exit_code == 0, elsewhere.err);
  // Half of it, then the rest on two workers: the same files as one go on one.
  const Cli half = afasim("sweep " + sweep + " --seed-count 2 --jobs 2 --max-runs 6 --out " + (dir / "two").string(), dir);
  CHECK_MESSAGE(half.exit_code == 0, half.err);
  CHECK(!fs::exists(dir / "two" / "results.csv"));
  const Cli two = afasim("sweep " + sweep + " --seed-count 2 --jobs 2 --quiet --out " + (dir / "two").string(), dir);
  CHECK_MESSAGE(two.exit_code == 0, two.err);
  for (const char* f : {"results.csv", "results.json", "summary.csv"}) {
    CAPTURE(f);
    CHECK(slurp(dir / "one" / f) == slurp(dir / "two" / f));
  }
  const std::string csv = slurp(dir / "one" / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);  // header + 2 RAID × 3 rates × 2 seeds
  // Resumed with fewer seeds: it says so and which rows it leaves out (before: not a word,
  // and results.csv silently lost the 6 rows of seed 2).
  const Cli fewer =
      afasim("sweep " + sweep + " --seed-count 1 --quiet --out " + (dir / "two").string(), dir);
  CHECK_MESSAGE(fewer.exit_code == 0, fewer.err);
  const std::string journal = (dir / "two" / "rows.jsonl").string();
  CHECK(fewer.err.find("afasim sweep: resuming from " + journal + ": 6 of 6 runs have a row\n") !=
        std::string::npos);
  CHECK(fewer.err.find("afasim sweep: note: " + journal +
                       " holds 6 rows of seed 2 that this sweep "
                       "does not run (its seeds or --seed-count changed): kept in the file, left "
                       "out of the results\n") != std::string::npos);
  CHECK(fewer.err.find("afasim sweep: 6 runs (6 points × 1 seed), 0 failed: ") !=
        std::string::npos);
  const std::string rows_text = slurp(journal);  // nothing removed: the header and 12 rows
  CHECK(std::count(rows_text.begin(), rows_text.end(), '\n') == 13);
  CHECK(csv.rfind("point,/volumes/*/raid_type,/options/rebuild_bytes_per_second,seed,status,iops,", 0) == 0);
  // A failed point: exit 1, its row kept; a bad sweep file: exit 2.
  const Cli tiny = afasim("sweep " + (dir / "sweep.json").string() + " --quiet --out " + (dir / "f").string(), dir);
  CHECK_MESSAGE(tiny.exit_code == 0, tiny.err);
  spit(dir / "bad.json", R"({"schema": "afasim.sweep/1", "name": "b", "base": "base.json", "points": [{"/volumes/*/raid_type": "RAID6"}], "seeds": [1]})");
  const Cli bad_point = afasim("sweep " + (dir / "bad.json").string() + " --quiet --out " + (dir / "g").string(), dir);
  CHECK(bad_point.exit_code == 1);
  CHECK(slurp(dir / "g" / "results.csv").find(",failed,") != std::string::npos);
  // Run again with nothing left to run: the failed row still fails the sweep (it said "0
  // failed", exit 0).
  const Cli again = afasim("sweep " + (dir / "bad.json").string() + " --out " + (dir / "g").string(), dir);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("afasim sweep: 1 run (1 point × 1 seed), 1 failed: ") != std::string::npos);
  const Cli bad_file = afasim("sweep " + (dir / "base.json").string() + " --out " + (dir / "h").string(), dir);
  CHECK(bad_file.exit_code == 2);
  // A scenario given as the sweep file is named as one (it said "duration_s: unknown key").
  CHECK(bad_file.err.find("base.json: schema: expected \"afasim.sweep/1\", got \"afasim.scenario/1\" (a scenario: "
                          "afasim run FILE)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a second sweep on the same --out is refused while the first runs (hostile round 17: both ran every run)") {
  const fs::path dir = folder_with("twice", kRaidAxis + R"(, "seeds": [1])");
  const SweepPlan plan = plan_in(dir);
  std::vector<SweepRow> done;
  auto first = RowJournal::open((dir / "out").string(), plan, &done);
  REQUIRE(first.is_ok());
  auto second = RowJournal::open((dir / "out").string(), plan, &done);
  REQUIRE(!second.is_ok());
  CHECK(second.status().code() == sim::Code::kUnavailable);
  CHECK(second.status().message().find("is in use by another afasim sweep") != std::string::npos);
  // No file to delete stands in for the lock (hostile round 25b: deleting DIR/LOCK let a second
  // server run beside the first; a sweep took its lock the same way).
  fs::remove(dir / "out" / "LOCK");
  CHECK_FALSE(RowJournal::open((dir / "out").string(), plan, &done).is_ok());
  first->reset();  // the first one ends: the folder is free again
  CHECK(RowJournal::open((dir / "out").string(), plan, &done).is_ok());
  fs::remove_all(dir);
}

TEST_CASE("a built-in sweep is found by its name, as afasim run finds a built-in scenario (new-user trial 17)") {
  // `afasim sweep raid-vs-rebuild-rate` said "No such file or directory".
  const std::string cwd = fs::current_path().string();
  fs::current_path(fs::temp_directory_path());  // no config/ folder here: the name alone
  auto file = load_sweep_file("raid-vs-rebuild-rate");
  auto reliability = load_sweep_file("reliability-ise860.json");
  auto missing = load_sweep_file("no-such-sweep");
  // A folder of the built-in's name here is no sweep file: the built-in is taken (hostile
  // round 24: "cannot read raid-vs-rebuild-rate: a directory"); another folder is refused.
  const fs::path folder = fs::temp_directory_path() / "raid-vs-rebuild-rate";
  const bool made = fs::create_directory(folder);
  fs::create_directory(fs::temp_directory_path() / "afasim-not-a-sweep");
  auto beside_folder = load_sweep_file("raid-vs-rebuild-rate");
  auto just_folder = load_sweep_file("afasim-not-a-sweep");
  if (made) fs::remove(folder);
  fs::remove(fs::temp_directory_path() / "afasim-not-a-sweep");
  fs::current_path(cwd);
  REQUIRE_MESSAGE(beside_folder.is_ok(), beside_folder.status().message());
  CHECK(beside_folder->file_name == "config/sweeps/raid-vs-rebuild-rate.json");
  CHECK(just_folder.status().message() == "cannot read afasim-not-a-sweep: a directory");
  REQUIRE_MESSAGE(file.is_ok(), file.status().message());
  CHECK(file->file_name == "config/sweeps/raid-vs-rebuild-rate.json");
  CHECK(file->points.size() == 6);  // RAID5, RAID10 x three rebuild rates
  CHECK(file->seeds.size() == 8);
  auto plan = prepare_sweep(std::move(file).value(), catalog());  // its base is the built-in drive-failure-short
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().message());
  CHECK(plan->base.file_name == "config/scenarios/drive-failure-short.json");
  REQUIRE_MESSAGE(reliability.is_ok(), reliability.status().message());
  CHECK(reliability->file_name == "config/sweeps/reliability-ise860.json");
  REQUIRE(!missing.is_ok());
  CHECK(missing.status().code() == sim::Code::kNotFound);
  CHECK(missing.status().message() ==
        "cannot read no-such-sweep: no such file, and no built-in sweep of that name (built in: raid-vs-rebuild-rate, "
        "reliability-ise860)");
}

TEST_CASE("each run writes its fio logs in a folder of its own under the plan's log_dir") {
  // Every run of a sweep wrote write_*_log files under the same names: the last run to end
  // replaced the others' logs, and two running at once interleaved their lines.
  const fs::path dir = folder_with("logs", kRaidAxis + R"(, "seeds": [1, 2])");
  std::string base = kBase;
  const std::string runtime = R"("runtime=1s")";
  base.replace(base.find(runtime), runtime.size(), runtime + R"(, "write_lat_log=lat/io", "log_avg_msec=100")");
  spit(dir / "base.json", base);
  SweepPlan plan = plan_in(dir);
  plan.log_dir = (dir / "logs").string();
  const std::vector<SweepRow> rows = run_all(plan, 2);
  std::set<std::string> contents;
  for (const SweepRow& row : rows) {
    REQUIRE_MESSAGE(!row.failed(), row.error);
    const fs::path log = dir / "logs" / ("point-" + std::to_string(row.point) + "-seed-" + std::to_string(row.seed)) /
                         "lat/io_clat.1.log";  // lat/ made in the run's folder
    INFO(log);
    const std::string text = slurp(log);
    // One line per 100 ms window of the 1 s run and direction, of this run alone (the mean
    // completion latency differs with the RAID type and the seed).
    INFO(text);
    CHECK(std::count(text.begin(), text.end(), '\n') == 20);
    contents.insert(text);
  }
  CHECK(contents.size() == 4);  // four runs, four different logs
  CHECK_FALSE(fs::exists("lat"));
  // An absolute prefix would be one file for every run: that run fails, saying why.
  base.replace(base.find("write_lat_log=lat/io"), 20, "write_lat_log=" + (dir / "abs").string());
  spit(dir / "base.json", base);
  plan = plan_in(dir);
  plan.log_dir = (dir / "logs").string();
  const SweepRow absolute = run_point(plan, 0, 1, catalog());
  CHECK(absolute.error == (dir / "base.json").string() + ": job l: log prefix " + (dir / "abs").string() + ": each run writes its logs under " +
                            plan.log_dir + "/point-0-seed-1: give a name inside it, not an absolute path or one with ..");
  // So would one that climbs out of the run's folder (review, round 24).
  base.replace(base.find("write_lat_log=" + (dir / "abs").string()), 14 + (dir / "abs").string().size(),
               "write_lat_log=lat/../../../x");
  spit(dir / "base.json", base);
  plan = plan_in(dir);
  plan.log_dir = (dir / "logs").string();
  CHECK(run_point(plan, 0, 1, catalog()).error.find("log prefix lat/../../../x: each run writes") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace afasim::sweep
