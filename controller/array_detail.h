// Helpers shared by the Array's source files (array.cpp, array_volumes.cpp, array_hosts.cpp).
// Not part of the controller's interface.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/size.h"
#include "controller/objects.h"

namespace afasim::controller::array_detail {

using config::human_bytes;

inline constexpr const char* kMetaSystem = "system";
inline constexpr const char* kMetaInitialized = "initialized";
inline constexpr const char* kMetaNextEventId = "next_id.event";
inline constexpr const char* kMetaClock = "clock_ns";

inline std::string object_name(const char* kind, Id id) { return std::string(kind) + "/" + std::to_string(id); }

inline std::string qos_text(const QosSettings& q) {
  auto f = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; };
  return "min " + f(q.min_iops) + " / max " + f(q.max_iops) + " / burst " + f(q.burst_iops) + " IOPS";
}

template <typename Map>
const typename Map::mapped_type* find_in(const Map& m, Id id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

template <typename T>
void apply_puts(std::map<Id, T>& into, const std::vector<T>& items, const std::vector<Id>& deleted) {
  for (const T& item : items) into[item.id] = item;
  for (Id id : deleted) into.erase(id);
}

template <typename T>
void apply_qos_patch(QosSettings& qos, const T& patch) {
  if (patch.min_iops) qos.min_iops = *patch.min_iops;
  if (patch.max_iops) qos.max_iops = *patch.max_iops;
  if (patch.burst_iops) qos.burst_iops = *patch.burst_iops;
}

}  // namespace afasim::controller::array_detail
