// An array with a memory payload, its model thread (--pace none unless asked) and an
// NBD server on a free loopback port, for the target's tests. Provisioning helpers run on
// the model thread once it is started.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "controller/array.h"
#include "serve/model_thread.h"
#include "nbd/nbd_server.h"

namespace afasim::nbd::testing {

inline constexpr std::int64_t MiB = 1LL << 20;
inline constexpr std::int64_t GiB = 1LL << 30;

inline NbdServerOptions loopback_options() {
  NbdServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  return o;
}

struct TargetFixture {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset;
  sim::Simulator sim{7};
  controller::MemoryJournal journal;
  std::unique_ptr<controller::Array> array;
  std::unique_ptr<serve::ModelThread> model;
  std::unique_ptr<NbdServer> server;
  std::int64_t host_gap_ns = 0;  // 0: ModelThread's own (kHostGapNs)

  explicit TargetFixture(const std::string& system = "ise-860-g3") {
    preset = catalog.system(system).value();
    controller::ArrayOptions ao;
    ao.data_path.payload = datapac::PayloadKind::kMemory;
    array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot(), ao).value();
  }
  ~TargetFixture() {
    if (server) server->stop();
    if (model) model->stop();
  }

  void start(NbdServerOptions o = loopback_options(),
             sim::Pacer::Mode pace = sim::Pacer::Mode::kNone) {
    model = std::make_unique<serve::ModelThread>(sim, sim::Pacer(pace));
    if (host_gap_ns > 0) model->set_host_gap_ns(host_gap_ns);
    model->start();
    server = std::make_unique<NbdServer>(*array, *model, o);
    const sim::Status st = server->start();
    REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  }
  int port() const { return server->port(); }

  // Runs `fn` on the model thread once it runs, else here.
  template <typename F>
  auto on_model(F&& fn) {
    if (model) return model->call(std::forward<F>(fn));
    return fn();
  }

  controller::Id volume(const std::string& name, std::int64_t bytes,
                        raid::RaidType raid = raid::RaidType::kRaid10,
                        controller::Provisioning p = controller::Provisioning::kThin) {
    controller::VolumeSpec s;
    s.name = name;
    s.capacity_bytes = bytes;
    s.raid_type = raid;
    s.provisioning = p;
    auto v = on_model([&] { return array->create_volume(s); });
    REQUIRE_MESSAGE(v.is_ok(), v.status().to_string());
    return v->id;
  }
  controller::Id host(const std::string& name, const std::vector<std::string>& nbd_addresses) {
    controller::HostSpec s;
    s.name = name;
    for (const auto& a : nbd_addresses)
      s.initiators.push_back({controller::InitiatorType::kNbd, a});
    auto h = on_model([&] { return array->create_host(s); });
    REQUIRE_MESSAGE(h.is_ok(), h.status().to_string());
    return h->id;
  }
  controller::Id map(controller::Id volume_id, controller::Id host_id, bool read_only = false,
                     std::optional<std::int64_t> lun = std::nullopt) {
    controller::MappingSpec s;
    s.volume_id = volume_id;
    s.host_id = host_id;
    s.lun = lun;
    s.access =
        read_only ? controller::MappingAccess::kReadOnly : controller::MappingAccess::kReadWrite;
    auto m = on_model([&] { return array->create_mapping(s); });
    REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
    return m->id;
  }
  controller::VolumeIoStats volume_stats(controller::Id id) {
    return on_model([&] { return *array->data_path().volume_stats(id); });
  }
};

}  // namespace afasim::nbd::testing
