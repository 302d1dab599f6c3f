// Helpers for the store tests: temporary state directories and a full-text dump of a
// Snapshot, so that "the same state" is one string comparison that shows the difference.
#pragma once

#include <string>

#include "controller/array.h"
#include "controller/journal.h"

namespace afasim::store::testing {

// A fresh directory under /tmp (or $TMPDIR), removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Every field of every object, one object per line, objects by id.
std::string dump(const controller::Snapshot& s);
// The same for what an Array holds (its managed objects and its in-memory events).
std::string dump(const controller::Array& a);

// Writes `bytes` to `path`, replacing it.
void write_file(const std::string& path, const std::string& bytes);

}  // namespace afasim::store::testing
