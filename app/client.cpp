// The client commands' HTTP client and output (app/client.h).
#include "app/client.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
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

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

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
  // afasim serve --tls answers a plain HTTP request with a plain 400 saying so (http/session.cpp).
  if (res.status == 400 && res.body.rfind("This port speaks HTTPS", 0) == 0)
    return ClientError(kExitUnreachable, "cannot reach the array at " + url +
                                             ": it is an HTTPS server (use https://... with --cacert "
                                             "STATE/tls/afasim.crt for --tls self-signed)");
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
// `answered`: this client had answers from `url` before (a --follow whose array stopped): no
// hint that it may be an HTTPS server.
ClientError unreachable(const std::string& url, httplib::Error e, double waited_s, double timeout_s,
                        bool answered = false, bool changes = false) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection: why = "could not connect (is afasim serve running there?)"; break;
    case httplib::Error::Read:
      if (waited_s >= 0.9 * timeout_s) why = "no answer in time (--timeout)";
      else if (answered) why = "the connection closed without an answer (is the array stopping?)";
      else if (url.rfind("http://", 0) == 0)
        why = "the connection closed without an answer (the array stopped, or it is an HTTPS server: then use "
              "https://... with --cacert STATE/tls/afasim.crt for --tls self-signed)";
      else why = "the connection closed without an answer";
      // A change cut off after it was sent (hostile review 42: a server killed during a create
      // gave the HTTPS hint alone).
      if (changes) why += "; the request was sent, so the array may have applied it: check before retrying";
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

// A 3xx is not followed (credentials would go to another address): say where it pointed
// (hostile round 24: the command failed on an empty JSON body, in the JSON library's words).
void check_not_redirect(const httplib::Response& res, const std::string& url) {
  if (res.status < 300 || res.status >= 400) return;
  const std::string to = res.get_header_value("Location");
  throw ClientError(kExitFailure, "the server at " + url + " answered HTTP " + std::to_string(res.status) +
                                      (to.empty() ? std::string(" (a redirect)") : " (a redirect to " + config::printable(to.substr(0, 200)) + ")") +
                                      ": afasim does not follow redirects; give --url the array's own address");
}

// An HTTP error (refused) or a redirect: thrown as the command's error.
void check_answer(const httplib::Response& res, const std::string& url) {
  if (res.status >= 400) throw refused(res, url);
  check_not_redirect(res, url);
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

// For an https:// URL, a --cacert that cannot be read or holds no certificate OpenSSL can read
// is the caller's mistake (exit 2), not an array out of reach (hostile round 24: exit 4,
// "SSLLoadingCerts"). An http:// URL does not use it.
void check_ca_cert(const std::string& path, const std::string& url) {
  if (path.empty() || url.rfind("https://", 0) != 0) return;
  const auto text = config::read_file_text(path, 1 << 20);
  if (!text.is_ok())
    throw ClientError(kExitUsage, "--cacert (or AFASIM_CACERT): " + text.status().message());
  BIO* bio = BIO_new_mem_buf(text->data(), static_cast<int>(text->size()));
  X509* cert = bio != nullptr ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr;
  X509_free(cert);
  BIO_free(bio);
  ERR_clear_error();
  if (cert == nullptr)
    throw ClientError(kExitUsage, "--cacert (or AFASIM_CACERT) " + path +
                                      ": holds no PEM certificate OpenSSL can read; for --tls self-signed it is "
                                      "STATE/tls/afasim.crt");
}

void resolve_client_options(ClientOptions& o) {
  // Both on the command line: the token was used and the password dropped without a word
  // (hostile review 42). One from the environment beside a flag is fine: the flag is meant.
  if (!o.token.empty() && (!o.password.empty() || !o.password_file.empty()))
    throw ClientError(kExitUsage, "--token and --password (or --password-file) both given: send one credential");
  // A credential given as a flag wins over one in the environment (an AFASIM_TOKEN was sent
  // instead of an explicit --password, hostile review 42).
  const bool password_flag = !o.password.empty() || !o.password_file.empty();
  if (o.url.empty()) o.url = env("AFASIM_URL");
  if (o.url.empty()) o.url = "http://127.0.0.1:8080";
  if (o.user.empty()) o.user = env("AFASIM_USER");
  if (o.password.empty()) o.password = env("AFASIM_PASSWORD");
  if (o.token.empty() && !password_flag) o.token = env("AFASIM_TOKEN");
  if (o.password_file.empty()) o.password_file = env("AFASIM_PASSWORD_FILE");
  if (o.ca_cert.empty()) o.ca_cert = env("AFASIM_CACERT");
  if (o.password.empty() && !o.password_file.empty())
    o.password = password_from_file(o.password_file);
  // A password without a user name is the admin's (the first start's user).
  if (o.user.empty() && !o.password.empty()) o.user = "admin";
  // HTTP Basic joins the two with ':' (RFC 7617): such a name would be read as another.
  if (o.user.find(':') != std::string::npos)
    throw ClientError(kExitUsage, "--user (or AFASIM_USER) cannot hold ':': HTTP Basic credentials would split there");
  check_url(o.url);
  check_ca_cert(o.ca_cert, o.url);
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
  set_timeouts();
  if (!options_.token.empty()) http_->set_bearer_token_auth(options_.token.c_str());
  else if (!options_.user.empty()) http_->set_basic_auth(options_.user.c_str(), options_.password.c_str());
}

ApiClient::~ApiClient() = default;

void ApiClient::set_timeouts() {
  const auto secs = static_cast<time_t>(options_.timeout_seconds);
  const auto usecs = static_cast<time_t>((options_.timeout_seconds - static_cast<double>(secs)) * 1e6);
  http_->set_connection_timeout(std::min<time_t>(secs, 5), usecs);
  http_->set_read_timeout(secs, usecs);
  http_->set_write_timeout(secs, usecs);
}

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
// An event stream's reads wait at least this long: the array sends a keep-alive comment every
// 15 s (api::RestServerOptions::event_stream_keep_alive).
constexpr double kStreamQuietMax = 60;
constexpr double kForeverSeconds = 100.0 * 365 * 24 * 3600;

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

// Whether the process grew past what an answer may take since `rss_before` (its resident
// bytes then): kMaxAnswerBytes x 4, a header section without end (exchange, stream).
bool grew_past_answer_bound(std::int64_t rss_before) {
  return resident_bytes() > rss_before + 4 * static_cast<std::int64_t>(kMaxAnswerBytes);
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
        [&] { return huge_headers = grew_past_answer_bound(rss_before); },
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
  if (!sent)
    throw unreachable(options_.url, error, seconds_since(start), options_.timeout_seconds, answered_, method != "GET");
  answered_ = true;
  answer.body = std::move(body_in);
  return answer;
}

json ApiClient::send(const std::string& method, const std::string& path, const json* body) {
  const std::string p = full_path(path);
  const std::string text = body ? config::dump_json(*body) : std::string();
  const httplib::Response answer = exchange(method, path, text);
  const httplib::Response* res = &answer;
  check_answer(*res, options_.url);
  if (res->status == 204 || res->body.empty()) return nullptr;
  json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded())
    throw ClientError(kExitFailure, method + " " + p + ": the answer is not JSON (is " + options_.url + " an afasim array?)");
  return j;
}

json ApiClient::get(const std::string& path) { return send("GET", path, nullptr); }

json ApiClient::get_all(const std::string& collection) {
  constexpr std::int64_t kPage = 1000;  // the API's largest limit
  json all = json::array();
  std::int64_t total = 0;
  // Bounded by the pages the first total needs (and at most 10^4): a list that grows while it
  // is read does not keep the client going.
  for (std::int64_t offset = 0, pages = 0; pages < 10'000; offset += kPage, ++pages) {
    const json page = get(collection + "?limit=" + std::to_string(kPage) + "&offset=" + std::to_string(offset));
    const json& items = page.at("items");
    if (pages == 0) total = page.at("total").get<std::int64_t>();
    for (const json& item : items) all.push_back(item);
    if (items.size() < static_cast<std::size_t>(kPage) || offset + kPage >= total) break;
  }
  return json{{"items", std::move(all)}, {"total", total}, {"offset", 0}, {"limit", total}};
}
json ApiClient::post(const std::string& path, const json& body) { return send("POST", path, &body); }
json ApiClient::patch(const std::string& path, const json& body) { return send("PATCH", path, &body); }
void ApiClient::del(const std::string& path) { send("DELETE", path, nullptr); }

std::string ApiClient::get_text(const std::string& path, const std::string& media_type) {
  httplib::Response res = exchange("GET", path, "");
  check_answer(res, options_.url);
  const std::string type = res.get_header_value("Content-Type");
  if (type.substr(0, type.find(';')) != media_type)
    throw ClientError(kExitFailure, "GET " + full_path(path) + ": the answer is " +
                                        (type.empty() ? std::string("of no Content-Type") : config::printable(type.substr(0, 100))) +
                                        ", not " + media_type + " (is " + options_.url + " an afasim array?)");
  return std::move(res.body);
}

namespace {

// Hands each whole Server-Sent Events message in `buffer` (messages end with a blank line;
// each has "id: N" and "data: {...}" lines) to `on_data` and drops it from the buffer; `id`
// follows the messages' ids. False when on_data asked to stop.
bool take_sse_messages(std::string& buffer, std::int64_t& id,
                       const std::function<bool(std::int64_t, const std::string&)>& on_data) {
  std::size_t end;
  while ((end = buffer.find("\n\n")) != std::string::npos) {
    const std::string message = buffer.substr(0, end);
    buffer.erase(0, end + 2);
    std::string payload;
    std::int64_t message_id = 0;
    for (std::size_t i = 0; i < message.size();) {
      const std::size_t nl = std::min(message.find('\n', i), message.size());
      const std::string line = message.substr(i, nl - i);
      if (line.rfind("id: ", 0) == 0) message_id = whole_number(line.substr(4)).value_or(message_id);
      if (line.rfind("data: ", 0) == 0) payload = line.substr(6);
      i = nl + 1;
    }
    if (payload.empty()) continue;  // retry: or a comment (a keep-alive, the backlog's end)
    id = message_id;
    if (!on_data(id, payload)) return false;
  }
  return true;
}

}  // namespace

std::int64_t ApiClient::stream(const std::string& path, std::int64_t last_id,
                               const std::function<bool(std::int64_t, const std::string&)>& on_data) {
  std::string buffer;
  std::int64_t id = last_id;
  bool stopped = false;
  int error_status = 0;
  httplib::Headers headers;
  if (last_id > 0) headers.emplace("Last-Event-ID", std::to_string(last_id));
  bool too_large = false;
  auto receive = [&](const char* data, std::size_t n) {
    buffer.append(data, n);
    if (error_status != 0) return buffer.size() < (1 << 20);  // an error's body
    if (buffer.size() > kMaxAnswerBytes) return !(too_large = true);  // no message end in sight
    if (take_sse_messages(buffer, id, on_data)) return true;
    stopped = true;
    return false;
  };
  std::atomic<bool> head_seen{false};
  auto on_response = [&](const httplib::Response& r) {
    if (r.status >= 400) error_status = r.status;
    head_seen = true;
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  httplib::Result res{nullptr, httplib::Error::Success};
  bool late = false, huge_headers = false;
  // --timeout bounds the wait for the answer's head, not the gaps between events (an idle
  // array sends a keep-alive every 15 s): the reads wait at least kStreamQuietMax. The header
  // section is watched as exchange() watches it (hostile round 24: an endless one grew the
  // client to 3.9 GB and --timeout did nothing).
  const double quiet = std::max(options_.timeout_seconds, kStreamQuietMax);
  {
    const std::int64_t rss_before = resident_bytes();
    http_->set_read_timeout(static_cast<time_t>(quiet));
    Watchdog watchdog(
        kForeverSeconds,
        [&] {
          huge_headers = grew_past_answer_bound(rss_before);
          late = !head_seen && seconds_since(start) >= options_.timeout_seconds;
          return huge_headers || late;
        },
        [&] { http_->stop(); });
    res = http_->Get(full_path(path), headers, on_response, receive);
    set_timeouts();
  }  // the watchdog joined: its flags are read from here on
  if (error_status != 0) {
    httplib::Response r;
    r.status = error_status;
    r.body = buffer;
    throw refused(r, options_.url);
  }
  if (too_large || huge_headers) throw answer_too_large("GET " + full_path(path), options_.url);
  if (res) check_not_redirect(res.value(), options_.url);
  if (late) throw unreachable(options_.url, httplib::Error::Read, options_.timeout_seconds, options_.timeout_seconds);
  if (!res && !stopped && res.error() != httplib::Error::Canceled) {
    if (head_seen)
      throw ClientError(kExitUnreachable, "cannot reach the array at " + options_.url +
                                              ": the event stream broke off (the array stopped, or nothing came for " +
                                              shown_seconds(quiet) + ")");
    throw unreachable(options_.url, res.error(), seconds_since(start), options_.timeout_seconds, answered_);
  }
  answered_ = true;
  return id;
}

std::int64_t ApiClient::resolve(const std::string& collection, const std::string& noun, const std::string& ref) {
  // Names may be all digits ("1", "007"), so digits are not taken for an id on sight: a
  // volume named "1" and a volume with id 1 that is another one made `volume delete 1` delete
  // the other (hostile round 21). Digits are an id unless an object has them as its name;
  // when one does and another object has them as its id, the REF is refused as ambiguous.
  // "id:N" is always the id N; digits with a leading zero ("007") are only ever a name.
  if (ref.empty()) throw ClientError(kExitUsage, "an empty " + noun + " name or id: give one");
  if (ref.starts_with("id:")) {
    if (const auto forced = whole_number(ref.substr(3))) return *forced;
    throw ClientError(kExitUsage, "\"" + ref + "\": id: takes a whole number (id:12)");
  }
  std::optional<std::int64_t> id;  // (a ?: of nullopt made GCC 12 warn of an uninitialized read)
  if (!ref.starts_with('0')) id = whole_number(ref);
  // The collections the API gives names (the ?name= filter); the others take ids only.
  static const std::set<std::string> kNamed = {"volumes", "pools", "hosts", "qos-policies"};
  if (!kNamed.contains(collection)) {  // mappings, faults: an id only
    if (id) return *id;
    // Digits past 64 bits or with a leading zero are an id this command cannot take, not a
    // name (hostile review 42: "has no name" for 18446744073709551616).
    if (ref.find_first_not_of("0123456789") == std::string::npos)
      throw ClientError(kExitUsage, "\"" + ref + "\" is not a " + noun + " id: ids are whole numbers from 1 to " +
                                        std::to_string(INT64_MAX) + ", without leading zeros");
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

}  // namespace afasim::app
