// `afasim devices`: the bare devices `--device` runs on, with their build and datasheet.
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/device_run.h"
#include "config/file_text.h"
#include "config/preset.h"
#include "ssd/device.h"

namespace afasim::app {
namespace {

struct DevicesOptions {
  std::string config_dir;
};

std::string rate(double bytes_per_second) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB/s", bytes_per_second / 1e9);
  return b;
}

int run_devices(const DevicesOptions& o) {
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded()
                                      : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) {
    std::fprintf(stderr, "afasim devices: %s\n", config::printable(catalog.status().message()).c_str());
    return 2;
  }
  std::printf("%-34s %-9s %-64s %s\n", "NAME", "CAPACITY", "BUILD", "DATASHEET (seq R/W, 4K R/W IOPS)");
  for (const auto& name : catalog->device_names()) {
    const config::DeviceSpec d = catalog->device(name).value();
    const auto& m = d.member;
    char build[128];
    if (d.member_count > 1)  // members at the capacity the card uses (over-provisioned: less)
      std::snprintf(build, sizeof build, "%d x %s at %.2f TB, PCIe %d.0 x%d switch, %s", d.member_count,
                    m.name.c_str(), static_cast<double>(m.capacity_bytes) / 1e12, d.upstream.pcie_generation,
                    d.upstream.lanes, d.composition == "raid0" ? "RAID 0" : "single");
    else
      std::snprintf(build, sizeof build, "%s, %d ch x %d %s dies", m.host.kind == "sas" ? "SAS" : "NVMe",
                    m.geometry.channels, m.geometry.dies_per_channel, m.nand.type.c_str());
    const auto& ds = d.datasheet;
    std::string sheet = "-";
    if (!ds.source.empty()) {
      char b[160];
      std::snprintf(b, sizeof b, "%s / %s, %lld / %lld (%s)",
                    rate(static_cast<double>(ds.seq_read_bytes_per_second)).c_str(),
                    rate(static_cast<double>(ds.seq_write_bytes_per_second)).c_str(),
                    static_cast<long long>(ds.random_read_iops),
                    static_cast<long long>(ds.random_write_iops > 0 ? ds.random_write_iops
                                                                    : ds.random_write_iops_fob),
                    ds.source.c_str());
      sheet = b;
    }
    std::printf("%-34s %6.2f TB %-64s %s\n", name.c_str(),
                static_cast<double>(d.capacity_bytes()) / 1e12, build, sheet.c_str());
  }
  return 0;
}

}  // namespace

std::unique_ptr<DeviceRun> open_device_run(const std::string& who, const std::string& config_dir,
                                           const std::string& device, const std::string& start,
                                           std::uint64_t seed) {
  auto catalog = config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(config_dir);
  if (!catalog.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), config::printable(catalog.status().message()).c_str());
    return nullptr;
  }
  auto spec = catalog->device(device);
  if (!spec.is_ok()) {
    std::fprintf(stderr, "%s: --device: %s\n", who.c_str(), config::printable(spec.status().message()).c_str());
    return nullptr;
  }
  auto state = ssd::parse_start_state(start);
  if (!state.is_ok()) {
    std::fprintf(stderr, "%s: --device-state: %s\n", who.c_str(), config::printable(state.status().message()).c_str());
    return nullptr;
  }
  ssd::DeviceOptions options;
  options.start = *state;
  auto dev = ssd::Device::create(*spec, options);
  if (!dev.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), config::printable(dev.status().message()).c_str());
    return nullptr;
  }
  auto run = std::make_unique<DeviceRun>(seed);
  run->target = std::make_unique<workload::DeviceTarget>(run->sim, std::move(dev).value());
  return run;
}

Runner add_devices_command(CLI::App& app) {
  auto o = std::make_shared<DevicesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "devices", "List the bare devices that `fio --device` and `vdbench --device` run on");
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  return [o] { return run_devices(*o); };
}

}  // namespace afasim::app
