// An exclusive lock on a directory (a run directory): one process at a time works in it.
//
//   DirLock lock = DirLock::acquire(run_dir, "khive optimize --resume RUN");   // throws DirLockBusy when held
//   if (!lock.stale_note().empty()) say(lock.stale_note());   // a holder that ended without unlocking
//
// The lock is a flock on <dir>/lock, so the kernel releases it when the holder ends in any way (kill -9, a
// crash): a lock can never stay held by a dead process. The file records the holder (pid, host, command,
// start time); finding that record while the lock is free means the previous holder ended without
// unlocking, which stale_note() reports. A clean release removes the record.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

namespace khive {

// This process's command line ("khive optimize --resume runs/x"), from /proc/self/cmdline; "khive" when unreadable.
std::string process_command_line();

struct DirLockBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DirLock {
 public:
  // Creates the directory when needed. Throws DirLockBusy ("<dir> is in use by another khive (pid P on HOST,
  // `COMMAND`, since TIME): ...") when another process holds it, std::runtime_error when the lock file
  // cannot be made.
  static DirLock acquire(const std::filesystem::path& dir, const std::string& command);
  DirLock() = default;
  DirLock(DirLock&& o) noexcept;
  DirLock& operator=(DirLock&& o) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();
  bool held() const { return fd_ >= 0; }
  // Set when the previous holder ended without releasing (its record was still there): one sentence.
  const std::string& stale_note() const { return stale_; }
  void release();

 private:
  int fd_ = -1;
  std::filesystem::path file_;
  std::string stale_;
};

}  // namespace khive
