// api::EventBus — hands the array's events to the Server-Sent Events streams
// (GET /api/v1/events/stream, docs/api.md "Event stream").
//
// The model thread publish()es every committed event (serve wires it into the Array's event
// listener); each stream holds a Subscription with a bounded queue of the events its filter
// matches. publish() never blocks: a subscriber whose queue is full (a client that stopped
// reading) is closed, and its stream ends; the client reconnects with Last-Event-ID and
// reads the rest from the log. At most `max_subscribers` streams at once (a stream holds an
// HTTP worker while it lasts); subscribe() returns null beyond that.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>

#include "api/observe.h"
#include "controller/objects.h"

namespace afasim::api {

class EventBus {
 public:
  class Subscription {
   public:
    // The next event, waiting up to `timeout`; nullopt on timeout or once closed (then
    // closed() is true).
    std::optional<controller::Event> next(std::chrono::milliseconds timeout);
    bool closed() const;
    // Ends the stream (the client went away, the server stops).
    void close();

   private:
    friend class EventBus;
    Subscription(EventQuery filter, std::size_t capacity) : filter_(std::move(filter)), capacity_(capacity) {}
    void offer(const controller::Event& e);

    const EventQuery filter_;
    const std::size_t capacity_;
    mutable std::mutex mu_;
    std::condition_variable ready_;
    std::deque<controller::Event> queue_;
    bool closed_ = false;
  };

  // REQUIRES: max_subscribers >= 1, queue_capacity >= 1.
  explicit EventBus(std::size_t max_subscribers = 16, std::size_t queue_capacity = 4096);
  ~EventBus();  // close_all()

  // A stream of the events matching `filter` published from now on; null when
  // max_subscribers streams are open.
  std::shared_ptr<Subscription> subscribe(EventQuery filter);
  void publish(const controller::Event& e);
  // Closes every subscription (server stop).
  void close_all();
  std::size_t subscribers() const;

 private:
  const std::size_t max_subscribers_;
  const std::size_t queue_capacity_;
  mutable std::mutex mu_;
  std::list<std::weak_ptr<Subscription>> subscribers_;
};

}  // namespace afasim::api
