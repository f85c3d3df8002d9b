// khive-exec: the untrusted executor (protocol.hpp). Started by the judge with a socket and its setup; installs
// its sandbox on itself (sandbox.hpp), says hello, then does exactly what each message asks. Nothing here is
// trusted once the kernel's library is loaded: the judge checks every answer against what it owns.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "khive/executor/device.hpp"
#include "khive/executor/protocol.hpp"
#include "khive/executor/sandbox.hpp"

namespace {

using namespace khive::exec;

constexpr std::size_t kMaxCalls = 256;  // calls in one "call" message (events are made for this many)

// Where the inputs are mapped (read-only): a fault there is a kernel writing into its inputs, which the crash report
// should say. Written before the kernel runs, read by the signal handler (which only formats and writes).
volatile uintptr_t g_inputs_begin = 0, g_inputs_end = 0;

void on_fault(int, siginfo_t* info, void*) {
  const auto a = reinterpret_cast<uintptr_t>(info->si_addr);
  if (a >= g_inputs_begin && a < g_inputs_end) {
    static const char msg[] =
        "khive-exec: the kernel wrote into its inputs, which are read-only (the judge seals them)\n";
    (void)!::write(2, msg, sizeof msg - 1);
  }
  // SA_RESETHAND: the default action now; the faulting store runs again and ends the process with this signal.
}

void report_input_faults() {
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
}

// One argument list of the kernel's entry: pointers into the shared regions, and host slots for the scalar
// inputs (8 bytes each, their values come with every call) and the var axes.
struct ArgSet {
  std::vector<void*> args;
  std::vector<std::array<unsigned char, 8>> scalars;
  std::vector<int64_t> axes;
  std::vector<std::size_t> scalar_arg;  // args index of scalar k
};

struct Executor {
  int sock = -1;
  Setup setup;
  std::unique_ptr<ExecDevice> dev;
  std::vector<std::unique_ptr<ArgSet>> sets;
  EntryFn entry = nullptr;

  nlohmann::json sandbox(int& notify_fd) {
    nlohmann::json layers = nlohmann::json::object();
    apply_rlimits(setup.backend == "cpu" ? setup.memory_limit : 0);
    layers["rlimits"] = "on (no core, no file writes, 256 descriptors" +
                        std::string(setup.memory_limit > 0 && setup.backend == "cpu" ? ", address space capped)" : ")");
    if (setup.new_netns) {
      std::string e = enter_new_netns();
      layers["netns"] = e.empty() ? "on" : "off: " + e;
    } else {
      layers["netns"] = "off: not requested";
    }
    const bool cuda = setup.backend == "cuda";
#if defined(KHIVE_WITH_CUDA)
    // The driver's own folder joins the view (it loads helpers from there during initialisation).
    if (cuda) ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL);
#endif
    if (setup.landlock) {
      std::vector<std::string> read = base_read_paths();
      if (!setup.library.empty()) read.push_back(setup.library);
      for (const auto& p : setup.read_paths) read.push_back(p);
      int abi = 0;
      std::string e = apply_landlock(read, device_paths(cuda), setup.vendor_libraries, abi);
      layers["landlock"] =
          e.empty() ? "abi " + std::to_string(abi) + (abi >= 6 ? " (files, signals, abstract sockets)" : " (files)")
                    : "off: " + e;
    } else {
      layers["landlock"] = "off: not requested";
    }
    // The device after the filesystem view (its threads inherit it), before seccomp (its set-up needs more calls).
    if (cuda) {
#if defined(KHIVE_WITH_CUDA)
      dev = make_cuda_exec_device(kMaxCalls);
#else
      throw Fault("device_init", "this khive-exec was built without CUDA");
#endif
    } else {
      dev = make_cpu_exec_device();
    }
    if (setup.drop_capabilities) {
      std::string e = drop_capabilities();
      layers["capabilities"] = e.empty() ? "dropped" : "off: " + e;
    } else {
      layers["capabilities"] = "off: not requested";
    }
    if (setup.seccomp) {
      std::vector<std::string> extra;
      if (const char* x = std::getenv("KHIVE_SANDBOX_EXTRA_SYSCALLS")) {
        std::string cur;
        for (const char* p = x;; ++p) {
          if (*p == ',' || *p == 0) {
            if (!cur.empty()) extra.push_back(cur);
            cur.clear();
            if (!*p) break;
          } else if (*p != ' ') {
            cur += *p;
          }
        }
      }
      std::string e = apply_seccomp(cuda, extra, notify_fd);
      layers["seccomp"] = e.empty() ? std::string(notify_fd >= 0 ? "allowlist, violations reported to the judge"
                                                                 : "allowlist, violations kill")
                                    : "off: " + e;
      if (!extra.empty()) layers["seccomp_extra"] = extra;
    } else {
      layers["seccomp"] = "off: not requested";
    }
    return layers;
  }

  void on_map(const Message& m) {
    std::vector<RegionSpec> specs;
    for (const auto& r : m.body.at("regions"))
      specs.push_back({r.at("bytes").get<std::size_t>(), r.value("access", "r") == "rw"});
    sets.clear();
    dev->map(specs, m.fds);
    if (setup.backend == "cpu" && dev->region_count() > 0 && !specs[0].writable) {
      g_inputs_begin = reinterpret_cast<uintptr_t>(dev->base(0));
      g_inputs_end = g_inputs_begin + dev->region_bytes(0);
    }
  }

  void on_layout(const Message& m) {
    sets.clear();
    for (const auto& s : m.body.at("sets")) {
      auto set = std::make_unique<ArgSet>();
      const auto& args = s.at("args");
      std::size_t n_scalars = 0, n_axes = 0;
      for (const auto& a : args) {
        if (a.contains("scalar"))
          ++n_scalars;
        else if (a.contains("axis"))
          ++n_axes;
      }
      set->scalars.assign(n_scalars, {});
      set->axes.reserve(n_axes);
      for (const auto& a : args) {
        if (a.contains("region")) {
          const std::size_t r = a.at("region").get<std::size_t>(), off = a.at("offset").get<std::size_t>();
          if (r >= dev->region_count() || off > dev->region_bytes(r))
            throw Fault("bad_request", "layout: an argument outside the regions");
          set->args.push_back(dev->base(r) + off);
        } else if (a.contains("scalar")) {
          const std::size_t k = a.at("scalar").get<std::size_t>();
          if (k >= n_scalars) throw Fault("bad_request", "layout: scalar slot out of range");
          set->scalar_arg.push_back(set->args.size());
          set->args.push_back(set->scalars[k].data());
        } else if (a.contains("axis")) {
          set->axes.push_back(a.at("axis").get<int64_t>());
          set->args.push_back(&set->axes.back());
        } else {
          throw Fault("bad_request", "layout: an argument that is neither region, scalar nor axis");
        }
      }
      sets.push_back(std::move(set));
    }
  }

  // A call message with "gate": {"first": v} runs its calls behind the gate (gate.hpp), call j as v + j.
  std::vector<double> run(EntryFn f, const std::vector<void* const*>& lists, const Message& m) {
    if (!m.body.contains("gate")) return dev->run(f, lists);
    const uint64_t first = m.body.at("gate").at("first").get<uint64_t>();
    if (first == 0 || first + lists.size() > 0xffffffffull)
      throw Fault("bad_request", "call: gate values out of range");
    return dev->run_gated(f, lists, static_cast<uint32_t>(first));
  }

  nlohmann::json on_call(const Message& m, bool null_calls) {
    std::vector<void* const*> lists;
    if (null_calls) {
      const std::size_t n = m.body.value("count", std::size_t{1});
      if (n == 0 || n > kMaxCalls) throw Fault("bad_request", "null: count out of range");
      if (m.body.contains("touch"))
        return {{"op", "done"},
                {"times_s", run(touch_call(m.body.at("touch")), std::vector<void* const*>(n, touch_args), m)}};
      static void* const none[1] = {nullptr};
      lists.assign(n, none);
      return {{"op", "done"}, {"times_s", run(nullptr, lists, m)}};
    }
    if (!entry) throw Fault("bad_request", "call before load");
    const auto& calls = m.body.at("calls");
    if (calls.empty() || calls.size() > kMaxCalls) throw Fault("bad_request", "call: number of calls out of range");
    for (const auto& c : calls) {
      const std::size_t s = c.at("set").get<std::size_t>();
      if (s >= sets.size()) throw Fault("bad_request", "call: set out of range");
      ArgSet& set = *sets[s];
      const auto& sc = c.value("scalars", nlohmann::json::array());
      if (sc.size() != set.scalars.size()) throw Fault("bad_request", "call: wrong number of scalars");
      for (std::size_t k = 0; k < sc.size(); ++k)
        if (!from_hex(sc[k].get<std::string>(), set.scalars[k].data(), 8))
          throw Fault("bad_request", "call: malformed scalar");
      lists.push_back(set.args.data());
    }
    return {{"op", "done"}, {"times_s", run(entry, lists, m)}};
  }

  // The judge's calibration call (device.hpp, TouchCall) over spans of the mapped regions; only before load (the
  // judge calibrates before any kernel code is in the process, and the answer is trusted only then).
  TouchCall touch;
  void* touch_args[1] = {&touch};
  EntryFn touch_call(const nlohmann::json& spans) {
    if (entry) throw Fault("bad_request", "touch: after load");
    const EntryFn f = dev->touch_entry();
    if (!f) throw Fault("bad_request", "touch: not on this backend");
    if (!spans.is_array() || spans.size() > kMaxTouchSpans) throw Fault("bad_request", "touch: too many spans");
    touch = TouchCall{};
    for (const auto& sp : spans) {
      const std::size_t r = sp.at("region").get<std::size_t>(), off = sp.at("offset").get<std::size_t>(),
                        bytes = sp.at("bytes").get<std::size_t>();
      if (r >= dev->region_count() || off > dev->region_bytes(r) || bytes > dev->region_bytes(r) - off)
        throw Fault("bad_request", "touch: a span outside the regions");
      touch.spans[touch.count++] = {dev->base(r) + off, bytes, sp.at("write").get<bool>()};
    }
    return f;
  }

  void on_load() {
    report_input_faults();
    void* h = ::dlopen(setup.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw Fault("load_error", std::string("cannot load ") + setup.library + ": " + ::dlerror());
    auto abi = static_cast<const char*>(::dlsym(h, "khive_abi"));
    if (!abi || std::strcmp(abi, "khive-entry-v1") != 0)
      throw Fault("load_error", setup.library + ": not built by khive (no khive_abi marker)");
    entry = reinterpret_cast<EntryFn>(::dlsym(h, "khive_entry"));
    if (!entry) throw Fault("load_error", setup.library + ": no khive_entry symbol");
  }

  Message next_message() {
    if (setup.spin_s > 0) {
      // The judge stops this process right after each answer and continues it just before the next message: a
      // jump in the clock between two polls means it was stopped, and the spin starts again from there.
      using Clock = std::chrono::steady_clock;
      const auto spin = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(setup.spin_s));
      Clock::time_point last = Clock::now(), until = last + spin;
      for (;;) {
        if (auto m = try_receive(sock)) return std::move(*m);
        const auto t = Clock::now();
        if (t - last > std::chrono::milliseconds(1)) until = t + spin;
        if (t > until) break;
        last = t;
      }
    }
    return receive(sock);
  }

  int loop() {
    for (;;) {
      Message m = next_message();
      const std::string op = m.op();
      nlohmann::json reply = {{"op", "ok"}};
      try {
        if (op == "quit") return 0;
        if (op == "map")
          on_map(m);
        else if (op == "layout")
          on_layout(m);
        else if (op == "gate") {
          if (m.fds.size() != 1) throw Fault("bad_request", "gate: expected one descriptor");
          const int fd = m.fds[0];
          m.fds.clear();
          dev->map_gate(m.body.at("bytes").get<std::size_t>(), fd);
        } else if (op == "null")
          reply = on_call(m, true);
        else if (op == "call")
          reply = on_call(m, false);
        else if (op == "load")
          on_load();
        else
          throw Fault("bad_request", "unknown op '" + op + "'");
      } catch (const Fault& f) {
        reply = {{"op", "fault"}, {"reason", f.reason}, {"message", f.what()}};
      } catch (const nlohmann::json::exception& e) {
        reply = {
            {"op", "fault"}, {"reason", "bad_request"}, {"message", std::string("malformed request: ") + e.what()}};
      }
      send_message(sock, reply);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  Executor ex;
  std::string setup_json;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--socket")
      ex.sock = std::atoi(argv[++i]);
    else if (a == "--setup")
      setup_json = argv[++i];
  }
  if (ex.sock < 0 || setup_json.empty()) {
    std::cerr << "khive-exec: started by khive-judge, not by hand\n";
    return 2;
  }
  try {
    ex.setup = parse_setup(nlohmann::json::parse(setup_json));
    int notify_fd = -1;
    nlohmann::json layers;
    try {
      layers = ex.sandbox(notify_fd);
    } catch (const Fault& f) {
      send_message(ex.sock, {{"op", "fault"}, {"reason", f.reason}, {"message", f.what()}});
      return 3;
    }
    nlohmann::json hello = {{"op", "hello"}, {"version", kProtocolVersion}, {"pid", ::getpid()}, {"sandbox", layers}};
    std::vector<int> fds;
    if (notify_fd >= 0) fds.push_back(notify_fd);
    send_message(ex.sock, hello, fds);
    if (notify_fd >= 0) ::close(notify_fd);
    return ex.loop();
  } catch (const std::exception& e) {
    std::cerr << "khive-exec: " << e.what() << "\n";
    return 3;
  }
}
