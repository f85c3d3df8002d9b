// The gate between the judge's stream and an executor's (docs/guard.md, "The clock"): 32-bit counters in a small
// region the judge shares, advanced and awaited by the GPU itself with stream memory operations (cuStreamWriteValue32,
// cuStreamWaitValue32), so that each timed call is bracketed by events on the judge's own stream without either
// process's host in the loop:
//
//   executor stream:  wait ready >= v -> event S -> [go = v, on its second stream] -> kernel -> event E -> done = v
//   judge stream:     wait go >= v -> reveal the call's inputs -> flush L2 -> event J0 -> ready = v -> wait done >= v
//                     -> event J1 -> checksum the outputs
//
// J1 - J0, less the same gate with no kernel in it (calibrated before the kernel is loaded), is the judge's time of
// the call; E - S is the executor's own, a cross-check only. The counters are in memory the executor can write:
// forging them gains nothing (an early `ready` runs the kernel on inputs not yet revealed; an early `done` ends the
// judge's clock before the outputs are complete, which the checksum at J1 and the comparison after the batch see).
#pragma once
#include <cstddef>
#include <cstdint>

namespace khive::exec {

// Offsets of the counters in the gate region (each on its own 128-byte line).
inline constexpr std::size_t kGateReady = 0, kGateDone = 128, kGateGo = 256, kGateBytes = 384;

#if defined(KHIVE_WITH_CUDA)
// The stream waits until *(uint32_t*)flag >= value (wrap-around is not used: values only grow within a region).
void stream_wait_geq(void* stream, void* flag, uint32_t value);
// The stream writes value to *(uint32_t*)flag once the work before it on the stream is done. `system_fence`: a
// system-wide memory fence first. The gate needs it: on the H200 a counter written without it was never seen by the
// other context's wait (every gated call hung, 2026-12-03). The fence after a kernel that wrote memory costs up to
// ~4 us (it waits for the kernel's writes), which sits inside the judge's bracket and not in its calibration
// (docs/guard.md, "What remains possible").
void stream_write(void* stream, void* flag, uint32_t value, bool system_fence = true);
#endif

}  // namespace khive::exec
