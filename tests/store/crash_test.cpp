// A process killed in the middle of its commits leaves a consistent state directory.
//
// A child process commits ChangeSets in a loop (each touches six tables and the child
// tables of a pool and a host) and reports each commit that returned ok through a pipe;
// the parent SIGKILLs it after a number of reports, so the kill lands inside a commit, then
// reopens the directory and checks that the last reported commit is there in full and that
// no later one is there in part. Five rounds, each continuing the same database.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "store/fault_injection_vfs.h"
#include "store/sqlite_store.h"
#include "tests/store/store_test_util.h"

using namespace afasim;
using namespace afasim::controller;
using store::SqliteStore;
using store::testing::TempDir;
using store::testing::load_ok;
using store::testing::open_ok;

namespace {

// The ChangeSet of commit `i` (1-based): volume i, mapping i, event i; pool 1 and host 1
// rewritten with values derived from i; meta "counter" = i.
ChangeSet change(std::int64_t i) {
  ChangeSet c;
  Pool p;
  p.id = 1;
  p.name = "pool";
  p.datapac_ids = {1, 2};
  p.space_thresholds_percent = {static_cast<int>(i % 50) + 1, static_cast<int>(i % 50) + 51};
  p.revision = static_cast<std::uint64_t>(i) + 1;
  c.put_pools = {p};
  Volume v;
  v.id = i;
  v.name = "vol-" + std::to_string(i);
  v.pool_id = 1;
  v.capacity_bytes = i * 512;
  c.put_volumes = {v};
  Host h;
  h.id = 1;
  h.name = "host";
  for (std::int64_t k = 0; k <= i % 4; ++k)
    h.initiators.push_back({InitiatorType::kNbd, std::to_string(i) + "-" + std::to_string(k)});
  h.revision = static_cast<std::uint64_t>(i) + 1;
  c.put_hosts = {h};
  Mapping m;
  m.id = i;
  m.volume_id = i;
  m.host_id = 1;
  m.lun = i;
  c.put_mappings = {m};
  Event e;
  e.id = i;
  e.time_ns = i * 1000;
  e.category = "test";
  e.message = "commit " + std::to_string(i);
  c.events = {e};
  c.meta = {{"counter", std::to_string(i)}};
  return c;
}

// The child: commits change(first), change(first + 1), ... until killed, writing each
// committed i to `report_fd`. Never returns; exits non-zero on an error.
[[noreturn]] void commit_forever(const std::string& dir, std::int64_t first, int report_fd) {
  auto store = SqliteStore::open(dir);
  if (!store.is_ok()) {
    std::fprintf(stderr, "child: %s\n", store.status().to_string().c_str());
    ::_exit(2);
  }
  for (std::int64_t i = first; i < first + 10'000; ++i) {
    const sim::Status st = (*store)->commit(change(i));
    if (!st.is_ok()) {
      std::fprintf(stderr, "child: commit %lld: %s\n", static_cast<long long>(i),
                   st.to_string().c_str());
      ::_exit(3);
    }
    if (::write(report_fd, &i, sizeof i) != sizeof i) ::_exit(4);
  }
  ::_exit(0);
}

// Checks that `s` is exactly the state after commits 1..n.
void check_state_after(const Snapshot& s, std::int64_t n) {
  const ChangeSet last = change(n);
  REQUIRE(s.pools.size() == 1);
  CHECK(s.pools[0].revision == static_cast<std::uint64_t>(n) + 1);
  CHECK(s.pools[0].space_thresholds_percent == last.put_pools[0].space_thresholds_percent);
  CHECK(s.pools[0].datapac_ids == std::vector<Id>{1, 2});
  REQUIRE(s.hosts.size() == 1);
  CHECK(s.hosts[0].revision == static_cast<std::uint64_t>(n) + 1);
  CHECK(s.hosts[0].initiators == last.put_hosts[0].initiators);
  REQUIRE(s.volumes.size() == static_cast<std::size_t>(n));
  REQUIRE(s.mappings.size() == static_cast<std::size_t>(n));
  REQUIRE(s.events.size() == static_cast<std::size_t>(n));
  for (std::int64_t i = 1; i <= n; ++i) {
    const auto k = static_cast<std::size_t>(i - 1);
    CHECK(s.volumes[k].id == i);
    CHECK(s.volumes[k].capacity_bytes == i * 512);
    CHECK(s.mappings[k].lun == i);
    CHECK(s.events[k].message == "commit " + std::to_string(i));
  }
}

// Kills and reaps the child if a REQUIRE leaves the test before the test does.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

}  // namespace

TEST_CASE("a process SIGKILLed while committing leaves the last commit whole and no partial one") {
  TempDir dir;
  {
    auto store = SqliteStore::open(dir.path()).value();
    ChangeSet none;
    none.meta = {{"counter", "0"}};
    REQUIRE(store->commit(none).is_ok());
  }
  std::int64_t committed = 0;
  int in_flight_survived = 0;  // kills after which the unreported commit was complete
  // Reports to wait for before each kill: different counts put the kill at different points.
  const int kReports[] = {1, 7, 23, 41, 64};
  for (const int reports : kReports) {
    CAPTURE(reports);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::fflush(nullptr);  // nothing buffered is printed twice
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      commit_forever(dir.path(), committed + 1, fds[1]);
    }
    ChildGuard guard{pid};
    ::close(fds[1]);
    std::int64_t last_reported = committed;
    std::int64_t i = 0;
    for (int got = 0; got < reports && ::read(fds[0], &i, sizeof i) == sizeof i; ++got)
      last_reported = i;
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int wstatus = 0;
    REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
    guard.pid = -1;
    CHECK(WIFSIGNALED(wstatus));  // killed, not exited on an error of its own
    while (::read(fds[0], &i, sizeof i) == sizeof i) last_reported = i;  // written before the kill
    ::close(fds[0]);
    CHECK(last_reported >= committed + reports);

    auto store = SqliteStore::open(dir.path());
    INFO(store.status().to_string());
    REQUIRE(store.is_ok());
    auto snap = (*store)->load(1'000'000);
    INFO(snap.status().to_string());
    REQUIRE(snap.is_ok());
    const std::int64_t n = std::stoll(snap->meta.at("counter"));
    // Every reported commit is there; at most the one in flight at the kill is there too.
    CHECK(n >= last_reported);
    CHECK(n <= last_reported + 1);
    check_state_after(*snap, n);
    in_flight_survived += n == last_reported + 1;
    committed = n;
  }
  MESSAGE("commits that survived "
          << std::size(kReports) << " kills: " << committed
          << "; kills after which the unreported commit was complete: " << in_flight_survived);
}

// ---------------------------------------------------------------------------------------
// A host crash, through the fault-injection VFS (store/fault_injection_vfs.h): unlike the
// process kill above, it loses what the kernel had not yet written to the disk, so it checks
// the fsync contract (synchronous=FULL), not only atomicity.

namespace {

}  // namespace

TEST_CASE("a host crash (every unsynced write undone) keeps every commit that returned ok") {
  TempDir dir;
  store::FaultInjectionVfs vfs;
  {
    auto s = open_ok(dir.path(), vfs.name());
    // 300 commits fill the WAL past SQLite's auto-checkpoint (1,000 pages), so the crash
    // also meets writes into afasim.db that the checkpoint has not synced yet.
    for (std::int64_t i = 1; i <= 300; ++i) REQUIRE(s->commit(change(i)).is_ok());
    MESSAGE("unsynced bytes at the crash: " << vfs.unsynced_bytes());
    REQUIRE(vfs.crash().is_ok());
  }  // the store closes on a dead disk: its checkpoint writes nothing
  auto again = open_ok(dir.path());
  check_state_after(load_ok(*again), 300);
}

TEST_CASE("a failed disk write fails the commit, changes nothing, and the next commit succeeds") {
  TempDir dir;
  store::FaultInjectionVfs vfs;
  auto s = open_ok(dir.path(), vfs.name());
  for (std::int64_t i = 1; i <= 3; ++i) REQUIRE(s->commit(change(i)).is_ok());
  vfs.fail_next_writes(1);
  const sim::Status failed = s->commit(change(4));
  CHECK(failed.code() == sim::Code::kUnavailable);
  CHECK(failed.message().find("nothing was changed") != std::string::npos);
  CHECK(vfs.writes_failed() == 1);
  check_state_after(load_ok(*s), 3);
  REQUIRE(s->commit(change(4)).is_ok());
  check_state_after(load_ok(*s), 4);
}

TEST_CASE("a corrupt block of the database is refused at open or load with a clear error, never loaded") {
  TempDir dir;
  store::FaultInjectionVfs vfs;
  {
    auto s = open_ok(dir.path());
    for (std::int64_t i = 1; i <= 200; ++i) REQUIRE(s->commit(change(i)).is_ok());
  }  // a clean close checkpoints everything into afasim.db
  // Pages 2 to 17: the tables' b-trees (page 1 is the header and the schema).
  REQUIRE(vfs.corrupt(dir.sub("afasim.db"), 4096, 16 * 4096).is_ok());
  auto s = SqliteStore::open(dir.path());
  sim::Status st = s.status();
  if (s.is_ok()) st = (*s)->load(1'000'000).status();
  INFO(st.to_string());
  CHECK_FALSE(st.is_ok());
  CHECK(st.code() == sim::Code::kInternal);
  CHECK(st.message().find("malformed") != std::string::npos);
}
