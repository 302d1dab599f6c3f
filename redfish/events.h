// redfish::Events — the Redfish EventService (docs/swordfish.md "Events"): the array's event
// log as Redfish Event documents, pushed to subscribers (EventDestination, HTTP POST to a
// loopback URL) and streamed as Server-Sent Events (GET /redfish/v1/EventService/SSE).
//
// publish() runs on the model thread (afasim serve wires it into the Array's event listener)
// and never blocks: it writes each event into the SSE sinks (bounded by the HTTP front end's
// stream buffer: a reader that does not keep up is dropped) and queues one delivery per
// subscription; a sender thread of its own POSTs them (2 s timeouts), retrying a failed one
// EventsOptions::delivery_retry_attempts times.
// Bounds: `max_subscriptions` subscriptions, `max_streams` SSE streams (`max_streams_per_address`
// from one client address), `queue_capacity` deliveries waiting (at the bound the oldest is
// dropped and counted). Subscriptions live in memory: a restart ends them, as it ends sessions.
// A keeper thread writes an SSE comment to every stream each `stream_keep_alive` (a client
// that went away is noticed and its slot freed) and ends the streams older than
// `stream_max_age`, as /api/v1/events/stream does (api/event_bus.h): one client cannot hold
// every slot for ever. A stream also ends when the credentials it was opened with no longer
// hold (attach_stream's `authorized`, asked before each event and keep-alive): a deleted
// user, a revoked or expired session, a new password (hostile round 18).
//
// Destinations must be http:// on a loopback address (127.0.0.0/8, ::1, localhost): a
// simulator that POSTs wherever a client asks is a request-forgery tool.
//
// Thread-safety: every method may be called from any thread, publish() from one at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "controller/array.h"
#include "http/message.h"
#include "sim/status.h"

namespace afasim::redfish {

struct EventsOptions {
  std::size_t max_subscriptions = 16;  // 1..1024
  std::size_t max_streams = 16;        // SSE streams at once, 1..1024 (as /api/v1/events/stream)
  std::size_t queue_capacity = 1024;   // deliveries waiting for the sender, >= 1
  // A failed POST (no answer, or not 2xx) is tried again this many times, 0..10, each after
  // `delivery_retry_interval_seconds`, 1..3600 (EventService DeliveryRetryAttempts /
  // DeliveryRetryIntervalSeconds). The sender retries in place: while it waits, the
  // deliveries behind it wait too (still bounded by queue_capacity). 3 and 2 s: a subscriber
  // restarting within ~6 s loses nothing, and a dead one holds the queue at most 3 × (2 s
  // timeout + 2 s) = 12 s per event.
  int delivery_retry_attempts = 3;
  int delivery_retry_interval_seconds = 2;
  // SSE streams from one client address, 1..max_streams; the same 4 as /api/v1/events/stream
  // (api::EventBusOptions), so that one client leaves the other slots to others.
  std::size_t max_streams_per_address = 4;
  // SSE streams of one user, 1..max_streams: one user with several client addresses still
  // leaves the other slots to others (hostile round 19: a monitor on two addresses held all 8).
  std::size_t max_streams_per_user = 4;
  // A stream older than this is ended at the next keep-alive (an SSE client reconnects), as
  // api::EventBusOptions::max_age; > 0.
  std::chrono::milliseconds stream_max_age{std::chrono::hours(1)};
  // How often the keeper writes the keep-alive comment and ends old streams, 10 ms..10 min
  // (15 s: as api::RestServerOptions::event_stream_keep_alive).
  std::chrono::milliseconds stream_keep_alive{15'000};
};

struct Subscription {
  std::int64_t id = 0;
  std::string destination;  // "http://127.0.0.1:8000/events"
  std::string context;      // echoed in every Event's Context
  std::string owner;        // the user who made it ("" without authentication)
  std::int64_t delivered = 0, failed = 0;  // events delivered; events given up after every retry
  std::int64_t retries = 0;                 // POSTs that were retries of a failed one
};

// A rebuild as a Redfish Task (TaskService): seen running, then completed.
struct RebuildTask {
  std::int64_t id = 0;
  int drive_index = -1;             // the failed drive being rebuilt (drive id − 1)
  std::int64_t started_ns = 0;      // simulated time the rebuild started
  std::int64_t ended_ns = -1;       // simulated time it was seen finished; -1 while running
  int percent = 0;
  std::string start_time, end_time;  // wall clock (ISO 8601) when the service saw it start, end
};

class Events {
 public:
  // Throws std::invalid_argument for options out of range. Starts the sender thread.
  explicit Events(EventsOptions options = {});
  ~Events();  // stops the sender (deliveries still queued are dropped) and closes the streams
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  // The Redfish Event document for `e` (model thread: it reads `array` to name the resource).
  static nlohmann::json event_document(const controller::Event& e, const controller::Array& array);
  // Hands `e` to every stream and subscription. Model thread.
  void publish(const controller::Event& e, const controller::Array& array);

  // kInvalidArgument (destination not http:// on loopback, or malformed), kConflict (at
  // max_subscriptions).
  sim::Result<Subscription> subscribe(const std::string& destination, const std::string& context,
                                      const std::string& owner = "");
  std::vector<Subscription> subscriptions() const;
  sim::Status unsubscribe(std::int64_t id);  // kNotFound
  // Adds an SSE stream from `user` at client `address` that lasts while `authorized` answers
  // true (null: no such check); false at max_streams, max_streams_per_address from the
  // address or max_streams_per_user of the user.
  // `after`: the stream_position() taken when the request came in; the events published
  // since (up to kRecentEvents of them) are written first, so that none falls between the
  // response's headers and the stream's start (the redfish_clients test's drive event, missed
  // on a loaded machine). Negative: from now.
  bool attach_stream(std::shared_ptr<http::StreamSink> sink, const std::string& address = "",
                     std::function<bool()> authorized = {}, const std::string& user = "", std::int64_t after = -1);
  // The id of the newest event published (0 before the first).
  std::int64_t stream_position() const;
  static constexpr std::size_t kRecentEvents = 256;
  // Why a stream from `user` at `address` would be refused now ("" when a slot is free): the
  // SSE route answers 503 before it opens the stream.
  std::string stream_refusal(const std::string& address, const std::string& user);
  std::int64_t dropped() const;  // deliveries dropped at the queue's bound
  const EventsOptions& options() const { return options_; }

  // TaskService: the rebuilds the service has seen (publish() looks at the rebuild after
  // every event; call observe_tasks() before reading to see the live percentage). The last
  // kMaxTasks are kept (the oldest completed one goes first). Model thread for observe_tasks.
  static constexpr std::size_t kMaxTasks = 64;
  void observe_tasks(const controller::Array& array);
  std::vector<RebuildTask> tasks() const;

 private:
  struct Delivery {
    std::int64_t subscription = 0;
    std::string destination;
    std::string body;
  };
  struct Stream {
    std::shared_ptr<http::StreamSink> sink;
    std::string address;
    std::string user;
    std::function<bool()> authorized;  // null: always
    std::chrono::steady_clock::time_point started;
  };
  std::string stream_refusal_locked(const std::string& address, const std::string& user);  // REQUIRES: mu_ held
  void send_loop();
  void keep_loop();  // the keeper thread: keep-alive comments, old and unauthorized streams ended
  // Writes `text` to every stream still authorized; ends and forgets the others. REQUIRES: mu_ held.
  void write_streams_locked(const std::string& text);
  static bool post_once(const Delivery& d);  // one POST: true on a 2xx answer

  const EventsOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::int64_t, Subscription> subscriptions_;
  std::int64_t next_id_ = 1;
  std::vector<Stream> streams_;
  // The SSE text of the last kRecentEvents events, by event id (attach_stream's catch-up).
  std::deque<std::pair<std::int64_t, std::string>> recent_;
  std::condition_variable keeper_cv_;
  std::deque<Delivery> queue_;
  std::int64_t dropped_ = 0;
  std::vector<RebuildTask> tasks_;  // oldest first
  std::int64_t next_task_id_ = 1;
  void observe_tasks_locked(const controller::Array& array);
  bool stop_ = false;
  std::thread sender_;
  std::thread keeper_;
};

}  // namespace afasim::redfish
