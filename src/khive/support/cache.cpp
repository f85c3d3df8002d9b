#include "khive/support/cache.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "khive/support/files.hpp"
#include "khive/support/text.hpp"

namespace khive::cache {
namespace {

constexpr const char* kLockName = ".khive-lock";
constexpr const char* kDoomed = ".doomed-";

uint64_t tree_bytes(const fs::path& p) {
  std::error_code ec;
  if (fs::is_symlink(p, ec)) return 0;
  if (fs::is_regular_file(p, ec)) {
    auto n = fs::file_size(p, ec);
    return ec ? 0 : n;
  }
  uint64_t sum = 0;
  for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && !it->is_symlink(e2)) {
      auto n = it->file_size(e2);
      if (!e2) sum += n;
    }
  }
  return sum;  // a tree changing under the walk (another process) gives a slightly stale figure, never an error
}

fs::file_time_type mtime(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

std::vector<fs::path> subdirs(const fs::path& p) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2) && !it->is_symlink(e2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_doomed(const fs::path& p) { return p.filename().string().find(kDoomed) != std::string::npos; }

bool is_build_key(const std::string& n) {
  return n.size() == 64 &&
         std::all_of(n.begin(), n.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string first_line(const fs::path& p) {
  std::ifstream f(p);
  std::string s;
  std::getline(f, s);
  return s;
}

// The pid a doomed directory's name carries ("<name>.doomed-<pid>-<n>"), 0 when unreadable.
long doomed_pid(const fs::path& p) {
  std::string n = p.filename().string();
  auto at = n.find(kDoomed);
  if (at == std::string::npos) return 0;
  return std::strtol(n.c_str() + at + std::strlen(kDoomed), nullptr, 10);
}

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Leftovers of removals that were interrupted: deleted when their process is gone (or is this one).
void collect_doomed(const fs::path& root, std::vector<fs::path>& out) {
  auto consider = [&](const fs::path& d) {
    if (is_doomed(d)) {
      long pid = doomed_pid(d);
      if (pid == ::getpid() || process_gone(pid)) out.push_back(d);
    }
  };
  for (const auto& v : subdirs(root / "goldens")) {
    consider(v);
    for (const auto& h : subdirs(v)) {
      consider(h);
      for (const auto& b : subdirs(h)) consider(b);
    }
  }
  for (const auto& s : subdirs(root / "build")) {
    consider(s);
    for (const auto& e : subdirs(s)) consider(e);
  }
}

// What a process left behind when it died without cleaning up (kill -9, a crash, a second Ctrl-C): builds in
// progress (build/<shard>/tmp-*), scratch (scratch/*), a random-seed evaluation's private goldens
// (goldens/.../eval-*) and prompt folders (llm-prompt-*), each named with
// its owner's pid (make_temp_dir). Those whose owner is gone go; a name without a pid (an older khive) goes
// once it is a day old. A live owner's folders are never touched.
bool abandoned(const fs::path& d) {
  const long owner = temp_dir_owner(d);
  if (owner > 0) return owner != ::getpid() && process_gone(owner);
  return fs::file_time_type::clock::now() - mtime(d) > std::chrono::hours(24);
}

void collect_leftovers(const fs::path& root, std::vector<fs::path>& out) {
  for (const auto& s : subdirs(root / "build"))
    if (s.filename() != "uncached")
      for (const auto& e : subdirs(s))
        if (e.filename().string().rfind("tmp-", 0) == 0 && abandoned(e)) out.push_back(e);
  for (const auto& d : subdirs(root / "scratch"))
    if (abandoned(d)) out.push_back(d);
  // A random-seed evaluation's private goldens (goldens/<version>/<task>/<unit>/eval-p<pid>-XXXXXX).
  for (const auto& v : subdirs(root / "goldens"))
    for (const auto& h : subdirs(v))
      for (const auto& b : subdirs(h))
        for (const auto& e : subdirs(b))
          if (e.filename().string().rfind("eval-", 0) == 0 && temp_dir_owner(e) > 0 && abandoned(e)) out.push_back(e);
  for (const auto& d : subdirs(root))
    if (d.filename().string().rfind("llm-prompt-", 0) == 0 && abandoned(d)) out.push_back(d);
}

}  // namespace

Usage scan(const fs::path& root) {
  Usage u;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return u;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path top = it->path();
    const std::string name = top.filename().string();
    if (name == "goldens" && fs::is_directory(top)) {
      for (const auto& v : subdirs(top)) {
        if (is_doomed(v)) {
          u.scratch_bytes += tree_bytes(v);
          continue;
        }
        for (const auto& h : subdirs(v)) {
          if (is_doomed(h)) {
            u.scratch_bytes += tree_bytes(h);
            continue;
          }
          std::string task = first_line(h / ".task");  // written by the evaluation: the task's name
          for (const auto& b : subdirs(h)) {
            if (is_doomed(b)) {
              u.scratch_bytes += tree_bytes(b);
              continue;
            }
            Unit x;
            x.kind = Unit::Kind::golden;
            x.path = b;
            std::string t = first_line(b / ".task");
            if (t.empty()) t = task;
            x.label = (t.empty() ? std::string("?") : t) + " " + b.filename().string() + " (" + v.filename().string() +
                      "/" + h.filename().string() + ")";
            x.bytes = tree_bytes(b);
            x.last_used = mtime(b);
            u.golden_bytes += x.bytes;
            u.units.push_back(std::move(x));
          }
        }
      }
    } else if (name == "build" && fs::is_directory(top)) {
      for (const auto& s : subdirs(top)) {
        const bool uncached = s.filename() == "uncached";
        for (const auto& e : subdirs(s)) {
          const std::string en = e.filename().string();
          if (!is_doomed(e) && (uncached ? en.rfind("b-", 0) == 0 : is_build_key(en))) {
            Unit x;
            x.kind = Unit::Kind::build;
            x.path = e;
            x.label = en;
            x.bytes = tree_bytes(e);
            x.last_used = mtime(e);
            u.build_bytes += x.bytes;
            u.units.push_back(std::move(x));
          } else {
            u.scratch_bytes += tree_bytes(e);  // tmp-* builds in progress, stale-* entries, doomed leftovers
          }
        }
      }
    } else if (name == "scratch") {
      u.scratch_bytes += tree_bytes(top);
    } else {
      u.other_bytes += tree_bytes(top);
    }
  }
  return u;
}

std::optional<uint64_t> parse_max_gb(const std::string& value, const std::string& what) {
  const char* s = value.c_str();
  char* end = nullptr;
  errno = 0;
  double gb = std::strtod(s, &end);
  while (end && *end == ' ') ++end;
  if (value.empty() || end == s || *end != '\0' || errno == ERANGE || !std::isfinite(gb) || gb < 0)
    throw std::runtime_error(what + ": expected a size in GB (a number >= 0; 0 = no cap), got '" + value + "'");
  if (gb == 0) return std::nullopt;
  double bytes = gb * 1e9;
  if (bytes >= 1.8e19) throw std::runtime_error(what + ": '" + value + "' GB is beyond any disk");
  return static_cast<uint64_t>(std::max(1.0, std::floor(bytes)));
}

namespace {
// $var as parse_max_gb reads it; unset: default_gb.
std::optional<uint64_t> gb_from_env(const char* var, double default_gb) {
  const char* v = std::getenv(var);
  if (!v) return static_cast<uint64_t>(default_gb * 1e9);
  return parse_max_gb(v, std::string("$") + var);
}
}  // namespace

std::optional<uint64_t> cap_from_env() { return gb_from_env("KHIVE_CACHE_MAX_GB", kDefaultMaxGb); }

std::optional<uint64_t> golden_set_cap_from_env() {
  return gb_from_env("KHIVE_GOLDENS_MAX_GB", kDefaultGoldenSetMaxGb);
}

std::string GoldenBound::summary(const std::string& task, uint64_t cap) const {
  if (before <= cap) return "";
  return "goldens of " + task + " over " + human_bytes(cap) + " (" + human_bytes(before) + "): removed " +
         std::to_string(generations) + " earlier run" + (generations == 1 ? "'s" : "s'") + " goldens, " +
         human_bytes(removed_bytes) + "; now " + human_bytes(after);
}

GoldenBound bound_golden_set(const fs::path& set_dir, const std::string& keep, uint64_t cap,
                             std::chrono::seconds min_age) {
  struct Generation {
    std::vector<std::pair<fs::path, uint64_t>> files;  // and their sizes
    fs::path stamp;                                    // its .used-<fingerprint> file, when there is one
    fs::file_time_type newest =
        fs::file_time_type::min();  // not {}: libstdc++'s file clock counts from 2174, so today is negative
  };
  std::map<std::string, Generation> gens;
  GoldenBound b;
  std::error_code ec;
  // The workload folders' *.bin files (not the eval-* folders of one-off evaluations, nor files being written).
  for (auto it = fs::recursive_directory_iterator(set_dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename().string().rfind("eval-", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string name = it->path().filename().string();
    if (name.rfind(".used-", 0) == 0 && it->is_regular_file(ec)) {  // when an evaluation last used the generation
      Generation& g = gens[name.substr(6)];
      g.stamp = it->path();
      g.newest = std::max(g.newest, it->last_write_time(ec));
      continue;
    }
    if (!it->is_regular_file(ec) || name.size() < 5 || name.compare(name.size() - 4, 4, ".bin") != 0) continue;
    const std::string head = name.substr(0, name.find('.'));
    const auto dash = head.rfind('-');
    if (dash == std::string::npos) continue;
    Generation& g = gens[head.substr(dash + 1)];
    const uint64_t size = it->file_size(ec);
    const auto mtime = it->last_write_time(ec);
    g.files.push_back({it->path(), size});
    g.newest = std::max(g.newest, mtime);
    b.before += size;
  }
  b.after = b.before;
  // The running evaluation's generation is in use now: its stamp (.used-<fingerprint>, beside the workload folders)
  // says so, so that a long run's goldens, written at its start and read by every later evaluation, stay young while it
  // runs. A stamp, not the goldens' own mtimes: those say when a golden was made.
  if (!keep.empty()) {
    const fs::path stamp = set_dir / (".used-" + keep);
    std::error_code st;
    if (!fs::exists(stamp, st)) std::ofstream(stamp).put('\n');
    fs::last_write_time(stamp, fs::file_time_type::clock::now(), st);
  }
  if (b.before <= cap) return b;
  std::vector<std::pair<fs::file_time_type, std::string>> order;
  const auto young = fs::file_time_type::clock::now() - min_age;
  for (const auto& [fp, g] : gens)
    if (fp != keep && g.newest < young) order.push_back({g.newest, fp});
  std::sort(order.begin(), order.end());
  const auto target = static_cast<uint64_t>(kTargetFraction * static_cast<double>(cap));
  for (const auto& [when, fp] : order) {
    if (b.after <= target) break;
    const Generation& g = gens[fp];
    uint64_t gone = 0;
    for (const auto& [f, size] : g.files) {
      std::error_code rm;
      if (fs::remove(f, rm)) gone += size;
    }
    if (!g.stamp.empty()) {
      std::error_code rm;
      fs::remove(g.stamp, rm);
    }
    b.after -= std::min(b.after, gone);
    b.removed_bytes += gone;
    ++b.generations;
  }
  return b;
}

std::vector<std::size_t> select_and_remove(const std::vector<Unit>& units, uint64_t cap,
                                           const std::vector<fs::path>& protect,
                                           const std::function<bool(const Unit&)>& remove, double target_fraction) {
  std::vector<std::size_t> removed;
  uint64_t total = 0;
  for (const auto& u : units) total += u.bytes;
  if (total <= cap) return removed;
  const double target = target_fraction * static_cast<double>(cap);
  std::vector<fs::path> prot;
  for (const auto& p : protect) prot.push_back(p.lexically_normal());
  std::vector<std::size_t> order(units.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (units[a].last_used != units[b].last_used) return units[a].last_used < units[b].last_used;
    return units[a].path < units[b].path;
  });
  for (std::size_t i : order) {
    if (static_cast<double>(total) <= target) break;
    if (std::find(prot.begin(), prot.end(), units[i].path.lexically_normal()) != prot.end()) continue;
    if (!remove(units[i])) continue;
    total -= units[i].bytes;
    removed.push_back(i);
  }
  return removed;
}

bool remove_unit(const fs::path& unit, std::string* error) {
  static std::atomic<unsigned> seq{0};
  int fd = ::open((unit / kLockName).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // gone already (or not ours to write): leave it
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;  // held by a live evaluation
  }
  // Still the unit we locked? (Another remover may have renamed it and a new one taken its place.)
  struct stat a {
  }, b{};
  bool same = ::fstat(fd, &a) == 0 && ::stat((unit / kLockName).c_str(), &b) == 0 && a.st_dev == b.st_dev &&
              a.st_ino == b.st_ino;
  fs::path doomed = unit;
  doomed += std::string(kDoomed) + std::to_string(::getpid()) + "-" + std::to_string(seq++);
  bool renamed = same && ::rename(unit.c_str(), doomed.c_str()) == 0;
  ::close(fd);
  if (!renamed) return false;
  std::error_code ec;
  fs::remove_all(doomed, ec);
  if (ec && error) *error = doomed.string() + ": cannot delete (" + ec.message() + ")";
  return true;
}

Hold& Hold::operator=(Hold&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Hold::~Hold() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

std::optional<Hold> hold(const fs::path& unit) {
  const fs::path lock = unit / kLockName;
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::nullopt;
  int rc;
  while ((rc = ::flock(fd, LOCK_SH)) != 0 && errno == EINTR) {
  }
  // A remover holds the exclusive lock only while it renames the unit away: after waiting for it, the lock
  // must still be the one at the unit's path, else the unit was removed and this hold would guard nothing.
  struct stat a {
  }, b{};
  if (rc != 0 || ::fstat(fd, &a) != 0 || ::stat(lock.c_str(), &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino) {
    ::close(fd);
    return std::nullopt;
  }
  return Hold(fd);
}

void touch(const fs::path& unit) { ::utimensat(AT_FDCWD, unit.c_str(), nullptr, 0); }

std::string PruneResult::summary() const {
  auto plural = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string s = "cache over " + human_bytes(cap) + " (" + human_bytes(before) + "): ";
  if (pruned()) {
    s += "removed ";
    if (golden_sets) s += plural(golden_sets, "golden set", "golden sets");
    if (golden_sets && builds) s += " and ";
    if (builds) s += plural(builds, "build", "builds");
    s += ", " + human_bytes(removed_bytes) + "; now " + human_bytes(after);
  } else {
    s += "nothing could be removed; " + human_bytes(after);
  }
  if (in_use) s += "; " + plural(in_use, "unit", "units") + " kept, in use by running evaluations";
  if (leftovers) s += "; " + leftovers_text();
  if (!errors.empty()) s += "; " + errors.front();
  return s;
}

std::string PruneResult::leftovers_text() const {
  return std::to_string(leftovers) + (leftovers == 1 ? " folder" : " folders") + " left by ended processes removed (" +
         human_bytes(leftover_bytes) + ")";
}

namespace {

PruneResult apply(const fs::path& root, uint64_t cap, const std::vector<fs::path>& protect, double target) {
  PruneResult r;
  r.cap = cap;
  std::vector<fs::path> doomed;
  collect_doomed(root, doomed);
  for (const auto& d : doomed) {
    std::error_code ec;
    fs::remove_all(d, ec);
    if (ec) r.errors.push_back(d.string() + ": cannot delete (" + ec.message() + ")");
  }
  std::vector<fs::path> left;
  collect_leftovers(root, left);
  for (const auto& d : left) {
    const uint64_t bytes = tree_bytes(d);
    std::error_code ec;
    fs::remove_all(d, ec);
    if (ec) {
      r.errors.push_back(d.string() + ": cannot delete (" + ec.message() + ")");
      continue;
    }
    ++r.leftovers;
    r.leftover_bytes += bytes;
  }
  Usage u = scan(root);
  r.before = r.after = u.capped();
  auto removed = select_and_remove(
      u.units, cap, protect,
      [&](const Unit& x) {
        std::string err;
        if (!remove_unit(x.path, &err)) {
          std::error_code ec;
          if (fs::exists(x.path, ec)) ++r.in_use;
          return false;
        }
        if (!err.empty()) r.errors.push_back(err);
        return true;
      },
      target);
  for (std::size_t i : removed) {
    const Unit& x = u.units[i];
    (x.kind == Unit::Kind::golden ? r.golden_sets : r.builds) += 1;
    r.removed_bytes += x.bytes;
    r.after -= x.bytes;
  }
  return r;
}

}  // namespace

PruneResult prune(const fs::path& root, uint64_t cap, const std::vector<fs::path>& protect) {
  return apply(root, cap, protect, kTargetFraction);
}

PruneResult clear(const fs::path& root) {
  // A cap of 0 bytes with target 0: every unit is offered, oldest first.
  return apply(root, 0, {}, 0.0);
}

}  // namespace khive::cache
