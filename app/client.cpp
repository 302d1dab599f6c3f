// The client commands' HTTP client and output (app/client.h).
#include "app/client.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "config/file_text.h"
#include "config/json_text.h"

namespace afasim::app {
namespace {

using nlohmann::json;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "HTTP 409: detail" from an error answer; the problem document's detail when there is one.
// An error answer: afasim's are problem documents (RFC 9457: title, status, detail), so an
// answer that is not one came from something else at --url (hostile round 15: a web server's
// 404 page was exit 3, "refused"; docs/cli.md says exit 1).
ClientError refused(const httplib::Response& res, const std::string& url) {
  const json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || !body.contains("title") || !body.contains("status"))
    return ClientError(kExitFailure, "HTTP " + std::to_string(res.status) +
                                         ": the answer is not an afasim problem document (is " + url +
                                         " an afasim array?)");
  std::string detail = res.body.substr(0, 200);
  std::string title;
  if (body.is_object() && body.contains("detail") && body["detail"].is_string())
    detail = body["detail"].get<std::string>();
  if (body.is_object() && body.contains("title") && body["title"].is_string())
    title = " " + body["title"].get<std::string>();
  // New-user trial 17: the 401 did not say where a password comes from.
  if (res.status == 401 && detail.find("needs credentials") != std::string::npos)
    detail += "; the admin's password is in the state directory's admin-password file "
              "(var/afasim/admin-password under make run): give it with --password-file FILE or AFASIM_PASSWORD_FILE";
  return ClientError(kExitRefused, "refused (" + std::to_string(res.status) + title + "): " + detail);
}

// `waited_s`: how long the request had run when it failed. A read error well before
// --timeout is the server closing the connection unanswered, which is what an HTTPS server
// does with a plain HTTP request.
ClientError unreachable(const std::string& url, httplib::Error e, double waited_s, double timeout_s) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection: why = "could not connect (is afasim serve running there?)"; break;
    case httplib::Error::Read:
      if (waited_s >= 0.9 * timeout_s) why = "no answer in time (--timeout)";
      else if (url.rfind("http://", 0) == 0)
        why = "the connection closed without an answer (an HTTPS server? use https://... with "
              "--cacert STATE/tls/afasim.crt for --tls self-signed)";
      else why = "the connection closed without an answer";
      break;
    case httplib::Error::Write: why = "the connection broke while sending"; break;
    case httplib::Error::SSLServerVerification:
      why = "its TLS certificate is not trusted (--cacert STATE/tls/afasim.crt for --tls self-signed)";
      break;
    case httplib::Error::SSLConnection: why = "the TLS handshake failed (an http:// server?)"; break;
    default: why = httplib::to_string(e); break;
  }
  return ClientError(kExitUnreachable, "cannot reach the array at " + url + ": " + why);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The first line of the password file `path`. Reads a bounded prefix: a file with no line
// end (--password-file /dev/zero) was read by std::getline until memory ran out.
std::string password_from_file(const std::string& path) {
  constexpr std::size_t kMaxPasswordBytes = 1024;  // docs/api.md "Users": 8 to 1024 bytes
  const auto text = config::read_file_text(path, kMaxPasswordBytes + 2);
  std::string line = text.is_ok() ? text->substr(0, text->find('\n')) : std::string();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kMaxPasswordBytes)
    throw ClientError(kExitUsage, "--password-file " + path + ": its first line is longer than " +
                                      std::to_string(kMaxPasswordBytes) +
                                      " bytes, the longest password");
  if (line.empty())
    throw ClientError(kExitUsage, "--password-file " + path + ": cannot read a password from it");
  return line;
}

// --url (or $AFASIM_URL): http[s]://HOST[:PORT][/PATH], HOST a name, an IPv4 address or an
// [IPv6] one, PORT 1 to 65535; kExitUsage otherwise. The length is bounded before the regex:
// std::regex recurses per character, and a 120,000-character URL overflowed the stack
// (SIGSEGV). A port out of range, an unclosed [ or user:password@ were tried as addresses and
// reported as an array that cannot be reached (exit 4), not as a bad flag.
// Visible ASCII only (no space, no control character): what goes into a request line or header
// as it is.
bool visible_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch > ' ' && ch < 0x7f; });
}

void check_url(const std::string& url) {
  constexpr std::size_t kMaxUrlBytes = 2048;
  static const std::regex form(
      R"(^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:([0-9]{1,5}))?(/[^?#]*)?$)");
  std::smatch m;
  if (url.size() <= kMaxUrlBytes && visible_ascii(url) && std::regex_match(url, m, form)) {
    if (!m[3].matched) return;  // the scheme's port
    const auto port = whole_number(m[3].str());
    if (port && *port >= 1 && *port <= 65535) return;
  }
  const std::string shown =
      url.size() > 200 ? url.substr(0, 200) + "... (" + std::to_string(url.size()) + " bytes)"
                       : url;
  throw ClientError(kExitUsage,
                    "--url must be http[s]://HOST:PORT[/PATH] (a port of 1 to 65535, at most " +
                        std::to_string(kMaxUrlBytes) +
                        " bytes; credentials go in --user and "
                        "--password), got \"" +
                        shown + "\"");
}

}  // namespace

std::optional<std::int64_t> whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

void resolve_client_options(ClientOptions& o) {
  if (o.url.empty()) o.url = env("AFASIM_URL");
  if (o.url.empty()) o.url = "http://127.0.0.1:8080";
  if (o.user.empty()) o.user = env("AFASIM_USER");
  if (o.password.empty()) o.password = env("AFASIM_PASSWORD");
  if (o.token.empty()) o.token = env("AFASIM_TOKEN");
  if (o.password_file.empty()) o.password_file = env("AFASIM_PASSWORD_FILE");
  if (o.ca_cert.empty()) o.ca_cert = env("AFASIM_CACERT");
  if (o.password.empty() && !o.password_file.empty())
    o.password = password_from_file(o.password_file);
  // A password without a user name is the admin's (the first start's user).
  if (o.user.empty() && !o.password.empty()) o.user = "admin";
  check_url(o.url);
  // The token goes into the Authorization header as it is: a line break in it would add
  // headers or a second request.
  if (!visible_ascii(o.token))
    throw ClientError(kExitUsage, "--token (or AFASIM_TOKEN) must be one word of visible ASCII: no spaces, line "
                                  "breaks or control characters");
}

ApiClient::ApiClient(const ClientOptions& options) : options_(options) {
  const std::string scheme = options_.url.substr(0, options_.url.find("://") + 3);
  const std::string rest = options_.url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string host_port = rest.substr(0, slash);
  if (slash != std::string::npos) base_path_ = rest.substr(slash);
  while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
  http_ = std::make_unique<httplib::Client>(scheme + host_port);
  if (!options_.ca_cert.empty()) http_->set_ca_cert_path(options_.ca_cert.c_str());
  const auto secs = static_cast<time_t>(options_.timeout_seconds);
  const auto usecs = static_cast<time_t>((options_.timeout_seconds - static_cast<double>(secs)) * 1e6);
  http_->set_connection_timeout(std::min<time_t>(secs, 5), usecs);
  http_->set_read_timeout(secs, usecs);
  http_->set_write_timeout(secs, usecs);
  if (!options_.token.empty()) http_->set_bearer_token_auth(options_.token.c_str());
  else if (!options_.user.empty()) http_->set_basic_auth(options_.user.c_str(), options_.password.c_str());
}

ApiClient::~ApiClient() = default;

std::string ApiClient::full_path(const std::string& path) const {
  if (path.rfind("/api/", 0) == 0 || path.rfind("/metrics", 0) == 0) return base_path_ + path;
  return base_path_ + "/api/v1" + path;
}

namespace {

// An answer of the management API is small (a list of 4,096 volumes is a few MB): one larger
// than this is not an afasim array's (hostile round 16: an endless body grew the client to 8 GB).
// The header section is not bounded by the library (cpp-httplib 0.11 caps a header line, not
// their number): ApiClient::exchange watches the process's memory while it reads.
constexpr std::size_t kMaxAnswerBytes = 64 << 20;

ClientError answer_too_large(const std::string& request, const std::string& url) {
  return ClientError(kExitFailure, request + ": the answer is larger than " + std::to_string(kMaxAnswerBytes >> 20) +
                                       " MiB (is " + url + " an afasim array?)");
}

std::string shown_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// The process's resident memory, bytes (/proc/self/statm); 0 when it cannot be read.
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}

// On its own thread until destroyed: every 100 ms `check()`; the first time it returns true,
// or `seconds` after construction, `stop()` once and no more. The destructor joins the thread.
class Watchdog {
 public:
  template <typename C, typename S>
  Watchdog(double seconds, C check, S stop)
      : thread_([this, seconds, check = std::move(check), stop = std::move(stop)]() mutable {
          const auto deadline = std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(seconds));
          std::unique_lock<std::mutex> lock(mu_);
          while (!cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + kPeriod),
                                 [this] { return done_; })) {
            if (check() || std::chrono::steady_clock::now() >= deadline) return stop();
          }
        }) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  static constexpr std::chrono::milliseconds kPeriod{100};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace

httplib::Response ApiClient::exchange(const std::string& method, const std::string& path, const std::string& body) {
  httplib::Request req;
  req.method = method;
  req.path = full_path(path);
  if (method == "POST" || method == "PATCH") {
    req.body = body;
    req.headers.emplace("Content-Type", "application/json");
  }
  std::string body_in;
  bool too_large = false;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    if (body_in.size() + n > kMaxAnswerBytes) return !(too_large = true);
    body_in.append(data, n);
    return true;
  };
  httplib::Response answer;
  httplib::Error error = httplib::Error::Success;
  const auto start = std::chrono::steady_clock::now();
  bool sent = false, late = false, huge_headers = false;
  {
    // --timeout bounds the exchange, not each read: a watchdog stops the request when it is
    // over (a server that sent a byte a second was waited for without end). Joined on every
    // path, an exception's included.
    // The body is capped above; the header section is not (cpp-httplib 0.11 caps a header
    // line, not their number: a server streaming header lines grew the client ~150 MB a
    // second), so its growth is watched here: kMaxAnswerBytes x 4 of memory at most.
    const std::int64_t rss_before = resident_bytes();
    Watchdog watchdog(
        options_.timeout_seconds,
        [&] { return huge_headers = resident_bytes() > rss_before + 4 * static_cast<std::int64_t>(kMaxAnswerBytes); },
        [&] {
          late = !huge_headers;
          http_->stop();
        });
    sent = http_->send(req, answer, error);
  }  // the watchdog joined: its flags are read from here on
  if ((too_large || huge_headers) && !sent) throw answer_too_large(method + " " + req.path, options_.url);
  if (late && !sent) {
    const bool changes = method != "GET";
    throw ClientError(kExitUnreachable, "cannot reach the array at " + options_.url + ": no whole answer within " +
                                            shown_seconds(options_.timeout_seconds) + " (--timeout)" +
                                            (changes ? "; the request was sent, so the array may have applied it: "
                                                       "check before retrying"
                                                     : ""));
  }
  if (!sent) throw unreachable(options_.url, error, seconds_since(start), options_.timeout_seconds);
  answer.body = std::move(body_in);
  return answer;
}

json ApiClient::send(const std::string& method, const std::string& path, const json* body) {
  const std::string p = full_path(path);
  const std::string text = body ? config::dump_json(*body) : std::string();
  const httplib::Response answer = exchange(method, path, text);
  const httplib::Response* res = &answer;
  if (res->status >= 400) throw refused(*res, options_.url);
  if (res->status == 204 || res->body.empty()) return nullptr;
  json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded())
    throw ClientError(kExitFailure, method + " " + p + ": the answer is not JSON (is " + options_.url + " an afasim array?)");
  return j;
}

json ApiClient::get(const std::string& path) { return send("GET", path, nullptr); }
json ApiClient::post(const std::string& path, const json& body) { return send("POST", path, &body); }
json ApiClient::patch(const std::string& path, const json& body) { return send("PATCH", path, &body); }
void ApiClient::del(const std::string& path) { send("DELETE", path, nullptr); }

std::string ApiClient::get_text(const std::string& path) {
  httplib::Response res = exchange("GET", path, "");
  if (res.status >= 400) throw refused(res, options_.url);
  return std::move(res.body);
}

std::int64_t ApiClient::stream(const std::string& path, std::int64_t last_id,
                               const std::function<bool(std::int64_t, const std::string&)>& on_data) {
  std::string buffer;
  std::int64_t id = last_id;
  bool stopped = false;
  int error_status = 0;
  httplib::Headers headers;
  if (last_id > 0) headers.emplace("Last-Event-ID", std::to_string(last_id));
  // Messages end with a blank line; each has "id: N" and "data: {...}" lines.
  bool too_large = false;
  auto receive = [&](const char* data, std::size_t n) {
    buffer.append(data, n);
    if (error_status != 0) return buffer.size() < (1 << 20);  // an error's body
    if (buffer.size() > kMaxAnswerBytes) return !(too_large = true);  // no message end in sight
    std::size_t end;
    while ((end = buffer.find("\n\n")) != std::string::npos) {
      const std::string message = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      std::string payload;
      std::int64_t message_id = 0;
      std::size_t i = 0;
      while (i < message.size()) {
        const std::size_t nl = std::min(message.find('\n', i), message.size());
        const std::string line = message.substr(i, nl - i);
        if (line.rfind("id: ", 0) == 0)
          message_id = whole_number(line.substr(4)).value_or(message_id);
        if (line.rfind("data: ", 0) == 0) payload = line.substr(6);
        i = nl + 1;
      }
      if (payload.empty()) continue;  // retry: or a keep-alive comment
      id = message_id;
      if (!on_data(id, payload)) {
        stopped = true;
        return false;
      }
    }
    return true;
  };
  auto on_response = [&](const httplib::Response& r) {
    if (r.status >= 400) error_status = r.status;
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  auto res = http_->Get(full_path(path), headers, on_response, receive);
  if (error_status != 0) {
    httplib::Response r;
    r.status = error_status;
    r.body = buffer;
    throw refused(r, options_.url);
  }
  if (too_large) throw answer_too_large("GET " + full_path(path), options_.url);
  if (!res && !stopped && res.error() != httplib::Error::Canceled)
    throw unreachable(options_.url, res.error(), seconds_since(start), options_.timeout_seconds);
  return id;
}

std::int64_t ApiClient::resolve(const std::string& collection, const std::string& noun, const std::string& ref) {
  // Names may be all digits ("1", "007"), so digits are not taken for an id on sight: a
  // volume named "1" and a volume with id 1 that is another one made `volume delete 1` delete
  // the other (hostile round 21). Digits are an id unless an object has them as its name;
  // when one does and another object has them as its id, the REF is refused as ambiguous.
  // "id:N" is always the id N; digits with a leading zero ("007") are only ever a name.
  if (ref.starts_with("id:")) {
    if (const auto forced = whole_number(ref.substr(3))) return *forced;
    throw ClientError(kExitUsage, "\"" + ref + "\": id: takes a whole number (id:12)");
  }
  const auto id = ref.starts_with('0') ? std::nullopt : whole_number(ref);
  // The collections the API gives names (the ?name= filter); the others take ids only.
  static const std::set<std::string> kNamed = {"volumes", "pools", "hosts", "qos-policies"};
  if (!kNamed.contains(collection)) {  // mappings, faults: an id only
    if (id) return *id;
    throw ClientError(kExitUsage, "a " + noun + " has no name: give its id, not \"" + ref + "\"");
  }
  const json page = get("/" + collection + "?name=" + httplib::detail::encode_query_param(ref));
  const bool named = page.contains("items") && !page["items"].empty();
  if (!named) {
    if (id) return *id;
    throw ClientError(kExitRefused, "refused: no " + noun + " named \"" + ref + "\"");
  }
  const auto named_id = page["items"][0]["id"].get<std::int64_t>();
  if (!id || *id == named_id) return named_id;
  const httplib::Response other = exchange("GET", "/" + collection + "/" + std::to_string(*id), "");
  if (other.status == 404) return named_id;
  if (other.status >= 400) throw refused(other, options_.url);
  throw ClientError(kExitRefused, "refused: \"" + ref + "\" is ambiguous: " + noun + " " + std::to_string(*id) +
                                      " has that id and " + noun + " " + std::to_string(named_id) +
                                      " that name; give id:" + std::to_string(*id) + " or id:" + std::to_string(named_id));
}

// ---------------------------------------------------------------------------------------

std::string human_bytes(std::int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const bool negative = bytes < 0;
  double v = std::fabs(static_cast<double>(bytes));
  int unit = 0;
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || std::fabs(v - std::round(v)) < 0.05) std::snprintf(buf, sizeof buf, "%.0f %s", std::round(v), kUnits[unit]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return (negative ? "-" : "") + std::string(buf);
}

std::string cell_text(const std::string& key, const json& v, bool exact_bytes) {
  // "capacity.free_bytes.RAID10" is a size too: a unit ends a key or one of its parents.
  const auto ends_with = [&key](const char* suffix) {
    const std::string s(suffix);
    return (key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0) ||
           key.find(s + ".") != std::string::npos;
  };
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() && ends_with("_bytes") && !exact_bytes) return human_bytes(v.get<std::int64_t>());
  if (v.is_number_integer() && ends_with("_ns")) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(v.get<std::int64_t>()) / 1e9);
    return buf;
  }
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_object() && v.contains("type") && v.contains("address"))  // an initiator
    return v["type"].get<std::string>() + ":" + v["address"].get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + cell_text(key, x, exact_bytes);
    return out;
  }
  return config::dump_json(v);
}

std::string Table::str() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  std::vector<bool> numeric(headers_.size(), true);
  static const std::regex number("^-?[0-9][0-9.,]*( [KMGTPE]?i?B| s)?$");
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], r[c].size());
      if (r[c] != "-" && !std::regex_match(r[c], number)) numeric[c] = false;
    }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < headers_.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
      const bool last = c + 1 == headers_.size();
      l += numeric[c] ? pad + cell : cell + (last ? "" : pad);
      if (!last) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return out;
}

const json& at_path(const json& j, const std::string& dotted) {
  static const json kNull = nullptr;
  const json* cur = &j;
  std::size_t i = 0;
  while (i <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', i), dotted.size());
    const std::string part = dotted.substr(i, dot - i);
    if (!cur->is_object() || !cur->contains(part)) return kNull;
    cur = &(*cur)[part];
    i = dot + 1;
  }
  return *cur;
}

void print_list(const ClientOptions& o, const json& page, const std::vector<Column>& columns) {
  if (o.output == "json") {
    std::cout << config::dump_json(page, 2) << "\n";
    return;
  }
  std::vector<std::string> headers;
  for (const auto& c : columns) headers.push_back(c.header);
  Table t(headers);
  for (const auto& item : page.value("items", json::array())) {
    std::vector<std::string> cells;
    for (const auto& c : columns) cells.push_back(cell_text(c.as.empty() ? c.key : c.as, at_path(item, c.key), o.bytes));
    t.row(std::move(cells));
  }
  std::cout << t.str();
}

namespace {
void flatten(const json& j, const std::string& prefix, Table& t, bool exact) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object() && !v.empty()) flatten(v, key, t, exact);
    else if (v.is_array() && !v.empty() && v[0].is_object()) {
      for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], key + "[" + std::to_string(i) + "]", t, exact);
    } else if (v.is_number_integer() && key.size() > 3 && key.compare(key.size() - 3, 3, "_ns") == 0) {
      // The field keeps its unit: nanoseconds, as named, with seconds beside them ("time_ns
      // 12.345 s" read as a unit mismatch in a new-user trial).
      t.row({key, std::to_string(v.get<std::int64_t>()) + " (" + cell_text(key, v, exact) + ")"});
    } else {
      t.row({key, cell_text(key, v, exact)});
    }
  }
}
}  // namespace

void print_object(const ClientOptions& o, const json& object) {
  if (o.output == "json") {
    std::cout << config::dump_json(object, 2) << "\n";
    return;
  }
  Table t({"FIELD", "VALUE"});
  flatten(object, "", t, o.bytes);
  std::cout << t.str();
}

}  // namespace afasim::app
