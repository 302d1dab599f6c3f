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
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"

namespace afasim::config {

// One SSD model (config/ssds/NAME.json, schema afasim.ssd/2): the drive's architecture,
// from the host link down to the NAND, which ssd::FlashSsd times (docs/ssd-model.md), and
// the datasheet figures the model is checked against (never read by the model).
// Times in nanoseconds unless named otherwise, rates per second, sizes in bytes.
struct HostInterfaceSpec {
  std::string kind;               // "nvme" (PCIe) or "sas"
  int pcie_generation = 0;        // nvme: 1..5; sas: 0
  int lanes = 0;                  // PCIe lanes, or SAS lanes (phys) used by one command stream
  // Payload per lane per direction after line encoding and protocol framing: PCIe: the
  // generation's transfer rate × encoding × TLP efficiency; SAS: 1.2 GB/s per 12G lane.
  std::int64_t lane_bytes_per_second = 0;
  std::int64_t latency_ns = 0;    // one command's link round trip (doorbell, fetch, completion, interrupt)
  std::int64_t bytes_per_second() const { return lane_bytes_per_second * lanes; }
};

struct SsdControllerSpec {
  std::string name;               // "Samsung Polaris", for reports
  int cores = 0;                  // command processors working in parallel, >= 1
  // Firmware time of one command on one core (parsing, FTL lookup or update, scheduling):
  // reads, and writes / trims / flushes.
  std::int64_t read_command_ns = 0;
  std::int64_t write_command_ns = 0;
  std::int64_t read_overhead_ns = 0;   // fixed read pipeline: ECC decode, DMA, completion; occupies nothing
  std::int64_t write_overhead_ns = 0;  // fixed write pipeline: buffer acknowledgement; occupies nothing
  // Host write data the controller can take into its buffer per second (encoder, DRAM); 0 = no
  // limit below the link and the NAND.
  std::int64_t write_path_bytes_per_second = 0;
  int queue_pairs = 0;            // NVMe I/O queue pairs (SAS: 1), >= 1
  int queue_entries = 0;          // entries per queue (SAS: the drive's command queue depth), >= 1
};

struct NandSpec {
  std::string type;               // "SLC", "MLC", "TLC", "eTLC"
  std::string part;               // "Samsung 48-layer V-NAND MLC", for reports
  int bits_per_cell = 0;          // 1..4
  std::int64_t page_bytes = 0;    // one plane's page (user data), a multiple of 4096
  int planes = 0;                 // planes per die, operated together (multi-plane), 1..8
  int program_pages = 0;          // pages per plane one program operation writes (3D TLC one-shot: 3)
  std::int64_t block_bytes = 0;   // one plane's erase block, a multiple of page_bytes
  std::int64_t die_bytes = 0;     // user-data bytes of one die (LUN)
  std::int64_t read_ns = 0;       // tR: page sense time
  std::int64_t program_ns = 0;    // tPROG: one program operation (all planes, program_pages each)
  std::int64_t erase_ns = 0;      // tBERS: one multi-plane block erase
  std::int64_t channel_bytes_per_second = 0;  // NAND bus (ONFI / Toggle) rate of one channel
  bool program_suspend = false;   // a read may suspend a program on its die
  bool erase_suspend = false;     // a read may suspend an erase on its die
  std::int64_t suspend_ns = 0;    // suspend + resume cost added to the read and the suspended op
  std::int64_t pe_cycles = 0;     // rated program/erase cycles per block
  // SLC cache (client TLC drives): host writes are programmed one bit per cell, faster, while
  // the cache has room, and folded into TLC when the drive has time. 0 = none.
  std::int64_t slc_cache_bytes = 0;
  std::int64_t slc_program_ns = 0;  // one SLC-mode program (all planes, one page each)
  std::int64_t slc_read_ns = 0;     // SLC-mode page sense
  std::int64_t program_unit_bytes() const { return page_bytes * planes * program_pages; }
};

struct NandGeometrySpec {
  int channels = 0;               // NAND channels of the controller in use, 1..64
  int dies_per_channel = 0;       // dies (LUNs) per channel, 1..64
};

// What a datasheet promises; tests compare the model with these. A figure that is absent is 0.
struct SsdDatasheet {
  std::int64_t seq_read_bytes_per_second = 0;
  std::int64_t seq_write_bytes_per_second = 0;
  std::int64_t seq_block_bytes = 0;           // transfer size of the sequential figures
  std::int64_t random_read_iops = 0;          // 4 KiB
  std::int64_t random_write_iops = 0;         // 4 KiB, steady state
  std::int64_t random_write_iops_fob = 0;     // 4 KiB, fresh out of the box (when published)
  std::int64_t read_latency_us = 0;           // 4 KiB at queue depth 1
  std::int64_t write_latency_us = 0;          // 4 KiB at queue depth 1
  std::string source;                         // sources.json key of the figures
};

struct SsdModel {
  std::string name;
  std::string description;
  std::string interface;                 // "sas" or "nvme" (= host.kind)
  std::int64_t capacity_bytes = 0;       // user (decimal) capacity, > 0
  HostInterfaceSpec host;
  SsdControllerSpec controller;
  NandSpec nand;
  NandGeometrySpec geometry;
  // Fraction of the raw NAND that is neither user data nor spare for garbage collection: die
  // parity (RAIN), bad and reserved blocks, FTL metadata. [0, 0.5).
  double reserved_fraction = 0;
  // Power-protected (or, without PLP, volatile) DRAM write buffer. >= 4096, < capacity_bytes.
  std::int64_t write_buffer_bytes = 0;
  bool power_loss_protection = false;    // buffered writes survive power loss; flush is free
  double dwpd = 0;                       // rated drive writes per day, > 0
  std::int64_t warranty_years = 0;       // the DWPD rating's period, > 0
  // NAND on the drive: channels × dies per channel × die_bytes; > capacity_bytes.
  std::int64_t raw_nand_bytes = 0;
  SsdDatasheet datasheet;
  // Rated endurance: dwpd × capacity × 365 × warranty_years, in bytes.
  double rated_endurance_bytes() const;
  int dies() const { return geometry.channels * geometry.dies_per_channel; }
};

// A device a workload can run on bare (config/devices/NAME.json, schema afasim.device/1):
// N member SSDs of one model, behind a PCIe switch or not, composed as RAID 0 (one member:
// the drive itself). Every SSD model is also a device of its own name with one member.
struct DeviceSpec {
  std::string name;                      // "liqid-lqd4500"
  std::string model;                     // "Liqid Element LQD4500"
  std::string vendor;
  std::string description;
  std::string file;                      // where it came from (empty for an SSD model's own device)
  SsdModel member;                       // the member model (capacity as the device uses it)
  int member_count = 1;                  // 1..64
  std::string composition = "single";    // "single" or "raid0"
  std::int64_t stripe_bytes = 0;         // raid0: strip per member, a power of two >= 4096
  bool has_switch = false;
  HostInterfaceSpec upstream;            // the switch's upstream port (has_switch)
  std::int64_t switch_latency_ns = 0;    // cut-through latency of the switch, each way
  SsdDatasheet datasheet;                // the device's own datasheet (a single drive: its model's)
  std::int64_t capacity_bytes() const { return member.capacity_bytes * member_count; }
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

// Defaults of the reliability mode (config/models/reliability.json, docs/reliability.md).
// Rates per hour or year as named; > 0 except the two error rates, which may be 0.
struct ReliabilityParams {
  double drive_mtbf_hours = 0;              // random (non-wear) failures, exponential (the file gives drive_afr_percent)
  double latent_errors_per_drive_year = 0;  // Poisson rate of latent (unreadable-block) errors
  double uncorrectable_bit_error_rate = 0;  // per bit a rebuild reads
  double wear_out_weibull_shape = 0;        // of the wear-out life, in rated endurances used
  double wear_out_weibull_scale = 0;        // rated endurances (DWPD x capacity x 365 x warranty years)
  double scrub_interval_hours = 0;          // a latent error is found at the next scrub pass
  double controller_mtbf_hours = 0;
  double controller_replacement_hours = 0;
  double datapac_replacement_hours = 0;     // when a DataPac's distributed spare is used up
};

// Hours in a year of 365.25 days: a failure rate per drive-year (AFR) is kHoursPerYear / MTBF.
inline constexpr double kHoursPerYear = 8766;

// The SSD failure rate as files give it (drive_afr_percent), and its range.
inline constexpr double kDriveAfrPercentMin = 1e-6;
inline constexpr double kDriveAfrPercentMax = 1e5;
inline double mtbf_hours_of_afr_percent(double afr_percent) { return kHoursPerYear / (afr_percent / 100.0); }

// Every other ReliabilityParams field as files name it, with its range [lo, hi]: the one table
// that models/reliability.json's reader and a reliability scenario's `model` overrides use.
struct ReliabilityParamSpec {
  const char* key;
  double ReliabilityParams::*field;
  double lo;
  double hi;
};
std::span<const ReliabilityParamSpec> reliability_param_specs();

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
  // models/reliability.json; kNotFound when the folder has none (it is optional: only the
  // reliability mode needs it).
  sim::Result<ReliabilityParams> reliability() const;
  const std::map<std::string, SsdModel>& ssds() const { return ssds_; }
  // Bare devices: config/devices/*.json and every SSD model under its own name. kNotFound
  // lists the known names.
  sim::Result<DeviceSpec> device(const std::string& name) const;
  std::vector<std::string> device_names() const;  // sorted

  static constexpr const char* kDefaultSystem = "ise-860-g3";

  // The folder from_directory read (its calibration/ is the performance model's, see
  // controller::DataPathOptions::calibration_dir); empty for embedded() and from_files().
  const std::string& directory() const { return directory_; }

 private:
  std::map<std::string, SystemPreset> systems_;
  std::map<std::string, SsdModel> ssds_;
  std::map<std::string, DeviceSpec> devices_;
  CapacityParams capacity_;
  std::optional<ReliabilityParams> reliability_;
  std::string directory_;
};

// The embedded config files, keyed by path relative to config/ (generated at build time).
const std::map<std::string, std::string>& embedded_files();

// The names of the embedded JSON files directly in `folder` ("scenarios", "sweeps"), without
// the folder and ".json", sorted: the built-ins a command takes by name.
std::vector<std::string> embedded_json_names(std::string_view folder);

}  // namespace afasim::config
