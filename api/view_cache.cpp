#include "api/view_cache.h"

#include "api/request.h"

namespace afasim::api {

using nlohmann::json;

std::string list_body(const json& items, std::int64_t total, std::int64_t offset, std::int64_t limit) {
  const json doc{{"items", items}, {"total", total}, {"offset", offset}, {"limit", limit}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

ViewCache::ViewCache(controller::Array& array, serve::ModelThread& model, SystemIdentity identity,
                     std::chrono::milliseconds max_age)
    : array_(array), model_(model), identity_(std::move(identity)), max_age_(max_age) {}

std::shared_ptr<const ViewSnapshot> ViewCache::take() {
  auto s = std::make_shared<ViewSnapshot>();
  s->system_body = system_view(array_, identity_).dump(-1, ' ', false, json::error_handler_t::replace);
  json first_page = json::array();
  for (const auto& [id, v] : array_.volumes()) {
    s->volumes.push_back({id, v.pool_id, v.qos_policy_id, v.name, volume_view(array_, v)});
    if (static_cast<std::int64_t>(first_page.size()) < kDefaultLimit) first_page.push_back(s->volumes.back().view);
  }
  s->volumes_default_body =
      list_body(first_page, static_cast<std::int64_t>(s->volumes.size()), 0, kDefaultLimit);
  s->taken = std::chrono::steady_clock::now();
  return s;
}

std::shared_ptr<const ViewSnapshot> ViewCache::get() {
  std::uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool current = current_ && current_generation_ == generation_;
    if (current && std::chrono::steady_clock::now() - current_->taken < max_age_) return current_;
    // Stale by age only, and another thread is taking a new one: the old one will do.
    if (current && taking_) return current_;
    taking_ = true;
    generation = generation_;
  }
  std::shared_ptr<const ViewSnapshot> fresh;
  try {
    fresh = model_.call([this] { return take(); });
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    taking_ = false;
    throw;
  }
  std::lock_guard<std::mutex> lock(mu_);
  taking_ = false;
  // A change made while this one was being taken makes it stale at birth: keep the newer
  // generation's claim (the next get() takes another).
  if (generation == generation_) {
    current_ = fresh;
    current_generation_ = generation;
  }
  return fresh;
}

std::shared_ptr<const ViewSnapshot> ViewCache::peek() {
  std::lock_guard<std::mutex> lock(mu_);
  const bool current = current_ && current_generation_ == generation_;
  if (current && (taking_ || std::chrono::steady_clock::now() - current_->taken < max_age_))
    return current_;
  return nullptr;
}

void ViewCache::invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
}

}  // namespace afasim::api
