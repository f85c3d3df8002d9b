// The judge <-> executor protocol (docs/guard.md). The executor is the untrusted process that loads a
// kernel; it holds no key, no plan beyond the call in hand, no goldens and no path to them. It only ever does what
// one message asks, and its answers are observations the judge checks, never verdicts.
//
// Transport: a SOCK_SEQPACKET socket pair (one JSON object per datagram, at most kMaxMessage bytes), descriptors
// attached with SCM_RIGHTS where a message carries them. The executor is stopped (SIGSTOP) whenever the judge is
// not waiting for its answer, so it never runs beside the judge's own work.
//
//   judge -> executor                                  executor -> judge
//   (argv: --socket FD --setup JSON)                   {"op":"hello","pid":N,"sandbox":{...}}  [+ seccomp notify fd]
//   {"op":"map","regions":[{"bytes":N,"access":"r"|"rw"}]} + one fd per region      {"op":"ok"}
//   {"op":"layout","sets":[{"args":[{"region":0,"offset":0} | {"scalar":2} | {"axis":4096}, ...]}]} {"op":"ok"}
//     (the reference's layout also names each region argument's "dtype" and "shape" and each scalar's "dtype": a
//     PyTorch reference's executor builds its tensors from them)
//   {"op":"null","count":B}  (before load: the overhead of one exchange)             {"op":"done","times_s":[...]}
//   {"op":"load"}                                                                    {"op":"ok"}
//   {"op":"call","calls":[{"set":0,"scalars":["hex",...]}, ...]}                     {"op":"done","times_s":[...]}
//     (a PyTorch reference timed as a kernel also answers "copy_s": per call, the part of times_s that copied run()'s
//     results into the output slots; the judge reads it from that executor only)
//   {"op":"quit"}                                                       any: {"op":"fault","reason":R,"message":M}
//
// Regions are shared memory the judge owns: memfds on the CPU (inputs sealed against writing), CUDA virtual
// memory exported as POSIX file descriptors on the GPU. "times_s" are the executor's own per-call times (the
// in-process clock the judge cross-checks against its own; never used as the measurement).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive::exec {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kMaxMessage = 1 << 20;
inline constexpr std::size_t kMaxFds = 16;

struct ChannelError : std::runtime_error {
  // The peer is gone (end of stream, or the connection reset because it died with a message unread), as opposed to
  // a peer that sent something that is not a message. A reader tells the two apart by this, never by the text.
  bool peer_gone = false;
  explicit ChannelError(const std::string& what, bool gone = false) : std::runtime_error(what), peer_gone(gone) {}
};

struct Message {
  nlohmann::json body;
  std::vector<int> fds;  // received descriptors, owned by the receiver
  std::string op() const { return body.is_object() ? body.value("op", std::string()) : std::string(); }
};

// Sends one message; throws ChannelError when the peer is gone or the message is too large.
void send_message(int sock, const nlohmann::json& body, const std::vector<int>& fds = {});
// Receives one message without blocking: nullopt when none is waiting. Throws ChannelError at end of stream
// (peer gone), on a truncated datagram, on more than kMaxFds descriptors, or when the bytes are not a JSON object.
std::optional<Message> try_receive(int sock);
// Blocks until a message arrives (executor side).
Message receive(int sock);

// What the executor is started with (argv --setup, JSON): everything it needs before the sandbox closes.
struct Setup {
  std::string backend = "cpu";          // "cpu" | "cuda"
  std::string library;                  // the kernel's shared object (made readable inside the sandbox)
  std::vector<std::string> read_paths;  // further read-only paths
  bool vendor_libraries = false;        // the view includes vendor libraries (cuBLAS, ...): baselines, and kernels of
                                        // tasks that allow them; otherwise they stay outside it
  bool seccomp = true, landlock = true, new_netns = true, drop_capabilities = true;
  int64_t memory_limit = 0;  // RLIMIT_AS (CPU backend); 0 = none
  double spin_s = 0;         // poll for the next message this long before blocking (GPU: the host has cores
                             // to spare and the judge's clock sees every wake-up); 0 = block at once
  std::string task_dir;      // the PyTorch reference's executor (python/khive_torch/executor.py): the task
                             // whose definition.json holds the reference; khive-exec ignores it
  bool as_kernel =
      false;  // that executor timed as the kernel under test (python/khive_torch/timed.py): on the
              // judge's own regions and gate, its result copies answered as "copy_s"; khive-exec ignores it
};
// Every field travels; a field the JSON lacks keeps Setup{}'s default (parse_setup insists on the backend).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Setup, backend, library, read_paths, vendor_libraries, seccomp,
                                                landlock, new_netns, drop_capabilities, memory_limit, spin_s, task_dir,
                                                as_kernel)
Setup parse_setup(const nlohmann::json& j);

// Scalar and axis arguments travel as the raw bytes of the task's dtype (scalars: up to 8 bytes, hex).
std::string to_hex(const void* p, std::size_t n);
bool from_hex(const std::string& hex, void* out, std::size_t n);

}  // namespace khive::exec
