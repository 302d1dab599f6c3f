#include "store/fault_injection_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <vector>

#include "sim/assert.h"

namespace afasim::store {

// Named, not anonymous: Impl (declared in the header) holds them.
namespace fault_vfs_detail {

// What a write or truncation replaced, to undo it.
struct Undo {
  std::int64_t offset = 0;
  std::vector<std::uint8_t> old_bytes;  // the bytes that were in the file at offset
  std::int64_t old_size = 0;            // the file's size before
};

struct FileLog {
  std::vector<Undo> unsynced;
  std::int64_t unsynced_bytes = 0;
};

}  // namespace fault_vfs_detail

using fault_vfs_detail::FileLog;
using fault_vfs_detail::Undo;

struct FaultInjectionVfs::Impl {
  std::string name;
  sqlite3_vfs vfs{};
  sqlite3_vfs* real = nullptr;
  int fail_writes = 0;
  int fail_syncs = 0;
  std::int64_t writes_failed = 0;
  bool dead = false;  // crashed: writes, syncs, truncations and deletes are dropped
  std::map<std::string, FileLog> logs;
};

namespace {

using Impl = FaultInjectionVfs::Impl;

// Our file: the VFS's state, then the real VFS's file right after it.
struct File {
  sqlite3_file base;
  Impl* vfs;
  std::string* path;  // owned; "" for a temporary file (not logged)
  sqlite3_file* real();
};
// Where the real VFS's file starts: after ours, 16-byte aligned.
constexpr std::size_t kRealOffset = (sizeof(File) + 15) / 16 * 16;
sqlite3_file* File::real() {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(this) + kRealOffset);
}

File* as_file(sqlite3_file* f) {
  return reinterpret_cast<File*>(f);
}

// Saves what [offset, offset + amount) holds before a write or truncation changes it.
int remember(File* f, std::int64_t offset, std::int64_t amount) {
  if (f->path->empty()) return SQLITE_OK;
  sqlite3_file* r = f->real();
  sqlite3_int64 size = 0;
  if (int rc = r->pMethods->xFileSize(r, &size); rc != SQLITE_OK) return rc;
  Undo u;
  u.offset = offset;
  u.old_size = size;
  const std::int64_t keep = std::max<std::int64_t>(0, std::min<std::int64_t>(amount, size - offset));
  u.old_bytes.resize(static_cast<std::size_t>(keep));
  if (keep > 0) {
    const int rc = r->pMethods->xRead(r, u.old_bytes.data(), static_cast<int>(keep), offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
  }
  FileLog& log = f->vfs->logs[*f->path];
  log.unsynced_bytes += amount;
  log.unsynced.push_back(std::move(u));
  return SQLITE_OK;
}

int x_close(sqlite3_file* file) {
  File* f = as_file(file);
  const int rc = f->real()->pMethods ? f->real()->pMethods->xClose(f->real()) : SQLITE_OK;
  delete f->path;
  return rc;
}
int x_read(sqlite3_file* file, void* buf, int amount, sqlite3_int64 offset) {
  sqlite3_file* r = as_file(file)->real();
  return r->pMethods->xRead(r, buf, amount, offset);
}
int x_write(sqlite3_file* file, const void* buf, int amount, sqlite3_int64 offset) {
  File* f = as_file(file);
  if (f->vfs->dead) return SQLITE_OK;
  if (f->vfs->fail_writes > 0) {
    --f->vfs->fail_writes;
    ++f->vfs->writes_failed;
    return SQLITE_IOERR_WRITE;
  }
  if (int rc = remember(f, offset, amount); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xWrite(f->real(), buf, amount, offset);
}
int x_truncate(sqlite3_file* file, sqlite3_int64 size) {
  File* f = as_file(file);
  if (f->vfs->dead) return SQLITE_OK;
  sqlite3_int64 now = 0;
  if (int rc = f->real()->pMethods->xFileSize(f->real(), &now); rc != SQLITE_OK) return rc;
  if (size < now)
    if (int rc = remember(f, size, now - size); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xTruncate(f->real(), size);
}
int x_sync(sqlite3_file* file, int flags) {
  File* f = as_file(file);
  if (f->vfs->dead) return SQLITE_OK;
  if (f->vfs->fail_syncs > 0) {
    --f->vfs->fail_syncs;
    return SQLITE_IOERR_FSYNC;
  }
  const int rc = f->real()->pMethods->xSync(f->real(), flags);
  if (rc == SQLITE_OK && !f->path->empty()) f->vfs->logs.erase(*f->path);
  return rc;
}

// The methods that only pass through.
int x_file_size(sqlite3_file* f, sqlite3_int64* size) {
  return as_file(f)->real()->pMethods->xFileSize(as_file(f)->real(), size);
}
int x_lock(sqlite3_file* f, int level) {
  return as_file(f)->real()->pMethods->xLock(as_file(f)->real(), level);
}
int x_unlock(sqlite3_file* f, int level) {
  return as_file(f)->real()->pMethods->xUnlock(as_file(f)->real(), level);
}
int x_check_reserved(sqlite3_file* f, int* out) {
  return as_file(f)->real()->pMethods->xCheckReservedLock(as_file(f)->real(), out);
}
int x_file_control(sqlite3_file* f, int op, void* arg) {
  return as_file(f)->real()->pMethods->xFileControl(as_file(f)->real(), op, arg);
}
int x_sector_size(sqlite3_file* f) {
  return as_file(f)->real()->pMethods->xSectorSize(as_file(f)->real());
}
int x_device(sqlite3_file* f) {
  return as_file(f)->real()->pMethods->xDeviceCharacteristics(as_file(f)->real());
}
int x_shm_map(sqlite3_file* f, int page, int bytes, int extend, void volatile** out) {
  return as_file(f)->real()->pMethods->xShmMap(as_file(f)->real(), page, bytes, extend, out);
}
int x_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return as_file(f)->real()->pMethods->xShmLock(as_file(f)->real(), offset, n, flags);
}
void x_shm_barrier(sqlite3_file* f) {
  as_file(f)->real()->pMethods->xShmBarrier(as_file(f)->real());
}
int x_shm_unmap(sqlite3_file* f, int delete_flag) {
  return as_file(f)->real()->pMethods->xShmUnmap(as_file(f)->real(), delete_flag);
}

// Version 2: WAL needs the shared-memory methods; no memory-mapped I/O (xFetch), so every
// database read and write goes through xRead/xWrite.
const sqlite3_io_methods kMethods = {
    2,          x_close,     x_read,       x_write,   x_truncate,     x_sync,        x_file_size,
    x_lock,     x_unlock,    x_check_reserved, x_file_control, x_sector_size, x_device, x_shm_map,
    x_shm_lock, x_shm_barrier, x_shm_unmap, nullptr,  nullptr};

Impl* impl_of(sqlite3_vfs* v) {
  return static_cast<Impl*>(v->pAppData);
}

int v_open(sqlite3_vfs* v, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  Impl* impl = impl_of(v);
  File* f = as_file(file);
  f->base.pMethods = nullptr;
  f->vfs = impl;
  f->path = new std::string(name != nullptr ? name : "");
  const int rc = impl->real->xOpen(impl->real, name, f->real(), flags, out_flags);
  if (rc != SQLITE_OK || f->real()->pMethods == nullptr) {
    delete f->path;
    f->path = nullptr;
    return rc;
  }
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}
int v_delete(sqlite3_vfs* v, const char* name, int sync_dir) {
  Impl* impl = impl_of(v);
  if (impl->dead) return SQLITE_OK;
  impl->logs.erase(name);
  return impl->real->xDelete(impl->real, name, sync_dir);
}
int v_access(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return impl_of(v)->real->xAccess(impl_of(v)->real, name, flags, out);
}
int v_full_pathname(sqlite3_vfs* v, const char* name, int n, char* out) {
  return impl_of(v)->real->xFullPathname(impl_of(v)->real, name, n, out);
}
void* v_dl_open(sqlite3_vfs* v, const char* name) {
  return impl_of(v)->real->xDlOpen(impl_of(v)->real, name);
}
void v_dl_error(sqlite3_vfs* v, int n, char* out) {
  impl_of(v)->real->xDlError(impl_of(v)->real, n, out);
}
void (*v_dl_sym(sqlite3_vfs* v, void* h, const char* sym))(void) {
  return impl_of(v)->real->xDlSym(impl_of(v)->real, h, sym);
}
void v_dl_close(sqlite3_vfs* v, void* h) {
  impl_of(v)->real->xDlClose(impl_of(v)->real, h);
}
int v_randomness(sqlite3_vfs* v, int n, char* out) {
  return impl_of(v)->real->xRandomness(impl_of(v)->real, n, out);
}
int v_sleep(sqlite3_vfs* v, int us) {
  return impl_of(v)->real->xSleep(impl_of(v)->real, us);
}
int v_current_time(sqlite3_vfs* v, double* out) {
  return impl_of(v)->real->xCurrentTime(impl_of(v)->real, out);
}
int v_last_error(sqlite3_vfs* v, int n, char* out) {
  return impl_of(v)->real->xGetLastError(impl_of(v)->real, n, out);
}
int v_current_time_int64(sqlite3_vfs* v, sqlite3_int64* out) {
  return impl_of(v)->real->xCurrentTimeInt64(impl_of(v)->real, out);
}

// Undoes one file's unsynced writes, newest first, through a descriptor of its own.
sim::Status restore(const std::string& path, const FileLog& log) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return sim::Status::ok();  // deleted since: nothing to undo
  sim::Status st;
  for (auto it = log.unsynced.rbegin(); it != log.unsynced.rend() && st.is_ok(); ++it) {
    const auto n = static_cast<ssize_t>(it->old_bytes.size());
    if ((n > 0 && ::pwrite(fd, it->old_bytes.data(), it->old_bytes.size(), it->offset) != n) ||
        ::ftruncate(fd, it->old_size) != 0)
      st = sim::unavailable("cannot restore " + path + ": " + std::strerror(errno));
  }
  ::close(fd);
  return st;
}

}  // namespace

FaultInjectionVfs::FaultInjectionVfs(std::string name) : impl_(std::make_unique<Impl>()) {
  impl_->name = std::move(name);
  impl_->real = sqlite3_vfs_find(nullptr);
  AFASIM_ASSERT(impl_->real != nullptr && impl_->real->iVersion >= 2, "no default SQLite VFS of version 2");
  sqlite3_vfs& v = impl_->vfs;
  v.iVersion = 2;
  v.szOsFile = static_cast<int>(kRealOffset) + impl_->real->szOsFile;
  v.mxPathname = impl_->real->mxPathname;
  v.zName = impl_->name.c_str();
  v.pAppData = impl_.get();
  v.xOpen = v_open;
  v.xDelete = v_delete;
  v.xAccess = v_access;
  v.xFullPathname = v_full_pathname;
  v.xDlOpen = v_dl_open;
  v.xDlError = v_dl_error;
  v.xDlSym = v_dl_sym;
  v.xDlClose = v_dl_close;
  v.xRandomness = v_randomness;
  v.xSleep = v_sleep;
  v.xCurrentTime = v_current_time;
  v.xGetLastError = v_last_error;
  v.xCurrentTimeInt64 = v_current_time_int64;
  AFASIM_ASSERT(sqlite3_vfs_find(impl_->name.c_str()) == nullptr, "a VFS of this name is registered already");
  AFASIM_ASSERT(sqlite3_vfs_register(&v, 0) == SQLITE_OK, "cannot register the fault-injection VFS");
}

FaultInjectionVfs::~FaultInjectionVfs() {
  sqlite3_vfs_unregister(&impl_->vfs);
}

const std::string& FaultInjectionVfs::name() const {
  return impl_->name;
}
void FaultInjectionVfs::fail_next_writes(int n) {
  impl_->fail_writes = n;
}
void FaultInjectionVfs::fail_next_syncs(int n) {
  impl_->fail_syncs = n;
}
std::int64_t FaultInjectionVfs::writes_failed() const {
  return impl_->writes_failed;
}

std::int64_t FaultInjectionVfs::unsynced_bytes() const {
  std::int64_t n = 0;
  for (const auto& [path, log] : impl_->logs) n += log.unsynced_bytes;
  return n;
}

sim::Status FaultInjectionVfs::crash() {
  impl_->dead = true;
  for (const auto& [path, log] : impl_->logs) AFASIM_RETURN_IF_ERROR(restore(path, log));
  impl_->logs.clear();
  return sim::Status::ok();
}

sim::Status FaultInjectionVfs::corrupt(const std::string& path, std::int64_t offset, std::int64_t length) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return sim::unavailable("cannot open " + path + ": " + std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(length));
  const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), offset);
  for (ssize_t i = 0; i < n; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(~bytes[static_cast<std::size_t>(i)]);
  const bool ok = n <= 0 || ::pwrite(fd, bytes.data(), static_cast<std::size_t>(n), offset) == n;
  ::close(fd);
  return ok ? sim::Status::ok() : sim::unavailable("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace afasim::store
