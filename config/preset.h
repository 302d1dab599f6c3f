// System presets, SSD models and the capacity model's parameters, read from config/*.json.
//
// Every figure in those files is an object {"value": N, "source": KEY} or
// {"value": N, "assumption": "why"}; KEY must name an entry of config/sources.json. A bare
// number, an unknown key, a wrong type, a value out of range or an inconsistent preset is
// refused with "file: key: what is wrong". A system file may `extends` another (the
// ISE 800 G3 family file holds what the three models share); objects merge key by key.
//
// The files are compiled into the binary (Catalog::embedded), so `afasim` needs no install
// step; Catalog::from_directory reads another folder of the same layout
// (systems/, ssds/, models/, sources.json), for users' own presets and for tests.
// Values are immutable once loaded; a Catalog may be shared between threads for reading.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/status.h"

namespace afasim::config {

// One SSD model (config/ssds/NAME.json). Times in microseconds, rates per second.
struct SsdModel {
  std::string name;
  std::string description;
  std::string interface;                 // "sas" or "nvme"
  std::int64_t capacity_bytes = 0;       // nominal (decimal) capacity, > 0
  std::int64_t read_latency_us = 0;      // 4 KiB read service time at queue depth 1, > 0
  std::int64_t write_latency_us = 0;     // 4 KiB write service time at queue depth 1, > 0
  std::int64_t random_read_iops = 0;     // 4 KiB random read, saturated, > 0
  std::int64_t random_write_iops = 0;    // 4 KiB random write, steady state, > 0
  std::int64_t seq_read_bytes_per_second = 0;   // > 0
  std::int64_t seq_write_bytes_per_second = 0;  // > 0
  double dwpd = 0;                       // rated drive writes per day, > 0
  std::int64_t warranty_years = 0;       // the DWPD rating's period, > 0
  // NAND on the drive, user capacity plus the drive's own spare area; > capacity_bytes.
  // The spare factor it gives sets write amplification (docs/ssd-model.md).
  std::int64_t raw_nand_bytes = 0;
  // Power-protected DRAM write buffer: writes are acknowledged from it while it has room.
  // >= 4096, < capacity_bytes.
  std::int64_t write_buffer_bytes = 0;
  // Rated endurance: dwpd × capacity × 365 × warranty_years, in bytes.
  double rated_endurance_bytes() const;
};

struct HostPortSpec {
  std::string protocol;                        // "fc", "iscsi"
  int count_per_controller = 0;                // > 0
  int speed_gbps = 0;                          // line rate, > 0
  std::int64_t payload_bytes_per_second = 0;   // per port per direction, > 0
};

struct ControllerSpec {
  int count = 0;                    // exactly 2 (the model is a dual-controller array)
  int cpu_cores = 0;                // > 0
  int cpu_clock_mhz = 0;            // > 0
  std::int64_t dram_bytes = 0;      // > 0
  HostPortSpec host_ports;
  int management_port_speed_gbps = 0;
};

struct BackplaneSpec {
  std::string type;                      // "sas" or "pcie"
  int lanes_per_controller = 0;          // > 0
  std::int64_t lane_bytes_per_second = 0;  // payload per lane, > 0
};

struct DataPacSpec {
  int count = 0;                 // exactly 2 (RAID 10 mirrors pair across the two)
  std::string ssd_model;         // a name in config/ssds/
  int ssds_per_datapac = 0;      // 1..64
  BackplaneSpec backplane;
};

struct SupercapSpec {
  int packs = 0;                         // >= 1
  double capacitance_farads_per_pack = 0;  // > 0
  double voltage_max = 0;                // > voltage_min
  double voltage_min = 0;                // >= 0
  double charge_power_w = 0;             // > 0
  // Usable energy of all packs between voltage_max and voltage_min: ½·C·(Vmax² − Vmin²).
  double usable_energy_joules() const;
};

struct ChassisSpec {
  std::int64_t power_typical_w = 0;
  std::int64_t power_max_w = 0;
  std::int64_t max_iops = 0;
  std::int64_t max_bandwidth_bytes_per_second = 0;
};

// The spec sheet's capacity table for a model, in decimal TB, for tests and reports.
struct PublishedCapacity {
  bool present = false;
  double pre_raid_tb = 0;
  double raid10_tb = 0;
  double raid5_tb = 0;
};

struct SystemPreset {
  std::string name;         // "ise-860-g3"
  std::string model;        // "ISE 860 G3"
  std::string vendor;
  std::string description;
  std::string file;         // where it came from, for messages
  std::int64_t list_price_usd = 0;
  ChassisSpec chassis;
  ControllerSpec controllers;
  DataPacSpec datapacs;
  SupercapSpec supercaps;
  SsdModel ssd;             // the model named by datapacs.ssd_model
  PublishedCapacity published_capacity;

  int drive_count() const { return datapacs.count * datapacs.ssds_per_datapac; }
};

// Parameters of the capacity model (config/models/capacity.json, docs/capacity.md).
struct CapacityParams {
  double over_provisioning_fraction = 0;     // [0, 1): nominal space the array never exposes
  double rebuild_spare_fraction = 0;         // [0, 1): of pre-RAID space, held as rebuild spare
  std::int64_t metadata_reserve_bytes_per_drive = 0;  // >= 0
  std::int64_t chunk_bytes = 0;              // allocation unit per SSD, a power of two >= 1 MiB
  int raid10_copies = 0;                     // 2
  int raid5_data_drives = 0;                 // >= 2
  int raid5_parity_drives = 0;               // 1
};

class Catalog {
 public:
  // The files compiled into the binary. Fails only if the build embedded a bad file.
  static sim::Result<Catalog> embedded();
  // A folder laid out like config/: sources.json, systems/*.json, ssds/*.json,
  // models/capacity.json.
  static sim::Result<Catalog> from_directory(const std::string& dir);
  // From in-memory files keyed by relative path ("systems/ise-860-g3.json").
  static sim::Result<Catalog> from_files(const std::map<std::string, std::string>& files);

  // The concrete (non-abstract) system named `name`; kNotFound lists the known names.
  sim::Result<SystemPreset> system(const std::string& name) const;
  std::vector<std::string> system_names() const;  // concrete systems, sorted
  const CapacityParams& capacity() const { return capacity_; }
  const std::map<std::string, SsdModel>& ssds() const { return ssds_; }

  static constexpr const char* kDefaultSystem = "ise-860-g3";

 private:
  std::map<std::string, SystemPreset> systems_;
  std::map<std::string, SsdModel> ssds_;
  CapacityParams capacity_;
};

// The embedded config files, keyed by path relative to config/ (generated at build time).
const std::map<std::string, std::string>& embedded_files();

}  // namespace afasim::config
