// The profiling and memcheck jobs on a real GPU (skipped where ncu / compute-sanitizer / nvcc or a GPU are
// missing). On the device: build-device/tests/unit_llm --gtest_filter='ProfileGpu.*'
#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {
namespace {

bool have_gpu() {
  if (find_program("nvidia-smi").empty()) return false;
  ProcessSpec p;
  p.argv = {"nvidia-smi", "-L"};
  p.timeout_s = 20;
  auto r = run_process(p);
  return r.ok() && r.out.find("GPU") != std::string::npos;
}

ProfileJob job_for(const Task& t, const std::string& tool, const std::string& source, const char* name) {
  ProfileJob j;
  j.tool = tool;
  j.task = &t;
  j.backend = Backend::cuda;
  j.source = source;
  j.ext = "cu";
  j.out_dir = std::filesystem::temp_directory_path() / fmt::format("khive-prof-{}-{}", name, getpid());
  return j;
}

TEST(ProfileGpu, NcuMetricsOfTheCuteExample) {
  if (!have_gpu() || find_program("ncu").empty() || find_program("nvcc").empty())
    GTEST_SKIP() << "needs a GPU, ncu and nvcc";
  Task t = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  auto src = read_file(std::filesystem::path(KHIVE_SOURCE_DIR) / "prompts/examples/cute_vector_add.cu");
  auto r = profile_kernel(job_for(t, "ncu", src, "ncu"));
  ASSERT_TRUE(r.ran) << r.skipped << r.error;
  EXPECT_FALSE(r.metrics.empty());
  EXPECT_NE(r.text.find("duration"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("duration ?"), std::string::npos) << r.text;  // the metric names were found
  std::cout << r.text << "(" << r.seconds << " s)\n";
}

// memcheck checks that an address lies in some allocation, not in the right one: the first version wrote 1e6
// elements past c and was reported clean on the H200 (most likely it landed in another of the driver's buffers). The
// planted write now goes 64 GiB past c, into address space no buffer of the driver can occupy.
TEST(ProfileGpu, MemcheckPointsAtAnOutOfBoundsWrite) {
  if (!have_gpu() || find_program("compute-sanitizer").empty() || find_program("nvcc").empty())
    GTEST_SKIP() << "needs a GPU, compute-sanitizer and nvcc";
  Task t = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  std::string bad =
      "__global__ void k(const float* a, const float* b, float* c, int64_t n) {\n"
      "  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n"
      "  c[i + (int64_t(1) << 34)] = a[i % n] + b[i % n];   // out of bounds on purpose, 64 GiB past c\n"
      "}\n"
      "extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t s) {\n"
      "  k<<<unsigned((N + 255) / 256), 256, 0, s>>>(a, b, c, N);\n"
      "}\n";
  auto r = profile_kernel(job_for(t, "memcheck", bad, "memcheck"));
  ASSERT_TRUE(r.ran) << r.skipped << r.error;
  EXPECT_NE(r.text.find("Invalid"), std::string::npos) << r.text;
  std::cout << r.text << "\n";
}

}  // namespace
}  // namespace khive
