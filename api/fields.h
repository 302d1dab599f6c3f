// Strict reading of JSON request bodies: typed fields, required fields, unknown fields.
//
// Every error a client can cause becomes an ApiError: malformed JSON, a wrong type, a
// missing required field or an unknown field is 400; a read-only field, a number out of
// range or an unusable size is 422. Nothing here touches the model, so it runs on the
// HTTP worker thread. Not thread-safe (one reader per request).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controller/objects.h"
#include "raid/raid_type.h"

namespace afasim::api {

// Deepest nesting a request body may have; deeper is refused before it is built.
inline constexpr int kBodyMaxDepth = 32;

// Longest initiator address accepted (an iSCSI name is at most 223 bytes, RFC 3720).
inline constexpr std::size_t kInitiatorAddressMaxChars = 255;

// Parses `body` as one JSON object (config/json_text.h). Throws ApiError 400 when it is
// empty, not JSON, not valid UTF-8, nested deeper than kBodyMaxDepth, has a key twice in one
// object (nlohmann would keep the last silently), or is not an object.
nlohmann::json parse_body_object(std::string_view body);

// Reads the members of one JSON object. The constructor refuses (ApiError) members not in
// `allowed` (400, listed in `unknown_fields`) and members in `read_only` (422). Getters
// throw ApiError on a wrong type (400) or value out of range (422); a member that is
// absent or null reads as nullopt unless said otherwise.
class FieldReader {
 public:
  // `context` prefixes messages ("initiators[2]"); empty for the body itself.
  FieldReader(const nlohmann::json& object, std::initializer_list<std::string_view> allowed,
              std::initializer_list<std::string_view> read_only = {}, std::string context = "");

  bool has(const std::string& key) const;      // present, even if null
  bool is_null(const std::string& key) const;  // present and null

  std::string required_string(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;
  // A signed 64-bit integer. A float is 400 unless it is a whole number beyond int64 (422).
  std::optional<std::int64_t> integer(const std::string& key) const;
  std::int64_t required_integer(const std::string& key) const;
  // Absent: nullopt. null: optional holding nullopt (clear it). Else the value.
  std::optional<std::optional<std::int64_t>> nullable_integer(const std::string& key) const;
  // Bytes: an integer, or a size string (api/size.h).
  std::optional<std::int64_t> size(const std::string& key) const;
  std::int64_t required_size(const std::string& key) const;
  std::optional<std::vector<std::int64_t>> integer_array(const std::string& key) const;
  std::optional<raid::RaidType> raid_type(const std::string& key) const;
  std::optional<controller::Provisioning> provisioning(const std::string& key) const;
  std::optional<controller::MappingAccess> access(const std::string& key) const;
  // A controller id: 1, 2, or its name "A", "B" (any one letter maps to its position).
  std::optional<controller::Id> controller_id(const std::string& key) const;
  std::optional<std::vector<controller::Initiator>> initiators(const std::string& key) const;

  // The member itself (nullptr when absent), for fields compared by the caller.
  const nlohmann::json* raw(const std::string& key) const;

 private:
  std::string name(const std::string& key) const;  // "initiators[2].type", initiators[2]["/"]
  [[noreturn]] void refuse_unknown(const std::vector<std::string>& keys,
                                   std::initializer_list<std::string_view> allowed) const;
  [[noreturn]] void wrong_type(const std::string& key, const char* wanted) const;
  std::int64_t to_integer(const std::string& key, const nlohmann::json& v) const;

  const nlohmann::json& object_;
  std::string context_;
};

// Integer value of a query parameter. Throws ApiError 400 unless it is a plain decimal in
// [min, max].
std::int64_t parse_query_integer(const std::string& name, const std::string& value,
                                 std::int64_t min, std::int64_t max);

// A short, printable rendering of a JSON value for error messages.
std::string excerpt(const nlohmann::json& v);

}  // namespace afasim::api
