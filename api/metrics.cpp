#include "api/metrics.h"

#include <prometheus/text_serializer.h>

#include <limits>
#include <map>
#include <sstream>

namespace afasim::api {
namespace {

using namespace afasim::controller;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

double seconds(sim::Time ns) { return static_cast<double>(ns) / 1e9; }

// Families in the order they are first asked for; each family's metrics in the order added.
class Builder {
 public:
  void gauge(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }
  void counter(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }
  // One gauge per state in `states`, 1 for `current`, under label `label`.
  void state(const std::string& name, const std::string& help, const Labels& labels, const std::string& label,
             const std::vector<std::string>& states, const std::string& current) {
    for (const auto& s : states) {
      Labels l = labels;
      l.push_back({label, s});
      gauge(name, help, std::move(l), s == current ? 1 : 0);
    }
  }
  // A latency histogram in seconds from IoTotals' per-bucket counts.
  void latency(const std::string& name, const std::string& help, Labels labels, const IoTotals& t) {
    ClientMetric m;
    m.label = std::move(labels);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kLatencyBucketBoundsNs.size(); ++i) {
      cumulative += static_cast<std::uint64_t>(t.buckets[i]);
      m.histogram.bucket.push_back({cumulative, seconds(kLatencyBucketBoundsNs[i])});
    }
    cumulative += static_cast<std::uint64_t>(t.buckets.back());
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = seconds(t.latency_ns_sum);
    family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> take() { return std::move(families_); }

 private:
  MetricFamily& family(const std::string& name, const std::string& help, MetricType type) {
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back(MetricFamily{name, help, type, {}});
    return families_[it->second];
  }
  std::vector<MetricFamily> families_;
  std::map<std::string, std::size_t> index_;
};

// The names of every value of an enum, for a state family.
template <typename E>
std::vector<std::string> names(std::initializer_list<E> values) {
  std::vector<std::string> out;
  for (E v : values) out.emplace_back(to_string(v));
  return out;
}

Labels with(Labels l, const std::string& name, const std::string& value) {
  l.push_back({name, value});
  return l;
}

void io_families(Builder& b, const std::string& prefix, const std::string& what, const Labels& labels,
                 const ObjectTotals& t) {
  for (const auto& [op, d] : {std::pair<const char*, const IoTotals*>{"read", &t.read}, {"write", &t.write}}) {
    b.counter(prefix + "_ios_total", "I/Os " + what + " completed successfully", with(labels, "op", op),
              static_cast<double>(d->ios));
    b.counter(prefix + "_bytes_total", "Bytes of the I/Os " + what + " completed successfully",
              with(labels, "op", op), static_cast<double>(d->bytes));
  }
  b.counter(prefix + "_errors_total", "I/Os " + what + " completed with an error", labels,
            static_cast<double>(t.read.errors + t.write.errors));
  for (const auto& [op, d] : {std::pair<const char*, const IoTotals*>{"read", &t.read}, {"write", &t.write}})
    b.latency(prefix + "_latency_seconds", "Latency of the I/Os " + what + " completed successfully",
              with(labels, "op", op), *d);
}

void system_families(Builder& b, const Array& array, const MetricsContext& context) {
  const auto& p = array.preset();
  b.gauge("afasim_info", "The simulated array: model, preset and afasim version (always 1)",
          {{"model", p.model}, {"preset", context.system_name}, {"version", context.afasim_version}}, 1);
  b.gauge("afasim_simulated_time_seconds", "The model's simulated clock", {}, seconds(array.simulator().now()));
  const auto events = array.events(0, 1);
  b.counter("afasim_events_total", "Events logged since the array was created (event ids)", {},
            events.items.empty() ? 0 : static_cast<double>(events.items.front().id));
}

void volume_families(Builder& b, const Array& array, const Telemetry* telemetry) {
  static const std::vector<std::string> kStates =
      names({VolumeState::kOnline, VolumeState::kDegraded, VolumeState::kFailed});
  for (const auto& [id, v] : array.volumes()) {
    const Labels l = {{"volume_id", std::to_string(id)}, {"volume", v.name}};
    b.gauge("afasim_volume_info", "A volume's settings (always 1)",
            {{"volume_id", std::to_string(id)}, {"volume", v.name}, {"pool_id", std::to_string(v.pool_id)},
             {"raid_type", std::string(raid::raid_type_name(v.raid_type))},
             {"provisioning", std::string(to_string(v.provisioning))}},
            1);
    b.state("afasim_volume_state", "A volume's state (1 for the current one)", l, "state", kStates,
            std::string(to_string(array.volume_state(id))));
    b.gauge("afasim_volume_capacity_bytes", "A volume's host-visible size", l, static_cast<double>(v.capacity_bytes));
    b.gauge("afasim_volume_allocated_bytes", "Host bytes of a volume's allocated extents", l,
            static_cast<double>(array.data_path().allocated_extents(id) * array.extent_bytes(v.raid_type)));
    b.gauge("afasim_volume_owner_controller_id", "The controller that owns a volume now (0: none)", l,
            static_cast<double>(array.data_path().owner(id)));
    if (const auto q = array.qos_status(id)) {
      b.counter("afasim_volume_qos_throttled_seconds_total", "Time a volume's I/O was held back by its QoS limit",
                l, seconds(q->throttled_ns));
      b.gauge("afasim_volume_qos_queued_ios", "I/Os waiting in a volume's QoS queue", l,
              static_cast<double>(q->queued_ios));
      b.gauge("afasim_volume_qos_burst_credit_seconds", "Seconds a volume could run at its burst limit now", l,
              seconds(q->burst_credit_ns));
      if (q->min_iops_held)
        b.gauge("afasim_volume_qos_min_iops_held",
                "The reservation a volume's controller holds now, 4 KiB IOPS (less than min_iops, in proportion, "
                "while its reservations need more than it can guarantee)",
                l, static_cast<double>(*q->min_iops_held));
    }
    if (telemetry) {
      static const ObjectTotals kNone;
      const ObjectTotals* t = telemetry->counters().volume_totals(id);
      io_families(b, "afasim_volume", "of a volume", l, t ? *t : kNone);
    }
  }
}

void controller_families(Builder& b, const Array& array, const Telemetry* telemetry) {
  static const std::vector<std::string> kStates =
      names({ControllerState::kOff, ControllerState::kBooting, ControllerState::kSyncing, ControllerState::kActive,
             ControllerState::kFailed, ControllerState::kVaulting});
  static const std::vector<std::string> kModes =
      names({CacheMode::kNone, CacheMode::kWriteBack, CacheMode::kWriteThrough});
  const DataPath& dp = array.data_path();
  for (const ControllerInfo& c : array.controllers()) {
    const Labels l = {{"controller", c.name}};
    b.state("afasim_controller_state", "A controller's state (1 for the current one)", l, "state", kStates,
            std::string(to_string(c.state)));
    b.state("afasim_controller_cache_mode", "A controller's write cache mode (1 for the current one)", l, "mode",
            kModes, std::string(to_string(c.cache_mode)));
    b.gauge("afasim_controller_cpu_cores", "CPU cores of a controller", l, array.preset().controllers.cpu_cores);
    b.counter("afasim_controller_cpu_busy_seconds_total", "Core time a controller's CPUs spent on I/O", l,
              seconds(dp.controller_busy_ns(c.id)));
    if (telemetry)
      b.gauge("afasim_controller_cpu_utilisation_ratio", "Busy share of a controller's cores in the last second",
              l, telemetry->controller_cpu_busy_ratio(c.id));
    b.gauge("afasim_controller_cache_dirty_bytes", "Acknowledged writes in a controller's cache not yet destaged",
            l, static_cast<double>(c.dirty_bytes));
    b.gauge("afasim_controller_cache_bytes", "Dirty and clean bytes of a controller's volumes in its cache", l,
            static_cast<double>(c.cached_bytes));
    b.gauge("afasim_controller_cache_mirror_bytes", "The peer's dirty bytes a controller holds a mirror copy of", l,
            static_cast<double>(c.mirrored_bytes));
    b.gauge("afasim_controller_write_cache_size_bytes", "Size of a controller's write cache", l,
            static_cast<double>(c.write_cache_bytes));
    b.gauge("afasim_controller_owned_volumes", "Volumes a controller owns now", l, static_cast<double>(c.owned_volumes));
    b.counter("afasim_controller_interconnect_sent_bytes_total",
              "Bytes a controller sent its peer over the inter-controller link (cache mirroring, forwarded I/O)",
              l, static_cast<double>(dp.interconnect(static_cast<int>(c.id - 1)).bytes_moved()));
    const ControllerIoStats& s = dp.controller_stats(c.id);
    b.counter("afasim_controller_host_ios_total", "Host I/Os a controller served", l, static_cast<double>(s.host_ios));
    b.counter("afasim_controller_forwarded_ios_total", "Host I/Os a controller forwarded to its peer (ALUA)", l,
              static_cast<double>(s.forwarded_ios));
    b.counter("afasim_controller_backend_ops_total", "SSD commands a controller issued", l,
              static_cast<double>(s.backend_ops));
    if (telemetry) io_families(b, "afasim_controller", "through a controller", l, telemetry->counters().controller_totals(c.id));
  }
}

void drive_families(Builder& b, const Array& array, const Telemetry* telemetry) {
  static const std::vector<std::string> kStates =
      names({DriveState::kHealthy, DriveState::kFailed, DriveState::kRemoved});
  const DataPath& dp = array.data_path();
  const std::vector<DriveWear> wear = array.wear().drive_wear_all();
  for (const DriveInfo& d : array.drives()) {
    const int index = static_cast<int>(d.id - 1);
    const Labels l = {{"drive", std::to_string(d.id)}, {"datapac", std::to_string(d.datapac_id)},
                      {"slot", std::to_string(d.slot)}};
    b.state("afasim_drive_state", "An SSD's state (1 for the current one)", l, "state", kStates,
            std::string(to_string(d.state)));
    b.gauge("afasim_drive_endurance_used_ratio", "Share of an SSD's rated endurance used (1 = rated life)", l,
            wear[static_cast<std::size_t>(index)].percent_endurance_used / 100.0);
    const datapac::SsdCounters& c = dp.ssd(index).counters();
    b.counter("afasim_drive_written_bytes_total", "Bytes written to an SSD since it was inserted", l,
              static_cast<double>(c.bytes_written));
    b.counter("afasim_drive_read_bytes_total", "Bytes read from an SSD since it was inserted", l,
              static_cast<double>(c.bytes_read));
    b.counter("afasim_drive_nand_written_bytes_total", "Bytes an SSD wrote to its flash (write amplification included)",
              l, static_cast<double>(wear[static_cast<std::size_t>(index)].nand_bytes_written));
    if (telemetry) {
      const ObjectTotals& t = telemetry->counters().drive_totals(index);
      for (const auto& [op, io] : {std::pair<const char*, const IoTotals*>{"read", &t.read}, {"write", &t.write}})
        b.latency("afasim_drive_latency_seconds", "Service time of an SSD's commands (its queue included)",
                  with(l, "op", op), *io);
    }
  }
}

void pool_families(Builder& b, const Array& array) {
  for (const auto& [id, p] : array.pools()) {
    const Labels l = {{"pool_id", std::to_string(id)}, {"pool", p.name}};
    const PoolCapacity c = array.pool_capacity(id);
    b.gauge("afasim_pool_provisioned_bytes", "What a pool's volumes promise (thin and fixed)", l,
            static_cast<double>(c.provisioned_bytes));
    b.gauge("afasim_pool_allocated_bytes", "Host bytes of a pool's allocated extents", l,
            static_cast<double>(c.allocated_bytes));
    b.gauge("afasim_pool_raw_usable_bytes", "SSD bytes a pool can allocate", l, static_cast<double>(c.raw_usable_bytes));
    b.gauge("afasim_pool_raw_allocated_bytes", "SSD bytes a pool's extents hold, RAID included", l,
            static_cast<double>(c.raw_allocated_bytes));
    b.gauge("afasim_pool_raw_free_bytes", "SSD bytes a pool has left", l, static_cast<double>(c.raw_free_bytes));
    for (const auto& [type, bytes] : c.free_bytes)
      b.gauge("afasim_pool_free_bytes", "Host bytes a pool has left for new extents of a RAID type",
              with(l, "raid_type", std::string(raid::raid_type_name(type))), static_cast<double>(bytes));
    for (const auto& [type, bytes] : c.usable_bytes)
      b.gauge("afasim_pool_usable_bytes", "Host bytes a pool holds when all of it is of a RAID type",
              with(l, "raid_type", std::string(raid::raid_type_name(type))), static_cast<double>(bytes));
  }
}

void power_families(Builder& b, const Array& array) {
  const RebuildStatus& r = array.data_path().rebuild_status();
  b.gauge("afasim_rebuild_active", "1 while a rebuild runs", {}, r.active ? 1 : 0);
  b.gauge("afasim_rebuild_progress_ratio", "Share of the current (or last) rebuild done", {},
          r.total_bytes > 0 ? r.percent() / 100.0 : 0.0);
  b.gauge("afasim_rebuild_done_bytes", "Chunk bytes the current (or last) rebuild has rebuilt", {},
          static_cast<double>(r.done_bytes));
  b.gauge("afasim_rebuild_total_bytes", "Chunk bytes the current (or last) rebuild has to rebuild", {},
          static_cast<double>(r.total_bytes));
  b.gauge("afasim_rebuild_stalled_bytes",
          "Chunk bytes the current (or last) rebuild found no SSD to take (their volumes stay degraded)", {},
          static_cast<double>(r.stalled_bytes));
  const PowerStatus p = array.data_path().power_status();
  b.state("afasim_power_state", "Power: on, holdup (on supercaps, vaulting) or off (1 for the current one)", {},
          "state", {"on", "holdup", "off"}, p.state);
  b.gauge("afasim_power_mains_on", "1 while the mains are on", {}, p.mains_on ? 1 : 0);
  b.gauge("afasim_supercap_degraded", "1 while a supercap pack is degraded", {}, p.supercap_degraded ? 1 : 0);
  b.gauge("afasim_supercap_energy_joules", "Usable energy stored in the supercaps", {}, p.energy_joules);
  b.gauge("afasim_supercap_capacity_joules", "Usable energy of the supercaps fully charged", {}, p.capacity_joules);
  b.gauge("afasim_supercap_vault_energy_joules", "Energy a vault of full caches needs", {}, p.vault_energy_joules);
  b.gauge("afasim_supercap_charging", "1 while the supercaps charge", {}, p.charging ? 1 : 0);
  b.gauge("afasim_interconnect_link_up", "1 while the inter-controller link is up", {}, p.link_up ? 1 : 0);
}

void alert_families(Builder& b, const Telemetry& telemetry) {
  const auto alerts = telemetry.alerts();
  b.gauge("afasim_alerts_active", "Alerts active now", {}, static_cast<double>(alerts.size()));
  for (const Alert& a : alerts)
    b.gauge("afasim_alert_active", "An active alert (always 1)",
            {{"kind", a.kind}, {"object", a.object}, {"severity", std::string(to_string(a.severity))}}, 1);
}

void nbd_families(Builder& b, const NbdMetrics& n) {
  b.gauge("afasim_nbd_connections", "NBD connections open now", {}, static_cast<double>(n.connections_active));
  b.counter("afasim_nbd_connections_accepted_total", "NBD connections accepted", {},
            static_cast<double>(n.connections_accepted));
  b.counter("afasim_nbd_connections_refused_total", "NBD connections refused (over the limit)", {},
            static_cast<double>(n.connections_refused));
  b.counter("afasim_nbd_connections_evicted_total",
            "NBD connections closed in their handshake to give a newcomer the slot (every slot held)", {},
            static_cast<double>(n.connections_evicted));
  b.counter("afasim_nbd_requests_total", "NBD transmission requests read", {}, static_cast<double>(n.requests));
  b.counter("afasim_nbd_requests_refused_total", "NBD requests refused by the target's checks", {},
            static_cast<double>(n.requests_refused));
  b.counter("afasim_nbd_protocol_errors_total", "NBD connections closed for breaking the protocol", {},
            static_cast<double>(n.protocol_errors));
}

}  // namespace

std::vector<MetricFamily> collect_metrics(const Array& array, const Telemetry* telemetry,
                                          const MetricsContext& context) {
  Builder b;
  system_families(b, array, context);
  volume_families(b, array, telemetry);
  controller_families(b, array, telemetry);
  drive_families(b, array, telemetry);
  pool_families(b, array);
  power_families(b, array);
  if (telemetry) alert_families(b, *telemetry);
  if (context.nbd) nbd_families(b, *context.nbd);
  return b.take();
}

std::string metrics_text(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace afasim::api
