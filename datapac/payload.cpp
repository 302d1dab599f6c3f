#include "datapac/payload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "sim/assert.h"

namespace afasim::datapac {
namespace {

bool all_zero(const std::uint8_t* p, std::size_t n) {
  // Word at a time where aligned; the tail byte by byte.
  std::size_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(p + i) & 7) != 0; ++i)
    if (p[i] != 0) return false;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != 0) return false;
  }
  for (; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

class NoneStore final : public PayloadStore {
 public:
  explicit NoneStore(std::int64_t capacity_bytes) : PayloadStore(capacity_bytes) {}
  PayloadKind kind() const override { return PayloadKind::kNone; }
  sim::Status write(std::int64_t, std::span<const std::uint8_t>) override { return {}; }
  sim::Status read(std::int64_t, std::span<std::uint8_t> out) const override {
    std::memset(out.data(), 0, out.size());
    return {};
  }
  sim::Status trim(std::int64_t, std::int64_t) override { return {}; }
  bool may_hold_data(std::int64_t, std::int64_t) const override { return false; }
  sim::Status flush() override { return {}; }
  sim::Status erase_all() override { return {}; }
};

// Pages keyed by index in a hash map: a few dozen bytes of bookkeeping per page touched and
// nothing for space never written, whatever the SSD's capacity.
class MemoryStore final : public PayloadStore {
 public:
  MemoryStore(std::int64_t capacity_bytes, std::int64_t page_bytes)
      : PayloadStore(capacity_bytes), page_bytes_(page_bytes) {
    AFASIM_ASSERT(capacity_bytes > 0, "payload store capacity must be positive");
    AFASIM_ASSERT(
        page_bytes >= 512 && page_bytes <= (16 << 20) && (page_bytes & (page_bytes - 1)) == 0,
        "memory payload page must be a power of two in [512, 16 MiB]");
    while ((std::int64_t{1} << page_shift_) < page_bytes_) ++page_shift_;
  }
  PayloadKind kind() const override { return PayloadKind::kMemory; }

  sim::Status write(std::int64_t offset, std::span<const std::uint8_t> data) override {
    const std::uint8_t* src = data.data();
    std::int64_t left = static_cast<std::int64_t>(data.size());
    while (left > 0) {
      const std::int64_t index = offset >> page_shift_;
      const std::int64_t in_page = offset & (page_bytes_ - 1);
      const std::int64_t n = std::min(left, page_bytes_ - in_page);
      auto it = pages_.find(index);
      if (it != pages_.end()) {
        std::memcpy(it->second.get() + in_page, src, static_cast<std::size_t>(n));
      } else if (!all_zero(src, static_cast<std::size_t>(n))) {
        // Zeros written into a page never written change nothing: no page is allocated.
        auto page = std::make_unique<std::uint8_t[]>(static_cast<std::size_t>(page_bytes_));
        std::memcpy(page.get() + in_page, src, static_cast<std::size_t>(n));
        pages_.emplace(index, std::move(page));
      }
      offset += n;
      src += n;
      left -= n;
    }
    return {};
  }

  sim::Status read(std::int64_t offset, std::span<std::uint8_t> out) const override {
    std::uint8_t* dst = out.data();
    std::int64_t left = static_cast<std::int64_t>(out.size());
    while (left > 0) {
      const std::int64_t index = offset >> page_shift_;
      const std::int64_t in_page = offset & (page_bytes_ - 1);
      const std::int64_t n = std::min(left, page_bytes_ - in_page);
      auto it = pages_.find(index);
      if (it != pages_.end())
        std::memcpy(dst, it->second.get() + in_page, static_cast<std::size_t>(n));
      else
        std::memset(dst, 0, static_cast<std::size_t>(n));
      offset += n;
      dst += n;
      left -= n;
    }
    return {};
  }

  sim::Status trim(std::int64_t offset, std::int64_t length) override {
    if (length <= 0) return {};
    const std::int64_t end = offset + length;
    const std::int64_t first = offset >> page_shift_;
    const std::int64_t last = (end - 1) >> page_shift_;
    if (last - first + 1 > static_cast<std::int64_t>(pages_.size())) {
      // A range wider than what is stored (a whole-SSD trim): walk the stored pages instead
      // of the range, so the cost is bounded by memory held, not by capacity.
      std::vector<std::int64_t> touched;
      for (const auto& [index, page] : pages_)
        if (index >= first && index <= last) touched.push_back(index);
      for (std::int64_t index : touched) trim_page(index, offset, end);
      return {};
    }
    for (std::int64_t index = first; index <= last; ++index) trim_page(index, offset, end);
    return {};
  }

  bool may_hold_data(std::int64_t offset, std::int64_t length) const override {
    if (length <= 0) return false;
    const std::int64_t first = offset >> page_shift_;
    const std::int64_t last = (offset + length - 1) >> page_shift_;
    if (last - first + 1 > static_cast<std::int64_t>(pages_.size())) {
      for (const auto& [index, page] : pages_)
        if (index >= first && index <= last) return true;
      return false;
    }
    for (std::int64_t index = first; index <= last; ++index)
      if (pages_.count(index)) return true;
    return false;
  }

  sim::Status flush() override { return {}; }
  sim::Status erase_all() override {
    pages_.clear();
    return {};
  }
  std::int64_t memory_bytes() const override {
    return static_cast<std::int64_t>(pages_.size()) * page_bytes_;
  }

 private:
  // Zeroes the part of page `index` inside [offset, end); frees the page if all of it is zero.
  void trim_page(std::int64_t index, std::int64_t offset, std::int64_t end) {
    auto it = pages_.find(index);
    if (it == pages_.end()) return;
    const std::int64_t page_start = index << page_shift_;
    const std::int64_t from = std::max(offset, page_start) - page_start;
    const std::int64_t to = std::min(end, page_start + page_bytes_) - page_start;
    if (from == 0 && to == page_bytes_) {
      pages_.erase(it);
      return;
    }
    std::memset(it->second.get() + from, 0, static_cast<std::size_t>(to - from));
    if (all_zero(it->second.get(), static_cast<std::size_t>(page_bytes_))) pages_.erase(it);
  }

  std::int64_t page_bytes_;
  int page_shift_ = 0;
  std::unordered_map<std::int64_t, std::unique_ptr<std::uint8_t[]>> pages_;
};

std::string errno_text(int err) {
  return std::strerror(err);
}

class FileStore final : public PayloadStore {
 public:
  FileStore(std::string path, int fd, std::int64_t capacity_bytes)
      : PayloadStore(capacity_bytes), path_(std::move(path)), fd_(fd) {}
  ~FileStore() override { ::close(fd_); }
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  PayloadKind kind() const override { return PayloadKind::kFile; }

  sim::Status write(std::int64_t offset, std::span<const std::uint8_t> data) override {
    const std::uint8_t* src = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      const ssize_t n = ::pwrite(fd_, src, left, offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        const std::string what = path_ + ": write at " + std::to_string(offset) + ": " + errno_text(errno);
        // The host's file system is full: the SSD is not at fault (kNoSpace, ENOSPC to a
        // host; the data path raises an event, issue 14).
        if (errno == ENOSPC || errno == EDQUOT) return sim::no_space(what);
        return sim::io_error(what);
      }
      src += n;
      left -= static_cast<std::size_t>(n);
      offset += n;
    }
    return {};
  }

  sim::Status read(std::int64_t offset, std::span<std::uint8_t> out) const override {
    std::uint8_t* dst = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = ::pread(fd_, dst, left, offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        return sim::io_error(path_ + ": read at " + std::to_string(offset) + ": " +
                             errno_text(errno));
      }
      if (n == 0) {
        // Past the end of a file someone else shortened: what is missing reads as zeros.
        std::memset(dst, 0, left);
        break;
      }
      dst += n;
      left -= static_cast<std::size_t>(n);
      offset += n;
    }
    return {};
  }

  sim::Status trim(std::int64_t offset, std::int64_t length) override {
    if (length <= 0) return {};
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) == 0)
      return {};
    if (errno != EOPNOTSUPP && errno != ENOSYS)
      return sim::io_error(path_ + ": punch hole at " + std::to_string(offset) + ": " +
                           errno_text(errno));
    // The file system cannot punch holes: write zeros instead, a bounded chunk at a time.
    const std::vector<std::uint8_t> zeros(
        static_cast<std::size_t>(std::min<std::int64_t>(length, 1 << 20)));
    while (length > 0) {
      const std::int64_t n =
          std::min<std::int64_t>(length, static_cast<std::int64_t>(zeros.size()));
      AFASIM_RETURN_IF_ERROR(write(offset, std::span(zeros.data(), static_cast<std::size_t>(n))));
      offset += n;
      length -= n;
    }
    return {};
  }

  bool may_hold_data(std::int64_t offset, std::int64_t length) const override {
    if (length <= 0) return false;
    // The first byte of data at or after offset; ENXIO: none before the end of the file.
    const off_t data = ::lseek(fd_, offset, SEEK_DATA);
    if (data < 0) return errno != ENXIO;  // unsure on any other error
    return data < offset + length;
  }

  sim::Status flush() override {
    if (::fdatasync(fd_) != 0) return sim::io_error(path_ + ": fdatasync: " + errno_text(errno));
    return {};
  }

  sim::Status erase_all() override {
    // One hole over the whole file where the file system can punch one: truncating to 0 and
    // back left a 0-byte file if the process died between the two, which a restart then takes
    // for lost data (open_file_store's must_exist).
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, capacity_bytes()) == 0) return {};
    if (errno != EOPNOTSUPP && errno != ENOSYS) return sim::io_error(path_ + ": punch hole: " + errno_text(errno));
    if (::ftruncate(fd_, 0) != 0 || ::ftruncate(fd_, capacity_bytes()) != 0)
      return sim::io_error(path_ + ": truncate: " + errno_text(errno));
    return {};
  }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

const char* payload_kind_name(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kNone:
      return "none";
    case PayloadKind::kMemory:
      return "memory";
    case PayloadKind::kFile:
      return "file";
  }
  return "?";
}

sim::Result<PayloadKind> parse_payload_kind(const std::string& name) {
  if (name == "none") return PayloadKind::kNone;
  if (name == "memory") return PayloadKind::kMemory;
  if (name == "file") return PayloadKind::kFile;
  return sim::invalid_argument("payload kind \"" + name + "\": expected none, memory or file");
}

std::unique_ptr<PayloadStore> make_none_store(std::int64_t capacity_bytes) {
  AFASIM_ASSERT(capacity_bytes > 0, "payload store capacity must be positive");
  return std::make_unique<NoneStore>(capacity_bytes);
}

std::unique_ptr<PayloadStore> make_memory_store(std::int64_t capacity_bytes,
                                                std::int64_t page_bytes) {
  return std::make_unique<MemoryStore>(capacity_bytes, page_bytes);
}

sim::Result<std::unique_ptr<PayloadStore>> open_file_store(const std::string& path,
                                                           std::int64_t capacity_bytes, bool must_exist) {
  AFASIM_ASSERT(capacity_bytes > 0, "payload store capacity must be positive");
  const std::string lost = ", but it held this SSD's data";
  const int fd = ::open(path.c_str(), O_RDWR | (must_exist ? 0 : O_CREAT) | O_CLOEXEC, 0644);
  if (fd < 0 && must_exist && errno == ENOENT) return sim::not_found(path + " is missing" + lost);
  if (fd < 0) return sim::io_error(path + ": open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return sim::io_error(path + ": stat: " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return sim::precondition_failed(path + ": not a regular file");
  }
  if (st.st_size == 0 && must_exist) {
    ::close(fd);
    return sim::not_found(path + " is empty" + lost);
  }
  if (st.st_size == 0) {
    if (::ftruncate(fd, capacity_bytes) != 0) {
      const int err = errno;
      ::close(fd);
      return sim::io_error(path + ": size to " + std::to_string(capacity_bytes) +
                           " bytes: " + errno_text(err));
    }
  } else if (st.st_size != capacity_bytes) {
    ::close(fd);
    return sim::precondition_failed(path + ": is " + std::to_string(st.st_size) +
                                    " bytes, the SSD holds " + std::to_string(capacity_bytes) +
                                    " (a payload file of another SSD model)");
  }
  return std::unique_ptr<PayloadStore>(std::make_unique<FileStore>(path, fd, capacity_bytes));
}

}  // namespace afasim::datapac
