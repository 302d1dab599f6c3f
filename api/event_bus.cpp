#include "api/event_bus.h"

#include <stdexcept>

namespace afasim::api {

bool EventBus::Subscription::authorized_locked() {
  if (closed_) return false;
  if (!authorized_ || authorized_()) return true;
  closed_ = true;  // the user, the session or the password it was opened with is gone
  queue_.clear();
  if (sink_) sink_->close();
  return false;
}

void EventBus::Subscription::attach(std::shared_ptr<http::StreamSink> sink, std::int64_t last_sent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
  if (!authorized_locked()) {
    sink_->close();
    return;
  }
  last_sent_id_ = last_sent_id;
  std::deque<controller::Event> queued;
  queued.swap(queue_);
  for (const auto& e : queued) {
    if (e.id <= last_sent_id_) continue;
    if (!send_locked(sse_message(e))) return;
    last_sent_id_ = e.id;
  }
}

bool EventBus::Subscription::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ || (sink_ && sink_->closed());
}

void EventBus::Subscription::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  queue_.clear();
  if (sink_) sink_->close();
}

bool EventBus::Subscription::send_locked(const std::string& text) {
  if (sink_->write(text)) return true;
  // Gone, or too far behind (the sink's bound): the connection is closed by the server.
  closed_ = true;
  return false;
}

void EventBus::Subscription::offer(const controller::Event& e) {
  if (!filter_.matches(e)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!authorized_locked()) return;
  if (!sink_) {
    if (queue_.size() >= capacity_) {
      closed_ = true;  // never attached, and this far behind: give the slot back
      queue_.clear();
    } else {
      queue_.push_back(e);
    }
    return;
  }
  if (e.id <= last_sent_id_) return;
  if (send_locked(sse_message(e))) last_sent_id_ = e.id;
}

void EventBus::Subscription::keep_alive(std::chrono::milliseconds max_age) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!authorized_locked() || !sink_) return;
  if (std::chrono::steady_clock::now() - started_ >= max_age) {
    closed_ = true;
    sink_->close();  // a clean end: the EventSource reconnects with Last-Event-ID
    return;
  }
  (void)send_locked(": keep-alive\n\n");  // a comment: lets a gone client be noticed
}

EventBus::EventBus(EventBusOptions options) : options_(options) {
  if (options_.max_subscribers < 1 || options_.max_subscribers > 4096)
    throw std::invalid_argument("EventBus: max_subscribers must be 1..4096");
  if (options_.max_per_address < 1 || options_.max_per_address > options_.max_subscribers)
    throw std::invalid_argument("EventBus: max_per_address must be 1..max_subscribers");
  if (options_.max_per_user < 1 || options_.max_per_user > options_.max_subscribers)
    throw std::invalid_argument("EventBus: max_per_user must be 1..max_subscribers");
  if (options_.queue_capacity < 1) throw std::invalid_argument("EventBus: queue_capacity must be >= 1");
  if (options_.max_age.count() < 1) throw std::invalid_argument("EventBus: max_age must be positive");
}

EventBus::~EventBus() { close_all(); }

void EventBus::prune_locked() {
  subscribers_.remove_if([](const auto& w) {
    auto s = w.lock();
    return !s || s->closed();
  });
}

std::shared_ptr<EventBus::Subscription> EventBus::subscribe(EventQuery filter, const std::string& address,
                                                            std::function<bool()> authorized, const std::string& user) {
  std::lock_guard<std::mutex> lock(mu_);
  prune_locked();
  if (subscribers_.size() >= options_.max_subscribers) return nullptr;
  std::size_t from_address = 0, of_user = 0;
  for (const auto& w : subscribers_)
    if (auto s = w.lock()) {
      from_address += s->address() == address;
      of_user += !user.empty() && s->user() == user;
    }
  if (from_address >= options_.max_per_address || of_user >= options_.max_per_user) return nullptr;
  // The cursor and page fields are the stream's business, not the filter's.
  filter.after.reset();
  filter.before.reset();
  std::shared_ptr<Subscription> s(
      new Subscription(std::move(filter), address, user, options_.queue_capacity, std::move(authorized)));
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

void EventBus::keep_alive() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : subscribers_)
    if (auto s = w.lock()) s->keep_alive(options_.max_age);
  prune_locked();
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
