// Strict parsing of JSON text, shared by every reader of JSON a user writes: scenario files
// (workload/scenario.cpp) and ReST request bodies (api/fields.cpp).
//
// nlohmann::json keeps the last of two members with the same key and silently drops the
// first; a user who wrote `{"type": "link_cut", "type": "power_loss"}` would get a power loss.
// parse_json_strict refuses a duplicate key anywhere in the document, and refuses nesting
// deeper than a bound while parsing, before the deep value is built.
// Stateless and thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/status.h"

namespace afasim::config {

struct JsonParseOptions {
  // Deepest nesting accepted: a value inside more than max_depth arrays or objects is
  // refused ("[[1]]" has depth 2). Range [1, 10000].
  int max_depth = 32;
  // Accept `//` and `/* */` comments (scenario files); JSON proper has none.
  bool allow_comments = false;
};

// Why parse_json_strict refused a text.
struct JsonParseError {
  enum class Kind { kSyntax, kDuplicateKey, kTooDeep, kNumberTooLarge };
  Kind kind = Kind::kSyntax;
  // JSON path of the duplicate key or of the first value nested too deep, in the scenario loader's
  // form ("volumes[1].name", "[0][0]"); empty for a syntax error and for the top level.
  std::string path;
  // kSyntax: nlohmann's message without its "[json.exception...] " prefix ("parse error at
  // line 1, column 12: ..."); kDuplicateKey: "duplicate key"; kTooDeep: "nested deeper than
  // N levels"; kNumberTooLarge: a number beyond a double (1e400), at its path.
  std::string message;
};

// Parses `text` as one JSON value. On success returns it. On failure returns
// kInvalidArgument whose message is "invalid JSON: MESSAGE" (kSyntax) or "PATH: MESSAGE"
// (PATH "(top level)" when empty), and fills `*error` when `error` is not null.
sim::Result<nlohmann::json> parse_json_strict(std::string_view text,
                                              const JsonParseOptions& options = {},
                                              JsonParseError* error = nullptr);

// "path.key", or "key" at the top level: the JSON paths error messages name. A key that is
// not a plain name (letters, digits, '_', '-', '@', '#', '$') goes in brackets as a JSON
// string, so that "/", "" or "a.b" cannot be mistaken for a path: initiators[0]["/"].
std::string json_path_join(const std::string& path, const std::string& key);

// What a document whose "schema" is `schema` is, for a command given the wrong kind of file:
// " (a sweep file: afasim sweep FILE --out DIR)", " (a scenario: afasim run FILE)", " (a
// configuration file, read through --config-dir)" for a preset's (config/), "" otherwise.
// A loader checks the schema before any other key, so that a sweep file given to `afasim
// run` is named as one, not by its first unknown key (hostile round 44: "axes: unknown key").
std::string schema_hint(std::string_view schema);

// `v` in the fewest digits that read back as exactly `v` ("1000.0000001", "1e-06", "1e+15"),
// a whole number below 10^15 in plain digits ("1048576", "100000000000000"): a bound or a refused value in a message is never rounded into its neighbour
// (printf's %g printed 1000.0000001 as "1000" beside "must be between 1 and 1000").
std::string number_text(double v);

// `j` as JSON text (indent as nlohmann's dump: -1 one line, N spaces per level). A string
// holding bytes that are not UTF-8 (a trace's device name, a fio option value: text afasim
// did not parse as JSON) has each bad byte replaced by U+FFFD instead of throwing
// nlohmann's type_error 316, which aborted `--output-format json` on such input.
// Keeps the key order of an nlohmann::ordered_json (fio's reports).
template <typename Json>
std::string dump_json(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace afasim::config
