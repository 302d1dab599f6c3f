// A faulting journal for tests: an SQLite VFS over the default one that fails writes, forgets
// what was not synced and corrupts bytes on request, so that SqliteStore (the durable
// controller::Journal) can be tested against a disk that misbehaves. LevelDB's
// FaultInjectionTestEnv idea, at SQLite's own seam (its VFS is LevelDB's Env).
//
// A store opened with SqliteStoreOptions::vfs = vfs.name() does all its file I/O through it:
//   - fail_next_writes(n): the next n file writes fail with SQLITE_IOERR_WRITE (a disk
//     error); fail_next_syncs(n) likewise for fsyncs;
//   - crash(): the host loses power. Every file write since that file's last sync is undone
//     (newest first, sizes restored), and from then on the VFS drops every write, sync,
//     truncation and delete of the files opened before, so that destroying the store (which
//     would checkpoint the WAL) changes nothing: what is on disk is what a crash left. Open
//     the state directory again (through any VFS) to see what survived;
//   - corrupt(path, offset, length): inverts bytes of a file now (a bad sector).
// The shared-memory WAL index (-shm) is passed through untouched: SQLite rebuilds it from the
// WAL when the first connection opens after a crash.
//
// Not thread-safe: the store that uses it and the test run on one thread. The VFS is
// registered (not as the default) for the object's lifetime; a store using it must be
// destroyed first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/status.h"

namespace afasim::store {

class FaultInjectionVfs {
 public:
  // Registers the VFS as `name`. REQUIRES: no other VFS of that name is registered.
  explicit FaultInjectionVfs(std::string name = "afasim-fault-injection");
  ~FaultInjectionVfs();
  FaultInjectionVfs(const FaultInjectionVfs&) = delete;
  FaultInjectionVfs& operator=(const FaultInjectionVfs&) = delete;

  const std::string& name() const;
  void fail_next_writes(int n);
  void fail_next_syncs(int n);
  // Undoes every unsynced write of every file and drops all later writes (see above).
  // kUnavailable if a file cannot be restored.
  sim::Status crash();
  // Inverts [offset, offset + length) of the file at `path` (clamped to its size).
  sim::Status corrupt(const std::string& path, std::int64_t offset, std::int64_t length);

  std::int64_t writes_failed() const;
  // Bytes written since their file's last sync, over all files (what crash() undoes).
  std::int64_t unsynced_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace afasim::store
