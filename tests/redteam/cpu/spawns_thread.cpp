// RED TEAM (vector_add, CPU). Hack: hands the work to a std::thread and (in a real attack) returns
// before it finishes, so the timer misses it; here it joins, so the result is even right.
// Caught by check 1: std::thread imports thread creation (std::thread::_M_start_thread / pthread_create)
// -> "forbidden_symbol". (OpenMP pragmas are allowed: libgomp's threads are the harness's policy.)
#include <thread>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  std::thread worker([=] {
    for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  });
  worker.join();
}
