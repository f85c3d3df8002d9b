// The golden cache vouches for what it hands back (issue 25): a cached golden carries the SHA-256 of its bytes, and
// a file with flipped bytes is made again by the reference (and counted), never compared against a kernel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "khive/job/input_keys.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/goldens.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

TEST(GoldenCache, AFileWithFlippedBytesIsMadeAgain) {
  const Task task = load_task(fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  auto dev = make_cpu_judge_device();
  const fs::path dir = make_temp_dir(fs::temp_directory_path(), "khive-goldens-test");
  Job job;
  job.golden_dir = dir.string();
  const InputKeys keys(InputSecret::reproducible(9));
  int reference_calls = 0;
  // A reference that writes 1, 2, 3, ... (what it computes does not matter here, only where it comes from).
  GoldenStore store(*dev, task, job, keys, [&](Arena& a, int set, const Workload&, const InputSpec&) {
    ++reference_calls;
    auto* g = reinterpret_cast<float*>(a.golden(set, 0));
    for (int64_t i = 0; i < a.n_out(0); ++i) g[i] = static_cast<float>(i + 1);
  });
  const Workload* w = nullptr;
  for (const auto& x : task.workloads)
    if (x.uuid == "vector_add-n1000") w = &x;
  ASSERT_NE(w, nullptr);
  Arena a(*dev, task, *w, 1);
  const InputSpec spec{12345};
  const std::vector<Golden> made = store.ensure(a, 0, *w, spec, false, true);
  ASSERT_EQ(reference_calls, 1);
  const std::vector<Golden> again = store.ensure(a, 0, *w, spec, false, true);
  EXPECT_EQ(reference_calls, 1) << "a whole cached golden is read back";
  EXPECT_EQ(again.at(0).data, made.at(0).data);
  EXPECT_EQ(store.stats().cached, 1);
  // Flip three bytes of the cached file (its size unchanged).
  fs::path file;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".bin") file = e.path();
  ASSERT_FALSE(file.empty());
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    for (std::streamoff at : {100, 1000, 2000}) {
      f.seekg(at);
      char c = 0;
      f.get(c);
      f.seekp(at);
      f.put(static_cast<char>(c ^ 0x5a));
    }
  }
  const std::vector<Golden> remade = store.ensure(a, 0, *w, spec, false, true);
  EXPECT_EQ(reference_calls, 2) << "a corrupt golden is made again by the reference";
  EXPECT_EQ(store.stats().corrupt, 1);
  EXPECT_EQ(remade.at(0).data, made.at(0).data);
  store.ensure(a, 0, *w, spec, false, true);
  EXPECT_EQ(reference_calls, 2) << "and rewritten whole";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace khive
