// Fields of a scenario document addressed by JSON Pointer (RFC 6901), with one extension:
// the reference token `*` means "every element of this array" (`/volumes/*/raid_type` is the
// RAID type of every volume). docs/sweeps.md "Fields".
//
// A pointer is checked twice: its syntax once, when the sweep file is read (parse), and its
// path each time it is set into a document (set_field), because an earlier field of the
// same point may have changed the document's shape. Setting follows RFC 6902's "add" on the
// last token: every token but the last must name something that exists (a member of an
// object, an index of an array), the last may add a member to an object or replace an
// existing member or array element. Appending to an array ("-" or an index past the end) is
// refused: a sweep changes fields, it does not grow lists.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/status.h"

namespace afasim::sweep {

// A parsed pointer: its text as written (for messages and column names) and its reference
// tokens unescaped (`~1` → `/`, `~0` → `~`). A token `*` written as such is a wildcard.
struct FieldPointer {
  std::string text;                 // "/volumes/*/raid_type"
  std::vector<std::string> tokens;  // {"volumes", "*", "raid_type"}
  std::vector<bool> wildcard;       // per token: true for an unescaped `*`
};

// Parses `text`. Errors (kInvalidArgument, the message without a prefix): empty (the whole
// document is not a field), not starting with `/`, a `~` not followed by `0` or `1`, and a
// last token `*` (a wildcard must be followed by the field of each element).
sim::Result<FieldPointer> parse_field_pointer(const std::string& text);

// Whether `a` and `b` can name the same field or one inside the other: token by token over
// the shorter, each pair equal or either a wildcard (`/volumes/*/name` and `/volumes/0/name`;
// `/volumes/0` and `/volumes/0/name`). Two such fields of one point set one value twice, and
// the table would show both.
bool fields_overlap(const FieldPointer& a, const FieldPointer& b);

// Sets every field `pointer` names in `document` to `value`; returns how many were set
// (≥ 1). Errors (kInvalidArgument, message "POINTER: what is wrong", the document left
// partly changed only on a wildcard whose later elements fail): a token that names nothing
// (no member, an index out of range, a token that is not an index of an array, "-"), a
// token under a value that is neither an object nor an array, `*` on a value that is not an
// array, and `*` on an empty array (a field that sets nothing is a mistake, not a no-op).
sim::Result<std::size_t> set_field(nlohmann::json& document, const FieldPointer& pointer,
                                   const nlohmann::json& value);

}  // namespace afasim::sweep
