#include "khive/support/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace khive {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const std::filesystem::path& p, const std::string& data) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::string tmp = p.string() + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(tmp + ": cannot create (" + std::strerror(errno) + ")");
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(tmp + ": write failed (" + std::strerror(e) + ")");
    }
    off += static_cast<std::size_t>(w);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(p.string() + ": rename failed (" + std::strerror(e) + ")");
  }
}

std::filesystem::path make_temp_dir(const std::filesystem::path& parent, const std::string& prefix) {
  std::filesystem::create_directories(parent);
  std::string tmpl = (parent / (prefix + "-p" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error(tmpl + ": mkdtemp failed (" + std::strerror(errno) + ")");
  return tmpl;
}

long temp_dir_owner(const std::filesystem::path& dir) {
  const std::string n = dir.filename().string();
  // "<prefix>-p<pid>-XXXXXX": the last 7 characters are "-XXXXXX", the pid ends just before them.
  if (n.size() < 11 || n[n.size() - 7] != '-') return 0;
  const std::size_t end = n.size() - 7;
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(n[start - 1]))) --start;
  if (start == end || start < 2 || n[start - 1] != 'p' || n[start - 2] != '-') return 0;
  return std::strtol(n.c_str() + start, nullptr, 10);
}

std::filesystem::path cache_root() {
  if (const char* k = std::getenv("KHIVE_CACHE"); k && *k) return k;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "khive";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "khive";
  return std::filesystem::path("/tmp") / ("khive-cache-" + std::to_string(::getuid()));
}

std::filesystem::path sibling_executable(const char* env, const char* name) {
  if (const char* r = env ? std::getenv(env) : nullptr; r && *r) return r;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto dir = self.parent_path();
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
      for (auto p : {dir / name, dir / "bin" / name})
        if (std::filesystem::exists(p)) return p;
      if (dir == dir.root_path()) break;
    }
  }
  return name;
}

}  // namespace khive
