#include "app/session.h"

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "api/views.h"
#include "serve/session_record.h"

namespace afasim::app {

using nlohmann::json;

sim::Result<std::unique_ptr<controller::Telemetry>> start_telemetry(controller::Array& array, const std::string& pace) {
  controller::TelemetryOptions options;
  options.tick_when_idle = pace != "none";
  options.wall_clock_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  return controller::Telemetry::create(array, options);
}

// Meta key: the array has kept its volumes' data in payload/ (set at the first start with
// --payload file).
constexpr const char* kMetaPayloadFiles = "payload.files";
// Meta key: a first start began here (set before it makes the SSD images).
constexpr const char* kMetaFirstStart = "first_start";

namespace {

// Refused when `snapshot` holds no array but STATE/users.json is there: `afasim serve` makes its
// users after its array, so that is a database lost (deleted, or truncated to nothing), not a
// first start (hostile round 28: a server started as a new, empty array, every volume, host
// and event gone without a word, the old admin password still working).
sim::Status check_database_not_lost(const controller::Snapshot& snapshot, const std::string& state_dir) {
  std::error_code ec;
  if (snapshot.meta.count("initialized") != 0 || !std::filesystem::exists(state_dir + "/users.json", ec))
    return sim::Status::ok();
  return sim::precondition_failed(
      "state directory " + state_dir + ": afasim.db holds no array (it is missing or empty) but users.json of an "
      "earlier one is there; restore afasim.db from a backup, or move users.json and admin-password aside to start "
      "a new array in this directory");
}

// For --payload file: STATE/payload, checked against what the database says it held (see
// the comments), made if missing; sets `dp`'s payload directory and payload_must_exist.
sim::Status prepare_payload_dir(store::SqliteStore& store, const controller::Snapshot& snapshot,
                                const std::string& state_dir, controller::DataPathOptions& dp) {
  dp.payload_dir = state_dir + "/payload";
  // SSD images without the database that says what is in them are not a first start: a new
  // array's extents would land on chunks that still hold the old volumes' bytes (a block a
  // new volume never wrote would read another volume's data), and the old configuration
  // would be gone without a word.
  std::error_code listed;
  int images = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dp.payload_dir, listed))
    images += entry.path().extension() == ".payload";
  const bool initialized = snapshot.meta.count("initialized") != 0;
  if (!initialized && images > 0 && snapshot.meta.count(kMetaFirstStart) != 0) {
    // A first start cut short (a signal or a crash while it made the SSD images): nothing was
    // ever stored in them, so they are made again (hostile round 17: every later start was
    // refused, with advice to restore a backup that never existed).
    std::error_code removed;
    std::filesystem::remove_all(dp.payload_dir, removed);
    if (removed) return sim::unavailable("cannot remove " + dp.payload_dir + ": " + removed.message());
    images = 0;
  }
  if (!initialized) {
    if (images > 0)
      return sim::precondition_failed(
          "state directory " + state_dir + ": afasim.db holds no array (it is missing or empty) but " +
          dp.payload_dir + " holds " + std::to_string(images) +
          " SSD image(s) of an earlier one; restore afasim.db from a backup, or move the payload directory "
          "aside to start a new array (it would otherwise reuse the old data)");
    if (sim::Status st = check_database_not_lost(snapshot, state_dir); !st.is_ok()) return st;
  }
  // An array that kept its data in payload files before: a missing or empty file is lost
  // data, refused (open_file_store), not recreated blank with the volumes still online. An
  // array of an afasim before the mark has it by its images.
  dp.payload_must_exist = snapshot.meta.count(kMetaPayloadFiles) != 0 || (initialized && images > 0);
  if (!initialized) {  // marked before the images are made: a start cut short is known as one
    controller::ChangeSet mark;
    mark.meta[kMetaFirstStart] = "1";
    if (sim::Status st = store.commit(mark); !st.is_ok())
      return sim::Status(st.code(), "state directory " + state_dir + ": " + st.message());
  }
  std::error_code ec;
  std::filesystem::create_directories(dp.payload_dir, ec);
  if (ec) return sim::unavailable("cannot create " + dp.payload_dir + ": " + ec.message());
  return sim::Status::ok();
}

}  // namespace

static_assert(serve::SessionHeader::kDefaultDestageAgeNs == controller::CacheOptions{}.destage_age_ns,
              "a new session's header carries the array's default age");

sim::Result<SessionArray> open_session_array(const config::Catalog& catalog, const config::SystemPreset& preset,
                                             const std::string& state_dir, datapac::PayloadKind payload,
                                             std::uint64_t seed, bool require_new, sim::Time destage_age_ns) {
  SessionArray s;
  auto store = store::SqliteStore::open(state_dir);
  if (!store) return store.status();
  s.store = std::move(store).value();
  auto snapshot = s.store->load(controller::Array::kEventsInMemory);
  if (!snapshot) return snapshot.status();
  if (require_new && snapshot->meta.count("initialized") != 0)
    return sim::precondition_failed("state directory " + state_dir + " already holds an array");
  s.sim = std::make_unique<sim::Simulator>(seed, controller::Array::saved_clock(*snapshot));
  controller::ArrayOptions options;
  options.data_path.payload = payload;
  options.data_path.cache.destage_age_ns = destage_age_ns;
  if (payload != datapac::PayloadKind::kFile && snapshot->meta.count(kMetaPayloadFiles) != 0)
    // The volumes' bytes are in payload/: a run that keeps them in memory (or nowhere) would
    // change the thin map and the volumes without their data, and the next file run would read
    // the bytes from before it where the run acknowledged writes.
    return sim::precondition_failed("state directory " + state_dir + " keeps its volumes' data in " + state_dir +
                                    "/payload (it was started with --payload file); start it with --payload file, "
                                    "or use another --state directory for a run with --payload " +
                                    datapac::payload_kind_name(payload));
  if (payload == datapac::PayloadKind::kFile) {
    // (The images' refusal first: it says more.)
    if (sim::Status st = prepare_payload_dir(*s.store, *snapshot, state_dir, options.data_path); !st.is_ok()) return st;
  } else if (sim::Status st = check_database_not_lost(*snapshot, state_dir); !st.is_ok()) {
    return st;
  }
  auto array = controller::Array::open(*s.sim, catalog, preset, *s.store, *snapshot, options);
  if (!array) {
    const sim::Code code = array.status().code();
    std::string hint = code == sim::Code::kPreconditionFailed
                           ? "; start with the --system it was made for, or use another --state directory"
                           : "";
    if (code == sim::Code::kNotFound && options.data_path.payload_must_exist)
      hint = " (the volumes would read as zeros): restore the payload directory from the backup afasim.db was taken "
             "with, or start a new array in another --state directory";
    return sim::Status(array.status().code(), "state directory " + state_dir + ": " + array.status().message() + hint);
  }
  s.array = std::move(array).value();
  if (payload == datapac::PayloadKind::kFile && snapshot->meta.count(kMetaPayloadFiles) == 0) {
    controller::ChangeSet mark;
    mark.meta[kMetaPayloadFiles] = "1";
    if (sim::Status st = s.store->commit(mark); !st.is_ok())
      return sim::Status(st.code(), "state directory " + state_dir + ": " + st.message());
  }
  return s;
}

void record_event(const controller::Event& e) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  serve::ByteWriter w;
  w.i64(e.id).i64(e.time_ns).str(controller::to_string(e.severity)).str(e.category).str(e.object).str(e.message).str(e.actor);
  rec->outcome("event", w.take());
}

namespace {

// The volume's extents, each with the digest of its members' chunks as the SSDs hold them
// ("unreadable" for a member on a failed or pulled SSD).
json extents_state(const controller::DataPath& dp, controller::Id volume_id) {
  json out = json::array();
  std::vector<std::uint8_t> chunk;
  for (const controller::ExtentRecord& e : dp.extent_records(volume_id)) {
    const std::int64_t chunk_bytes = dp.raw_bytes_per_extent(e.raid_type) / static_cast<std::int64_t>(e.members.size());
    chunk.resize(static_cast<std::size_t>(chunk_bytes));
    json members = json::array();
    for (const pool::ChunkAddr& m : e.members) {
      const sim::Status st = dp.ssd(m.drive).read_payload(m.offset_bytes(chunk_bytes), chunk);
      members.push_back({{"drive", m.drive + 1},
                         {"chunk", m.chunk},
                         {"payload", st.is_ok() ? json(serve::digest64(chunk)) : json("unreadable")}});
    }
    out.push_back({{"index", e.extent_index}, {"missing", e.missing}, {"members", members}});
  }
  return out;
}

template <typename Map, typename View>
json all_of(const Map& objects, View view) {
  json out = json::array();
  for (const auto& [id, object] : objects) out.push_back(view(object));
  return out;
}

}  // namespace

std::string final_state(controller::Array& array, const std::string& system_name) {
  const controller::Array& a = array;
  json volumes = json::array();
  for (const auto& [id, v] : a.volumes()) {
    json view = api::volume_view(a, v);
    view["extents"] = extents_state(a.data_path(), id);
    volumes.push_back(std::move(view));
  }
  json controllers = json::array(), datapacs = json::array();
  for (const auto& c : a.controllers()) controllers.push_back(api::controller_view(c));
  for (const auto& d : a.datapacs()) datapacs.push_back(api::datapac_view(a, d));
  const json state = {
      {"system", api::system_view(array, {system_name, "-"})},
      {"controllers", controllers},
      {"datapacs", datapacs},
      {"pools", all_of(a.pools(), [&](const auto& p) { return api::pool_view(a, p); })},
      {"qos_policies", all_of(a.qos_policies(), [&](const auto& q) { return api::qos_policy_view(a, q); })},
      {"volumes", volumes},
      {"hosts", all_of(a.hosts(), [&](const auto& h) { return api::host_view(a, h); })},
      {"mappings", all_of(a.mappings(), [](const auto& m) { return api::mapping_view(m); })},
      {"events_total", a.events(0, 0).total},
  };
  return state.dump(1, ' ', false, json::error_handler_t::replace);
}

sim::Status stop_session(controller::Array& array, const std::string& system_name) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec != nullptr) rec->request("serve.stop", "");
  // Dirty cache blocks reach the SSD payload at once (a destage writes its bytes when it is
  // issued), and so do the vaults of controllers the mains left off, so a clean stop loses no
  // acknowledged write.
  array.write_back_at_stop();
  const sim::Status saved = array.save_clock();
  if (rec != nullptr) {
    // Digests every allocated chunk: seconds for a few GiB of fixed volumes, minutes for TiBs.
    spdlog::info("afasim serve: recording the final state (a digest of every allocated chunk: a while for large "
                 "volumes; the record is complete when 'session recorded' is logged)");
    rec->outcome("final", final_state(array, system_name));
    rec->stop();
  }
  return saved;
}

}  // namespace afasim::app
