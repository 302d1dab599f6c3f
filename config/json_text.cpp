#include "config/json_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cctype>
#include <optional>
#include <set>
#include <vector>

#include "sim/assert.h"

namespace afasim::config {
namespace {

using json = nlohmann::json;

// A first pass over the text as nlohmann's SAX events: the path of the value being read, the
// keys seen in each open object (a duplicate is refused), the depth, and the first refusal.
// The DOM is then built by nlohmann's own parser without a callback. Its callback parser
// looked through the whole enclosing array each time an object in it ended: {"x":[{},{},...]}
// cost O(n^2), and a 1 MiB login body held a server worker for 66 s (hostile round 36).
class Checker {
 public:
  explicit Checker(int max_depth) : max_depth_(max_depth) {}

  // nlohmann's SAX interface (json::sax_parse). Each event refuses what is nested deeper than
  // max_depth where nlohmann's callback parser did: its depth is the containers open around it.
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(std::size_t) { return start(false); }
  bool start_array(std::size_t) { return start(true); }
  bool key(json::string_t& k) {
    if (!deep_enough(stack_.size())) return false;
    Frame& f = stack_.back();
    f.key = k;
    if (!f.keys.insert(f.key).second)
      return refuse(JsonParseError::Kind::kDuplicateKey, json_path_join(f.path, f.key), "duplicate key");
    return true;
  }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    if (e.id == 406)  // out_of_range: a number beyond a double, 1e400
      return refuse(JsonParseError::Kind::kNumberTooLarge, child_path(), "a number too large to hold (beyond a double's range)");
    // nlohmann's messages name the line, column and what it expected: useful as they are,
    // once the "[json.exception.parse_error.101] " prefix is gone.
    std::string what = e.what();
    if (const auto bracket = what.find("] "); what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    return refuse(JsonParseError::Kind::kSyntax, "", std::move(what));
  }

  const std::optional<JsonParseError>& refused() const { return refused_; }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;
    std::string path;
    std::set<std::string> keys;
    std::string key;
  };

  bool value() {
    if (!deep_enough(stack_.size())) return false;
    element_done();
    return true;
  }
  bool start(bool is_array) {
    if (!deep_enough(stack_.size())) return false;
    Frame f;
    f.is_array = is_array;
    f.path = child_path();
    stack_.push_back(std::move(f));
    return true;
  }
  bool end() {
    stack_.pop_back();
    if (!deep_enough(stack_.size())) return false;
    element_done();
    return true;
  }
  bool deep_enough(std::size_t depth) {
    if (depth <= static_cast<std::size_t>(max_depth_)) return true;
    return refuse(JsonParseError::Kind::kTooDeep, child_path(), "nested deeper than " + std::to_string(max_depth_) + " levels");
  }
  bool refuse(JsonParseError::Kind kind, std::string path, std::string message) {
    if (!refused_) refused_ = JsonParseError{kind, std::move(path), std::move(message)};
    return false;
  }
  // The path of the value being read now.
  std::string child_path() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    return f.is_array ? f.path + "[" + std::to_string(f.index) + "]" : json_path_join(f.path, f.key);
  }
  void element_done() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
  }

  int max_depth_;
  std::vector<Frame> stack_;
  std::optional<JsonParseError> refused_;
};

}  // namespace

std::string number_text(double v) {
  // Whole numbers below 10^15 in plain digits (to_chars' shortest form wrote 100000 as 1e+05).
  if (std::abs(v) < 1e15 && v == std::trunc(v)) return std::to_string(static_cast<std::int64_t>(v));
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string json_path_join(const std::string& path, const std::string& key) {
  if (path.empty()) return key;
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '@' ||
           c == '#' || c == '$';
  });
  if (plain) return path + "." + key;
  return path + "[" + json(key).dump(-1, ' ', false, json::error_handler_t::replace) + "]";
}

sim::Result<json> parse_json_strict(std::string_view text, const JsonParseOptions& options,
                                    JsonParseError* error) {
  AFASIM_ASSERT(options.max_depth >= 1 && options.max_depth <= 10000, "max_depth out of range");
  // nlohmann's lexer ends its input at a NUL byte, so that "{}\0anything" read as "{}" (review
  // 41: a body's rest after a NUL, invalid UTF-8 included, was ignored). JSON has no raw NUL.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const std::string_view before = text.substr(0, nul);
    const std::size_t line_start = before.rfind('\n') + 1;  // npos + 1 == 0
    JsonParseError refused{JsonParseError::Kind::kSyntax, "",
                           "parse error at line " + std::to_string(std::count(before.begin(), before.end(), '\n') + 1) +
                               ", column " + std::to_string(nul - line_start + 1) +
                               ": a NUL byte, which JSON text does not have"};
    const std::string message = "invalid JSON: " + refused.message;
    if (error != nullptr) *error = std::move(refused);
    return sim::invalid_argument(message);
  }
  Checker checker(options.max_depth);
  if (json::sax_parse(text.begin(), text.end(), &checker, json::input_format_t::json, /*strict=*/true,
                      /*ignore_comments=*/options.allow_comments)) {
    // Checked: the same text, read into a DOM by the parser without a callback (linear).
    return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                       /*ignore_comments=*/options.allow_comments);
  }
  AFASIM_ASSERT(checker.refused().has_value(), "a SAX pass that stopped says why");
  JsonParseError refused = *checker.refused();
  const std::string message =
      refused.kind == JsonParseError::Kind::kSyntax
          ? "invalid JSON: " + refused.message
          : (refused.path.empty() ? std::string("(top level)") : refused.path) + ": " +
                refused.message;
  if (error != nullptr) *error = std::move(refused);
  return sim::invalid_argument(message);
}

std::string schema_hint(std::string_view schema) {
  if (schema == "afasim.sweep/1") return " (a sweep file: afasim sweep FILE --out DIR)";
  if (schema == "afasim.scenario/1" || schema == "afasim.reliability/1") return " (a scenario: afasim run FILE)";
  for (std::string_view config : {"afasim.system/1", "afasim.ssd/2", "afasim.device/1", "afasim.calibration/1",
                                  "afasim.capacity/1", "afasim.reliability-model/1", "afasim.sources/1"})
    if (schema == config) return " (a configuration file, read through --config-dir)";
  return "";
}

}  // namespace afasim::config
