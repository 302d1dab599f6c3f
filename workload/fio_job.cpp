#include "workload/fio_job.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "config/file_text.h"
#include "config/size.h"
#include "workload/fio_job_internal.h"

namespace afasim::workload {
namespace {

using namespace fio_detail;

// A UTF-8 byte-order mark, as Windows editors write it before the first line: skipped.

// ---------------------------------------------------------------------------------------
// The file pass: sections, inheritance, volumes, groups.

struct Section {
  std::string name;
  int line = 0;
  bool global = false;
  std::vector<Entry> entries;
  std::size_t globals_before = 0;  // how many global entries precede this job section
};

// Where the line reader is: the file, its text, the include depth.
// What the includes of one job file have read so far: each level may include many files, so
// depth alone did not bound them (hostile round 23: 10 includes a level, 8 levels deep, read
// 10^7 files and passed 2 GB). Bounded by kMaxIncludeFiles and kMaxIncludeBytes.
struct IncludeBudget {
  int files = 0;
  std::size_t bytes = 0;
};

struct LineSource {
  std::string_view text;
  std::string file;          // for messages
  std::string include_name;  // WrittenOption::file: empty for the job file itself
  int depth = 0;
  IncludeBudget* budget = nullptr;
};

Status read_lines(const LineSource& src, const FioParseOptions& options,
                  std::vector<Section>& sections);

// fio options.c fio_option_dup_subs: "${NAME}" becomes the variable's value.
Result<std::string> substitute_env(std::string_view line, const FioParseOptions& options) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = line.find("${", pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = line.find('}', open + 2);
    if (close == std::string_view::npos || close == open + 2) break;
    const std::string name(line.substr(open + 2, close - open - 2));
    // Without env (a scenario's jobs): reproducible from the files alone (docs/scenarios.md).
    if (!options.env)
      return sim::invalid_argument("${" + name + "}: environment variables are not read here (a scenario's jobs "
                                   "are reproducible from its files alone); write the value");
    std::optional<std::string> value = options.env(name);
    if (!value) {
      return sim::invalid_argument("${" + name + "}: environment variable " + quoted(name) +
                                   " is not set (fio would substitute an empty string)");
    }
    out.append(line.substr(pos, open - pos));
    out += *value;
    pos = close + 1;
  }
  out.append(line.substr(pos));
  if (out.size() > kMaxLineBytes) {
    return sim::invalid_argument("line longer than " + std::to_string(kMaxLineBytes) +
                                 " bytes after ${...} substitution");
  }
  return out;
}

Status read_include(const LineSource& src, std::string_view path, int line_no,
                    const FioParseOptions& options, std::vector<Section>& sections) {
  const Location at{src.file, line_no, "include"};
  if (path.empty()) return located(at, "no file name");
  if (sections.empty()) return located(at, "include outside of a [section]");
  if (src.depth + 1 > kMaxIncludeDepth) {
    return located(at, "includes nest deeper than " + std::to_string(kMaxIncludeDepth));
  }
  if (!options.read_include)
    return located(at, "include files are not read here (a scenario's jobs are in its own file); copy the options in");
  auto text = options.read_include(std::string(path), src.file);
  if (!text.is_ok()) return located(at, text.status());
  if (++src.budget->files > kMaxIncludeFiles)
    return located(at, "more than " + std::to_string(kMaxIncludeFiles) + " included files in one job file");
  if ((src.budget->bytes += text->size()) > kMaxIncludeBytes)
    return located(at, "the included files hold more than " + std::to_string(kMaxIncludeBytes) + " bytes in all");
  // The included file by its path from here, as host_parse_options reads it: an include in
  // it is then found beside it, and messages and fio_referenced_files name a file that exists
  // (review, round 23: d/job.fio's include of sub/b.inc was looked up in ./, and
  // `--output d/common.inc` replaced the include it was not compared with).
  const std::string resolved = include_path(path, src.file);
  const LineSource inner{*text, resolved, resolved, src.depth + 1, src.budget};
  return read_lines(inner, options, sections);
}

Status read_section_header(const LineSource& src, std::string_view line, int line_no,
                           std::vector<Section>& sections) {
  const Location here{src.file, line_no, {}};
  if (src.depth > 0) return located(here, "no new sections in included files (as fio)");
  if (line.back() != ']') return located(here, "section header without ']'");
  const std::string_view name = trim(line.substr(1, line.size() - 2));
  if (name.empty()) return located(here, "empty section name");
  for (unsigned char c : name) {
    if (c == '[' || c == ']') return located(here, "section name " + quoted(name) + " holds a bracket");
    if (c < 0x20 || c > 0x7e) return located(here, "section name " + quoted(name) + " is not printable ASCII");
  }
  Section s;
  s.name = std::string(name);
  s.line = line_no;
  s.global = name == "global";
  sections.push_back(std::move(s));
  return Status::ok();
}

Status read_option_line(const LineSource& src, std::string_view line, int line_no,
                        const FioParseOptions& options, std::vector<Section>& sections) {
  const std::size_t eq = line.find('=');
  const std::string_view key = trim(line.substr(0, eq));
  if (eq == std::string_view::npos && key.substr(0, std::min<std::size_t>(key.size(), 8)) == "include ") {
    return read_include(src, trim(key.substr(8)), line_no, options, sections);
  }
  if (sections.empty()) {
    return located(Location{src.file, line_no, key}, "option outside of a [section]");
  }
  Entry e;
  e.option.name = std::string(key);
  e.option.line = line_no;
  e.option.file = src.include_name;
  if (eq != std::string_view::npos) {
    const std::string_view raw = line.substr(eq + 1);
    e.leading_blank = !raw.empty() && is_blank(raw.front());
    e.option.value = std::string(trim(raw));
    e.option.has_value = true;
  }
  if (key.empty()) return located(Location{src.file, line_no, {}}, "'=' without an option name");
  e.def = find_option(key);
  if (e.def == nullptr) return located(Location{src.file, line_no, e.option.name}, "unknown option");
  sections.back().entries.push_back(std::move(e));
  return Status::ok();
}

Status read_lines(const LineSource& src, const FioParseOptions& options,
                  std::vector<Section>& sections) {
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < src.text.size()) {
    std::size_t end = src.text.find('\n', pos);
    if (end == std::string_view::npos) end = src.text.size();
    std::string_view raw = src.text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const Location here{src.file, line_no, {}};
    if (raw.size() > kMaxLineBytes) {
      return located(here, "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    if (raw.find('\0') != std::string_view::npos) return located(here, "NUL byte in the line");
    raw = trim(raw);
    if (raw.empty() || raw.front() == ';' || raw.front() == '#') continue;
    // parse.c strip_blank_end: a ';' or '#' anywhere starts a comment.
    raw = trim(raw.substr(0, raw.find_first_of(";#")));
    auto substituted = substitute_env(raw, options);
    if (!substituted.is_ok()) return located(here, substituted.status());
    const std::string_view line = trim(*substituted);
    if (line.empty()) continue;
    Status st = line.front() == '['
                    ? read_section_header(src, line, line_no, sections)
                    : read_option_line(src, line, line_no, options, sections);
    AFASIM_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}

Result<std::vector<Section>> read_sections(std::string_view text, std::string_view file,
                                           const FioParseOptions& options) {
  std::vector<Section> sections;
  IncludeBudget includes;
  AFASIM_RETURN_IF_ERROR(read_lines(LineSource{text, std::string(file), {}, 0, &includes}, options, sections));
  return sections;
}

// fio's --section: keeps [global] sections and the job sections named; each name must exist.
Status select_sections(std::vector<Section>& sections, const std::vector<std::string>& names,
                       std::string_view file) {
  if (names.empty()) return Status::ok();
  for (const std::string& name : names) {
    const bool found = std::any_of(sections.begin(), sections.end(), [&](const Section& s) {
      return !s.global && s.name == name;
    });
    if (!found) return sim::invalid_argument(std::string(file) + ": --section: no job section " + quoted(name));
  }
  std::erase_if(sections, [&](const Section& s) {
    return !s.global && std::find(names.begin(), names.end(), s.name) == names.end();
  });
  return Status::ok();
}

// Where an option was written: the job file, or the included file it came from.
Location where(const FioJobFile& out, const WrittenOption& o) {
  return Location{o.file.empty() ? std::string_view(out.file_name) : std::string_view(o.file),
                  o.line, o.name};
}

// Bytes of one file's region when `size=` is absolute: fio divides size among the files.
std::int64_t file_size_bytes(const JobState& s) {
  return s.size->bytes / s.job.file_count();
}

// The line a volume's messages name: its filename= when the job file holds it (not an
// include), else the job's section header.
int volume_line(std::string_view file, const JobState& s) {
  if (s.job.filenames.empty()) return s.job.line;
  const Location at = option_at(file, s, Opt::kFilename, "filename");
  return at.file == file ? at.line : s.job.line;
}

// Registers every volume in first-use order and sizes it from the jobs whose size, offset
// and offset_increment are all absolute: the largest offset + clone × increment + size.
// `bare_device`: every filename is the one device, so paths that fold together are not
// two files made one.
Status size_volumes(FioJobFile& out, const std::vector<JobState>& states,
                    std::map<std::string, std::size_t>& index, bool bare_device) {
  std::map<std::string, std::pair<std::string, const JobState*>> path_of;  // volume -> first path
  for (const auto& s : states) {
    const FioJob& job = s.job;
    for (std::size_t f = 0; f < (bare_device ? 0 : job.filename_paths.size()); ++f) {
      const auto [at, fresh] = path_of.try_emplace(job.filenames[f], job.filename_paths[f], &s);
      if (fresh || at->second.first == job.filename_paths[f]) continue;
      const Location first = option_at(out.file_name, *at->second.second, Opt::kFilename, "filename");
      return located(option_at(out.file_name, s, Opt::kFilename, "filename"),  // fio: two files (hostile round 23)
                     quoted(job.filename_paths[f]) + " and " + quoted(at->second.first) + " (" +
                         std::string(first.file) + ":" + std::to_string(first.line) + ") would share volume " +
                         quoted(job.filenames[f]) + "; give one another name");
    }
    const bool absolute = s.size && !s.size->is_percent && (!s.offset || !s.offset->is_percent) &&
                          (!s.offset_increment || !s.offset_increment->is_percent);
    for (int c = 0; c < job.numjobs; ++c) {
      for (int f = 0; f < job.file_count(); ++f) {
        const std::string name = job.volume_name(c, f);
        if (!index.contains(name)) {
          index[name] = out.volumes.size();
          out.volumes.push_back(FioVolume{name, 0, volume_line(out.file_name, s)});
        }
        if (!absolute) continue;
        const __int128 end =
            static_cast<__int128>(s.offset ? s.offset->bytes : 0) +
            static_cast<__int128>(s.offset_increment ? s.offset_increment->bytes : 0) * c +
            file_size_bytes(s);
        if (end > kMaxBytes) {
          return located(option_at(out.file_name, s, Opt::kSize, "size"),
                         "offset + size is larger than 1 EiB");
        }
        FioVolume& vol = out.volumes[index.at(name)];
        vol.size_bytes = std::max(vol.size_bytes, static_cast<std::int64_t>(end));
      }
    }
  }
  return Status::ok();
}

// The region of clone `c` on volume `vol`: percentages of the volume size (a percentage
// offset aligned up to the job's smallest block, as fio does), checked to fit.
Status resolve_clone_region(JobState& s, std::string_view file, const FioVolume& vol, int c) {
  FioJob& job = s.job;
  const std::int64_t unit = job.min_block_bytes();
  if (vol.size_bytes == 0) {
    const std::string sized_elsewhere = "afasim fio --volume-size, or the volume declared in a scenario's volumes";
    if (!s.size)
      return located(Location{file, job.line, "size"},
                     "missing: job " + quoted(job.name) + " on volume " + quoted(vol.name) +
                         " needs size= (afasim sizes each volume from its jobs' size=), or a size for such volumes: " +
                         sized_elsewhere);
    const bool pct_size = s.size->is_percent;
    return located(option_at(file, s, pct_size ? Opt::kSize : Opt::kOffset, pct_size ? "size" : "offset"),
                   "a percentage needs the size of volume " + quoted(vol.name) +
                       ": give one job on it an absolute size= (and offset=), or the volumes a size: " + sized_elsewhere);
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
  // On a bare device a filename names no volume (hostile round 21: "volume \"t.0.0\"").
  const std::string target = vol.bare_device ? "the device" : "volume " + quoted(vol.name);
  if (start >= vol.size_bytes) {
    return located(option_at(file, s, Opt::kOffset, "offset"),
                   "clone " + std::to_string(c) + " starts at or past the end of " + target +
                       " (" + std::to_string(vol.size_bytes) + " bytes)");
  }
  const __int128 room = static_cast<__int128>(vol.size_bytes) - start;
  std::int64_t size = !s.size ? vol.size_bytes
                      : s.size->is_percent ? resolve(*s.size, false)
                                           : file_size_bytes(s);
  // A percentage size past the end is cut to what follows the offset, as fio 3.33 cuts it
  // (offset=10% size=100% runs, exit 0; review, round 25); an absolute one is refused.
  if (s.size && !s.size->is_percent && size > room) {
    return located(option_at(file, s, Opt::kSize, "size"),
                   "clone " + std::to_string(c) + ": offset + size runs past the end of " +
                       target + " (" + std::to_string(vol.size_bytes) + " bytes)");
  }
  size = static_cast<std::int64_t>(std::min<__int128>(size, room));  // a percentage is cut
  // Whole blocks: fio ends a file at its last whole block (filesetup.c takes io_size down to
  // a multiple of min_bs; fio review 33: size=9000 bs=4k ran 3 reads, fio 2).
  if (size >= unit) size -= size % unit;
  const bool first = job.size_bytes == 0;
  job.size_bytes = first ? size : std::min(job.size_bytes, size);
  if (first) {
    job.offset_bytes = offset;
    job.offset_increment_bytes = increment;
  }
  return Status::ok();
}

// Every block size and zoned_abs zone of a resolved job inside its region.
Status check_region_fits(const JobState& s, std::string_view file) {
  const FioJob& job = s.job;
  if (job.size_bytes == 0) {
    return located(option_at(file, s, Opt::kSize, "size"), "the region is empty");
  }
  for (int d = 0; d < kDirections; ++d) {
    const auto dir = static_cast<Direction>(d);
    if (does_direction(job.rw, dir) && job.bs[d].max_bytes > kMaxIoBytes) {
      const BlockSizeSpec& b = job.bs[d];  // the option that set it: bssplit, bsrange or bs
      const auto [id, name] = !b.split.empty()               ? std::pair{Opt::kBssplit, "bssplit"}
                              : b.min_bytes < b.max_bytes ? std::pair{Opt::kBsRange, "bsrange"}
                                                          : std::pair{Opt::kBs, "bs"};
      return located(option_at(file, s, id, name),
                     "the largest " + std::string(to_string(dir)) + " block size (" +
                         config::byte_count(job.bs[d].max_bytes) + ") is above afasim's largest I/O, 1 GiB (" +
                         std::to_string(kMaxIoBytes) + " bytes)");
    }
    if (does_direction(job.rw, dir) && job.bs[d].max_bytes > job.size_bytes) {  // filesize= sets it, if given
      return located(s.file_size ? option_at(file, s, Opt::kFileSize, "filesize") : option_at(file, s, Opt::kSize, "size"),
                     "the region (" + config::byte_count(job.size_bytes) +
                         ") is smaller than the largest " + std::string(to_string(dir)) +
                         " block size (" + config::byte_count(job.bs[d].max_bytes) + ")");
    }
    // A step back wraps to the region's end plus the step: it must land inside the region.
    if (does_direction(job.rw, dir) && job.rw_skip_bytes < 0 &&
        -job.rw_skip_bytes + job.bs[d].max_bytes > job.size_bytes) {
      return located(option_at(file, s, Opt::kRw, "rw"),
                     "a step back of " + config::byte_count(-job.rw_skip_bytes) + " and a block of " +
                         config::byte_count(job.bs[d].max_bytes) + " do not fit the region (" +
                         config::byte_count(job.size_bytes) + ")");
    }
    // Offsets are drawn as multiples of blockalign: one past the region makes every one 0
    // (hostile round 25: a "random" job on one block).
    if (does_direction(job.rw, dir) && job.block_align_bytes[d] > job.size_bytes) {
      return located(option_at(file, s, Opt::kBlockAlign, "blockalign"),
                     config::byte_count(job.block_align_bytes[d]) + " is larger than the region (" +
                         config::byte_count(job.size_bytes) + "): every " + std::string(to_string(dir)) +
                         " would be at its start");
    }
    if (job.distribution != RandomDistribution::kZonedAbs || !does_direction(job.rw, dir)) continue;
    std::int64_t zones_bytes = 0;
    for (const AccessZone& z : job.zones[d]) zones_bytes += z.size_bytes;
    if (zones_bytes > job.size_bytes) {
      return located(option_at(file, s, Opt::kRandomDistribution, "random_distribution"),
                     "the zones (" + config::byte_count(zones_bytes) + ") do not fit the " +
                         std::to_string(job.size_bytes) + "-byte region");
    }
  }
  return Status::ok();
}

// Resolves one job's region on each of its volumes (clone by clone, file by file).
Status resolve_region(JobState& s, const FioJobFile& out,
                      const std::map<std::string, std::size_t>& index) {
  FioJob& job = s.job;
  job.size_bytes = 0;
  std::int64_t room = kMaxBytes;  // the least a clone's volume holds from its region's start
  for (int c = 0; c < job.numjobs; ++c) {
    for (int f = 0; f < job.file_count(); ++f) {
      const FioVolume& vol = out.volumes[index.at(job.volume_name(c, f))];
      AFASIM_RETURN_IF_ERROR(resolve_clone_region(s, out.file_name, vol, c));
      room = std::min(room, vol.size_bytes - job.region_offset_bytes(c));
    }
  }
  AFASIM_RETURN_IF_ERROR(check_region_fits(s, out.file_name));
  job.io_size_bytes = io_bytes_per_loop(job, s.io_size, room);
  return Status::ok();
}

// Volumes first (from absolute regions, those left unsized `volume_bytes`, or every one
// `device_bytes` when not 0), then every job's region against its volume.
Status resolve_volumes(FioJobFile& out, std::vector<JobState>& states, const FioParseOptions& options) {
  const std::int64_t device_bytes = options.device_bytes, volume_bytes = options.volume_bytes;
  std::map<std::string, std::size_t> index;
  AFASIM_RETURN_IF_ERROR(size_volumes(out, states, index, device_bytes > 0));
  const auto unsized = std::count_if(out.volumes.begin(), out.volumes.end(), [](const FioVolume& v) { return v.size_bytes == 0; });
  if (volume_bytes > 0 && unsized == 0 && device_bytes == 0)  // review 33b: taken without a word
    out.warnings.push_back("--volume-size: every volume is sized by its jobs' size=; it changes nothing");
  for (FioVolume& vol : out.volumes)
    if (const auto declared = options.declared_volume_bytes.find(vol.name); vol.size_bytes == 0)
      vol.size_bytes = declared != options.declared_volume_bytes.end() ? declared->second : volume_bytes;
  if (device_bytes > 0)
    for (FioVolume& vol : out.volumes) {
      vol.size_bytes = device_bytes;
      vol.bare_device = true;
    }
  for (auto& s : states) AFASIM_RETURN_IF_ERROR(resolve_region(s, out, index));
  return check_random_maps(states, out.file_name);
}

// fio init.c add_job: a job with stonewall or new_group starts a new group unless it is the
// first job of the file. wait_for must name an earlier job whose name is unique.
// `left_out`: job sections of the file --section did not select (a wait_for may name one).
Status resolve_groups(FioJobFile& out, const std::vector<JobState>& states, const std::set<std::string>& left_out) {
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
    if (found == 0 && left_out.count(job.wait_for))
      return located(loc, "job " + quoted(job.wait_for) + " is not run: --section did not select it");
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
      return located(where(out, e->option), st);
    }
  }
  for (const Entry& e : section.entries) {
    Status st = apply(scratch, e, ctx);
    if (!st.is_ok()) return located(where(out, e.option), st);
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
  s.job.section = section.name;
  s.job.line = section.line;
  s.job.job_index = job_index;
  std::vector<const Entry*> all(globals);
  for (const Entry& e : section.entries) all.push_back(&e);
  for (const Entry* e : all) {
    if (e->def->id != Opt::kKbBase) continue;
    if (Status st = apply(s, *e, ApplyContext{}); !st.is_ok()) {
      return located(where(out, e->option), st);
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Entry& e = *all[i];
    const bool own = i >= globals.size();
    // fio's get_new_job names each job after its section, over a [global] name= (fio review
    // 33: every job took the global name, and jobs without filename= shared one volume).
    if (!own && e.def->id == Opt::kName) continue;
    Status st = apply(s, e, own ? ctx : ApplyContext{});
    if (!st.is_ok()) return located(where(out, e.option), st);
    if (!own) continue;
    s.job.options.push_back(e.option);
    if (const auto why = ignored_reason(e)) out.ignored.push_back({section.name, e.option, *why});
  }
  AFASIM_RETURN_IF_ERROR(finalize(s, out.file_name, out.warnings));
  cap_sync_engine_depth(s, out.file_name, out.notes);
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

// --- public functions ------------------------------------------------------------------
const std::vector<double>& default_percentile_list() {
  static const std::vector<double> kList = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                            80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return kList;
}

Result<FioJobFile> parse_fio_job_file(std::string_view text, std::string_view file_name,
                                      const FioParseOptions& options) {
  if (text.size() > kMaxFileBytes) {
    return sim::invalid_argument(std::string(file_name) + ": larger than 1 MiB");
  }
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  auto sections = read_sections(text, file_name, options);
  if (!sections.is_ok()) return sections.status();
  std::set<std::string> left_out;
  for (const Section& sec : *sections) left_out.insert(sec.name);
  AFASIM_RETURN_IF_ERROR(select_sections(*sections, options.sections, file_name));
  for (const Section& sec : *sections) left_out.erase(sec.name);

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
      // Named by what made it: a section's numjobs=, or the sections themselves (hostile round 28:
      // 4,097 one-job sections were a "numjobs" error in a file with no numjobs=).
      const bool by_numjobs = state->job.numjobs > 1;
      return located(Location{file_name, section.line, by_numjobs ? "numjobs" : "[" + section.name + "]"},
                     "more than " + std::to_string(kMaxClones) + " jobs in the file" +
                         (by_numjobs ? "" : " (a job per section, and numjobs= clones of each)"));
    }
    states.push_back(std::move(state).value());
  }
  if (states.empty()) {
    const bool global = std::any_of(sections->begin(), sections->end(), [](const Section& sec) { return sec.global; });
    return sim::invalid_argument(std::string(file_name) + ": no job sections" + (global ? " (only [global])" : ""));
  }
  warn_ineffective_distributions(states, out);
  AFASIM_RETURN_IF_ERROR(resolve_volumes(out, states, options));
  for (auto& s : states) out.jobs.push_back(s.job);
  AFASIM_RETURN_IF_ERROR(resolve_groups(out, states, left_out));
  AFASIM_RETURN_IF_ERROR(check_steadystate_groups(out.jobs, out.file_name));
  return out;
}

Result<FioJobFile> load_fio_job_file(const std::string& path, const FioParseOptions& options) {
  auto text = read_job_text(path);
  if (!text.is_ok()) return text.status();
  return parse_fio_job_file(*text, path, options);
}

FioParseOptions host_parse_options() {
  FioParseOptions options;
  options.env = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  options.read_include = [](const std::string& path, const std::string& from) {
    return read_job_text(include_path(path, from));
  };
  return options;
}

}  // namespace afasim::workload
