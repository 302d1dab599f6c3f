#include "config/json_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cctype>
#include <set>
#include <vector>

#include "sim/assert.h"

namespace afasim::config {
namespace {

using json = nlohmann::json;

// Thrown by the parser callback to stop the parse at the first refusal.
struct Refused {
  JsonParseError error;
};

// Follows the parse to know the path of the value being read, and the keys seen in each
// open object.
class PathTracker {
 public:
  explicit PathTracker(int max_depth) : max_depth_(max_depth) {}

  bool on_event(int depth, json::parse_event_t event, const json& parsed) {
    using E = json::parse_event_t;
    if (depth > max_depth_)
      throw Refused{{JsonParseError::Kind::kTooDeep, child_path(),
                     "nested deeper than " + std::to_string(max_depth_) + " levels"}};
    switch (event) {
      case E::object_start:
      case E::array_start: {
        Frame f;
        f.is_array = event == E::array_start;
        f.path = child_path();
        stack_.push_back(std::move(f));
        break;
      }
      case E::key: {
        Frame& f = stack_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw Refused{
              {JsonParseError::Kind::kDuplicateKey, json_path_join(f.path, f.key), "duplicate key"}};
        break;
      }
      case E::object_end:
      case E::array_end:
        stack_.pop_back();
        element_done();
        break;
      case E::value:
        element_done();
        break;
    }
    return true;
  }

 // The path of the value being read now (for an error the parser raises itself).
  std::string child_path() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    return f.is_array ? f.path + "[" + std::to_string(f.index) + "]" : json_path_join(f.path, f.key);
  }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;
    std::string path;
    std::set<std::string> keys;
    std::string key;
  };

  void element_done() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
  }

  int max_depth_;
  std::vector<Frame> stack_;
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
  PathTracker tracker(options.max_depth);
  JsonParseError refused;
  try {
    return json::parse(
        text.begin(), text.end(),
        [&](int depth, json::parse_event_t event, json& parsed) {
          return tracker.on_event(depth, event, parsed);
        },
        /*allow_exceptions=*/true, /*ignore_comments=*/options.allow_comments);
  } catch (const Refused& r) {
    refused = r.error;
  } catch (const json::out_of_range&) {  // a number beyond a double: 1e400
    refused = {JsonParseError::Kind::kNumberTooLarge, tracker.child_path(),
               "a number too large to hold (beyond a double's range)"};
  } catch (const json::exception& e) {
    // nlohmann's messages name the line, column and what it expected: useful as they are,
    // once the "[json.exception.parse_error.101] " prefix is gone.
    std::string what = e.what();
    if (const auto bracket = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    refused = {JsonParseError::Kind::kSyntax, "", std::move(what)};
  }
  const std::string message =
      refused.kind == JsonParseError::Kind::kSyntax
          ? "invalid JSON: " + refused.message
          : (refused.path.empty() ? std::string("(top level)") : refused.path) + ": " +
                refused.message;
  if (error != nullptr) *error = std::move(refused);
  return sim::invalid_argument(message);
}

}  // namespace afasim::config
