// Every unit-test process gets a temporary folder of its own, removed when its tests end: TMPDIR points into it for
// the tests and every process they start, so the many make_temp_dir(temp_directory_path(), ...) folders the tests
// create (tuner renders, task copies, run directories) go with it instead of piling up in /tmp (about 1500 per run
// of the unit label before this).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace {

class ScratchTmpdir : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    if (old) old_ = old;
    std::string tmpl = (std::filesystem::temp_directory_path() / "khive-unit-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return;  // keep the system's: the tests still run, only less tidily
    dir_ = tmpl;
    owner_ = ::getpid();
    ::setenv("TMPDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (dir_.empty() || ::getpid() != owner_) return;  // a forked child never removes its parent's folder
    if (old_)
      ::setenv("TMPDIR", old_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::string dir_;
  std::optional<std::string> old_;
  pid_t owner_ = 0;
};

// Registered before main() runs; gtest owns and deletes it.
[[maybe_unused]] ::testing::Environment* const kScratch = ::testing::AddGlobalTestEnvironment(new ScratchTmpdir);

}  // namespace
