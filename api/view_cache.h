// api::ViewCache — read-only views served without waiting for the model thread (issue 14
// item 7): GET /system and GET /volumes answer from a snapshot of the array taken on the
// model thread at most once per `max_age` (20 ms), and again at once after any change
// made through the API (so a client reads its own writes). A burst of GETs therefore
// costs the model thread at most 50 snapshots a second, whatever the request rate, and a
// GET never queues behind the model's work while a snapshot is being taken (it gets the
// previous one). What the model changes on its own (a rebuild's progress, the simulated
// clock) shows within max_age.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "controller/array.h"
#include "serve/model_thread.h"

namespace afasim::api {

struct ViewSnapshot {
  std::chrono::steady_clock::time_point taken;
  std::string system_body;  // GET /system, serialized
  struct VolumeRow {
    controller::Id id = 0;
    controller::Id pool_id = 0;
    std::optional<controller::Id> qos_policy_id;
    std::string name;
    nlohmann::json view;  // volume_view
  };
  std::vector<VolumeRow> volumes;  // by id
  std::string volumes_default_body;  // GET /volumes with no query, serialized
};

class ViewCache {
 public:
  ViewCache(controller::Array& array, serve::ModelThread& model, SystemIdentity identity,
            std::chrono::milliseconds max_age = std::chrono::milliseconds(20));

  // A snapshot no older than max_age, or taken after the last invalidate(); blocks for the
  // model thread only when there is none such and no other thread is taking one.
  // Throws serve::ModelStopped.
  std::shared_ptr<const ViewSnapshot> get();
  // Never blocks: the snapshot get() would return without taking one, or null when a new
  // one must be taken first.
  std::shared_ptr<const ViewSnapshot> peek();
  // A change was made: the next get() takes a new snapshot.
  void invalidate();

 private:
  std::shared_ptr<const ViewSnapshot> take();  // on the model thread

  controller::Array& array_;
  serve::ModelThread& model_;
  SystemIdentity identity_;
  const std::chrono::milliseconds max_age_;
  std::mutex mu_;
  std::shared_ptr<const ViewSnapshot> current_;
  std::uint64_t generation_ = 0;   // bumped by invalidate()
  std::uint64_t current_generation_ = 0;
  bool taking_ = false;
};

// The body of the first page of `items` as GET on a list serializes it.
std::string list_body(const nlohmann::json& items, std::int64_t total, std::int64_t offset,
                      std::int64_t limit);

}  // namespace afasim::api
