#include "redfish/events.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <string_view>

#include "redfish/internal.h"
#include "redfish/service.h"
#include "config/json_text.h"

namespace afasim::redfish {
namespace {

// The Redfish resource an event's object ("volume/3", "drive/8", ...) names; the service
// root for the array itself and for what Redfish does not serve (QoS policies, faults).
std::string origin(const std::string& object, const controller::Array& array) {
  const std::size_t slash = object.find('/');
  if (slash == std::string::npos) return uri("");
  const std::string kind = object.substr(0, slash), id = object.substr(slash + 1);
  controller::Id n = 0;
  for (char ch : id) {
    if (ch < '0' || ch > '9') return uri("");
    n = n * 10 + (ch - '0');
  }
  if (kind == "volume" && array.volume(n)) return volume_uri(n);
  if (kind == "drive" && array.drive(n)) return drive_uri(*array.drive(n));
  if (kind == "pool" && array.pool(n)) return storage_uri() + "/StoragePools/" + id;
  if (kind == "host" && array.host(n)) return storage_uri() + "/EndpointGroups/" + id;
  if (kind == "mapping" && array.mapping(n)) return storage_uri() + "/Connections/" + id;
  if (kind == "datapac") return uri("/Chassis/" + datapac_chassis_id(n));
  if (kind == "controller")
    if (const controller::ControllerInfo* c = array.controller(n)) return uri("/Managers/" + c->name);
  if (kind == "user") return uri("/AccountService/Accounts/" + id);
  return uri("");
}

const char* severity(controller::Severity s) {
  switch (s) {
    case controller::Severity::kInfo: return "OK";
    case controller::Severity::kWarning: return "Warning";
    case controller::Severity::kError:
    case controller::Severity::kCritical: return "Critical";
  }
  return "OK";
}

// EventType (deprecated in Event v1_3 but still required by EventRecord): alerts are
// Alert, state changes of the hardware and volumes StatusChange, the rest Other.
const char* event_type(const controller::Event& e) {
  if (e.category == "alert") return "Alert";
  for (const char* c : {"drive", "volume", "controller", "power", "rebuild", "datapac", "pool"})
    if (e.category == c) return "StatusChange";
  return "Other";
}

// "drive" -> "Drive": the last segment of the MessageId (Afasim.1.0.Drive).
std::string message_key(std::string category) {
  std::string out;
  bool upper = true;
  for (char ch : category) {
    if (ch == '_' || ch == '-' || ch == ' ') {
      upper = true;
      continue;
    }
    if (!std::isalnum(static_cast<unsigned char>(ch))) continue;
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out.empty() ? "Event" : out;
}

// The wall clock, ISO 8601 UTC: when the service saw the event (the model's clock is
// virtual; Oem.Afasim.SimulatedTimeNs carries it).
std::string now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct Destination {
  std::string host;
  int port = 80;
  std::string path;
};

// http://HOST[:PORT][/PATH] with HOST a loopback address; nullopt otherwise.
std::optional<Destination> parse_destination(const std::string& url) {
  const std::string scheme = "http://";
  if (url.size() > 2048 || url.rfind(scheme, 0) != 0) return std::nullopt;
  // A URL is printable ASCII (RFC 3986); a space, a CR or LF, or any other control character
  // So is anything RFC 3986 leaves out (" < > \ ^ ` { | }) and a % not followed by two hex
  // So is anything RFC 3986 leaves out (" < > \\ ^ ` { | }) and a % not followed by two hex
  // digits: they went out raw on the request line (hostile round 31).
  for (std::size_t i = 0; i < url.size(); ++i) {
    const char ch = url[i];
    if (ch <= ' ' || ch > '~' || std::string_view("\"<>\\^`{|}").find(ch) != std::string_view::npos) return std::nullopt;
    if (ch == '%' && (i + 2 >= url.size() || !std::isxdigit(static_cast<unsigned char>(url[i + 1])) ||
                      !std::isxdigit(static_cast<unsigned char>(url[i + 2]))))
      return std::nullopt;
  }
  const std::size_t slash = url.find('/', scheme.size());
  const std::string authority = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
  Destination d;
  d.path = slash == std::string::npos ? "/" : url.substr(slash);
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    d.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    const std::size_t colon = authority.find(':');
    d.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    d.port = std::stoi(port);
    if (d.port < 1 || d.port > 65535) return std::nullopt;
  }
  const bool loopback = d.host == "localhost" || d.host == "::1" ||
                        (d.host.rfind("127.", 0) == 0 && d.host.find_first_not_of("0123456789.") == std::string::npos);
  if (!loopback) return std::nullopt;
  return d;
}

}  // namespace

Events::Events(EventsOptions options) : options_(options) {
  if (options_.max_subscriptions < 1 || options_.max_subscriptions > 1024 || options_.max_streams < 1 ||
      options_.max_streams > 1024 || options_.queue_capacity < 1 || options_.delivery_retry_attempts < 0 ||
      options_.delivery_retry_attempts > 10 || options_.delivery_retry_interval_seconds < 1 ||
      options_.delivery_retry_interval_seconds > 3600 || options_.max_streams_per_address < 1 ||
      options_.max_streams_per_address > options_.max_streams || options_.max_streams_per_user < 1 ||
      options_.max_streams_per_user > options_.max_streams || options_.stream_max_age.count() < 1 ||
      options_.stream_keep_alive < std::chrono::milliseconds(10) || options_.stream_keep_alive > std::chrono::minutes(10))
    throw std::invalid_argument(
        "EventsOptions: max_subscriptions and max_streams 1..1024, queue_capacity >= 1, delivery_retry_attempts 0..10, "
        "delivery_retry_interval_seconds 1..3600, max_streams_per_address and max_streams_per_user 1..max_streams, "
        "stream_max_age > 0, "
        "stream_keep_alive 10 ms..10 min");
  sender_ = std::thread([this] { send_loop(); });
  keeper_ = std::thread([this] { keep_loop(); });
}

Events::~Events() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& s : streams_) s.sink->close();
    streams_.clear();
  }
  cv_.notify_all();
  keeper_cv_.notify_all();
  sender_.join();
  keeper_.join();
}

nlohmann::json Events::event_document(const controller::Event& e, const controller::Array& array) {
  json record = {{"MemberId", "0"},
                 {"EventType", event_type(e)},
                 {"EventId", std::to_string(e.id)},
                 {"EventTimestamp", now_iso8601()},
                 {"MessageId", "Afasim.1.0." + message_key(e.category)},
                 {"Message", e.message},
                 {"MessageSeverity", severity(e.severity)},
                 {"OriginOfCondition", link(origin(e.object, array))},
                 {"Oem", {{"Afasim", {{"Category", e.category},
                                      {"Object", e.object},
                                      {"Actor", e.actor},
                                      {"SimulatedTimeNs", e.time_ns}}}}}};
  return {{"@odata.type", "#Event.v1_13_0.Event"},
          {"Id", std::to_string(e.id)},
          {"Name", "afasim event " + std::to_string(e.id)},
          {"Events", json::array({record})},
          {"Events@odata.count", 1}};
}

void Events::observe_tasks(const controller::Array& array) {
  std::lock_guard<std::mutex> lock(mu_);
  observe_tasks_locked(array);
}

void Events::observe_tasks_locked(const controller::Array& array) {
  const controller::RebuildStatus& r = array.data_path().rebuild_status();
  const std::int64_t now_ns = array.simulator().now();
  bool seen = false;
  for (RebuildTask& t : tasks_) {
    if (t.ended_ns >= 0) continue;
    if (r.active && t.drive_index == r.drive && t.started_ns == r.started_ns) {
      t.percent = static_cast<int>(r.percent());
      seen = true;
    } else {  // its rebuild is no longer the running one: it finished
      t.ended_ns = now_ns;
      t.percent = 100;
      t.end_time = now_iso8601();
    }
  }
  if (r.active && !seen) {
    if (tasks_.size() >= kMaxTasks) tasks_.erase(tasks_.begin());
    tasks_.push_back({next_task_id_++, r.drive, r.started_ns, -1, static_cast<int>(r.percent()), now_iso8601(), ""});
  }
}

std::vector<RebuildTask> Events::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_;
}

void Events::publish(const controller::Event& e, const controller::Array& array) {
  json doc = event_document(e, array);
  std::lock_guard<std::mutex> lock(mu_);
  if (e.category == "rebuild" || e.category == "drive" || e.category == "volume") observe_tasks_locked(array);
  std::string text = "id: " + std::to_string(e.id) + "\ndata: " + config::dump_json(doc) + "\n\n";
  write_streams_locked(text);
  if (recent_.size() >= kRecentEvents) recent_.pop_front();
  recent_.emplace_back(e.id, std::move(text));
  if (subscriptions_.empty()) return;
  for (const auto& [id, sub] : subscriptions_) {
    doc["Context"] = sub.context;
    if (queue_.size() >= options_.queue_capacity) {
      queue_.pop_front();
      ++dropped_;
    }
    queue_.push_back({id, sub.destination, config::dump_json(doc)});
  }
  cv_.notify_one();
}

void Events::send_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Delivery d = std::move(queue_.front());
    queue_.pop_front();
    bool ok = false;
    const auto gone = [&] { return !subscriptions_.contains(d.subscription); };
    for (int attempt = 0; attempt <= options_.delivery_retry_attempts; ++attempt) {
      // Nothing goes to a subscription deleted since the event was queued (hostile round 31:
      // a deleted subscription still got its queued events, and each one still waiting for a
      // dead destination held every live subscriber up by the retry interval).
      if (gone()) break;
      if (attempt > 0) {
        // Wait the interval; a stop or the subscription's deletion ends it.
        const auto interval = std::chrono::seconds(options_.delivery_retry_interval_seconds);
        if (cv_.wait_for(lock, interval, [&] { return stop_ || gone(); })) {
          if (stop_) return;
          break;
        }
        ++subscriptions_.find(d.subscription)->second.retries;
      }
      lock.unlock();
      ok = post_once(d);
      lock.lock();
      if (ok || stop_) break;
    }
    if (auto it = subscriptions_.find(d.subscription); it != subscriptions_.end()) (ok ? it->second.delivered : it->second.failed)++;
  }
}

bool Events::post_once(const Delivery& d) {
  auto dest = parse_destination(d.destination);
  if (!dest) return false;
  httplib::Client client(dest->host, dest->port);
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(2));
  client.set_write_timeout(std::chrono::seconds(2));
  auto res = client.Post(dest->path, d.body, "application/json");
  return res && res->status / 100 == 2;
}

sim::Result<Subscription> Events::subscribe(const std::string& destination, const std::string& context,
                                            const std::string& owner) {
  if (!parse_destination(destination))
    return sim::invalid_argument("Destination must be an http:// URL (RFC 3986's characters) on a loopback address (127.0.0.1, [::1], localhost), not " +
                                 destination.substr(0, 200));
  if (context.size() > 1024) return sim::invalid_argument("Context is longer than 1024 bytes");
  std::lock_guard<std::mutex> lock(mu_);
  if (subscriptions_.size() >= options_.max_subscriptions)
    return sim::conflict("the service holds " + std::to_string(options_.max_subscriptions) +
                         " subscriptions already; delete one first");
  Subscription s{next_id_++, destination, context, owner};
  subscriptions_[s.id] = s;
  return s;
}

std::vector<Subscription> Events::subscriptions() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Subscription> out;
  for (const auto& [id, s] : subscriptions_) out.push_back(s);
  return out;
}

sim::Status Events::unsubscribe(std::int64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (subscriptions_.erase(id) == 0) return sim::not_found("no event subscription " + std::to_string(id));
    // Its queued events go with it; the sender, if it is waiting to retry one, wakes and drops it.
    std::erase_if(queue_, [id](const Delivery& d) { return d.subscription == id; });
  }
  cv_.notify_all();
  return sim::Status::ok();
}

std::string Events::stream_refusal_locked(const std::string& address, const std::string& user) {
  std::erase_if(streams_, [](const Stream& s) { return s.sink->closed(); });
  const auto count = [&](auto&& pred) { return static_cast<std::size_t>(std::count_if(streams_.begin(), streams_.end(), pred)); };
  if (streams_.size() < options_.max_streams &&
      count([&](const Stream& s) { return s.address == address; }) < options_.max_streams_per_address &&
      (user.empty() || count([&](const Stream& s) { return s.user == user; }) < options_.max_streams_per_user))
    return "";
  return "too many event streams are open (" + std::to_string(options_.max_streams) + " in all, " +
         std::to_string(options_.max_streams_per_address) + " per client address, " +
         std::to_string(options_.max_streams_per_user) + " per user); try again later";
}

std::string Events::stream_refusal(const std::string& address, const std::string& user) {
  std::lock_guard<std::mutex> lock(mu_);
  return stream_refusal_locked(address, user);
}

bool Events::attach_stream(std::shared_ptr<http::StreamSink> sink, const std::string& address,
                           std::function<bool()> authorized, const std::string& user, std::int64_t after) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stream_refusal_locked(address, user).empty()) return false;
  if (after >= 0) {
    std::string catch_up;
    // A reconnect from before the oldest event kept: say what is missing, once.
    if (!recent_.empty() && recent_.front().first > after + 1)
      catch_up = ": events " + std::to_string(after + 1) + ".." + std::to_string(recent_.front().first - 1) +
                 " are not replayed (a stream replays only events since the server started, the last " +
                 std::to_string(kRecentEvents) + " of them); GET /api/v1/events lists them\n\n";
    for (const auto& [id, text] : recent_)
      if (id > after) catch_up += text;
    if (!catch_up.empty() && !sink->write(std::move(catch_up))) {
      sink->close();
      return true;  // attached and gone at once: the slot is not taken
    }
  }
  streams_.push_back({std::move(sink), address, user, std::move(authorized), std::chrono::steady_clock::now()});
  return true;
}

std::int64_t Events::stream_position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recent_.empty() ? 0 : recent_.back().first;
}

void Events::write_streams_locked(const std::string& text) {
  std::erase_if(streams_, [&text](const Stream& s) {
    if ((!s.authorized || s.authorized()) && s.sink->write(text)) return false;
    s.sink->close();  // gone, too far behind, or its credentials no longer hold
    return true;
  });
}

void Events::keep_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!keeper_cv_.wait_for(lock, options_.stream_keep_alive, [this] { return stop_; })) {
    // Old streams end cleanly (an SSE client reconnects); the others get a comment.
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(streams_, [&](const Stream& s) {
      if (now - s.started < options_.stream_max_age) return false;
      s.sink->close();
      return true;
    });
    write_streams_locked(": keep-alive\n\n");
  }
}

std::int64_t Events::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace afasim::redfish
