// The command line's conventions, the same for every khive command (docs/cli.md):
//   exit codes   0 ok · 1 rejected (a kernel failed the guard) · 2 usage or input error (a bad option, task file,
//                run directory, unreachable provider; the harness failed) · 3 paused (candidates await evaluation on
//                a GPU) · 130 interrupted (Ctrl-C, SIGTERM)
//   help         `khive help`, `khive help CMD`, `khive CMD --help`; every option's default is shown
//   errors       one line naming the option and what was expected, a did-you-mean for a misspelt command or
//                option, then where to read more; exit 2
//
//   CLI::App app{...};  ... add every subcommand ...;  HelpCli help = finish_cli(app);
//   if (int rc = parse_cli(app, argc, argv); rc >= 0) return rc;   // help printed, or a usage error (2)
//   if (help.selected()) return run_help(app, help);
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace khive {

namespace exit_code {
inline constexpr int ok = 0, rejected = 1, usage = 2, paused = 3, interrupted = 130;
}

// Validators whose failure reads "expected an integer from 1 to 100, got '0'" (CLI11's own print the
// limits of a double with 300 digits).
CLI::Validator int_range(long long lo, long long hi);
CLI::Validator non_negative();
// A seed: digits only, at most 2^64 - 1 (CLI11 alone read "-1" and 10^23 as 2^64 - 1, silently).
CLI::Validator seed_value();
// --backend: "cpu" or "cuda", checked when the command line is parsed (so the error names the command and the help).
CLI::Validator backend_value();

// `khive help`'s subcommand and its words. The words are shared storage, not a member the option is bound to by
// reference: a HelpCli is returned by value, and an option bound to the callee's field wrote into a dead copy (a
// crash wherever the compiler did not elide that copy; tests/unit/cli found it).
struct HelpCli {
  CLI::App* cmd = nullptr;
  std::shared_ptr<std::vector<std::string>> words = std::make_shared<std::vector<std::string>>();
  bool selected() const { return cmd && *cmd; }
  const std::vector<std::string>& topic() const { return *words; }
};

// Call once every subcommand is declared: adds `khive help [CMD...]`, `--arch` to the commands that build CUDA
// code, shows every option's default in the help, and puts the exit codes and the environment variables in
// the top-level help's footer.
HelpCli finish_cli(CLI::App& app);

// Parses; returns -1 to go on, else the exit code to return now (0 after --help/--version; 2 after a usage
// error, printed with a did-you-mean).
int parse_cli(CLI::App& app, int argc, char** argv);

// `khive help [CMD [SUB]]`: the help of that command; exit 2 with a did-you-mean for an unknown one.
int run_help(CLI::App& app, const HelpCli& h);

// --arch: "sm_90a", "90a", "sm_80" -> nvcc's "-gencode=arch=compute_90a,code=sm_90a"; a value starting with '-' is
// taken as nvcc flags as they are. Throws CLI::ValidationError for anything else.
std::string cuda_arch_flags(const std::string& arch);

// The closest of `names` to `given` (edit distance, at most a third of its length, or a prefix); "" when none is close.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& names);

}  // namespace khive
