// The `afasim` client commands' plumbing (docs/cli.md): talking to a running array's ReST
// API, and printing what it says as tables or JSON.
//
// Exit codes (also in `afasim --help`): 0 done; 1 an unexpected answer; 2 bad usage (a flag,
// a value); 3 refused by the array (it answered with an HTTP error: the problem document's
// `detail` is printed); 4 unreachable (no connection, or no answer in time).
// Not thread-safe: one command, one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace httplib {
class Client;
struct Response;
}

namespace afasim::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRefused = 3;
inline constexpr int kExitUnreachable = 4;

// What ends a client command early: the message for stderr and the exit code.
struct ClientError : std::runtime_error {
  ClientError(int code_in, const std::string& message) : std::runtime_error(message), code(code_in) {}
  int code;
};

// The flags every client command takes (the environment fills what they leave out).
struct ClientOptions {
  std::string url;       // --url, $AFASIM_URL, else http://127.0.0.1:8080
  std::string user;      // --user, $AFASIM_USER; "admin" when only a password is given
  std::string password;  // --password, $AFASIM_PASSWORD
  // --password-file, $AFASIM_PASSWORD_FILE: the password is the file's first line (the
  // admin's is in STATE/admin-password); read when no password is given otherwise.
  std::string password_file;
  std::string token;     // --token, $AFASIM_TOKEN (bearer)
  // --cacert, $AFASIM_CACERT: the CA certificate (PEM) an https:// URL is checked against
  // (for --tls self-signed: STATE/tls/afasim.crt); empty: the system's CAs.
  std::string ca_cert;
  std::string output = "table";  // --output table|json
  bool bytes = false;            // --bytes: exact byte counts instead of human units
  double timeout_seconds = 30;   // --timeout
};

// Fills unset fields from the environment and defaults; kExitUsage on a bad --url.
void resolve_client_options(ClientOptions& o);

// `text` as a whole number when it is one that fits in 64 bits (digits only, at most
// 9223372036854775807); nullopt for anything else, a longer run of digits included, so
// that a caller says what is wrong instead of std::stoll throwing out_of_range.
std::optional<std::int64_t> whole_number(const std::string& text);

class ApiClient {
 public:
  explicit ApiClient(const ClientOptions& options);
  ~ApiClient();

  // Each sends one request to PATH (under /api/v1 unless it starts with '/'+"metrics" or
  // "/api/") and returns the parsed JSON body (null for 204). Throws ClientError:
  // kExitRefused with the problem's detail for an HTTP error, kExitUnreachable when the
  // array cannot be reached, kExitFailure for an answer that is not what the API sends.
  nlohmann::json get(const std::string& path);
  nlohmann::json post(const std::string& path, const nlohmann::json& body);
  nlohmann::json patch(const std::string& path, const nlohmann::json& body);
  void del(const std::string& path);
  // The body as text (GET /metrics). ClientError kExitFailure when its Content-Type is not
  // `media_type` (a web page at --url printed its HTML and exit 0, hostile review 42).
  std::string get_text(const std::string& path, const std::string& media_type);
  // Every item of a collection ("/volumes"), page after page (the API gives at most 1,000 at a
  // time; hostile round 24: `volume list` showed the first 1,000 of 4,096 without a word), as
  // one page: {"items", "total", "offset": 0, "limit": total}.
  json get_all(const std::string& collection);
  // GET of a Server-Sent Events stream: `on_data` gets each `data:` payload with its id
  // until it returns false or the stream ends. Returns the last id seen.
  std::int64_t stream(const std::string& path, std::int64_t last_id,
                      const std::function<bool(std::int64_t id, const std::string& data)>& on_data);

  // The id of object `ref` of `collection`: the object named `ref`, else `ref` itself when it
  // is a number (kExitRefused when neither, or when `ref` is one object's name and another's id).
  std::int64_t resolve(const std::string& collection, const std::string& noun, const std::string& ref);

  const ClientOptions& options() const { return options_; }

 private:
  nlohmann::json send(const std::string& method, const std::string& path, const nlohmann::json* body);
  // One request and its whole answer, within --timeout for the whole exchange (a server that
  // trickles its answer is cut off then) and at most kMaxAnswerBytes of body; the failures as
  // ClientError (exit 4 unreachable or too slow, 1 too large).
  httplib::Response exchange(const std::string& method, const std::string& path, const std::string& body);
  std::string full_path(const std::string& path) const;

  ClientOptions options_;
  std::string base_path_;  // the URL's own path prefix ("" or "/array1")
  std::unique_ptr<httplib::Client> http_;
  bool answered_ = false;  // an answer came from the array before (unreachable()'s wording)

  void set_timeouts();  // --timeout for connecting, reading and writing
};

// --- Output ----------------------------------------------------------------------------

// "1.5 GiB", "512 B" (binary units, one decimal where it matters).
std::string human_bytes(std::int64_t bytes);

// How a cell shows a JSON value: `*_bytes` keys as sizes (exact with --bytes), `*_ns` keys
// as seconds, null as "-", arrays comma-separated.
std::string cell_text(const std::string& key, const nlohmann::json& v, bool exact_bytes);

// Columns aligned with two spaces between them; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// A list column: header and the key of the item it shows ("qos_status.current_iops" reaches
// into objects).
struct Column {
  Column(std::string header_, std::string key_, std::string as_ = {})
      : header(std::move(header_)), key(std::move(key_)), as(std::move(as_)) {}
  std::string header;
  std::string key;
  std::string as;  // the key whose formatting applies ("size_bytes"), when not `key`'s own
};

// Prints `page` (a list answer) as a table of `columns`, or as JSON with --output json.
void print_list(const ClientOptions& o, const nlohmann::json& page, const std::vector<Column>& columns);
// Prints one object as KEY  VALUE lines (nested objects as dotted keys), or JSON.
void print_object(const ClientOptions& o, const nlohmann::json& object);

// The value at a dotted key ("effective_qos.max_iops"); null when absent.
const nlohmann::json& at_path(const nlohmann::json& j, const std::string& dotted);

}  // namespace afasim::app
