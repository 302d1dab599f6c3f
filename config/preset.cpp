#include "config/preset.h"
#include "config/file_text.h"
#include "config/preset_reader.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace afasim::config {
namespace {

using preset_detail::check_schema;
using preset_detail::check_chunk_count;
using preset_detail::read_capacity;
using preset_detail::read_reliability;
using preset_detail::ConfigError;
using preset_detail::fail;
using preset_detail::json;
using preset_detail::kMaxBytes;
using preset_detail::kMaxRate;
using preset_detail::parse_json;
using preset_detail::Reader;
using preset_detail::type_name;

// PCIe payload rate of one lane per direction before protocol framing, bytes per second:
// generation 1-2 run 2.5 / 5 GT/s with 8b/10b encoding, 3-5 run 8 / 16 / 32 GT/s with
// 128b/130b (PCI-SIG base specifications 1.1 to 5.0).
double pcie_lane_raw_bytes_per_second(int generation) {
  switch (generation) {
    case 1: return 2.5e9 * 8 / 10 / 8;
    case 2: return 5e9 * 8 / 10 / 8;
    case 3: return 8e9 * 128 / 130 / 8;
    case 4: return 16e9 * 128 / 130 / 8;
    default: return 32e9 * 128 / 130 / 8;
  }
}

HostInterfaceSpec read_host_interface(const Reader& r, const json& j, const std::string& path) {
  HostInterfaceSpec h;
  const json& o = r.member(j, "", path);
  h.kind = r.text(o, path, "kind", {"nvme", "sas"});
  if (h.kind == "nvme") {
    r.only_keys(o, path, {"kind", "pcie_generation", "lanes", "efficiency", "latency_ns"});
    h.pcie_generation = static_cast<int>(r.integer_figure(o, path, "pcie_generation", 1, 5));
    h.lanes = static_cast<int>(r.integer_figure(o, path, "lanes", 1, 32));
    const double efficiency = r.figure(o, path, "efficiency", 0.5, 1.0);
    h.lane_bytes_per_second = static_cast<std::int64_t>(
        pcie_lane_raw_bytes_per_second(h.pcie_generation) * efficiency);
  } else {
    r.only_keys(o, path, {"kind", "lanes", "lane_bytes_per_second", "latency_ns"});
    h.lanes = static_cast<int>(r.integer_figure(o, path, "lanes", 1, 8));
    h.lane_bytes_per_second = r.integer_figure(o, path, "lane_bytes_per_second", 1e6, kMaxRate);
  }
  h.latency_ns = r.integer_figure(o, path, "latency_ns", 0, 1e8);
  return h;
}

SsdDatasheet read_datasheet(const Reader& r, const json& j, const std::string& path,
                            const std::set<std::string>& sources) {
  SsdDatasheet d;
  if (!j.contains(path)) return d;
  const json& o = j[path];
  r.only_keys(o, path, {"source", "seq_read_bytes_per_second", "seq_write_bytes_per_second",
                        "seq_block_bytes", "random_read_iops", "random_write_iops",
                        "random_write_iops_fob", "read_latency_us", "write_latency_us"});
  d.source = r.text(o, path, "source");
  if (!sources.count(d.source))
    r.fail(json_path_join(path, "source"), "\"" + d.source + "\" is not a key of sources.json");
  auto opt = [&](const char* key, double lo, double hi) -> std::int64_t {
    return o.contains(key) ? r.integer_figure(o, path, key, lo, hi) : 0;
  };
  d.seq_read_bytes_per_second = opt("seq_read_bytes_per_second", 1e6, kMaxRate);
  d.seq_write_bytes_per_second = opt("seq_write_bytes_per_second", 1e6, kMaxRate);
  d.seq_block_bytes = opt("seq_block_bytes", 4096, 1 << 30);
  d.random_read_iops = opt("random_read_iops", 1, 1e10);
  d.random_write_iops = opt("random_write_iops", 1, 1e10);
  d.random_write_iops_fob = opt("random_write_iops_fob", 1, 1e10);
  d.read_latency_us = opt("read_latency_us", 1, 1e6);
  d.write_latency_us = opt("write_latency_us", 1, 1e6);
  return d;
}

bool flag(const Reader& r, const json& o, const std::string& path, const std::string& key) {
  const json& v = r.member(o, path, key);
  if (!v.is_boolean()) r.fail(json_path_join(path, key), "must be true or false, got " + type_name(v));
  return v.get<bool>();
}

SsdControllerSpec read_ssd_controller(const Reader& r, const json& j) {
  SsdControllerSpec controller;
  const json& c = r.member(j, "", "controller");
  const std::string cp = "controller";
  r.only_keys(c, cp, {"name", "cores", "read_command_ns", "write_command_ns", "read_overhead_ns",
                      "write_overhead_ns",
                      "write_path_bytes_per_second", "queue_pairs", "queue_entries"});
  controller.name = r.text(c, cp, "name");
  controller.cores = static_cast<int>(r.integer_figure(c, cp, "cores", 1, 256));
  controller.read_command_ns = r.integer_figure(c, cp, "read_command_ns", 0, 1e8);
  controller.write_command_ns = r.integer_figure(c, cp, "write_command_ns", 0, 1e8);
  controller.read_overhead_ns = r.integer_figure(c, cp, "read_overhead_ns", 0, 1e8);
  controller.write_overhead_ns = r.integer_figure(c, cp, "write_overhead_ns", 0, 1e8);
  if (c.contains("write_path_bytes_per_second"))
    controller.write_path_bytes_per_second =
        r.integer_figure(c, cp, "write_path_bytes_per_second", 1e6, kMaxRate);
  controller.queue_pairs = static_cast<int>(r.integer_figure(c, cp, "queue_pairs", 1, 65535));
  controller.queue_entries = static_cast<int>(r.integer_figure(c, cp, "queue_entries", 1, 65536));
  return controller;
}

NandSpec read_nand(const Reader& r, const json& j) {
  NandSpec nand;
  const json& n = r.member(j, "", "nand");
  const std::string np = "nand";
  r.only_keys(n, np, {"type", "part", "bits_per_cell", "page_bytes", "planes", "program_pages",
                      "block_bytes", "die_bytes", "read_ns", "program_ns", "erase_ns",
                      "channel_bytes_per_second", "program_suspend", "erase_suspend",
                      "suspend_ns", "pe_cycles", "slc_cache_bytes", "slc_program_ns",
                      "slc_read_ns"});
  nand.type = r.text(n, np, "type", {"SLC", "MLC", "TLC", "eTLC"});
  nand.part = r.text(n, np, "part");
  nand.bits_per_cell = static_cast<int>(r.integer_figure(n, np, "bits_per_cell", 1, 4));
  nand.page_bytes = r.integer_figure(n, np, "page_bytes", 4096, 1 << 20);
  if (nand.page_bytes % 4096 != 0) r.fail("nand.page_bytes.value", "must be a multiple of 4096");
  nand.planes = static_cast<int>(r.integer_figure(n, np, "planes", 1, 8));
  nand.program_pages = static_cast<int>(r.integer_figure(n, np, "program_pages", 1, 4));
  nand.block_bytes = r.integer_figure(n, np, "block_bytes", 4096, 1LL << 32);
  if (nand.block_bytes % nand.page_bytes != 0)
    r.fail("nand.block_bytes.value", "must be a multiple of page_bytes");
  nand.die_bytes = r.integer_figure(n, np, "die_bytes", 1 << 20, 1e13);
  if (nand.die_bytes < nand.block_bytes * nand.planes * 16)
    r.fail("nand.die_bytes.value", "must hold at least 16 multi-plane blocks");
  nand.read_ns = r.integer_figure(n, np, "read_ns", 1, 1e7);
  nand.program_ns = r.integer_figure(n, np, "program_ns", 1, 1e8);
  nand.erase_ns = r.integer_figure(n, np, "erase_ns", 1, 1e9);
  nand.channel_bytes_per_second = r.integer_figure(n, np, "channel_bytes_per_second", 1e6, 1e11);
  nand.program_suspend = flag(r, n, np, "program_suspend");
  nand.erase_suspend = flag(r, n, np, "erase_suspend");
  nand.suspend_ns = r.integer_figure(n, np, "suspend_ns", 0, 1e7);
  nand.pe_cycles = r.integer_figure(n, np, "pe_cycles", 1, 1e7);
  if (n.contains("slc_cache_bytes")) {
    nand.slc_cache_bytes = r.integer_figure(n, np, "slc_cache_bytes", 0, kMaxBytes);
    if (nand.slc_cache_bytes > 0) {
      nand.slc_program_ns = r.integer_figure(n, np, "slc_program_ns", 1, 1e8);
      nand.slc_read_ns = r.integer_figure(n, np, "slc_read_ns", 1, 1e7);
    }
  }
  return nand;
}

SsdModel read_ssd(const Reader& r, const json& j, const std::set<std::string>& sources) {
  r.only_keys(j, "", {"schema", "name", "description", "capacity_bytes", "host_interface",
                      "controller", "nand", "geometry", "reserved_fraction",
                      "write_buffer_bytes", "power_loss_protection", "dwpd", "warranty_years",
                      "datasheet"});
  check_schema(r, j, "afasim.ssd/2");
  SsdModel m;
  m.name = r.text(j, "", "name");
  m.description = r.optional_text(j, "", "description");
  m.capacity_bytes = r.integer_figure(j, "", "capacity_bytes", 1e6, kMaxBytes);
  m.host = read_host_interface(r, j, "host_interface");
  m.interface = m.host.kind;

  m.controller = read_ssd_controller(r, j);

  m.nand = read_nand(r, j);

  const json& g = r.member(j, "", "geometry");
  r.only_keys(g, "geometry", {"channels", "dies_per_channel"});
  m.geometry.channels = static_cast<int>(r.integer_figure(g, "geometry", "channels", 1, 64));
  m.geometry.dies_per_channel =
      static_cast<int>(r.integer_figure(g, "geometry", "dies_per_channel", 1, 64));
  m.raw_nand_bytes = m.nand.die_bytes * m.dies();
  m.reserved_fraction = r.figure(j, "", "reserved_fraction", 0, 0.49);
  if (static_cast<double>(m.raw_nand_bytes) * (1 - m.reserved_fraction) <=
      static_cast<double>(m.capacity_bytes) * 1.02)
    r.fail("geometry", "the NAND (channels x dies_per_channel x die_bytes, less reserved_fraction) "
                       "must exceed capacity_bytes by at least 2 % (a drive needs spare NAND)");
  m.write_buffer_bytes = r.integer_figure(j, "", "write_buffer_bytes", 4096, kMaxBytes);
  if (m.write_buffer_bytes >= m.capacity_bytes)
    r.fail("write_buffer_bytes.value", "must be below capacity_bytes");
  m.power_loss_protection = flag(r, j, "", "power_loss_protection");
  m.dwpd = r.figure(j, "", "dwpd", 0.01, 1000);
  m.warranty_years = r.integer_figure(j, "", "warranty_years", 1, 30);
  m.datasheet = read_datasheet(r, j, "datasheet", sources);
  return m;
}

DeviceSpec read_device(const Reader& r, const json& j, const std::map<std::string, SsdModel>& ssds,
                       const std::set<std::string>& sources) {
  r.only_keys(j, "", {"schema", "name", "model", "vendor", "description", "members", "switch",
                      "composition", "stripe_bytes", "datasheet"});
  check_schema(r, j, "afasim.device/1");
  DeviceSpec d;
  d.file = r.file();
  d.name = r.text(j, "", "name");
  d.model = r.text(j, "", "model");
  d.vendor = r.optional_text(j, "", "vendor");
  d.description = r.optional_text(j, "", "description");
  const json& m = r.member(j, "", "members");
  r.only_keys(m, "members", {"ssd_model", "count", "capacity_bytes"});
  const std::string model = r.text(m, "members", "ssd_model");
  auto it = ssds.find(model);
  if (it == ssds.end()) r.fail("members.ssd_model", "no SSD model \"" + model + "\" in ssds/");
  d.member = it->second;
  d.member_count = static_cast<int>(r.integer_figure(m, "members", "count", 1, 64));
  if (m.contains("capacity_bytes")) {
    d.member.capacity_bytes = r.integer_figure(m, "members", "capacity_bytes", 1e6, kMaxBytes);
    if (d.member.capacity_bytes > it->second.capacity_bytes)
      r.fail("members.capacity_bytes.value",
             "must not exceed the model's capacity (" + std::to_string(it->second.capacity_bytes) + ")");
  }
  d.composition = r.text(j, "", "composition", {"single", "raid0"});
  if (d.composition == "single" && d.member_count != 1)
    r.fail("composition", "\"single\" needs exactly one member");
  if (d.composition == "raid0") {
    d.stripe_bytes = r.integer_figure(j, "", "stripe_bytes", 4096, 1LL << 30);
    if ((d.stripe_bytes & (d.stripe_bytes - 1)) != 0)
      r.fail("stripe_bytes.value", "must be a power of two");
  }
  if (j.contains("switch")) {
    const json& s = j["switch"];
    r.only_keys(s, "switch", {"upstream", "latency_ns"});
    d.has_switch = true;
    d.upstream = read_host_interface(r, s, "upstream");
    d.switch_latency_ns = r.integer_figure(s, "switch", "latency_ns", 0, 1e7);
  }
  d.datasheet = read_datasheet(r, j, "datasheet", sources);
  return d;
}

DeviceSpec device_of_model(const SsdModel& m) {
  DeviceSpec d;
  d.name = m.name;
  d.model = m.name;
  d.description = m.description;
  d.member = m;
  d.datasheet = m.datasheet;
  return d;
}

// Merges `overlay` into `base` key by key (objects recursively, everything else replaced).
void merge_into(json& base, const json& overlay) {
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    if (base.contains(it.key()) && base[it.key()].is_object() && it->is_object() &&
        !it->contains("value"))
      merge_into(base[it.key()], *it);
    else
      base[it.key()] = *it;
  }
}

ChassisSpec read_chassis(const Reader& r, const json& j) {
  ChassisSpec chassis;
  const json& ch = r.member(j, "", "chassis");
  r.only_keys(ch, "chassis",
              {"power_typical_w", "power_max_w", "max_iops", "max_bandwidth_bytes_per_second"});
  chassis.power_typical_w = r.integer_figure(ch, "chassis", "power_typical_w", 1, 1e6);
  chassis.power_max_w = r.integer_figure(ch, "chassis", "power_max_w", 1, 1e6);
  if (chassis.power_max_w < chassis.power_typical_w)
    r.fail("chassis.power_max_w", "must be at least power_typical_w");
  chassis.max_iops = r.integer_figure(ch, "chassis", "max_iops", 1, 1e10);
  chassis.max_bandwidth_bytes_per_second =
      r.integer_figure(ch, "chassis", "max_bandwidth_bytes_per_second", 1, kMaxRate);
  return chassis;
}

ControllerSpec read_controllers(const Reader& r, const json& j) {
  ControllerSpec controllers;
  const json& c = r.member(j, "", "controllers");
  r.only_keys(c, "controllers", {"count", "cpu_cores", "cpu_clock_mhz", "dram_bytes",
                                 "host_ports", "management_port_speed_gbps"});
  controllers.count = static_cast<int>(r.integer_figure(c, "controllers", "count", 2, 2));
  controllers.cpu_cores = static_cast<int>(r.integer_figure(c, "controllers", "cpu_cores", 1, 256));
  controllers.cpu_clock_mhz =
      static_cast<int>(r.integer_figure(c, "controllers", "cpu_clock_mhz", 100, 10000));
  controllers.dram_bytes = r.integer_figure(c, "controllers", "dram_bytes", 1 << 20, 1e14);
  controllers.management_port_speed_gbps =
      static_cast<int>(r.integer_figure(c, "controllers", "management_port_speed_gbps", 1, 400));
  const json& hp = r.member(c, "controllers", "host_ports");
  const std::string hpp = "controllers.host_ports";
  r.only_keys(hp, hpp, {"protocol", "count_per_controller", "speed_gbps", "payload_bytes_per_second"});
  controllers.host_ports.protocol = r.text(hp, hpp, "protocol", {"fc", "iscsi", "nvme-of"});
  controllers.host_ports.count_per_controller =
      static_cast<int>(r.integer_figure(hp, hpp, "count_per_controller", 1, 64));
  controllers.host_ports.speed_gbps = static_cast<int>(r.integer_figure(hp, hpp, "speed_gbps", 1, 800));
  controllers.host_ports.payload_bytes_per_second =
      r.integer_figure(hp, hpp, "payload_bytes_per_second", 1, kMaxRate);
  return controllers;
}

// The DataPacs; `*ssd_model` gets the SSD model they hold (from `ssds`).
DataPacSpec read_datapacs(const Reader& r, const json& j,
                          const std::map<std::string, SsdModel>& ssds, SsdModel* ssd_model) {
  DataPacSpec datapacs;
  const json& d = r.member(j, "", "datapacs");
  r.only_keys(d, "datapacs", {"count", "backplane", "ssd_model", "ssds_per_datapac"});
  datapacs.count = static_cast<int>(r.integer_figure(d, "datapacs", "count", 2, 2));
  datapacs.ssds_per_datapac =
      static_cast<int>(r.integer_figure(d, "datapacs", "ssds_per_datapac", 1, 64));
  datapacs.ssd_model = r.text(d, "datapacs", "ssd_model");
  auto ssd = ssds.find(datapacs.ssd_model);
  if (ssd == ssds.end())
    r.fail("datapacs.ssd_model", "no SSD model \"" + datapacs.ssd_model + "\" in ssds/");
  *ssd_model = ssd->second;
  const json& bp = r.member(d, "datapacs", "backplane");
  r.only_keys(bp, "datapacs.backplane", {"type", "lanes_per_controller", "lane_bytes_per_second"});
  datapacs.backplane.type = r.text(bp, "datapacs.backplane", "type", {"sas", "pcie"});
  datapacs.backplane.lanes_per_controller =
      static_cast<int>(r.integer_figure(bp, "datapacs.backplane", "lanes_per_controller", 1, 64));
  datapacs.backplane.lane_bytes_per_second =
      r.integer_figure(bp, "datapacs.backplane", "lane_bytes_per_second", 1, kMaxRate);
  return datapacs;
}

SupercapSpec read_supercaps(const Reader& r, const json& j) {
  SupercapSpec supercaps;
  const json& sc = r.member(j, "", "supercaps");
  r.only_keys(sc, "supercaps", {"packs", "capacitance_farads_per_pack", "voltage_max",
                                "voltage_min", "charge_power_w"});
  supercaps.packs = static_cast<int>(r.integer_figure(sc, "supercaps", "packs", 1, 16));
  supercaps.capacitance_farads_per_pack =
      r.figure(sc, "supercaps", "capacitance_farads_per_pack", 0.001, 1e5);
  supercaps.voltage_max = r.figure(sc, "supercaps", "voltage_max", 0.1, 1000);
  supercaps.voltage_min = r.figure(sc, "supercaps", "voltage_min", 0, 1000);
  if (supercaps.voltage_min >= supercaps.voltage_max)
    r.fail("supercaps.voltage_min", "must be below voltage_max");
  supercaps.charge_power_w = r.figure(sc, "supercaps", "charge_power_w", 0.1, 1e5);
  return supercaps;
}

SystemPreset read_system(const Reader& r, const json& j,
                         const std::map<std::string, SsdModel>& ssds) {
  r.only_keys(j, "", {"schema", "name", "abstract", "description", "vendor", "model",
                      "list_price_usd", "chassis", "controllers", "datapacs", "supercaps",
                      "published_capacity_tb"});
  SystemPreset s;
  s.file = r.file();
  s.name = r.text(j, "", "name");
  s.model = r.text(j, "", "model");
  s.vendor = r.optional_text(j, "", "vendor");
  s.description = r.optional_text(j, "", "description");
  s.list_price_usd = r.integer_figure(j, "", "list_price_usd", 1, 1e12);

  s.chassis = read_chassis(r, j);
  s.controllers = read_controllers(r, j);
  s.datapacs = read_datapacs(r, j, ssds, &s.ssd);
  s.supercaps = read_supercaps(r, j);

  if (j.contains("published_capacity_tb")) {
    const json& pc = j["published_capacity_tb"];
    r.only_keys(pc, "published_capacity_tb", {"pre_raid", "RAID10", "RAID5"});
    s.published_capacity.present = true;
    s.published_capacity.pre_raid_tb = r.figure(pc, "published_capacity_tb", "pre_raid", 0.001, 1e6);
    s.published_capacity.raid10_tb = r.figure(pc, "published_capacity_tb", "RAID10", 0.001, 1e6);
    s.published_capacity.raid5_tb = r.figure(pc, "published_capacity_tb", "RAID5", 0.001, 1e6);
  }
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// sources.json: its keys are the names every figure may cite.
std::set<std::string> read_sources(const std::map<std::string, std::string>& files) {
  const std::string file = "sources.json";
  auto it = files.find(file);
  if (it == files.end()) fail(file, "", "missing: every figure must name a source in it");
  const std::set<std::string> none;
  Reader r(file, none);
  const json j = parse_json(file, it->second);
  r.only_keys(j, "", {"schema", "comment", "sources"});
  check_schema(r, j, "afasim.sources/1");
  const json& src = r.member(j, "", "sources");
  if (!src.is_object()) fail(file, "sources", "must be an object");
  std::set<std::string> sources;
  for (auto s = src.begin(); s != src.end(); ++s) {
    if (!s->is_string() || s->get<std::string>().empty())
      fail(file, "sources." + s.key(), "must be a non-empty description");
    sources.insert(s.key());
  }
  return sources;
}

// The system files as written, before `extends` is resolved: name -> (file, json).
using RawSystems = std::map<std::string, std::pair<std::string, json>>;

RawSystems read_raw_systems(const std::map<std::string, std::string>& files,
                            const std::set<std::string>& sources) {
  RawSystems raw;
  for (const auto& [path, text] : files) {
    if (!starts_with(path, "systems/")) continue;
    json j = parse_json(path, text);
    Reader r(path, sources);
    r.only_keys(j, "", {"schema", "name", "abstract", "extends", "description", "vendor",
                        "model", "list_price_usd", "chassis", "controllers", "datapacs",
                        "supercaps", "published_capacity_tb"});
    check_schema(r, j, "afasim.system/1");
    const std::string name = r.text(j, "", "name");
    const std::string expected = "systems/" + name + ".json";
    if (path != expected) fail(path, "name", "must match the file name (" + expected + ")");
    if (j.contains("abstract") && !j["abstract"].is_boolean())
      fail(path, "abstract", "must be true or false");
    raw[name] = {path, std::move(j)};
  }
  return raw;
}

// True if the dotted key path `key` ("controllers.host_ports.speed_gbps") names a member of `node`.
bool defines_key(const json* node, const std::string& key) {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t dot = key.find('.', pos);
    const std::string part = key.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!node->is_object() || !node->contains(part)) return false;
    node = &(*node)[part];
    if (dot == std::string::npos) return true;
    pos = dot + 1;
  }
}

// The file to blame for `key` of a system merged from `chain` (the child first): the file
// nearest the child that defines the key or, failing that, its closest parent key; `path`
// (the child's file) when none does.
std::string origin_of(const std::vector<const json*>& chain, const RawSystems& raw,
                      const std::string& path, std::string key) {
  for (;;) {
    for (const json* file_json : chain) {
      if (!defines_key(file_json, key)) continue;
      for (const auto& [n, e] : raw)
        if (&e.second == file_json) return e.first;
    }
    const std::size_t dot = key.rfind('.');
    if (dot == std::string::npos) return path;
    key.resize(dot);
  }
}

// The concrete system `name`: its `extends` chain merged (parents first), then read.
SystemPreset resolve_system(const RawSystems& raw, const std::string& name,
                            const std::set<std::string>& sources,
                            const std::map<std::string, SsdModel>& ssds) {
  const std::string& path = raw.at(name).first;
  const json& j = raw.at(name).second;
  std::vector<const json*> chain{&j};
  std::set<std::string> seen{name};
  const json* cur = &j;
  while (cur->contains("extends")) {
    Reader r(path, sources);
    const std::string parent = r.text(*cur, "", "extends");
    if (!seen.insert(parent).second) fail(path, "extends", "cycle through \"" + parent + "\"");
    auto p = raw.find(parent);
    if (p == raw.end()) fail(path, "extends", "no system \"" + parent + "\" in systems/");
    cur = &p->second.second;
    chain.push_back(cur);
  }
  json merged = json::object();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) merge_into(merged, **it);
  merged.erase("extends");
  merged.erase("abstract");
  merged.erase("schema");
  Reader r(path, sources, [&chain, &raw, &path](const std::string& key) {
    return origin_of(chain, raw, path, key);
  });
  return read_system(r, merged, ssds);
}

}  // namespace

double SsdModel::rated_endurance_bytes() const {
  return dwpd * static_cast<double>(capacity_bytes) * 365.0 * static_cast<double>(warranty_years);
}

double SupercapSpec::usable_energy_joules() const {
  return packs * 0.5 * capacitance_farads_per_pack *
         (voltage_max * voltage_max - voltage_min * voltage_min);
}

sim::Result<Catalog> Catalog::from_files(const std::map<std::string, std::string>& files) {
  try {
    Catalog cat;
    const std::set<std::string> sources = read_sources(files);
    bool have_capacity = false;
    for (const auto& [path, text] : files) {
      if (starts_with(path, "ssds/")) {
        Reader r(path, sources);
        SsdModel m = read_ssd(r, parse_json(path, text), sources);
        const std::string expected = "ssds/" + m.name + ".json";
        if (path != expected) fail(path, "name", "must match the file name (" + expected + ")");
        cat.ssds_[m.name] = m;
      } else if (path == "models/capacity.json") {
        Reader r(path, sources);
        cat.capacity_ = read_capacity(r, parse_json(path, text));
        have_capacity = true;
      } else if (path == "models/reliability.json") {
        Reader r(path, sources);
        cat.reliability_ = read_reliability(r, parse_json(path, text));
      }
    }
    if (!have_capacity) fail("models/capacity.json", "", "missing");
    for (const auto& [name, m] : cat.ssds_) cat.devices_[name] = device_of_model(m);
    for (const auto& [path, text] : files) {
      if (!starts_with(path, "devices/")) continue;
      Reader r(path, sources);
      DeviceSpec d = read_device(r, parse_json(path, text), cat.ssds_, sources);
      const std::string expected = "devices/" + d.name + ".json";
      if (path != expected) fail(path, "name", "must match the file name (" + expected + ")");
      if (cat.ssds_.count(d.name)) fail(path, "name", "\"" + d.name + "\" is an SSD model's name");
      cat.devices_[d.name] = d;
    }
    const RawSystems raw = read_raw_systems(files, sources);
    for (const auto& [name, entry] : raw) {
      if (entry.second.value("abstract", false)) continue;
      cat.systems_[name] = resolve_system(raw, name, sources, cat.ssds_);
      check_chunk_count(cat.systems_[name], cat.capacity_);
    }
    if (cat.systems_.empty()) fail("systems/", "", "no concrete system preset");
    return cat;
  } catch (const ConfigError& e) {
    return sim::invalid_argument(e.what());
  }
}

sim::Result<Catalog> Catalog::embedded() { return from_files(embedded_files()); }

// A preset file larger than this is refused (the largest shipped one is ~20 KB).
constexpr std::size_t kMaxPresetFileBytes = 4 << 20;

sim::Result<Catalog> Catalog::from_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return sim::invalid_argument(dir + ": no such directory");
  if (!fs::is_directory(dir, ec)) return sim::invalid_argument(dir + ": not a directory");
  std::map<std::string, std::string> files;
  // Every step with an error code: a symlink loop (systems/x.json -> x.json) threw out of the scan (hostile round 28).
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    if (entry.path().extension() != ".json") continue;
    // Lexically: a link to a file elsewhere is a preset of the folder it is in here.
    const std::string rel = entry.path().lexically_relative(dir).generic_string();
    if (!(rel == "sources.json" || starts_with(rel, "systems/") || starts_with(rel, "ssds/") ||
          starts_with(rel, "models/") || starts_with(rel, "devices/")))
      continue;  // workloads/, scenarios/ belong to other readers
    std::error_code file_ec;
    const bool regular = entry.is_regular_file(file_ec);
    if (file_ec) return sim::invalid_argument(entry.path().string() + ": " + file_ec.message());
    if (!regular)  // it was skipped, and its preset then unknown (hostile review 43)
      return sim::invalid_argument(entry.path().string() + ": " + (entry.is_directory(file_ec) ? "a folder" :
                                   "not a regular file (a FIFO or a device?)") + " where a preset's JSON file belongs");
    auto text = read_file_text(entry.path().string(), kMaxPresetFileBytes);
    if (!text.is_ok()) return sim::invalid_argument(text.status().message());
    if (text->size() > kMaxPresetFileBytes)
      return sim::invalid_argument(entry.path().string() + ": larger than " + std::to_string(kMaxPresetFileBytes) +
                                   " bytes");
    files[rel] = std::move(text).value();
  }
  if (ec) return sim::invalid_argument(dir + ": " + ec.message());
  auto catalog = from_files(files);
  // Name the folder the files are in (hostile round 37: "sources.json: (top level): missing").
  if (!catalog.is_ok()) return sim::Status(catalog.status().code(), dir + ": " + catalog.status().message());
  catalog->directory_ = dir;
  return catalog;
}

sim::Result<SystemPreset> Catalog::system(const std::string& name) const {
  auto it = systems_.find(name);
  if (it != systems_.end()) return it->second;
  std::string known;
  for (const auto& n : system_names()) known += (known.empty() ? "" : ", ") + n;
  return sim::not_found("no system preset \"" + name + "\" (known: " + known + ")");
}

sim::Result<DeviceSpec> Catalog::device(const std::string& name) const {
  auto it = devices_.find(name);
  if (it != devices_.end()) return it->second;
  std::string known;
  for (const auto& n : device_names()) known += (known.empty() ? "" : ", ") + n;
  return sim::not_found("no device \"" + name + "\" (known: " + known + ")");
}

std::vector<std::string> Catalog::device_names() const {
  std::vector<std::string> names;
  for (const auto& [n, d] : devices_) names.push_back(n);
  return names;
}

std::vector<std::string> Catalog::system_names() const {
  std::vector<std::string> names;
  for (const auto& [n, s] : systems_) names.push_back(n);
  return names;
}

}  // namespace afasim::config
