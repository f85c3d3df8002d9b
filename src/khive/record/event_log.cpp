#include "khive/record/event_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace khive {

EventLog::EventLog(std::filesystem::path file) : file_(std::move(file)) {
  if (!file_.parent_path().empty()) std::filesystem::create_directories(file_.parent_path());
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("{}: cannot open the event log: {}", file_.string(), std::strerror(errno)));
  // Cut a torn tail: everything after the last newline.
  off_t size = ::lseek(fd_, 0, SEEK_END);
  off_t keep = 0;
  char buf[4096];
  for (off_t end = size; end > 0;) {
    off_t start = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
    ssize_t n = ::pread(fd_, buf, static_cast<std::size_t>(end - start), start);
    if (n <= 0) break;
    bool found = false;
    for (ssize_t i = n - 1; i >= 0; --i)
      if (buf[i] == '\n') {
        keep = start + i + 1;
        found = true;
        break;
      }
    if (found) break;
    end = start;
  }
  if (keep < size) {
    if (::ftruncate(fd_, keep) != 0)
      throw std::runtime_error(
          fmt::format("{}: cannot cut the torn last line: {}", file_.string(), std::strerror(errno)));
    ::fsync(fd_);
  }
}

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

void EventLog::append(const nlohmann::json& event) {
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lk(mu_);
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("{}: write failed: {}", file_.string(), std::strerror(errno)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::fsync(fd_);
}

EventLogContents read_event_log(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the event log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  EventLogContents r;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < all.size()) {
    ++line_no;
    std::size_t nl = all.find('\n', pos);
    bool last = nl == std::string::npos;
    std::string line = all.substr(pos, last ? std::string::npos : nl - pos);
    pos = last ? all.size() : nl + 1;
    if (line.empty() && !last) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (last) {  // no final newline: the write was cut short
      r.torn_tail = true;
      break;
    }
    if (j.is_discarded() || !j.is_object()) {
      if (pos >= all.size()) {  // a complete but garbled last line: a torn write that happened to end in '\n'
        r.torn_tail = true;
        break;
      }
      throw std::runtime_error(fmt::format("{}: line {}: expected one JSON object per line", file.string(), line_no));
    }
    r.events.push_back(std::move(j));
  }
  return r;
}

}  // namespace khive
