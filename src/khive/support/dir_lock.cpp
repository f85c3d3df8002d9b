#include "khive/support/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace khive {
namespace {

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n <= 0) break;
    s.append(buf, static_cast<std::size_t>(n));
    off += n;
  }
  return s;
}

std::string now_text() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// "pid 1234 on host, `khive optimize ...`, since 2026-12-02 20:14:03" from a holder's record; "" when unreadable.
std::string holder_text(const std::string& record) {
  auto j = nlohmann::json::parse(record, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "";
  return fmt::format("pid {} on {}, `{}`, since {}", j.value("pid", 0), j.value("host", "?"), j.value("command", "?"),
                     j.value("since", "?"));
}

}  // namespace

std::string process_command_line() {
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "khive";
  std::string s = read_all(fd);
  ::close(fd);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (auto& c : s)
    if (c == '\0') c = ' ';
  if (auto slash = s.rfind('/', s.find(' ')); slash != std::string::npos)
    s = s.substr(slash + 1);  // the program's base name
  return s.empty() ? "khive" : s;
}

DirLock DirLock::acquire(const std::filesystem::path& dir, const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  DirLock l;
  l.file_ = dir / "lock";
  l.fd_ = ::open(l.file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (l.fd_ < 0)
    throw std::runtime_error(
        fmt::format("{}: cannot create the run's lock file ({})", l.file_.string(), std::strerror(errno)));
  if (::flock(l.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    const std::string who = holder_text(read_all(l.fd_));
    ::close(l.fd_);
    l.fd_ = -1;
    if (e != EWOULDBLOCK)
      throw std::runtime_error(fmt::format("{}: cannot lock ({})", l.file_.string(), std::strerror(e)));
    throw DirLockBusy(
        fmt::format("{} is in use by another khive ({}); only one process may work in a run directory at a time (two "
                    "would give out the "
                    "same candidate ids and overwrite each other's records): wait for it to end, or stop it first",
                    dir.string(), who.empty() ? "starting now" : who));
  }
  const std::string previous = read_all(l.fd_);
  if (!previous.empty()) {
    const std::string who = holder_text(previous);
    l.stale_ = fmt::format(
        "the previous khive in {} ({}) ended without releasing its lock (killed or crashed); what it recorded is kept",
        dir.string(), who.empty() ? "unreadable record" : who);
  }
  const std::string record =
      nlohmann::json{{"pid", ::getpid()}, {"host", host_name()}, {"command", command}, {"since", now_text()}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  if (::ftruncate(l.fd_, 0) != 0 ||
      ::pwrite(l.fd_, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size()))
    throw std::runtime_error(
        fmt::format("{}: cannot write the lock record ({})", l.file_.string(), std::strerror(errno)));
  ::fsync(l.fd_);
  return l;
}

DirLock::DirLock(DirLock&& o) noexcept : fd_(o.fd_), file_(std::move(o.file_)), stale_(std::move(o.stale_)) {
  o.fd_ = -1;
}

DirLock& DirLock::operator=(DirLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    file_ = std::move(o.file_);
    stale_ = std::move(o.stale_);
    o.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() { release(); }

void DirLock::release() {
  if (fd_ < 0) return;
  // An empty file is a clean release; the file itself stays, so every process locks the same inode.
  (void)!::ftruncate(fd_, 0);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace khive
