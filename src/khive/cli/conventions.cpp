#include "khive/cli/conventions.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "khive/task/dtype.hpp"

namespace khive {
namespace {

// Commands that build CUDA code and so take --arch.
const std::set<std::string> kBuilding = {"eval", "build", "bench", "optimize", "evaluate-pending"};

const char* kFooter = R"(Exit codes (every command):
  0    ok (khive eval: accepted)
  1    rejected (a kernel failed the guard; khive build: did not build)
  2    usage or input error: a bad option, task file or run directory, a provider that cannot be reached;
       the harness failed (no verdict on the kernel)
  3    paused: candidates await evaluation on a GPU (khive evaluate-pending, then optimize --resume)
  130  interrupted (Ctrl-C, SIGTERM); what was recorded is kept

Environment:
  KHIVE_CACHE          cache directory: goldens, builds (default $XDG_CACHE_HOME/khive, ~/.cache/khive)
  KHIVE_CACHE_MAX_GB   cap on goldens + builds in GB (default 20; 0 = no cap)
  KHIVE_GOLDENS_MAX_GB bound on one task's golden set in GB, earlier runs' goldens first (default 2; 0 = none)
  KHIVE_KERNELS        the tuner's template library (default <source>/kernels)
  KHIVE_CUTLASS        CUTLASS headers for CUDA builds (default <source>/.deps/cutlass)
  KHIVE_JUDGE          the khive-judge executable, the guard's trusted process (default: next to khive)
  KHIVE_EXEC           the khive-exec executable, which loads a kernel in its sandbox (default: next to khive)
  KHIVE_SANDBOX_EXTRA_SYSCALLS  calls added to the executor's seccomp allowlist (a,b) where a driver needs them
  KHIVE_JAIL           off: run a task's Python and the compiler unconfined, with your rights (default: khive-jail)
  KHIVE_JAIL_BIN       the khive-jail executable (default: next to khive)
  KHIVE_CUDA_ARCH      nvcc architecture flags (default -gencode=arch=compute_90a,code=sm_90a; --arch sets it)
  KHIVE_PROMPTS        the LLM agent's prompt pack (default <source>/prompts)

`khive help CMD` shows one command's options; docs/cli.md has all of this.)";

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; })) out.push_back(s->get_name());
  return out;
}

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const auto* o : app.get_options())
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  return out;
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == name) return s;
  return nullptr;
}

// The command the words on the line select ("khive optimize" for `khive optimize --x`), and the words that
// are not commands nor options it knows, each with its closest known name.
struct Misspelling {
  std::string word, suggestion;
};

std::vector<Misspelling> misspellings(const CLI::App& app, int argc, char** argv, const CLI::App*& where) {
  std::vector<Misspelling> out;
  where = &app;
  bool command_seen = false;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "--") break;
    if (w.rfind("--", 0) == 0) {
      std::string name = w.substr(0, w.find('='));
      std::vector<std::string> known;
      for (const CLI::App* a = where; a; a = a->get_parent())
        for (auto& n : long_option_names(*a)) known.push_back(n);
      if (std::find(known.begin(), known.end(), name) == known.end()) out.push_back({name, did_you_mean(name, known)});
      continue;
    }
    if (w.rfind("-", 0) == 0) continue;
    if (const CLI::App* sub = find_subcommand(*where, w)) {
      where = sub;
      command_seen = true;
      continue;
    }
    // The first bare word must be a command; later ones are positional values (a task directory, a run).
    if (!command_seen && where == &app) {
      out.push_back({w, did_you_mean(w, subcommand_names(app))});
      break;
    }
  }
  return out;
}

std::string command_path(const CLI::App* a) {
  std::string s;
  for (; a; a = a->get_parent()) s = a->get_name() + (s.empty() ? "" : " " + s);
  return s;
}

// Options read "--seeds INT (1 to 100, default 3)" rather than CLI11's "--seeds INT:INT in [1 - 100]=3".
class OptionFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";
    std::string type = opt->get_type_name(), extra;
    if (auto colon = type.find(':'); colon != std::string::npos)
      extra = type.substr(colon + 1), type = type.substr(0, colon);
    if (!opt->get_default_str().empty() && opt->get_default_str() != "[]")
      extra += (extra.empty() ? "" : ", ") + std::string("default ") + opt->get_default_str();
    std::string out = " " + type + (extra.empty() ? "" : " (" + extra + ")");
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    if (opt->get_required()) out += " REQUIRED";
    return out;
  }
};

// Every option shows its default, except where its description says the default in words ("default: random").
void show_defaults(CLI::App& app, const std::shared_ptr<CLI::Formatter>& fmt) {
  app.formatter(fmt);
  for (auto* o : app.get_options())
    if (o->get_expected_min() > 0 && o->get_default_str().empty() &&
        o->get_description().find("default") == std::string::npos)
      o->capture_default_str();
  for (auto* s : app.get_subcommands([](const CLI::App*) { return true; })) show_defaults(*s, fmt);
}

void add_arch_options(CLI::App& app) {
  for (auto* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!kBuilding.count(s->get_name())) continue;
    s->add_option_function<std::string>(
        "--arch", [](const std::string& v) { ::setenv("KHIVE_CUDA_ARCH", cuda_arch_flags(v).c_str(), 1); },
        "CUDA architecture of the builds: sm_90a, sm_80, ... or nvcc flags starting with -gencode (default "
        "$KHIVE_CUDA_ARCH, else sm_90a)");
  }
}

}  // namespace

CLI::Validator int_range(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long x = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno == ERANGE || x < lo || x > hi)
          return fmt::format("expected an integer from {} to {}, got '{}'", lo, hi, v);
        return "";
      },
      fmt::format("{} to {}", lo, hi));  // shown in the help: "INT (1 to 100, default 3)"
}

CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || errno == ERANGE || !(x >= 0))
          return fmt::format("expected a number >= 0, got '{}'", v);
        return "";
      },
      ">= 0");
}

CLI::Validator backend_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        return parse_backend(v) ? "" : fmt::format("expected cpu or cuda, got '{}'", v);
      },
      "cpu|cuda");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        uint64_t x = 0;
        const char* end = v.data() + v.size();
        auto [p, ec] = std::from_chars(v.data(), end, x);
        if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || ec != std::errc() || p != end)
          return fmt::format("expected a whole number from 0 to 18446744073709551615, got '{}'", v);
        return "";
      },
      "0..2^64-1");
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& n : names) {
    std::size_t d = edit_distance(given, n);
    if (n.rfind(given, 0) == 0 && given.size() >= 3) d = std::min<std::size_t>(d, 1);
    if (d < best_d) best_d = d, best = n;
  }
  const std::size_t limit = std::max<std::size_t>(2, given.size() / 3);
  return best_d <= limit ? best : "";
}

std::string cuda_arch_flags(const std::string& arch) {
  if (!arch.empty() && arch[0] == '-') return arch;
  static const std::regex sm("^(sm_)?([0-9]{2,3}[a-z]?)$");
  std::smatch m;
  if (!std::regex_match(arch, m, sm))
    throw CLI::ValidationError(
        "--arch", "expected a GPU architecture such as sm_90a or sm_80 (or nvcc flags starting with -gencode), got '" +
                      arch + "'");
  const std::string v = m[2].str();
  return fmt::format("-gencode=arch=compute_{},code=sm_{}", v, v);
}

HelpCli finish_cli(CLI::App& app) {
  HelpCli h;
  add_arch_options(app);
  h.cmd = app.add_subcommand("help", "Show the help of a command: khive help optimize");
  h.cmd->add_option_function<std::vector<std::string>>(
      "command", [words = h.words](const std::vector<std::string>& v) { *words = v; },
      "the command (and subcommand: khive help cache prune)");
  auto formatter = std::make_shared<OptionFormatter>();
  formatter->column_width(44);
  show_defaults(app, formatter);
  app.name("khive");
  app.footer(kFooter);
  return h;
}

int parse_cli(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* where = nullptr;
    auto wrong = misspellings(app, argc, argv, where);
    std::cerr << command_path(where) << ": " << e.what() << "\n";
    for (const auto& m : wrong)
      if (!m.suggestion.empty())
        std::cerr << fmt::format("  '{}' is not known here; did you mean '{}'?\n", m.word, m.suggestion);
    std::cerr << fmt::format("Run '{} --help' for the options{}.\n", command_path(where),
                             where == &app ? " (and `khive help CMD` for a command's)" : "");
    return exit_code::usage;
  }
}

int run_help(CLI::App& app, const HelpCli& h) {
  const CLI::App* at = &app;
  for (const auto& word : h.topic()) {
    const CLI::App* sub = find_subcommand(*at, word);
    if (!sub) {
      std::string near = did_you_mean(word, subcommand_names(*at));
      std::cerr << fmt::format("{}: no command '{}'{}; commands: {}\n", command_path(at), word,
                               near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                               fmt::join(subcommand_names(*at), ", "));
      return exit_code::usage;
    }
    at = sub;
  }
  // The formatter itself: App::help() shows the selected subcommand's help instead, and at the top `help` is the
  // selected one, so a bare `khive help` printed the help of `help` rather than the list of commands.
  std::cout << at->get_formatter()->make_help(at, command_path(at), CLI::AppFormatMode::Normal);
  return exit_code::ok;
}

}  // namespace khive
