#include "nbd/nbd_exports.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>

#include "config/size.h"

namespace afasim::nbd {

using controller::Array;
using controller::Host;
using controller::Id;
using controller::InitiatorType;

namespace {

// How specific a pattern is: an exact address beats every glob; among globs, more literal
// characters win ("10.0.0.*" over "10.*" over "*").
constexpr int kExactMatch = 1 << 20;
int specificity(std::string_view pattern) {
  if (pattern.find_first_of("*?[") == std::string_view::npos) return kExactMatch;
  return static_cast<int>(std::count_if(pattern.begin(), pattern.end(), [](char c) {
    return c != '*' && c != '?' && c != '[' && c != ']';
  }));
}

ExportInfo make_export(const Array& array, const controller::Mapping& m,
                       const controller::Volume& v, const Host& h) {
  ExportInfo e;
  e.name = v.name;
  e.volume_id = v.id;
  e.mapping_id = m.id;
  e.host_id = h.id;
  e.lun = m.lun;
  e.size_bytes = v.capacity_bytes;
  e.read_only = m.access == controller::MappingAccess::kReadOnly;
  e.description = "volume \"" + v.name + "\": " + config::human_bytes(v.capacity_bytes) + " " +
                  std::string(raid::raid_type_name(v.raid_type)) + " " +
                  std::string(controller::to_string(v.provisioning)) + ", LUN " +
                  std::to_string(m.lun) + " of host \"" + h.name + "\", " +
                  (e.read_only ? "read-only" : "read-write");
  return e;
}

}  // namespace

bool initiator_matches(std::string_view pattern, std::string_view client_address) {
  if (pattern == client_address) return true;
  if (pattern.find_first_of("*?[") == std::string_view::npos) return false;
  const std::string p(pattern), s(client_address);
  return ::fnmatch(p.c_str(), s.c_str(), 0) == 0;
}

std::vector<std::string> nbd_initiator_patterns(const Array& array) {
  std::vector<std::string> out;
  for (const auto& [id, host] : array.hosts())
    for (const controller::Initiator& i : host.initiators)
      if (i.type == InitiatorType::kNbd) out.push_back(i.address);
  return out;
}

const Host* host_for_client(const Array& array, std::string_view client_address) {
  const Host* best = nullptr;
  int best_score = -1;
  for (const auto& [id, host] : array.hosts()) {  // ascending id: ties keep the lowest
    for (const controller::Initiator& i : host.initiators) {
      if (i.type != InitiatorType::kNbd || !initiator_matches(i.address, client_address)) continue;
      const int score = specificity(i.address);
      if (score > best_score) {
        best = &host;
        best_score = score;
      }
    }
  }
  return best;
}

std::vector<ExportInfo> visible_exports(const Array& array, std::string_view client_address) {
  std::vector<ExportInfo> out;
  const Host* h = host_for_client(array, client_address);
  if (h == nullptr) return out;
  for (const auto& [id, m] : array.mappings()) {
    if (m.host_id != h->id) continue;
    const controller::Volume* v = array.volume(m.volume_id);
    if (v != nullptr) out.push_back(make_export(array, m, *v, *h));
  }
  std::sort(out.begin(), out.end(),
            [](const ExportInfo& a, const ExportInfo& b) { return a.lun < b.lun; });
  return out;
}

std::optional<ExportInfo> find_export(const Array& array, std::string_view client_address,
                                      std::string_view name) {
  for (ExportInfo& e : visible_exports(array, client_address))
    if (name.empty() ? e.lun == 0 : e.name == name) return std::move(e);
  return std::nullopt;
}

bool export_still_mapped(const Array& array, const ExportInfo& e) {
  const controller::Mapping* m = array.mapping(e.mapping_id);
  return m != nullptr && m->volume_id == e.volume_id && m->host_id == e.host_id &&
         (m->access == controller::MappingAccess::kReadOnly) == e.read_only;
}

std::vector<proto::BlockDescriptor> allocation_map(const Array& array, Id volume_id,
                                                 std::uint64_t offset, std::uint32_t length,
                                                 bool first_only) {
  const controller::Volume* v = array.volume(volume_id);
  AFASIM_ASSERT(v != nullptr && length > 0 &&
                    offset + length <= static_cast<std::uint64_t>(v->capacity_bytes),
                "allocation_map outside the volume");
  const auto extent = static_cast<std::uint64_t>(array.extent_bytes(v->raid_type));
  std::vector<proto::BlockDescriptor> runs;
  const std::uint64_t end = offset + length;
  for (std::uint64_t pos = offset; pos < end;) {
    const std::uint64_t next = std::min(end, (pos / extent + 1) * extent);
    const bool allocated =
        array.data_path().is_allocated(volume_id, static_cast<std::int64_t>(pos));
    const std::uint32_t flags = allocated ? 0 : (proto::kStateHole | proto::kStateZero);
    const auto bytes = static_cast<std::uint32_t>(next - pos);
    if (!runs.empty() && runs.back().flags == flags) {
      runs.back().length_bytes += bytes;
    } else {
      if (first_only && !runs.empty()) break;
      runs.push_back({bytes, flags});
    }
    pos = next;
  }
  return runs;
}

}  // namespace afasim::nbd
