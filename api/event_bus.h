// api::EventBus — hands the array's events to the Server-Sent Events streams
// (GET /api/v1/events/stream, docs/api.md "Event stream").
//
// The model thread publish()es every committed event (serve wires it into the Array's event
// listener); each stream holds a Subscription. Until its HTTP response is under way a
// subscription keeps the events its filter matches in a bounded queue; attach() hands it the
// response's sink, and from then on publish() writes each matching event into the sink as
// one SSE message. Nothing here blocks and nothing grows without bound:
// - publish() only queues bytes into a sink (http::StreamSink, bounded by the server's
//   stream_buffer_max_bytes): a client that does not keep up has its stream closed, and
//   reconnects with Last-Event-ID to read the rest from the log;
// - a subscription not yet attached holds at most `queue_capacity` events (then it closes);
// - at most `max_subscribers` streams at once, `max_per_address` from one client address,
//   `max_per_user` of one user; subscribe() returns null beyond any (the handler answers 503);
// - keep_alive() (the server calls it every `keep_alive` period) writes an SSE comment to
//   every stream, so that a client that went away is noticed and its slot freed, and ends
//   the streams older than `max_age` (an EventSource reconnects where it stopped), so that
//   no client holds a slot forever.
// A stream also ends when the credentials it was opened with no longer hold (its
// `authorized` check, api::Auth::credential_check: a deleted user, a revoked or expired
// session, a new password): it is asked before every event and every keep-alive, so a
// deleted user's stream carries nothing after the deletion (hostile round 18).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "api/observe.h"
#include "controller/objects.h"
#include "http/message.h"

namespace afasim::api {

struct EventBusOptions {
  std::size_t max_subscribers = 16;  // streams at once, 1..4096
  std::size_t max_per_address = 4;   // streams from one client address, 1..max_subscribers
  std::size_t queue_capacity = 4096; // events a stream not yet attached may hold, >= 1
  // A stream older than this is ended at the next keep_alive(); the client reconnects.
  std::chrono::milliseconds max_age{std::chrono::hours(1)};
  // Streams of one user whatever its addresses, 1..max_subscribers: one monitor on several
  // addresses leaves the other slots to others (hostile round 19, on Redfish's streams).
  std::size_t max_per_user = 4;
};

class EventBus {
 public:
  class Subscription {
   public:
    // Starts the stream into `sink`: writes what was queued since subscribe(), then every
    // matching event as it is published. Events with an id <= `last_sent_id` are skipped
    // (the backlog already carried them).
    void attach(std::shared_ptr<http::StreamSink> sink, std::int64_t last_sent_id);
    bool closed() const;
    // Ends the stream (its last chunk is sent when attached); idempotent.
    void close();
    const std::string& address() const { return address_; }
    const std::string& user() const { return user_; }

   private:
    friend class EventBus;
    Subscription(EventQuery filter, std::string address, std::string user, std::size_t capacity,
                 std::function<bool()> authorized)
        : filter_(std::move(filter)), address_(std::move(address)), user_(std::move(user)), capacity_(capacity),
          authorized_(std::move(authorized)), started_(std::chrono::steady_clock::now()) {}
    // False (and closed) when the credentials no longer hold. REQUIRES: mu_ held.
    bool authorized_locked();
    void offer(const controller::Event& e);
    // Writes `text` into the sink; false (and closed) when the sink refuses it.
    bool send_locked(const std::string& text);
    void keep_alive(std::chrono::milliseconds max_age);

    const EventQuery filter_;
    const std::string address_;
    const std::string user_;  // "" without authentication
    const std::size_t capacity_;
    const std::function<bool()> authorized_;  // null: always
    const std::chrono::steady_clock::time_point started_;
    mutable std::mutex mu_;
    std::deque<controller::Event> queue_;  // before attach()
    std::shared_ptr<http::StreamSink> sink_;
    std::int64_t last_sent_id_ = 0;
    bool closed_ = false;
  };

  // Throws std::invalid_argument for options out of range.
  explicit EventBus(EventBusOptions options = {});
  ~EventBus();  // close_all()

  // A stream of the events matching `filter` published from now on, for a client at
  // `address` as `user` ("" without authentication), that lasts while `authorized` answers
  // true (null: no such check); null when max_subscribers streams are open, max_per_address
  // from the address or max_per_user of the user.
  std::shared_ptr<Subscription> subscribe(EventQuery filter, const std::string& address = "",
                                          std::function<bool()> authorized = {}, const std::string& user = "");
  void publish(const controller::Event& e);
  // Writes a keep-alive comment to every attached stream and ends those older than max_age;
  // forgets the closed ones.
  void keep_alive();
  // Closes every subscription (server stop).
  void close_all();
  std::size_t subscribers() const;
  const EventBusOptions& options() const { return options_; }

 private:
  void prune_locked();

  const EventBusOptions options_;
  mutable std::mutex mu_;
  std::list<std::weak_ptr<Subscription>> subscribers_;
};

}  // namespace afasim::api
