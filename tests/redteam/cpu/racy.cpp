// RED TEAM (vector_add, CPU). Fault: a data race on a shared temporary. Four OpenMP threads work in
// rounds of four elements (thread t takes element base + t) and all stage their a[i] through ONE shared
// static variable: every thread stores into it without synchronization, then, after a barrier, every
// thread reads it back and adds its b[i]. Whichever store landed last wins, so in each round three of
// the four outputs get another thread's a[j], and which three depends on thread timing, call to call.
// The barriers make the race bite even when the threads share one core (a barrier-free version only
// shows it when two cores happen to run the loop at the same moment, which a loaded CI box may not do).
// N = 1 is right (one thread has work); N = 7 and every larger shape are wrong.
// Caught by check 5 -> "wrong_output" (or, should the values happen to match, check 6 -> "nondeterministic").
#include <omp.h>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static volatile float staged;   // shared by every thread: the race
#pragma omp parallel num_threads(4)
  {
    const int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int64_t base = 0; base < N; base += T) {   // every thread runs the same rounds (barriers match)
      const int64_t i = base + t;
      if (i < N) staged = a[i];   // unsynchronized stores to one location: the last one wins
#pragma omp barrier
      if (i < N) c[i] = staged + b[i];
#pragma omp barrier
    }
  }
}
