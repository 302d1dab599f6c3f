#include "workload/fio_job.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "workload/fio_job_internal.h"

namespace afasim::workload {
namespace {

using namespace fio_detail;

// ---------------------------------------------------------------------------------------
// The file pass: sections, inheritance, volumes, groups.

struct Section {
  std::string name;
  int line = 0;
  bool global = false;
  std::vector<Entry> entries;
  std::size_t globals_before = 0;  // how many global entries precede this job section
};

Result<std::vector<Section>> read_sections(std::string_view text, std::string_view file) {
  std::vector<Section> sections;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const Location here{file, line_no, {}};
    if (line.size() > kMaxLineBytes) {
      return located(here, "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    if (line.find('\0') != std::string_view::npos) return located(here, "NUL byte in the line");
    line = trim(line);
    if (line.empty() || line.front() == ';' || line.front() == '#') continue;
    // parse.c strip_blank_end: a ';' or '#' anywhere starts a comment.
    line = trim(line.substr(0, line.find_first_of(";#")));
    if (line.front() == '[') {
      if (line.back() != ']') return located(here, "section header without ']'");
      const std::string_view name = trim(line.substr(1, line.size() - 2));
      if (name.empty()) return located(here, "empty section name");
      for (unsigned char c : name) {
        if (c < 0x20 || c > 0x7e || c == '[' || c == ']') {
          return located(here, "section name " + quoted(name) + " is not printable ASCII");
        }
      }
      Section s;
      s.name = std::string(name);
      s.line = line_no;
      s.global = name == "global";
      sections.push_back(std::move(s));
      continue;
    }
    const std::size_t eq = line.find('=');
    const std::string_view key = trim(line.substr(0, eq));
    if (key.substr(0, std::min<std::size_t>(key.size(), 8)) == "include " || key == "include") {
      return located(Location{file, line_no, "include"}, "include files are not supported");
    }
    if (sections.empty()) {
      return located(Location{file, line_no, key}, "option outside of a [section]");
    }
    Entry e;
    e.option.name = std::string(key);
    e.option.line = line_no;
    if (eq != std::string_view::npos) {
      const std::string_view raw = line.substr(eq + 1);
      e.leading_blank = !raw.empty() && is_blank(raw.front());
      e.option.value = std::string(trim(raw));
      e.option.has_value = true;
    }
    const Location opt_at{file, line_no, e.option.name};
    if (key.empty()) return located(here, "'=' without an option name");
    e.def = find_option(key);
    if (e.def == nullptr) return located(opt_at, "unknown option");
    sections.back().entries.push_back(std::move(e));
  }
  return sections;
}

// Registers every volume in first-use order and sizes it from the jobs whose size, offset
// and offset_increment are all absolute: the largest offset + clone × increment + size.
Status size_volumes(FioJobFile& out, const std::vector<JobState>& states,
                    std::map<std::string, std::size_t>& index) {
  for (const auto& s : states) {
    const FioJob& job = s.job;
    const bool absolute = s.size && !s.size->is_percent && (!s.offset || !s.offset->is_percent) &&
                          (!s.offset_increment || !s.offset_increment->is_percent);
    for (int c = 0; c < job.numjobs; ++c) {
      const std::string name = job.volume_name(c);
      if (!index.contains(name)) {
        index[name] = out.volumes.size();
        out.volumes.push_back(FioVolume{name, 0, job.line});
      }
      if (!absolute) continue;
      const __int128 end =
          static_cast<__int128>(s.offset ? s.offset->bytes : 0) +
          static_cast<__int128>(s.offset_increment ? s.offset_increment->bytes : 0) * c +
          s.size->bytes;
      if (end > kMaxBytes) {
        return located(option_at(out.file_name, s, Opt::kSize, "size"),
                       "offset + size is larger than 1 EiB");
      }
      FioVolume& vol = out.volumes[index.at(name)];
      vol.size_bytes = std::max(vol.size_bytes, static_cast<std::int64_t>(end));
    }
  }
  return Status::ok();
}

// Resolves one job's region on its volumes: percentages of the volume size (a percentage
// offset aligned up to the job's smallest block, as fio does), the clones' regions inside
// their volume, and every block size inside the region.
Status resolve_region(JobState& s, const FioJobFile& out,
                      const std::map<std::string, std::size_t>& index) {
  FioJob& job = s.job;
  const std::string_view file = out.file_name;
  const std::int64_t unit = job.min_block_bytes();
  for (int c = 0; c < job.numjobs; ++c) {
    const FioVolume& vol = out.volumes[index.at(job.volume_name(c))];
    if (vol.size_bytes == 0) {
      if (!s.size) {
        return located(Location{file, job.line, "size"},
                       "missing: job " + quoted(job.name) + " on volume " + quoted(vol.name) +
                           " needs size= (afasim sizes each volume from its jobs' size=)");
      }
      const bool pct_size = s.size->is_percent;
      return located(
          option_at(file, s, pct_size ? Opt::kSize : Opt::kOffset, pct_size ? "size" : "offset"),
          "a percentage needs the size of volume " + quoted(vol.name) +
              ": give one job on it an absolute size= and offset=");
    }
    auto resolve = [&](const SizeOrPercent& v, bool align) {
      if (!v.is_percent) return v.bytes;
      auto bytes =
          static_cast<std::int64_t>(static_cast<long double>(vol.size_bytes) * v.percent / 100.0L);
      if (align) bytes = (bytes + unit - 1) / unit * unit;  // HOWTO "offset"
      return bytes;
    };
    const std::int64_t offset = s.offset ? resolve(*s.offset, true) : 0;
    const std::int64_t increment = s.offset_increment ? resolve(*s.offset_increment, true) : 0;
    const __int128 start = static_cast<__int128>(offset) + static_cast<__int128>(increment) * c;
    if (start >= vol.size_bytes) {
      return located(option_at(file, s, Opt::kOffset, "offset"),
                     "clone " + std::to_string(c) + " starts at or past the end of volume " +
                         quoted(vol.name));
    }
    const __int128 room = static_cast<__int128>(vol.size_bytes) - start;
    std::int64_t size = s.size ? resolve(*s.size, false) : vol.size_bytes;
    if (s.size && !s.size->is_percent && size > room) {
      return located(option_at(file, s, Opt::kSize, "size"),
                     "clone " + std::to_string(c) + ": offset + size runs past the end of volume " +
                         quoted(vol.name) + " (" + std::to_string(vol.size_bytes) + " bytes)");
    }
    size = static_cast<std::int64_t>(std::min<__int128>(size, room));  // a percentage is cut
    job.size_bytes = c == 0 ? size : std::min(job.size_bytes, size);
    if (c == 0) {
      job.offset_bytes = offset;
      job.offset_increment_bytes = increment;
    }
  }
  for (int d = 0; d < kDirections; ++d) {
    const bool used = d == index_of(Direction::kRead) ? does_reads(job.rw) : does_writes(job.rw);
    if (used && job.bs[d].max_bytes > job.size_bytes) {
      return located(option_at(file, s, Opt::kSize, "size"),
                     "the region (" + std::to_string(job.size_bytes) +
                         " bytes) is smaller than the largest " +
                         std::string(to_string(static_cast<Direction>(d))) + " block size (" +
                         std::to_string(job.bs[d].max_bytes) + " bytes)");
    }
  }
  job.io_size_bytes = s.io_size ? *s.io_size : job.size_bytes;
  return Status::ok();
}

// Volumes first (from absolute regions), then every job's region against its volume.
Status resolve_volumes(FioJobFile& out, std::vector<JobState>& states) {
  std::map<std::string, std::size_t> index;
  AFASIM_RETURN_IF_ERROR(size_volumes(out, states, index));
  for (auto& s : states) AFASIM_RETURN_IF_ERROR(resolve_region(s, out, index));
  return Status::ok();
}

// fio init.c add_job: a job with stonewall or new_group starts a new group unless it is the
// first job of the file. wait_for must name an earlier job whose name is unique.
Status resolve_groups(FioJobFile& out, const std::vector<JobState>& states) {
  int group = 0;
  int jobs_in_group = 0;
  for (std::size_t i = 0; i < out.jobs.size(); ++i) {
    FioJob& job = out.jobs[i];
    if ((job.stonewall || job.new_group) && jobs_in_group > 0) {
      ++group;
      jobs_in_group = 0;
    }
    job.group_id = group;
    jobs_in_group += job.numjobs;
    if (job.wait_for.empty()) continue;
    int found = 0;
    bool earlier = false;
    for (std::size_t k = 0; k < out.jobs.size(); ++k) {
      if (out.jobs[k].name != job.wait_for) continue;
      ++found;
      earlier |= k < i;
    }
    const auto it = states[i].line_of.find(Opt::kWaitFor);
    const Location loc{out.file_name, it == states[i].line_of.end() ? job.line : it->second,
                       "wait_for"};
    if (found == 0) return located(loc, "no job named " + quoted(job.wait_for));
    if (found > 1) return located(loc, "several jobs are named " + quoted(job.wait_for));
    if (!earlier) return located(loc, "job " + quoted(job.wait_for) + " comes later in the file");
  }
  return Status::ok();
}

// Checks a [global] section's options at their own lines (even if no job follows), records
// them, and warns about them once (jobs apply inherited options silently).
Status read_global_section(const Section& section, std::vector<const Entry*>& globals,
                           FioJobFile& out) {
  const ApplyContext ctx{&out.warnings, out.file_name};
  JobState scratch;
  std::vector<const Entry*> so_far(globals);
  for (const Entry& e : section.entries) so_far.push_back(&e);
  for (const Entry* e : so_far) {
    if (e->def->id != Opt::kKbBase) continue;
    if (Status st = apply(scratch, *e, ApplyContext{}); !st.is_ok()) {
      return located(Location{out.file_name, e->option.line, e->option.name}, st);
    }
  }
  for (const Entry& e : section.entries) {
    Status st = apply(scratch, e, ctx);
    if (!st.is_ok()) return located(Location{out.file_name, e.option.line, e.option.name}, st);
    if (const auto why = ignored_reason(e)) out.ignored.push_back({"global", e.option, *why});
    out.global_options.push_back(e.option);
    globals.push_back(&e);
  }
  return Status::ok();
}

// One job section: fio's defaults, then the [global] entries above it, then its own, in
// file order (kb_base first, as fio gives it priority); then the cross-option checks.
Result<JobState> resolve_job(const Section& section, const std::vector<const Entry*>& globals,
                             int job_index, FioJobFile& out) {
  const ApplyContext ctx{&out.warnings, out.file_name};
  JobState s;
  s.job.name = section.name;
  s.job.line = section.line;
  s.job.job_index = job_index;
  std::vector<const Entry*> all(globals);
  for (const Entry& e : section.entries) all.push_back(&e);
  for (const Entry* e : all) {
    if (e->def->id != Opt::kKbBase) continue;
    if (Status st = apply(s, *e, ApplyContext{}); !st.is_ok()) {
      return located(Location{out.file_name, e->option.line, e->option.name}, st);
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Entry& e = *all[i];
    const bool own = i >= globals.size();
    Status st = apply(s, e, own ? ctx : ApplyContext{});
    if (!st.is_ok()) return located(Location{out.file_name, e.option.line, e.option.name}, st);
    if (!own) continue;
    s.job.options.push_back(e.option);
    if (const auto why = ignored_reason(e)) out.ignored.push_back({section.name, e.option, *why});
  }
  AFASIM_RETURN_IF_ERROR(finalize(s, out.file_name));
  return s;
}

// fio ignores random_distribution on sequential jobs; say so, since it is likely a slip.
void warn_ineffective_distributions(const std::vector<JobState>& states, FioJobFile& out) {
  for (const auto& s : states) {
    if (s.job.distribution == RandomDistribution::kUniform || is_random(s.job.rw)) continue;
    const auto it = s.line_of.find(Opt::kRandomDistribution);
    const int line = it == s.line_of.end() ? s.job.line : it->second;
    out.warnings.push_back(out.file_name + ":" + std::to_string(line) +
                           ": random_distribution: no effect on sequential rw=" +
                           std::string(to_string(s.job.rw)) + " (job " + quoted(s.job.name) + ")");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public functions.

std::string_view to_string(Direction d) {
  return d == Direction::kRead ? "read" : "write";
}

std::string_view to_string(RwPattern p) {
  switch (p) {
    case RwPattern::kRead:
      return "read";
    case RwPattern::kWrite:
      return "write";
    case RwPattern::kRandRead:
      return "randread";
    case RwPattern::kRandWrite:
      return "randwrite";
    case RwPattern::kReadWrite:
      return "rw";
    case RwPattern::kRandReadWrite:
      return "randrw";
  }
  return "?";
}

bool is_random(RwPattern p) {
  return p == RwPattern::kRandRead || p == RwPattern::kRandWrite || p == RwPattern::kRandReadWrite;
}
bool does_reads(RwPattern p) {
  return p == RwPattern::kRead || p == RwPattern::kRandRead || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite;
}
bool does_writes(RwPattern p) {
  return p == RwPattern::kWrite || p == RwPattern::kRandWrite || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite;
}

std::string_view to_string(RandomDistribution d) {
  switch (d) {
    case RandomDistribution::kUniform:
      return "random";
    case RandomDistribution::kZipf:
      return "zipf";
    case RandomDistribution::kPareto:
      return "pareto";
  }
  return "?";
}

std::string FioJob::volume_name(int clone) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  if (!filename.empty()) return filename;
  return name + "." + std::to_string(clone) + ".0";  // fio's "$jobname.$jobnum.$filenum"
}

std::int64_t FioJob::region_offset_bytes(int clone) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  return offset_bytes + offset_increment_bytes * clone;
}

std::int64_t FioJob::min_block_bytes() const {
  std::int64_t unit = 0;
  for (int d = 0; d < kDirections; ++d) {
    const bool used = d == 0 ? does_reads(rw) : does_writes(rw);
    if (used) unit = unit == 0 ? bs[d].min_bytes : std::min(unit, bs[d].min_bytes);
  }
  return unit;
}

std::int64_t FioJob::total_io_bytes() const {
  const __int128 total = static_cast<__int128>(io_size_bytes) * loops;
  return total > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(total);
}

int FioJobFile::group_count() const {
  int n = 0;
  for (const auto& j : jobs) n = std::max(n, j.group_id + 1);
  return n;
}

int FioJobFile::clone_count() const {
  int n = 0;
  for (const auto& j : jobs) n += j.numjobs;
  return n;
}

const std::vector<double>& default_percentile_list() {
  static const std::vector<double> kList = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                            80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return kList;
}




Result<FioJobFile> parse_fio_job_file(std::string_view text, std::string_view file_name) {
  if (text.size() > kMaxFileBytes) {
    return sim::invalid_argument(std::string(file_name) + ": larger than 1 MiB");
  }
  auto sections = read_sections(text, file_name);
  if (!sections.is_ok()) return sections.status();

  FioJobFile out;
  out.file_name = std::string(file_name);
  std::vector<const Entry*> globals;  // every [global] entry so far, file order
  std::vector<JobState> states;
  int total_clones = 0;
  for (const Section& section : *sections) {
    if (section.global) {
      AFASIM_RETURN_IF_ERROR(read_global_section(section, globals, out));
      continue;
    }
    auto state = resolve_job(section, globals, static_cast<int>(states.size()), out);
    if (!state.is_ok()) return state.status();
    total_clones += state->job.numjobs;
    if (total_clones > kMaxClones) {
      return located(Location{file_name, section.line, "numjobs"},
                     "more than " + std::to_string(kMaxClones) + " jobs in the file");
    }
    states.push_back(std::move(state).value());
  }
  if (states.empty()) {
    return sim::invalid_argument(std::string(file_name) + ": no job sections (only [global])");
  }
  warn_ineffective_distributions(states, out);
  AFASIM_RETURN_IF_ERROR(resolve_volumes(out, states));
  for (auto& s : states) out.jobs.push_back(s.job);
  AFASIM_RETURN_IF_ERROR(resolve_groups(out, states));
  return out;
}

Result<FioJobFile> load_fio_job_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sim::not_found(path + ": cannot open the job file");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) return sim::invalid_argument(path + ": larger than 1 MiB");
  }
  return parse_fio_job_file(text, path);
}

}  // namespace afasim::workload