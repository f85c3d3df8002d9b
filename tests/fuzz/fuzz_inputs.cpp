// Fuzzing what khive reads from outside (issue 25): task folders (definition.json, workload.jsonl), Solution JSON
// (SOL-ExecBench / FlashInfer-Bench) and candidate sources on their way to the compiler. Every case starts from a real
// file of the repository (the tasks of tasks/, khive's own Solution export of their references, their reference
// kernels), mutates it — bytes (bit flips, cuts, repeats, hostile tokens: an unterminated `#include "` over 100 kB,
// NULs, numbers past 2^64, deep nesting) or JSON structure (a node replaced by a value of another type, keys removed
// or added) — and hands it to khive's own reader:
//
//   task       load_task, then resolve_axes and the launch signature of every workload
//   solution   import_solution (and, on the way, nlohmann's parser)
//   source     amalgamate_source, function_params, local_include per line, parse_diagnostics/format_diagnostics
//   build      build_candidate with the real compiler in khive-jail (the slow kind: --builds N of them)
//
// A reader may refuse an input with an exception that says why (std::exception with a non-empty what()); it may not
// crash, hang (30 s per case), or throw anything else. Each case runs in a child process (fork), so a crash is counted,
// named by its case number and seed, and the run goes on: `fuzz_inputs --root R --seed S --only N` replays one.
//
//   fuzz_inputs --root <repo> [--cases 10000] [--builds 200] [--seed 1] [--only N] [--out report.md]
// Exit 0 when no case crashed, hung or threw a non-std exception; 1 otherwise; 2 for bad arguments.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/compile/amalgamate.hpp"
#include "khive/compile/builder.hpp"
#include "khive/compile/source_scan.hpp"
#include "khive/interop/solution.hpp"
#include "khive/task/task.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace khive;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_all(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// ---- mutations ------------------------------------------------------------------------------------------------

const std::vector<std::string> kTokens = {
    "{",       "}",          "[",           "]",       "\"",        ",",        ":",      "null",      "true",         "-1",
    "0",       "1e999",      "-1e999",      "NaN",     "Infinity",  "\\u0000",  "\\ud800", "\xff\xfe", std::string(1, '\0'), "18446744073709551616",
    "-9223372036854775809",  "2147483648",  "\"\"",    "[]",        "{}",       "\n",     "#include \"", "#include <",   "R\"(",
    "/*",      "*/",         "//",          "\\",      "M * N",     "M / 0",    "(",      ")",         "1 << 63",      "khive_launch",
    "extern \"C\"",          "__asm__(\".incbin \\\"/etc/hostname\\\"\")",  "#pragma once", "float*", "int64_t", "\"dtype\"", "\"shape\"",
    "\"axes\"", "\"var\"",   "\"const\"",   "\"expr\"", "bfloat16",  "float8_e4m3fn", "../../etc/passwd", "/dev/zero"};

struct Mutator {
  std::mt19937_64 rng;
  explicit Mutator(uint64_t seed) : rng(seed) {}
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

  std::string big() {
    switch (pick(4)) {
      case 0: return "#include \"" + std::string(100000 + pick(50000), 'a');  // the reply that crashed khive (issue 25)
      case 1: return std::string(20000, '[');
      case 2: return std::string(20000, '{') + std::string(5000, '}');
      default: return std::string(100000, static_cast<char>(pick(256)));
    }
  }

  void bytes(std::string& s) {
    const int n = 1 + static_cast<int>(pick(4));
    for (int k = 0; k < n; ++k) {
      const std::size_t at = pick(s.size() + 1);
      switch (pick(7)) {
        case 0:
          if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
          break;
        case 1: s.erase(at, pick(64)); break;
        case 2: s.insert(at, s.substr(pick(s.size() + 1), pick(200))); break;
        case 3: s.insert(at, kTokens[pick(kTokens.size())]); break;
        case 4: s.resize(pick(s.size() + 1)); break;
        case 5:
          if (coin(0.2)) s.insert(at, big());
          break;
        default: {
          std::string r(pick(16) + 1, '\0');
          for (char& c : r) c = static_cast<char>(pick(256));
          s.insert(at, r);
        }
      }
    }
  }

  json value() {
    switch (pick(12)) {
      case 0: return nullptr;
      case 1: return coin();
      case 2: return static_cast<int64_t>(rng());
      case 3: return static_cast<uint64_t>(rng());
      case 4: return -1;
      case 5: return std::uniform_real_distribution<double>(-1e300, 1e300)(rng);
      case 6: return std::string(pick(40), 'x');
      case 7: return kTokens[pick(kTokens.size())];
      case 8: return json::array({value(), value()});
      case 9: return json::object({{"shape", value()}, {"dtype", kTokens[pick(kTokens.size())]}});
      case 10: {
        json deep = 1;
        for (int i = 0; i < 2000; ++i) deep = json::array({deep});
        return deep;
      }
      default: return std::string(1 + pick(3), static_cast<char>(pick(128)));
    }
  }

  // Replaces, removes or adds at a node chosen by a random walk.
  void structure(json& j, int depth = 0) {
    if ((!j.is_object() && !j.is_array()) || j.empty() || depth > 8 || coin(0.25)) {
      j = value();
      return;
    }
    if (j.is_object()) {
      auto it = j.begin();
      std::advance(it, static_cast<long>(pick(j.size())));
      switch (pick(6)) {
        case 0: j.erase(it.key()); return;
        case 1: j["khive_fuzz_" + std::to_string(pick(100))] = value(); return;
        default: structure(it.value(), depth + 1); return;
      }
    }
    const std::size_t i = pick(j.size());
    switch (pick(6)) {
      case 0: j.erase(i); return;
      case 1: j.push_back(value()); return;
      default: structure(j[i], depth + 1); return;
    }
  }

  // Bytes of a JSON text after one of the two kinds of mutation.
  std::string json_text(const std::string& text) {
    std::string out = text;
    if (coin(0.6)) {
      try {
        json j = json::parse(text);
        for (int k = 0, n = 1 + static_cast<int>(pick(3)); k < n; ++k) structure(j);
        out = j.dump(coin() ? 2 : -1, ' ', false, json::error_handler_t::replace);
      } catch (const std::exception&) {
        bytes(out);
      }
    } else {
      bytes(out);
    }
    return out;
  }
};

// ---- the corpus -----------------------------------------------------------------------------------------------

struct Corpus {
  std::vector<fs::path> tasks;
  std::vector<std::pair<fs::path, std::string>> solutions;  // khive's own exports of the tasks' references, with their task
  std::vector<std::pair<fs::path, std::string>> sources;
};

Corpus load_corpus(const fs::path& root) {
  Corpus c;
  for (const char* suite : {"tasks/demo-cpu", "tasks/sol", "tasks/cutegen26"})
    for (const auto& d : find_tasks(root / suite)) c.tasks.push_back(d);
  for (const auto& d : c.tasks) {
    try {
      Task t = load_task(d);
      for (const auto& [ref, b] : {std::pair{t.reference_cpu, Backend::cpu}, std::pair{t.reference_cuda, Backend::cuda}}) {
        if (!ref) continue;
        const std::string src = read_all(*ref);
        c.sources.emplace_back(d, src);
        SolutionMeta m;
        m.name = t.name + "_fuzz";
        for (SolutionFormat f : {SolutionFormat::sol_execbench, SolutionFormat::flashinfer_bench})
          c.solutions.emplace_back(d, solution_json(t, b, src, m, f).dump(2));
      }
    } catch (const std::exception& e) {
      std::cerr << "corpus: " << d << ": " << e.what() << "\n";
    }
  }
  return c;
}

// ---- one case -------------------------------------------------------------------------------------------------

const char* const kKinds[] = {"task", "solution", "source", "build"};

// Runs case `n` (kind, mutation) in this process; returns normally or throws. `scratch`: a fresh folder.
void run_case(const Corpus& c, uint64_t seed, int kind, const fs::path& scratch) {
  Mutator m(seed);
  fs::create_directories(scratch);
  switch (kind) {
    case 0: {  // a task folder
      const fs::path& from = c.tasks[m.pick(c.tasks.size())];
      const fs::path dir = scratch / from.filename();
      fs::create_directories(dir);
      for (const char* f : {"definition.json", "workload.jsonl"})
        if (fs::exists(from / f)) fs::copy_file(from / f, dir / f);
      const char* which = m.coin(0.6) ? "definition.json" : "workload.jsonl";
      std::string text = read_all(dir / which);
      if (std::string(which) == "workload.jsonl") {
        std::istringstream in(text);
        std::string line, out;
        while (std::getline(in, line)) out += (m.coin(0.3) ? m.json_text(line) : line) + "\n";
        if (m.coin(0.2)) m.bytes(out);
        text = out;
      } else {
        text = m.json_text(text);
      }
      write_all(dir / which, text);
      Task t = load_task(dir);
      for (const auto& w : t.workloads) {
        auto axes = resolve_axes(t, w);
        (void)axes;
      }
      for (Backend b : {Backend::cpu, Backend::cuda}) (void)launch_signature(t, b);
      return;
    }
    case 1: {  // a Solution
      const auto& [task_dir, original] = c.solutions[m.pick(c.solutions.size())];
      const std::string text = m.json_text(original);
      Task t = load_task(m.coin(0.9) ? task_dir : c.tasks[m.pick(c.tasks.size())]);  // now and then another task's
      json j = json::parse(text);  // a parse error is an answer too (nlohmann's what())
      (void)import_solution(j, t, m.coin() ? Backend::cpu : Backend::cuda);
      return;
    }
    default: {  // a candidate's source: the builder's front end, or (kind 3) the whole build
      const auto& [task_dir, original] = c.sources[m.pick(c.sources.size())];
      std::string src = original;
      m.bytes(src);
      const fs::path file = scratch / (m.coin() ? "kernel.cpp" : "kernel.cu");
      write_all(file, src);
      if (m.coin(0.3)) write_all(scratch / "helper.h", m.coin() ? "#include \"kernel.cpp\"\n" : std::string(m.big()));
      const std::string amalgamated = amalgamate_source(file);
      (void)function_params(amalgamated, "khive_launch");
      std::istringstream in(amalgamated);
      for (std::string line; std::getline(in, line);) (void)local_include(line);
      std::string log = file.filename().string() + ":" + std::to_string(m.pick(100000)) + ":" + std::to_string(m.pick(300)) + ": error: " +
                        src.substr(0, std::min<std::size_t>(src.size(), 200)) + "\n";
      m.bytes(log);
      (void)format_diagnostics(parse_diagnostics(log, file.filename().string(), src));
      if (kind == 3) {
        Task t = load_task(task_dir);
        BuildOptions o;
        o.backend = file.extension() == ".cu" ? Backend::cuda : Backend::cpu;
        o.use_cache = false;
        o.cache_dir = scratch / "cache";
        o.timeout_s = 60;
        (void)build_candidate(t, file, o);
      }
      return;
    }
  }
}

struct Outcome {
  std::string what;  // "ok" | "refused" | "crash" | "hang" | "foreign exception"
  std::string detail;
};

// Case n in a child: exit 0 = read, 3 = refused with a message, 4 = refused with an empty message, 5 = a non-std
// exception; a signal = a crash; over 30 s = a hang.
Outcome fork_case(const Corpus& c, uint64_t seed, int kind, const fs::path& scratch) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return {"crash", "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipefd[0]);
    ::alarm(30);
    int code = 0;
    std::string msg;
    try {
      run_case(c, seed, kind, scratch);
    } catch (const std::exception& e) {
      msg = e.what();
      code = msg.empty() ? 4 : 3;
    } catch (...) {
      code = 5;
    }
    msg = msg.substr(0, 300);
    (void)!::write(pipefd[1], msg.data(), msg.size());
    ::_exit(code);
  }
  ::close(pipefd[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (WIFSIGNALED(st)) return {WTERMSIG(st) == SIGALRM ? "hang" : "crash", std::string(strsignal(WTERMSIG(st)))};
  switch (WEXITSTATUS(st)) {
    case 0: return {"ok", ""};
    case 3: return {"refused", msg};
    case 4: return {"refused without a message", ""};
    case 5: return {"foreign exception", ""};
    default: return {"crash", "exit " + std::to_string(WEXITSTATUS(st))};
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root, out;
  long cases = 10000, builds = 200, only = -1;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "fuzz_inputs: " << a << ": expected a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--root")
        root = next();
      else if (a == "--cases")
        cases = std::stol(next());
      else if (a == "--builds")
        builds = std::stol(next());
      else if (a == "--seed")
        seed = std::stoull(next());
      else if (a == "--only")
        only = std::stol(next());
      else if (a == "--out")
        out = next();
      else
        throw std::invalid_argument(a);
    } catch (const std::exception&) {
      std::cerr << "fuzz_inputs: bad argument '" << a << "' (see the comment at the top of tests/fuzz/fuzz_inputs.cpp)\n";
      return 2;
    }
  }
  if (root.empty()) {
    std::cerr << "fuzz_inputs: --root <repository> is required\n";
    return 2;
  }
  const Corpus corpus = load_corpus(root);
  if (corpus.tasks.empty() || corpus.solutions.empty() || corpus.sources.empty()) {
    std::cerr << "fuzz_inputs: no corpus under " << root << "\n";
    return 2;
  }
  const fs::path base = fs::temp_directory_path() / ("khive-fuzz-" + std::to_string(::getpid()));
  std::map<std::string, std::map<std::string, long>> tally;  // kind -> outcome -> count
  std::vector<std::string> bad;
  const auto t0 = std::chrono::steady_clock::now();
  for (long n = 0; n < cases; ++n) {
    if (only >= 0 && n != only) continue;
    // The last `builds` cases are whole builds; the rest cycle through the three fast kinds.
    const int kind = n >= cases - builds ? 3 : static_cast<int>(n % 3);
    const uint64_t case_seed = seed * 1000003ull + static_cast<uint64_t>(n);
    const Outcome o = fork_case(corpus, case_seed, kind, base / std::to_string(n));
    ++tally[kKinds[kind]][o.what];
    if (o.what != "ok" && o.what != "refused")
      bad.push_back("case " + std::to_string(n) + " (" + kKinds[kind] + ", --seed " + std::to_string(seed) + " --only " + std::to_string(n) +
                    "): " + o.what + (o.detail.empty() ? "" : ": " + o.detail));
    if (only >= 0) std::cout << "case " << n << " " << kKinds[kind] << ": " << o.what << (o.detail.empty() ? "" : ": " + o.detail) << "\n";
  }
  std::error_code ec;
  fs::remove_all(base, ec);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ostringstream r;
  r << "fuzz_inputs --seed " << seed << " --cases " << cases << " --builds " << builds << ": " << secs << " s, corpus " << corpus.tasks.size()
    << " tasks, " << corpus.solutions.size() << " solutions, " << corpus.sources.size() << " sources\n\n";
  r << "| kind | ok | refused (a message) | crash | hang | other |\n|---|---|---|---|---|---|\n";
  for (const auto& [kind, m] : tally) {
    auto get = [&](const char* k) { return m.count(k) ? m.at(k) : 0L; };
    const long other = get("refused without a message") + get("foreign exception");
    r << "| " << kind << " | " << get("ok") << " | " << get("refused") << " | " << get("crash") << " | " << get("hang") << " | " << other << " |\n";
  }
  r << "\n" << (bad.empty() ? "No case crashed, hung or failed without a message.\n" : "Failures:\n");
  for (const auto& b : bad) r << "- " << b << "\n";
  std::cout << r.str();
  if (!out.empty()) write_all(out, r.str());
  return bad.empty() ? 0 : 1;
}
