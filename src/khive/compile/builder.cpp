// build_candidate: candidate source -> shared object, through a content-addressed cache.
//
// Cache layout: <cache>/<key[0:2]>/<key>/{cand.so, build.log, meta.json, unit.cpp|unit.cu, src/<name>}.
// A build runs in <cache>/<key[0:2]>/tmp-<key[0:12]>-XXXXXX and is renamed into place as a whole, so a
// reader sees either no entry or a complete one; when two builders race on one key, the first rename
// wins and the other discards its copy. Failed builds are cached too (meta.json "ok": false); timeouts,
// compilers killed by a signal and compilers that would not start are not (they say nothing about the
// source).
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "khive/compile/amalgamate.hpp"
#include "khive/compile/builder.hpp"

#include "khive/jail/jail.hpp"
#include "khive/support/cache.hpp"
#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kDefaultArch = "-gencode=arch=compute_90a,code=sm_90a";
// Bump when the unit, the flags or the meta format change in a way the key does not already capture.
constexpr std::string_view kBuilderVersion = "khive-build-1";

// Only what a toolchain reads, with a C locale (ASCII quotes and English messages in the compiler output): a candidate
// can put its compiler's environment into the diagnostics sent to the model (`#include "/proc/self/environ"`), so
// khive's own (a provider's API key) never reaches the compiler. compile_in adds HOME and TMPDIR (its scratch).
std::map<std::string, std::string> compiler_env() {
  std::map<std::string, std::string> env;
  const std::map<std::string, std::string> mine = inherited_env();
  for (const char* v : {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
                        "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH"})
    if (auto it = mine.find(v); it != mine.end()) env[v] = it->second;
  env["LC_ALL"] = "C";
  env["LANG"] = "C";
  return env;
}

std::string find_gxx() {
  fs::path p = find_program("g++");
  return p.empty() ? "g++" : p.string();
}

std::string find_nvcc() {
  if (fs::path p = find_program("nvcc"); !p.empty()) return p.string();
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(var); h && *h && fs::exists(fs::path(h) / "bin" / "nvcc"))
      return (fs::path(h) / "bin" / "nvcc").string();
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

fs::path cutlass_dir(const BuildOptions& o) {
  if (!o.cutlass_include.empty()) return o.cutlass_include;
  if (const char* e = std::getenv("KHIVE_CUTLASS"); e && *e) return e;
#ifdef KHIVE_SOURCE_DIR
  return fs::path(KHIVE_SOURCE_DIR) / ".deps" / "cutlass";
#else
  return {};
#endif
}

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  auto p = s.rfind('\n');
  return p == std::string::npos ? s : s.substr(p + 1);
}

std::string run_for_text(std::vector<std::string> argv, std::string& err) {
  ProcessSpec p;
  p.argv = std::move(argv);
  p.timeout_s = 60;
  p.env = compiler_env();
  ProcessResult r = run_process(p);
  if (!r.ok()) {
    err = p.argv[0] + ": " + r.describe() + (r.err.empty() ? "" : " (" + first_line(r.err) + ")");
    return "";
  }
  return r.out + r.err;
}

std::string compute_identity(Backend b) {
  std::string err;
  std::string gxx = run_for_text({find_gxx(), "--version"}, err);
  if (gxx.empty()) return "unavailable: " + err;
  std::string gxx_id = first_line(gxx);
  if (b == Backend::cuda) {
    std::string nv = run_for_text({find_nvcc(), "--version"}, err);
    if (nv.empty()) return "unavailable: " + err;
    return last_line(nv) + " | " + gxx_id;
  }
  std::string target = run_for_text({find_gxx(), "-march=native", "-Q", "--help=target"}, err);
  std::string march = "-march=?";
  std::istringstream in(target);
  for (std::string l; std::getline(in, l);) {
    auto p = l.find("-march=");
    if (p == std::string::npos) continue;
    std::string rest = l.substr(p);
    auto ws = rest.find_first_of(" \t");
    std::string value = ws == std::string::npos ? "" : rest.substr(ws);
    value.erase(0, value.find_first_not_of(" \t"));
    march = "-march=" + value;
    break;
  }
  return gxx_id + " | " + march + " | target " + sha256_hex(target).substr(0, 16);
}

std::string safe_file_name(const fs::path& source, Backend b) {
  std::string n = source.filename().string();
  bool ok = !n.empty() && n != "." && n != "..";
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+')) ok = false;
  return ok ? n : (b == Backend::cuda ? "candidate.cu" : "candidate.cpp");
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

Diagnostic khive_error(std::string msg) {
  Diagnostic d;
  d.tool = "khive";
  d.message = std::move(msg);
  return d;
}

// A complete cache entry at dir, or nullopt (missing or unreadable: treated as a miss). A library whose SHA-256 is not
// the one its meta.json recorded is a miss too (`damaged` says so): a corrupted cached cand.so was loaded and its
// crash blamed on the kernel (check 2, SIGILL); now it is rebuilt in its place (publish moves the entry aside).
std::optional<BuildResult> load_entry(const fs::path& dir, const std::string& key, std::string* damaged = nullptr) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  try {
    json m = json::parse(read_file(dir / "meta.json"));
    if (m.value("key", "") != key || m.value("builder", "") != kBuilderVersion) return std::nullopt;
    BuildResult r;
    r.ok = m.at("ok").get<bool>();
    r.key = key;
    r.command = m.value("command", std::vector<std::string>{});
    r.log = read_file(dir / "build.log");
    for (const auto& d : m.value("diagnostics", json::array())) r.diagnostics.push_back(d.get<Diagnostic>());
    for (const auto& k : m.value("resources", json::array())) r.resources.push_back(k.get<KernelResources>());
    if (r.ok) {
      r.library = dir / "cand.so";
      if (!fs::is_regular_file(r.library, ec)) return std::nullopt;
      if (sha256_file(r.library) != m.value("library_sha256", "")) {
        if (damaged)
          *damaged = "the cached build " + dir.string() +
                     " was damaged (cand.so does not match the SHA-256 its meta.json recorded)";
        return std::nullopt;
      }
    }
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string cutlass_version_stamp(const fs::path& dir) {
  std::error_code ec;
  fs::path v = dir / "include" / "cutlass" / "version.h";
  if (!fs::is_regular_file(v, ec)) return "";
  try {
    return sha256_hex(read_file(v));
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::size_t BuildResult::error_count() const {
  std::size_t n = 0;
  for (const auto& d : diagnostics) n += d.severity == Diagnostic::Severity::error;
  return n;
}
std::size_t BuildResult::warning_count() const {
  std::size_t n = 0;
  for (const auto& d : diagnostics) n += d.severity == Diagnostic::Severity::warning;
  return n;
}

std::string BuildResult::summary() const {
  const std::string tail = cached ? " (cached)" : "";
  if (ok) {
    std::size_t w = warning_count();
    return w ? fmt::format("ok, {} warning{}{}", w, w == 1 ? "" : "s", tail) : "ok" + tail;
  }
  const Diagnostic* first = nullptr;
  for (const auto& d : diagnostics)
    if (d.severity == Diagnostic::Severity::error) {
      first = &d;
      break;
    }
  if (!first) return "failed" + tail;
  std::string f = format_diagnostics({*first}, 1);
  f = f.substr(0, f.find('\n'));
  std::size_t n = error_count();
  return fmt::format("{}{} error{}; first: {}{}", timed_out ? "timed out; " : "", n, n == 1 ? "" : "s", f, tail);
}

std::string toolchain_identity(Backend b) {
  // Function-local statics: initialised once, thread-safely, on first use.
  if (b == Backend::cuda) {
    static const std::string cuda = compute_identity(Backend::cuda);
    return cuda;
  }
  static const std::string cpu = compute_identity(Backend::cpu);
  return cpu;
}

// -fno-gnu-unique: g++ otherwise exports a template's static data members (CUTLASS 2.x's GemmUniversalBase keeps its
// occupancy and "already configured" device ordinal in them) as STB_GNU_UNIQUE, which the dynamic linker binds to
// the first library that defines them in the whole process, RTLD_LOCAL or not. A second candidate library in one
// process (a user's, or bench/fidelity.py's harness) then skipped its own cudaFuncSetAttribute and took its slower
// fallback: kb06's parallel split-K read 1708 us there against 1340 us alone (H100, 2026-12-06).
std::vector<std::string> build_command(const Task& t, const BuildOptions& o) {
  std::vector<std::string> c;
  if (o.backend == Backend::cpu) {
    c = {find_gxx(),        "-std=c++20",         "-O3", "-DNDEBUG", "-march=native", "-fopenmp", "-fPIC", "-shared",
         "-fno-gnu-unique", "-Wl,--no-undefined", "-o",  "cand.so",  "unit.cpp"};
  } else {
    std::string arch = o.cuda_arch;
    if (arch == kDefaultArch)
      if (const char* e = std::getenv("KHIVE_CUDA_ARCH"); e && *e) arch = e;
    c = {find_nvcc(), "-std=c++17", "-O3", "-DNDEBUG"};
    for (auto& a : split_ws(arch)) c.push_back(a);
    for (const char* f : {"-Xcompiler", "-fPIC,-fno-gnu-unique", "-shared", "--cudart", "shared", "-Xptxas", "-v",
                          "--expt-relaxed-constexpr", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1"})
      c.push_back(f);
    fs::path cut = cutlass_dir(o);
    std::error_code ec;
    if (!cut.empty() && fs::is_directory(cut / "include", ec)) {
      c.push_back("-I" + (cut / "include").string());
      if (fs::is_directory(cut / "util-include", ec)) c.push_back("-I" + (cut / "util-include").string());
    } else if (!cut.empty() && fs::is_directory(cut, ec) && fs::exists(cut / "cutlass", ec)) {
      c.push_back("-I" + cut.string());  // cutlass_include pointed at an include/ dir itself
    }
    for (const char* f : {"-o", "cand.so", "unit.cu", "-Xlinker", "--no-undefined", "-lcuda"}) c.push_back(f);
    if (t.policy.allows("cublas")) c.push_back("-lcublas");
    if (t.policy.allows("cublasLt")) c.push_back("-lcublasLt");
  }
  for (const auto& f : o.extra_flags) c.push_back(f);
  return c;
}

namespace {

// The cache key: what the compiler sees (unit text at a fixed location, the source bytes, the command, the
// toolchain, the CUTLASS headers' version).
std::string build_key(Backend b, const BuildOptions& o, const std::string& canonical_unit, const std::string& src,
                      const std::vector<std::string>& command) {
  Sha256 h;
  h.field(kBuilderVersion).field(backend_name(b)).field(canonical_unit).field(src);
  h.field(std::to_string(command.size()));
  for (const auto& a : command) h.field(a);
  h.field(toolchain_identity(b));
  if (b == Backend::cuda) h.field(cutlass_version_stamp(cutlass_dir(o)));
  h.field(jail_disabled() ? "unconfined" : "khive-jail");  // what the compiler could read decides what it built
  return h.hex();
}

// Runs the compiler in scratch: r's seconds and log (paths relative to scratch), diagnostics and resources.
// The compiler reads a candidate's text, which a model or an attacker wrote: `#include "../../etc/hostname"` would put
// a host file into the diagnostics sent to the model, `.incbin` a cached golden into cand.so. So it runs in
// khive-jail (jail/jail.hpp): it reads the system's toolchains and headers and the folders the command names with
// -I / -isystem (CUTLASS), writes only its scratch folder (TMPDIR too), and has no network.
JailPolicy compiler_jail(const fs::path& scratch, const std::vector<std::string>& command) {
  JailPolicy j;
  j.write = {fs::absolute(scratch).string()};
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string& a = command[i];
    for (const char* flag : {"-I", "-isystem"}) {
      const std::string f = flag;
      if (a == f && i + 1 < command.size())
        j.read.push_back(fs::absolute(command[i + 1]).string());
      else if (a.size() > f.size() && a.compare(0, f.size(), f) == 0)
        j.read.push_back(fs::absolute(a.substr(f.size())).string());
    }
  }
  // The compiler itself where it is not under the system's folders (a CUDA toolkit in a home folder).
  if (!command.empty() && command[0].find('/') != std::string::npos)
    j.read.push_back(fs::path(command[0]).parent_path().parent_path().string());
  j.memory_bytes = physical_memory_bytes() / 2;
  j.file_bytes = 1ll << 30;  // no output beyond 1 GiB (a CUTLASS library is tens of MB)
  j.best_effort = true;  // it runs none of the candidate's code: on a kernel without Landlock, build anyway and say so
  return j;
}

ProcessResult compile_in(const fs::path& scratch, const std::string& name, const std::string& src,
                         const BuildOptions& o, BuildResult& r) {
  ProcessSpec p;
  p.argv = jailed(compiler_jail(scratch, r.command), r.command);
  p.cwd = scratch;
  p.timeout_s = o.timeout_s;
  p.cancel = o.cancel;
  p.env = compiler_env();
  (*p.env)["TMPDIR"] = (*p.env)["HOME"] = fs::absolute(scratch).string();
  p.capture_limit = 8u << 20;
  ProcessResult pr = run_process(p);
  r.seconds = pr.wall_s;
  r.log = pr.out + pr.err;
  if (pr.out_dropped + pr.err_dropped)
    r.log += fmt::format("\n[khive: {} more bytes of compiler output dropped]\n", pr.out_dropped + pr.err_dropped);
  // Show paths inside the scratch dir relative to it: "kernel.cu:12:5: error: ...".
  replace_all(r.log, (scratch / "src").string() + "/", "");
  replace_all(r.log, scratch.string() + "/", "");
  if (pr.start_failed) return pr;
  r.diagnostics = parse_diagnostics(r.log, name, src);
  r.resources = parse_ptxas_resources(r.log);
  return pr;
}

// build.log and meta.json in scratch: the cache entry's record.
void write_build_record(const fs::path& scratch, const Task& t, Backend b, const std::string& name,
                        const ProcessResult& pr, const BuildResult& r) {
  json meta{{"builder", kBuilderVersion},
            {"key", r.key},
            {"ok", r.ok},
            {"backend", backend_name(b)},
            {"task", t.name},
            {"candidate", name},
            {"command", r.command},
            {"toolchain", toolchain_identity(b)},
            {"seconds", r.seconds},
            {"exit", pr.describe()},
            {"diagnostics", json::array()},
            {"resources", json::array()}};
  for (const auto& d : r.diagnostics) meta["diagnostics"].push_back(d);
  for (const auto& k : r.resources) meta["resources"].push_back(k);
  std::error_code ec;
  if (r.ok && fs::is_regular_file(scratch / "cand.so", ec)) meta["library_sha256"] = sha256_file(scratch / "cand.so");
  write_file_atomic(scratch / "build.log", r.log);
  // Compiler output and source lines need not be UTF-8: replace invalid bytes rather than throw.
  write_file_atomic(scratch / "meta.json", meta.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

// Publishes scratch as the cache entry final_dir (a rename of the whole directory). If another builder got there
// first, its entry is used; if the rename cannot be done, the scratch library is still usable, just not shared.
BuildResult publish(BuildResult r, const fs::path& scratch, const fs::path& shard, const fs::path& final_dir) {
  auto discard = [&] {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  };
  auto keep_scratch = [&] {
    if (r.ok) r.library = scratch / "cand.so";
    return r;
  };
  if (::rename(scratch.c_str(), final_dir.c_str()) != 0) {
    int e = errno;
    if (e != EEXIST && e != ENOTEMPTY) return keep_scratch();
    if (auto other = load_entry(final_dir, r.key)) {
      discard();
      other->seconds = r.seconds;
      return *other;
    }
    // A broken entry (no readable meta.json): move it aside and take its place.
    fs::path stale = shard / fmt::format("stale-{}-{}", r.key.substr(0, 12), ::getpid());
    std::error_code ec;
    if (::rename(final_dir.c_str(), stale.c_str()) == 0) fs::remove_all(stale, ec);
    if (::rename(scratch.c_str(), final_dir.c_str()) != 0) {
      if (auto other = load_entry(final_dir, r.key)) {
        discard();
        other->seconds = r.seconds;
        return *other;
      }
      return keep_scratch();
    }
  }
  if (r.ok) r.library = final_dir / "cand.so";
  return r;
}

// What the compiler saw as `name` is shown as `shown`: the diagnostics and the log of a build (or of a cache entry made
// by another file with the same content) name the file the caller gave.
BuildResult shown_as(BuildResult r, const std::string& name, const std::string& shown) {
  if (name == shown) return r;
  for (auto& d : r.diagnostics)
    if (d.file == name) d.file = shown;
  replace_all(r.log, name, shown);
  return r;
}

// The build (or the cache entry) of `source` compiled under the file name `name`.
BuildResult build_named(const Task& t, const fs::path& source, const std::string& name, const BuildOptions& o) {
  BuildResult r;
  const Backend b = o.backend;
  std::string src;
  try {
    src = amalgamate_source(source);  // local headers (kernel.h next to kernel.cu) inlined; else the file as is
  } catch (const std::exception& e) {
    r.diagnostics.push_back(khive_error(std::string("cannot read the candidate: ") + e.what()));
    return r;
  }
  const fs::path cache = o.cache_dir.empty() ? cache_root() / "build" : o.cache_dir;
  r.command = build_command(t, o);

  std::string canonical_unit;
  try {
    canonical_unit = generate_unit(t, b, fs::path("/khive-scratch/src") / name);
  } catch (const std::exception& e) {
    r.diagnostics.push_back(khive_error(std::string("cannot generate the translation unit: ") + e.what()));
    return r;
  }
  r.key = build_key(b, o, canonical_unit, src, r.command);
  const fs::path shard = cache / r.key.substr(0, 2);
  const fs::path final_dir = shard / r.key;
  std::string damaged;
  if (o.use_cache)
    if (auto hit = load_entry(final_dir, r.key, &damaged)) {
      hit->cached = true;
      cache::touch(final_dir);  // the LRU clock of the cache size policy (support/cache.hpp)
      return *hit;
    }

  fs::path scratch;
  try {
    scratch = make_temp_dir(o.use_cache ? shard : cache / "uncached", o.use_cache ? "tmp-" + r.key.substr(0, 12) : "b");
    fs::create_directories(scratch / "src");
    write_file_atomic(scratch / "src" / name, src);
    write_file_atomic(scratch / (b == Backend::cuda ? "unit.cu" : "unit.cpp"),
                      generate_unit(t, b, scratch / "src" / name));
  } catch (const std::exception& e) {
    r.diagnostics.push_back(khive_error(std::string("cannot prepare the build directory: ") + e.what()));
    if (!scratch.empty()) {
      std::error_code ec;
      fs::remove_all(scratch, ec);
    }
    return r;
  }

  const ProcessResult pr = compile_in(scratch, name, src, o, r);
  auto discard = [&] {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  };
  if (pr.start_failed) {
    r.diagnostics.push_back(khive_error("could not start the compiler: " + pr.err));
    discard();
    return r;
  }
  if (pr.cancelled) {
    r.cancelled = true;
    r.diagnostics.push_back(khive_error("the build was cancelled"));
    discard();
    return r;
  }
  if (pr.timed_out) {
    r.timed_out = true;
    r.diagnostics.insert(r.diagnostics.begin(),
                         khive_error(fmt::format("the compile exceeded {:g} s and was stopped", o.timeout_s)));
    discard();
    return r;
  }
  std::error_code ec;
  r.ok = pr.ok() && fs::is_regular_file(scratch / "cand.so", ec);
  if (pr.signal) {
    r.diagnostics.push_back(khive_error("the compiler was " + pr.describe() + " (out of memory?)"));
    discard();
    return r;
  }
  if (!r.ok && r.error_count() == 0)
    r.diagnostics.push_back(khive_error("the compiler failed (" + pr.describe() +
                                        ") without a message khive could parse; see the build log"));
  for (auto& d : r.diagnostics)
    if (d.tool == "ld" && d.message.find("'khive_launch'") != std::string::npos)
      d.message += " (the candidate must define extern \"C\" khive_launch with exactly the task's signature)";

  try {
    write_build_record(scratch, t, b, name, pr, r);
  } catch (const std::exception& e) {
    r.ok = false;
    r.diagnostics.push_back(khive_error(std::string("cannot write the build record: ") + e.what()));
    discard();
    return r;
  }
  if (!o.use_cache) {
    if (r.ok) r.library = scratch / "cand.so";
    return r;
  }
  BuildResult out = publish(std::move(r), scratch, shard, final_dir);
  if (!damaged.empty()) out.log = "[khive: " + damaged + "; built again]\n" + out.log;
  return out;
}

}  // namespace

// The compiler sees every candidate under one name (candidate.cu / candidate.cpp), so the key is the content's and
// the task's, never the file's: the same kernel written by another run (its id is in the file name), a warm start,
// `khive eval` of a copy or a speculative build (hive/prebuild.hpp) finds the entry built before. The caller's file
// name is put back into the diagnostics and the log.
BuildResult build_candidate(const Task& t, const fs::path& source, const BuildOptions& o) {
  const std::string name = o.backend == Backend::cuda ? "candidate.cu" : "candidate.cpp";
  return shown_as(build_named(t, source, name, o), name, safe_file_name(source, o.backend));
}

}  // namespace khive
