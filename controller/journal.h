// The seam between the array model and its persistence (DESIGN.md layer 7).
//
// The model never calls SQLite. Each management change is one ChangeSet that the model
// hands to a Journal *before* applying it to memory: if commit fails, the model is left as
// it was and the caller gets the error, so nothing half-happens. store::SqliteStore
// implements Journal; tests use MemoryJournal. A Snapshot is what a Journal gives back at
// boot. Called only from the model thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/objects.h"
#include "sim/status.h"

namespace afasim::controller {

struct ChangeSet {
  std::vector<Pool> put_pools;
  std::vector<Id> delete_pools;
  std::vector<Volume> put_volumes;
  std::vector<Id> delete_volumes;
  std::vector<Host> put_hosts;
  std::vector<Id> delete_hosts;
  std::vector<Mapping> put_mappings;
  std::vector<Id> delete_mappings;
  std::vector<QosPolicy> put_qos_policies;
  std::vector<Id> delete_qos_policies;
  // Extents: upserted by (volume_id, extent_index); a deleted volume's extents go with it.
  std::vector<ExtentRecord> put_extents;
  std::vector<std::pair<Id, std::int64_t>> delete_extents;  // (volume_id, extent_index)
  std::vector<Event> events;                 // appended
  std::map<std::string, std::string> meta;   // upserted key/value pairs

  bool empty() const;
};

// `first` then `then` as one ChangeSet: puts, deletes and events in that order (a put of
// `then` wins over `first`'s of the same object, as a journal upserts them in order), meta
// keys of `then` over `first`'s.
ChangeSet merged(const ChangeSet& first, const ChangeSet& then);

// Everything a Journal holds, as loaded at boot.
struct Snapshot {
  std::vector<Pool> pools;
  std::vector<Volume> volumes;
  std::vector<Host> hosts;
  std::vector<Mapping> mappings;
  std::vector<QosPolicy> qos_policies;
  std::vector<ExtentRecord> extents;
  std::vector<Event> events;                 // the newest ones, oldest first
  std::map<std::string, std::string> meta;
};

class Journal {
 public:
  virtual ~Journal() = default;
  // Makes `changes` durable atomically: all of it or none. An error leaves the store as it
  // was (kUnavailable when the disk is full or read-only, kInternal otherwise).
  virtual sim::Status commit(const ChangeSet& changes) = 0;
};

// A Journal in memory, for tests and for runs without a state directory.
class MemoryJournal : public Journal {
 public:
  sim::Status commit(const ChangeSet& changes) override;
  // What a restart would load.
  Snapshot snapshot() const;
  // Makes the next `n` commits fail with kUnavailable (fault injection for tests).
  void fail_next_commits(int n) { fail_next_ = n; }
  int commits() const { return commits_; }

 private:
  std::map<Id, Pool> pools_;
  std::map<Id, Volume> volumes_;
  std::map<Id, Host> hosts_;
  std::map<Id, Mapping> mappings_;
  std::map<Id, QosPolicy> qos_policies_;
  std::map<std::pair<Id, std::int64_t>, ExtentRecord> extents_;
  std::vector<Event> events_;
  std::map<std::string, std::string> meta_;
  int fail_next_ = 0;
  int commits_ = 0;
};

}  // namespace afasim::controller
