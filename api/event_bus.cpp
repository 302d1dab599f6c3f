#include "api/event_bus.h"

#include "sim/assert.h"

namespace afasim::api {

std::optional<controller::Event> EventBus::Subscription::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait_for(lock, timeout, [this] { return closed_ || !queue_.empty(); });
  if (closed_ || queue_.empty()) return std::nullopt;
  controller::Event e = std::move(queue_.front());
  queue_.pop_front();
  return e;
}

bool EventBus::Subscription::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void EventBus::Subscription::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    queue_.clear();
  }
  ready_.notify_all();
}

void EventBus::Subscription::offer(const controller::Event& e) {
  if (!filter_.matches(e)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    if (queue_.size() >= capacity_) {
      // A reader this far behind is closed rather than holding the publisher or memory.
      closed_ = true;
      queue_.clear();
    } else {
      queue_.push_back(e);
    }
  }
  ready_.notify_all();
}

EventBus::EventBus(std::size_t max_subscribers, std::size_t queue_capacity)
    : max_subscribers_(max_subscribers), queue_capacity_(queue_capacity) {
  AFASIM_ASSERT(max_subscribers >= 1 && queue_capacity >= 1, "EventBus bounds");
}

EventBus::~EventBus() { close_all(); }

std::shared_ptr<EventBus::Subscription> EventBus::subscribe(EventQuery filter) {
  std::lock_guard<std::mutex> lock(mu_);
  subscribers_.remove_if([](const auto& w) {
    auto s = w.lock();
    return !s || s->closed();
  });
  if (subscribers_.size() >= max_subscribers_) return nullptr;
  // The cursor and page fields are the stream's business, not the filter's.
  filter.after.reset();
  filter.before.reset();
  std::shared_ptr<Subscription> s(new Subscription(std::move(filter), queue_capacity_));
  subscribers_.push_back(s);
  return s;
}

void EventBus::publish(const controller::Event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = subscribers_.begin(); it != subscribers_.end();) {
    if (auto s = it->lock()) {
      s->offer(e);
      ++it;
    } else {
      it = subscribers_.erase(it);
    }
  }
}

void EventBus::close_all() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : subscribers_)
    if (auto s = w.lock()) s->close();
  subscribers_.clear();
}

std::size_t EventBus::subscribers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (const auto& w : subscribers_)
    if (auto s = w.lock(); s && !s->closed()) ++n;
  return n;
}

}  // namespace afasim::api
