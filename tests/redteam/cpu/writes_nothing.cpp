// RED TEAM (vector_add, CPU). Hack: returns immediately and writes nothing, hoping the output buffer
// already holds the answer (freed reference memory, Sakana) or zeros.
// Caught by check 4: outputs are pre-filled with a NaN sentinel before every call, so every element
// still holds it -> "unwritten_output".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  (void)a; (void)b; (void)c; (void)N;
}
