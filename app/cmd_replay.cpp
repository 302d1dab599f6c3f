// `afasim replay FILE`: re-runs a session recorded by `afasim serve --record FILE` in batch,
// on a new array in a scratch state directory, and checks that the model produces the same
// outcomes (completions, replies, events, final state) at the same virtual times, byte for
// byte (docs/record-replay.md).
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <memory>
#include <string>

#include "api/rest_record.h"
#include "config/json_text.h"
#include "app/commands.h"
#include "app/session.h"
#include "nbd/nbd_replay.h"
#include "redfish/record.h"
#include "serve/model_thread.h"
#include "serve/session_record.h"

#ifndef AFASIM_VERSION
#define AFASIM_VERSION "unknown"
#endif

namespace afasim::app {
namespace {

namespace fs = std::filesystem;
using serve::Record;
using serve::RecordType;
using Handler = std::function<void(std::string_view)>;

struct ReplayOptions {
  std::string file;
  std::string record;      // --record OUT: the replay's own record, to compare with cmp
  std::string scratch;     // --state DIR: where the replayed array lives ("" = a temporary one)
  std::string config_dir;
  bool keep_state = false;
};

std::string seconds(sim::Time t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9f s", sim::to_seconds(t));
  return buf;
}

// One line about a record, for a divergence report.
std::string describe(const Record& r) {
  std::string what = std::string(r.type == RecordType::kRequest ? "request " : "outcome ") + r.kind;
  try {
    serve::ByteReader in(r.payload);
    if (r.kind == "rest") {
      const std::string method = in.str(), path = in.str(), id = in.str();
      what += " " + method + " " + path + (id.empty() ? "" : " (" + id + ")");
    } else if (r.kind == "redfish") {
      const std::string method = in.str();
      what += " " + method + " " + in.str();
    } else if (r.kind == "user.event") {
      in.str();
      in.str();
      what += " \"" + in.str() + "\"";
    } else if (r.kind == "event") {
      in.i64();
      in.i64();
      in.str();
      in.str();
      in.str();
      what += " \"" + in.str() + "\"";
    }
  } catch (const serve::ByteReader::Truncated&) {
  }
  return what + " at " + seconds(r.time_ns) + " after " + std::to_string(r.events_executed) + " events (" +
         std::to_string(r.payload.size()) + " payload bytes)";
}

// Where two records that describe alike differ: the first differing payload byte and the
// 8 bytes from there in each, in hex (hostile round 17: a connection id or an event's own
// time inside the payload left two identical lines and nothing to see).
std::string payload_difference(const Record& recorded, const Record& replayed) {
  const std::string& a = recorded.payload;
  const std::string& b = replayed.payload;
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const auto hex = [at](const std::string& p) {
    std::string out;
    char buf[4];
    for (std::size_t i = at; i < p.size() && i < at + 8; ++i) {
      std::snprintf(buf, sizeof buf, "%02x ", static_cast<unsigned char>(p[i]));
      out += buf;
    }
    return out.empty() ? std::string("(the end)") : out.substr(0, out.size() - 1);
  };
  return "the payloads first differ at byte " + std::to_string(at) + ": recorded " + hex(a) + ", replayed " + hex(b);
}

// Where two final states differ, by JSON path (a JSON patch from the recorded to the replayed
// state), at most kShown places: the whole state of a 40-SSD array is about 900 lines, more
// with volumes (hostile round 22: both whole states were printed). Arrays compare element by
// element, so a volume more or less shows as the elements after it.
std::string final_state_difference(const std::string& recorded, const std::string& replayed) {
  constexpr std::size_t kShown = 20;
  constexpr std::size_t kValueChars = 160;
  nlohmann::json a, b;
  try {
    a = nlohmann::json::parse(recorded);
    b = nlohmann::json::parse(replayed);
  } catch (const nlohmann::json::exception&) {
    return "  (a final state is not JSON)";
  }
  auto value_at = [&](const nlohmann::json& state, const nlohmann::json::json_pointer& at) {
    if (!state.contains(at)) return std::string("(none)");
    std::string text = config::dump_json(state[at]);
    return text.size() <= kValueChars ? text : text.substr(0, kValueChars) + "...";
  };
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  std::string out = "  the final states differ in " + std::to_string(patch.size()) + " place(s):";
  for (std::size_t i = 0; i < patch.size() && i < kShown; ++i) {
    const std::string path = patch[i]["path"].get<std::string>();
    const nlohmann::json::json_pointer at(path);
    out += "\n  " + path + ": recorded " + value_at(a, at) + ", replayed " + value_at(b, at);
  }
  if (patch.size() > kShown) out += "\n  ... and " + std::to_string(patch.size() - kShown) + " more";
  return out;
}

// Drives the model through the recorded requests and compares what it produces.
class Replayer {
 public:
  Replayer(const std::vector<Record>& records, sim::Simulator& sim, std::map<std::string, Handler> handlers)
      : records_(records), sim_(sim), handlers_(std::move(handlers)) {}

  // The recorder's sink: every record the replay produces, in order.
  void produced(const Record& r) {
    if (!diverged_.empty()) return;
    if (next_ >= records_.size()) {
      diverged_ = "the replay produced more than was recorded: " + describe(r);
    } else if (!(r == records_[next_])) {
      diverged_ = "record #" + std::to_string(next_ + 1) + " differs:\n  recorded: " + describe(records_[next_]) +
                  "\n  replayed: " + describe(r);
      if (describe(r) == describe(records_[next_])) diverged_ += "\n  " + payload_difference(records_[next_], r);
      if (r.kind == "final" && records_[next_].kind == "final")
        diverged_ += "\n" + final_state_difference(records_[next_].payload, r.payload);
    }
    ++next_;
  }

  // "" when every record was reproduced; else what differed first.
  std::string run() {
    for (std::size_t i = 0; i < records_.size() && diverged_.empty(); ++i) {
      if (i < next_) continue;  // an outcome the model already produced and matched
      const Record& r = records_[i];
      if (r.type == RecordType::kOutcome) {
        // The model produces it while running the events up to its time, never later.
        while (next_ <= i && diverged_.empty())
          if (sim_.next_event_time() > r.time_ns || !sim_.step())
            diverged_ = "the replay ran past the time of " + describe(r) + " without producing it";
        continue;
      }
      if (!advance_to(r)) break;
      run_request(r);
    }
    if (diverged_.empty() && next_ < records_.size())
      diverged_ = "the replay stopped before " + describe(records_[next_]);
    return diverged_;
  }

  std::size_t matched() const { return next_; }
  // True when the replay stopped at a record this afasim cannot read (its kind or payload).
  bool bad_record() const { return bad_record_; }

 private:
  // Runs the events the session ran before `r` and moves the clock to its time.
  bool advance_to(const Record& r) {
    // Events run in time order: one due after the request's time means the session ran
    // fewer events before it than the replay (and a damaged count cannot make it run on).
    while (sim_.events_executed() < r.events_executed && diverged_.empty())
      if (sim_.next_event_time() > r.time_ns || !sim_.step())
        diverged_ = "the replay ran past the time of " + describe(r) + " after " +
                    std::to_string(sim_.events_executed()) + " events";
    if (!diverged_.empty()) return false;
    const bool events_match = sim_.events_executed() == r.events_executed;
    if (!events_match || sim_.now() > r.time_ns || (sim_.now() < r.time_ns && sim_.next_event_time() <= r.time_ns)) {
      diverged_ = "the replay cannot reach the point of " + describe(r) + ": it is at " + seconds(sim_.now()) +
                  " after " + std::to_string(sim_.events_executed()) + " events, next event at " +
                  seconds(sim_.next_event_time());
      return false;
    }
    if (sim_.now() < r.time_ns) sim_.run_until(r.time_ns);
    return true;
  }

  void run_request(const Record& r) {
    auto h = handlers_.find(r.kind);
    if (h == handlers_.end()) {
      diverged_ = "record #" + std::to_string(next_ + 1) + " is a request of a kind this afasim cannot replay: " + r.kind;
      bad_record_ = true;
      return;
    }
    try {
      h->second(r.payload);
    } catch (const serve::ByteReader::Truncated& e) {
      undecodable(r, e.what());
    } catch (const std::invalid_argument& e) {  // what the handlers throw for a payload they cannot read
      undecodable(r, e.what());
    } catch (const std::exception& e) {
      diverged_ = "cannot replay " + describe(r) + ": " + e.what();
    }
  }

  // A record that does not decode is a bad record file (exit 2), not a model that diverged.
  void undecodable(const Record& r, const char* what) {
    diverged_ = "record #" + std::to_string(next_ + 1) + " does not decode: " + describe(r) + ": " + what;
    bad_record_ = true;
  }

  const std::vector<Record>& records_;
  sim::Simulator& sim_;
  std::map<std::string, Handler> handlers_;
  std::size_t next_ = 0;
  std::string diverged_;
  bool bad_record_ = false;
};

// A scratch state directory that is removed at the end unless kept.
struct ScratchDir {
  std::string path;
  bool remove = false;
  ~ScratchDir() {
    std::error_code ec;
    if (remove) fs::remove_all(path, ec);
  }
};

sim::Status make_scratch(const ReplayOptions& o, ScratchDir& dir) {
  if (!o.scratch.empty()) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(o.scratch, ec)) && !fs::is_directory(o.scratch, ec))  // a dangling link too
      return sim::invalid_argument("--state " + o.scratch + " is a file: a replay needs a new state directory");
    if (fs::exists(o.scratch, ec) && !fs::is_empty(o.scratch, ec))
      return sim::invalid_argument("--state " + o.scratch + " is not empty: a replay needs a new state directory");
    dir.path = o.scratch;
    return sim::Status::ok();
  }
  std::string templ = (fs::temp_directory_path() / "afasim-replay-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return sim::unavailable("cannot create a scratch directory in " + templ);
  dir.path = templ;
  dir.remove = !o.keep_state;
  return sim::Status::ok();
}

std::map<std::string, Handler> replay_handlers(controller::Array& array, serve::ModelThread& inline_model,
                                               const std::string& system_name) {
  std::map<std::string, Handler> out = nbd::nbd_replay_handlers(array);
  for (auto& [kind, h] : api::rest_replay_handlers(array, inline_model, {system_name, AFASIM_VERSION}))
    out[kind] = std::move(h);
  // As afasim serve builds its Redfish service (its users and events do not reach the model).
  const redfish::ServiceOptions redfish_options{system_name, AFASIM_VERSION, nullptr, nullptr};
  for (auto& [kind, h] : redfish::redfish_replay_handlers(array, inline_model, redfish_options))
    out[kind] = std::move(h);
  out["serve.stop"] = [&array, system_name](std::string_view) { (void)stop_session(array, system_name); };
  return out;
}

int run_replay(const ReplayOptions& o) {
  // Never over the session being replayed: a diverging replay lost it (hostile round 22).
  if (const std::string bad = o.record.empty() ? "" : output_file_problem(o.record, {o.file}); !bad.empty())
    return fail_command("replay", "--record: " + bad, 2);
  spdlog::set_level(spdlog::level::warn);
  auto session = serve::read_session_file(o.file);
  if (!session) return fail_command("replay", session.status().message(), 2);
  // A session that afasim serve ended holds at least its serve.stop and final (hostile round
  // 28a, L3: a record of its end alone "reproduced 0 records" and passed).
  if (session->records.empty())
    return fail_command("replay", o.file + " holds no records: a session `afasim serve --record` ended holds at "
                                           "least its serve.stop request and final state",
                        2);
  const serve::SessionHeader& header = session->header;
  if (header.afasim_version != AFASIM_VERSION)
    spdlog::warn("{} was recorded by afasim {}, this is {}: outcomes may differ", o.file, header.afasim_version,
                 AFASIM_VERSION);
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog) return fail_command("replay", catalog.status().message(), 2);
  auto preset = catalog->system(header.system);
  if (!preset) return fail_command("replay", o.file + ": system " + header.system + ": " + preset.status().message(), 2);
  auto payload = datapac::parse_payload_kind(header.payload);
  if (!payload) return fail_command("replay", o.file + ": payload: " + payload.status().message(), 2);
  ScratchDir scratch;
  if (sim::Status st = make_scratch(o, scratch); !st.is_ok()) return fail_command("replay", st.message(), 2);
  auto opened = open_session_array(*catalog, *preset, scratch.path, *payload, header.seed, false, header.destage_age_ns);
  if (!opened) return fail_command("replay", opened.status().message(), 1);
  SessionArray& s = *opened;
  std::unique_ptr<serve::SessionFileWriter> out;
  if (!o.record.empty()) {
    auto w = serve::SessionFileWriter::open(o.record, header);
    if (!w) return fail_command("replay", w.status().message(), 1);
    out = std::move(w).value();
  }
  serve::ModelThread inline_model(*s.sim, serve::ModelThread::Inline{});
  Replayer replayer(session->records, *s.sim, replay_handlers(*s.array, inline_model, preset->name));
  serve::Recorder recorder(*s.sim, [&](const Record& r) {
    if (out) out->append(r);
    replayer.produced(r);
  });
  // As afasim serve ran it: the sampler's ticks are events of the session.
  auto telemetry = start_telemetry(*s.array, header.pace);
  if (!telemetry) return fail_command("replay", telemetry.status().message(), 1);
  s.array->set_event_listener(record_event);
  recorder.start();
  const std::string diverged = s.sim->now() == header.start_time_ns
                                   ? replayer.run()
                                   : "the new array's clock starts at " + seconds(s.sim->now()) + ", the session's at " +
                                         seconds(header.start_time_ns);
  recorder.stop();
  if (out) {
    if (sim::Status st = out->finish(); !st.is_ok()) return fail_command("replay", st.message(), 1);
  }
  if (replayer.bad_record()) return fail_command("replay", o.file + ": " + diverged, 2);
  if (!diverged.empty()) return fail_command("replay", "the replay diverged from " + o.file + ": " + diverged, 1);
  std::printf("afasim replay: %s: %zu records reproduced byte for byte (%s of virtual time)\n", o.file.c_str(),
              replayer.matched(), seconds(session->records.empty() ? 0 : session->records.back().time_ns).c_str());
  return 0;
}

}  // namespace

Runner add_replay_command(CLI::App& app) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand("replay", "Re-run a session recorded by `afasim serve --record` and check it "
                                               "reproduces the same outcomes");
  cmd->add_option("file", o->file, "The session record")->required();
  cmd->add_option("--record", o->record, "Write the replay's own record here (byte-identical when it matches)");
  cmd->add_option("--state", o->scratch, "Replay into this new state directory (default: a temporary one)");
  cmd->add_flag("--keep-state", o->keep_state, "Keep the temporary state directory");
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  return [o] { return run_replay(*o); };
}

}  // namespace afasim::app
