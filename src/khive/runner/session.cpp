#include "khive/runner/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "khive/guard/stats.hpp"
#include "khive/support/files.hpp"

namespace khive {

nlohmann::json Failure::to_json() const {
  return {{"check", static_cast<int>(check)}, {"check_name", check_name(check)}, {"reason", reason},
          {"workload", workload}, {"message", message}, {"diagnosis", diagnosis}};
}

struct Session::PhaseTimer {
  double& acc;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  PhaseTimer(Session& s, const char* phase) : acc(s.phases_[phase]) {}
  ~PhaseTimer() { acc += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

struct Session::Buffers {
  Device& dev;
  std::map<std::string, int64_t> axes;
  std::vector<void*> in, out;             // device pointers (nullptr for scalars)
  std::vector<int64_t> n_in, n_out, cols_out;
  std::vector<std::size_t> in_bytes, out_bytes;   // n * dtype size, per tensor (0 for scalar inputs)
  struct alignas(8) Scalar { std::array<unsigned char, 8> bytes; unsigned char* data() { return bytes.data(); } void fill(unsigned char v) { bytes.fill(v); } };
  std::vector<Scalar> scalars;   // host storage for scalar inputs (8-byte aligned for the shim)
  std::vector<int64_t> axis_values;       // var axes, signature order
  std::vector<void*> args;
  explicit Buffers(Device& d) : dev(d) {}
  ~Buffers() {
    for (void* p : in) if (p) dev.release(p);
    for (void* p : out) if (p) dev.release(p);
  }
};

Session::Session(Device& dev, const Task& task, const Job& job, ProgressFn progress)
    : dev_(dev), task_(task), job_(job), progress_(std::move(progress)) {}

std::unique_ptr<Session::Buffers> Session::prepare(const Workload& w) {
  auto b = std::make_unique<Buffers>(dev_);
  b->axes = resolve_axes(task_, w);
  b->scalars.resize(task_.inputs.size());
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& s = task_.inputs[i];
    int64_t n = element_count(s, b->axes);
    b->n_in.push_back(n);
    b->in_bytes.push_back(s.scalar ? 0 : static_cast<std::size_t>(n) * dtype_size(s.dtype));
    b->in.push_back(s.scalar ? nullptr : dev_.alloc(b->in_bytes.back()));
  }
  for (const auto& s : task_.outputs) {
    int64_t n = element_count(s, b->axes);
    b->n_out.push_back(n);
    b->out_bytes.push_back(static_cast<std::size_t>(n) * dtype_size(s.dtype));
    b->cols_out.push_back(s.shape.empty() ? 1 : std::max<int64_t>(1, b->axes.at(s.shape.back())));
    b->out.push_back(dev_.alloc(b->out_bytes.back()));
  }
  for (const auto& a : task_.var_axes()) b->axis_values.push_back(b->axes.at(a));
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    b->args.push_back(task_.inputs[i].scalar ? static_cast<void*>(b->scalars[i].data()) : b->in[i]);
  for (void* p : b->out) b->args.push_back(p);
  for (auto& v : b->axis_values) b->args.push_back(&v);
  return b;
}

int64_t Session::sample_count(int64_t n, DType t, const InputSpec& s) const {
  int64_t bytes = n * static_cast<int64_t>(dtype_size(t));
  const bool timed = s.perturb_seed != 0 && s.seed == job_.timing.seed_base;   // timing_input(plan, k)
  int64_t limit = timed ? std::min(job_.golden_timed_limit_bytes, job_.golden_full_limit_bytes) : job_.golden_full_limit_bytes;
  int64_t count = timed ? std::min<int64_t>(job_.golden_sample_count, int64_t{1} << 20) : job_.golden_sample_count;
  if (bytes <= limit || n <= count) return 0;
  return count;
}

uint64_t Session::sample_key(const InputSpec& s) { return counter_hash(s.seed, s.perturb_seed, 0x53414D50ull); }

std::vector<Device::Region> Session::regions(Buffers& b) const {
  std::vector<Device::Region> r;
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    if (b.in[i]) r.push_back({b.in[i], b.in_bytes[i]});
  for (std::size_t o = 0; o < task_.outputs.size(); ++o)
    r.push_back({b.out[o], b.out_bytes[o]});
  return r;
}

void Session::fill_inputs_scalars(Buffers& b, const Workload& w, const InputSpec& s) {
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& t = task_.inputs[i];
    if (!t.scalar) continue;
    DistParams d = dist_params(task_.distribution_for(t.name));
    auto it = w.inputs.find(t.name);
    double v = (it != w.inputs.end() && it->second.kind == InputSource::Kind::scalar)
                   ? it->second.value
                   : input_value(d, s.perturb_seed ? s.perturb_seed : s.seed, i, 0);
    b.scalars[i].fill(0);
    num::store(t.dtype, b.scalars[i].data(), 0, v);
  }
}

void Session::fill_inputs(Buffers& b, const Workload& w, const InputSpec& s) {
  PhaseTimer pt(*this, "fill");
  fill_inputs_scalars(b, w, s);
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& t = task_.inputs[i];
    if (!t.scalar) dev_.fill(t.dtype, b.in[i], b.n_in[i], dist_params(task_.distribution_for(t.name)), s, i);
  }
}

struct Session::Pristine {
  Device& dev;
  std::vector<void*> copies;
  std::optional<InputSpec> applied;   // the perturbation the inputs hold now (none: exactly the base data)
  explicit Pristine(Device& d) : dev(d) {}
  ~Pristine() {
    for (void* p : copies) if (p) dev.release(p);
  }
};

std::string Session::base_input_path(const Workload& w, const InputSpec& base, std::size_t input) const {
  return (std::filesystem::path(job_.golden_dir) / w.uuid / (InputSpec{base.seed}.key() + ".input." + task_.inputs[input].name + ".bin")).string();
}

bool Session::cache_base_inputs(const Workload& w) const {
  // Only where generating is slow (the host: ~30 ns a value) and the files stay modest; the GPU makes
  // its inputs at hundreds of GB/s.
  if (dev_.backend() != "cpu" || job_.golden_dir.empty()) return false;
  auto axes = resolve_axes(task_, w);
  int64_t bytes = 0;
  for (const auto& t : task_.inputs)
    if (!t.scalar) bytes += element_count(t, axes) * static_cast<int64_t>(dtype_size(t.dtype));
  return bytes <= (int64_t{1} << 30);
}

std::unique_ptr<Session::Pristine> Session::keep_pristine(Buffers& b, const Workload& w, const InputSpec& base) {
  // The base data of the timed samples: read back when the golden process saved it (same generator, so
  // the same bits), else generated here.
  bool loaded = false;
  if (cache_base_inputs(w)) {
    PhaseTimer pt(*this, "read_inputs");
    loaded = true;
    for (std::size_t i = 0; i < task_.inputs.size() && loaded; ++i) {
      if (!b.in[i]) continue;
      const std::size_t bytes = b.in_bytes[i];
      std::ifstream f(base_input_path(w, base, i), std::ios::binary);
      loaded = f && f.seekg(0, std::ios::end) && static_cast<std::size_t>(f.tellg()) == bytes && f.seekg(0) &&
               f.read(static_cast<char*>(b.in[i]), static_cast<std::streamsize>(bytes));
    }
    fill_inputs_scalars(b, w, base);
  }
  if (!loaded) fill_inputs(b, w, base);
  auto p = std::make_unique<Pristine>(dev_);
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    if (!b.in[i]) {
      p->copies.push_back(nullptr);
      continue;
    }
    p->copies.push_back(dev_.alloc(b.in_bytes[i]));
    dev_.copy(p->copies.back(), b.in[i], b.in_bytes[i]);
  }
  return p;
}

void Session::restore_and_perturb(Buffers& b, Pristine& p, const Workload& w, const InputSpec& s, bool full) {
  PhaseTimer pt(*this, "restore_inputs");
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& t = task_.inputs[i];
    if (!b.in[i]) continue;
    if (full)
      dev_.copy(b.in[i], p.copies[i], b.in_bytes[i]);
    else if (p.applied)
      dev_.restore_perturbed(t.dtype, b.in[i], p.copies[i], b.n_in[i], *p.applied, i);
    dev_.perturb(t.dtype, b.in[i], b.n_in[i], dist_params(task_.distribution_for(t.name)), s, i);
  }
  p.applied = s;
  fill_inputs_scalars(b, w, s);
}

void Session::poison_outputs(Buffers& b, Poison p) {
  PhaseTimer pt(*this, "poison");
  for (std::size_t o = 0; o < task_.outputs.size(); ++o) dev_.poison(task_.outputs[o].dtype, b.out[o], b.n_out[o], p);
}

std::vector<uint64_t> Session::input_checksums(Buffers& b) {
  PhaseTimer pt(*this, "checksum");
  std::vector<uint64_t> h;
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    h.push_back(b.in[i] ? dev_.checksum(b.in[i], b.in_bytes[i]) : 0);
  return h;
}

std::string Session::golden_path(const Workload& w, const InputSpec& s, std::size_t output) const {
  return (std::filesystem::path(job_.golden_dir) / w.uuid / (s.key() + "." + task_.outputs[output].name + ".bin")).string();
}

const std::string& Session::golden(const Workload& w, const InputSpec& s, std::size_t output) {
  std::string p = golden_path(w, s, output);
  auto it = golden_cache_.find(p);
  if (it != golden_cache_.end()) return it->second;
  PhaseTimer pt(*this, "read_goldens");
  std::string data = read_file(p);   // the orchestrator made sure it exists (golden mode first)
  return golden_cache_.emplace(p, std::move(data)).first->second;
}

std::optional<Failure> Session::check_outputs(Buffers& b, const Workload& w, const InputSpec& s, Poison p, Check check,
                                              const std::string& reason_if_wrong, const std::string& context) {
  for (std::size_t o = 0; o < task_.outputs.size(); ++o) {
    const auto& spec = task_.outputs[o];
    const std::string& ref = golden(w, s, o);
    int64_t count = sample_count(b.n_out[o], spec.dtype, s);
    std::size_t bytes = static_cast<std::size_t>(count ? count : b.n_out[o]) * dtype_size(spec.dtype);
    if (ref.size() != bytes)
      throw std::runtime_error(fmt::format("golden {} has {} bytes, expected {}", golden_path(w, s, o), ref.size(), bytes));
    Tolerance tol = task_.tolerance_for(spec.name, w);
    CompareStats st;
    {
      PhaseTimer pt(*this, "compare");
      if (count) {
        // A sampled golden: the same positions are gathered from the output and compared; the indices in
        // the statistics are mapped back to the output's own.
        std::string got(bytes, '\0');
        uint64_t key = sample_key(s);
        dev_.gather_sample(spec.dtype, b.out[o], b.n_out[o], key, count, got.data());
        st = compare_host(spec.dtype, got.data(), ref.data(), count, 1, tol, p);
        for (int64_t* idx : {&st.first_bad, &st.first_unwritten, &st.worst_index})
          if (*idx >= 0) *idx = sample_index(key, *idx, count, b.n_out[o]);
        st.rows = std::max<int64_t>(1, b.n_out[o] / std::max<int64_t>(1, b.cols_out[o]));
        st.cols = b.cols_out[o];
        st.bad_per_row.clear();
        st.bad_per_col.clear();
      } else {
        st = dev_.compare(spec.dtype, b.out[o], ref.data(), b.n_out[o], b.cols_out[o], tol, p);
      }
    }
    if (passes(st, tol)) continue;
    Failure f{check, reason_if_wrong, w.uuid, "", describe_mismatch(spec.name, st, tol)};
    if (check == Check::correctness) {
      if (st.unwritten > 0) { f.check = Check::written; f.reason = "unwritten_output"; }
      else if (st.nonfinite > 0) f.reason = "nonfinite_output";
      else if (st.out_zeros == st.n && st.ref_zeros < st.n) f.reason = "all_zero_output";
    } else if (check == Check::timed_outputs && st.unwritten > 0) {
      f.reason = "timed_output_wrong";
    }
    f.message = fmt::format("{}: output {} {} ({})", context, spec.name,
                            st.unwritten ? fmt::format("has {} of {} elements never written", st.unwritten, st.n)
                                         : fmt::format("is wrong in {} of {} elements", st.bad, st.n),
                            describe_pattern(st));
    if (count) f.message += fmt::format(" [checked on a sample of {} of its {} elements]", count, b.n_out[o]);
    return f;
  }
  return std::nullopt;
}

std::optional<Failure> Session::guarded_call(EntryFn f, Buffers& b, const Workload& w, const std::string& context) {
  try {
    PhaseTimer pt(*this, "kernel");
    dev_.call(f, b.args.data());
  } catch (const CallFault& e) {
    return Failure{Check::run, e.reason, w.uuid, context + ": " + e.what(), ""};
  }
  if (std::string l2 = dev_.persisting_l2_state(); !l2.empty())
    return Failure{Check::timing, "persisting_l2", w.uuid, context + ": " + l2, "persisting L2 survives an ordinary flush and inflates timings"};
  return std::nullopt;
}

std::optional<Failure> Session::check_correctness(EntryFn f, const Workload& w, nlohmann::json& record) {
  auto b = prepare(w);
  int calls = 0;
  for (std::size_t si = 0; si < job_.seeds.size(); ++si) {
    InputSpec spec{job_.seeds[si]};
    std::string ctx = fmt::format("workload {} (seed {})", w.uuid, spec.seed);
    progress_(Check::correctness, w.uuid, ctx);
    fill_inputs(*b, w, spec);
    poison_outputs(*b, Poison::a);
    auto before = input_checksums(*b);
    if (auto fl = guarded_call(f, *b, w, ctx)) return fl;
    ++calls;
    auto after = input_checksums(*b);
    for (std::size_t i = 0; i < before.size(); ++i)
      if (before[i] != after[i])
        return Failure{Check::inputs, "input_mutated", w.uuid, fmt::format("{}: input {} changed during the call", ctx, task_.inputs[i].name),
                       "inputs are read-only: the harness hashes every input after each call"};
    if (auto fl = check_outputs(*b, w, spec, Poison::a, Check::correctness, "wrong_output", ctx)) return fl;
    if (si != 0) continue;

    // Check 6: the same inputs again (outputs poisoned with the other sentinel) must give the same outputs.
    std::vector<std::string> first(task_.outputs.size());
    for (std::size_t o = 0; o < first.size(); ++o) {
      first[o].resize(b->out_bytes[o]);
      dev_.to_host(first[o].data(), b->out[o], first[o].size());
    }
    progress_(Check::determinism, w.uuid, ctx);
    fill_inputs(*b, w, spec);
    poison_outputs(*b, Poison::b);
    if (auto fl = guarded_call(f, *b, w, ctx + ", repeated")) return fl;
    ++calls;
    for (std::size_t o = 0; o < first.size(); ++o) {
      const auto& spec_o = task_.outputs[o];
      Tolerance tol = task_.tolerance_for(spec_o.name, w);
      CompareStats st = dev_.compare(spec_o.dtype, b->out[o], first[o].data(), b->n_out[o], b->cols_out[o], tol, Poison::b);
      if (!passes(st, tol))
        return Failure{Check::determinism, st.unwritten ? "unwritten_output" : "nondeterministic", w.uuid,
                       fmt::format("{}: output {} differs between two calls on the same inputs in {} of {} elements", ctx, spec_o.name, st.bad, st.n),
                       describe_mismatch(spec_o.name, st, tol) + " (a race, or a read of memory nothing wrote)"};
    }

    // Check 7: anti-caching. (a) a few elements changed at the same addresses, (b) new data at the
    // same addresses, (c) the same data at new addresses. Each must stay correct.
    progress_(Check::anti_caching, w.uuid, ctx);
    struct Variant { InputSpec spec; const char* what; bool new_addresses; };
    Variant vs[] = {{{spec.seed, job_.perturb_seed, 0.01}, "a few input elements changed at the same addresses", false},
                    {{job_.new_data_seed}, "new input data at the same addresses", false},
                    {spec, "the same input data at new addresses", true}};
    for (auto& v : vs) {
      std::unique_ptr<Buffers> fresh;
      Buffers* use = b.get();
      if (v.new_addresses) {
        fresh = prepare(w);   // allocated while the old buffers are alive: different addresses
        use = fresh.get();
      }
      std::string vctx = fmt::format("workload {} ({})", w.uuid, v.what);
      fill_inputs(*use, w, v.spec);
      poison_outputs(*use, Poison::a);
      if (auto fl = guarded_call(f, *use, w, vctx)) return fl;
      ++calls;
      if (auto fl = check_outputs(*use, w, v.spec, Poison::a, Check::anti_caching, "caching", vctx)) {
        fl->check = Check::anti_caching;
        fl->reason = "caching";
        fl->diagnosis += "; the output did not follow the inputs: results cached or replayed";
        return fl;
      }
    }
  }
  record["calls"] = calls;
  return std::nullopt;
}

std::optional<Failure> Session::time_workload(EntryFn f, const Workload& w, nlohmann::json& record) {
  auto b = prepare(w);
  const TimingPlan& plan = job_.timing;
  auto pristine = keep_pristine(*b, w, InputSpec{plan.seed_base});
  progress_(Check::timing, w.uuid, "warm-up");
  for (int k = 0; k < plan.warmup; ++k) {
    restore_and_perturb(*b, *pristine, w, timing_input(plan, 1000000 + k));
    poison_outputs(*b, Poison::a);
    if (auto fl = guarded_call(f, *b, w, fmt::format("workload {} (warm-up)", w.uuid))) return fl;
  }
  int need = plan.validate_at.empty() ? 0 : *std::max_element(plan.validate_at.begin(), plan.validate_at.end()) + 1;
  StoppingRule rule{static_cast<std::size_t>(std::max(plan.min_samples, need)), static_cast<std::size_t>(plan.max_samples),
                    plan.target_noise, plan.time_cap_s};
  std::vector<double> samples, drains;
  int validated = 0;
  auto t0 = std::chrono::steady_clock::now();
  progress_(Check::timing, w.uuid, "samples");
  for (int k = 0;; ++k) {
    InputSpec spec = timing_input(plan, k);
    bool validate = std::find(plan.validate_at.begin(), plan.validate_at.end(), k) != plan.validate_at.end();
    // Different inputs every sample (nothing to replay), O(k) per sample. A kernel that writes into its
    // inputs is caught by the hashes around the validated calls, or by their outputs (whose goldens were
    // made from unmodified inputs).
    restore_and_perturb(*b, *pristine, w, spec);
    poison_outputs(*b, Poison::a);
    std::vector<uint64_t> before;
    if (validate) before = input_checksums(*b);
    {
      PhaseTimer pt(*this, "flush");
      dev_.flush(regions(*b));
    }
    TimedCall tc;
    try {
      PhaseTimer pt(*this, "kernel");
      tc = dev_.timed_call(f, b->args.data());
    } catch (const CallFault& e) {
      return Failure{Check::run, e.reason, w.uuid, fmt::format("workload {} (timed sample {}): {}", w.uuid, k, e.what()), ""};
    }
    if (validate) {
      auto after = input_checksums(*b);
      for (std::size_t i = 0; i < before.size(); ++i)
        if (before[i] != after[i])
          return Failure{Check::inputs, "input_mutated", w.uuid,
                         fmt::format("workload {} (timed sample {}): input {} changed during the call", w.uuid, k, task_.inputs[i].name),
                         "inputs are read-only: the harness hashes the inputs around some timed calls too"};
    }
    if (std::string l2 = dev_.persisting_l2_state(); !l2.empty())
      return Failure{Check::timing, "persisting_l2", w.uuid, fmt::format("workload {} (timed sample {}): {}", w.uuid, k, l2), ""};
    samples.push_back(tc.seconds);
    drains.push_back(tc.drain_s);
    if (validate) {
      progress_(Check::timed_outputs, w.uuid, fmt::format("sample {}", k));
      if (auto fl = check_outputs(*b, w, spec, Poison::a, Check::timed_outputs, "timed_output_wrong",
                                  fmt::format("workload {} (timed sample {})", w.uuid, k))) {
        fl->check = Check::timed_outputs;
        fl->reason = "timed_output_wrong";
        return fl;
      }
      ++validated;
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (should_stop(samples, elapsed, rule)) break;
  }
  SampleSummary s = summarize(samples), d = summarize(drains);
  record = {{"workload", w.uuid}, {"samples_s", samples}, {"drain_s", drains}, {"validated", validated}};
  // Check 8: work left on another stream shows up as time the device still needed after the end event.
  if (dev_.backend() == "cuda" && d.median > 50e-6 + 0.1 * s.median)
    return Failure{Check::timing, "work_outside_stream", w.uuid,
                   fmt::format("workload {}: the device was still busy for a median {:.1f} us after the timed call ended "
                               "(the call itself measured {:.1f} us on the given stream)",
                               w.uuid, d.median * 1e6, s.median * 1e6),
                   "all work must be enqueued on the stream passed to khive_launch; work on another stream escapes the timer"};
  return std::nullopt;
}

static bool selected(const Job& job, const Workload& w) {
  // khive.backends: a workload not meant for this backend is skipped entirely.
  if (auto b = parse_backend(job.backend); b && !w.runs_on(*b)) return false;
  return job.only_workloads.empty() ||
         std::find(job.only_workloads.begin(), job.only_workloads.end(), w.uuid) != job.only_workloads.end();
}

nlohmann::json Session::run_golden(EntryFn reference) {
  nlohmann::json made = nlohmann::json::array();
  // Consecutive requests of one workload share its buffers, and the timed samples of one base share its
  // pristine copy: the base data is made (or read) and saved once, not once per validated sample.
  const Workload* current = nullptr;
  std::unique_ptr<Buffers> b;
  std::unique_ptr<Pristine> pristine;
  uint64_t pristine_base = 0;   // the seed of the base data `pristine` holds
  for (const auto& req : job_.goldens) {
    auto wit = std::find_if(task_.workloads.begin(), task_.workloads.end(), [&](const Workload& w) { return w.uuid == req.workload; });
    if (wit == task_.workloads.end()) throw std::runtime_error("golden request for unknown workload " + req.workload);
    const Workload& w = *wit;
    if (auto b = parse_backend(job_.backend); b && !w.runs_on(*b))
      throw std::runtime_error("golden request for workload " + req.workload + ", which does not run on " + job_.backend);
    progress_(Check::correctness, w.uuid, "golden " + req.input.key());
    if (current != &w) {
      pristine.reset();
      b = prepare(w);
      current = &w;
    }
    if (req.input.perturb_seed && w.is_perf() && cache_base_inputs(w)) {
      // A timed sample's inputs: its base data is saved (read back by every evaluation instead of being
      // generated again), then perturbed like the runner does.
      if (!pristine || pristine_base != req.input.seed) {
        InputSpec base{req.input.seed};
        pristine = keep_pristine(*b, w, base);
        pristine_base = base.seed;
        for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
          if (!b->in[i]) continue;
          std::string path = base_input_path(w, base, i);
          std::error_code ec;
          if (std::filesystem::file_size(path, ec) != b->in_bytes[i] || ec)
            write_file_atomic(path, std::string(static_cast<const char*>(b->in[i]), b->in_bytes[i]));
        }
      }
      restore_and_perturb(*b, *pristine, w, req.input, true);
    } else {
      fill_inputs(*b, w, req.input);
    }
    poison_outputs(*b, Poison::a);
    if (auto fl = guarded_call(reference, *b, w, "reference on workload " + w.uuid)) return {{"failure", fl->to_json()}, {"made", made}};
    for (std::size_t o = 0; o < task_.outputs.size(); ++o) {
      const auto& spec = task_.outputs[o];
      int64_t count = sample_count(b->n_out[o], spec.dtype, req.input);
      std::string data(count ? static_cast<std::size_t>(count) * dtype_size(spec.dtype) : b->out_bytes[o], '\0');
      if (count) dev_.gather_sample(spec.dtype, b->out[o], b->n_out[o], sample_key(req.input), count, data.data());
      else dev_.to_host(data.data(), b->out[o], data.size());
      int64_t kept = count ? count : b->n_out[o];
      int64_t unwritten = 0;
      for (int64_t i = 0; i < kept; ++i) unwritten += is_poison(spec.dtype, data.data(), i, Poison::a) ? 1 : 0;
      if (unwritten)
        return {{"failure", Failure{Check::written, "reference_incomplete", w.uuid,
                                    fmt::format("the reference left {} of {} {}elements of output {} unwritten", unwritten,
                                                kept, count ? "sampled " : "", spec.name), "the task's reference is broken"}.to_json()},
                {"made", made}};
      write_file_atomic(golden_path(w, req.input, o), data);
    }
    made.push_back({{"workload", w.uuid}, {"input", req.input.key()}});
  }
  return {{"made", made}};
}

nlohmann::json Session::run_evaluate(EntryFn candidate) {
  nlohmann::json corr = nlohmann::json::array(), timing = nlohmann::json::array();
  auto finish = [&](const std::optional<Failure>& f) {
    nlohmann::json r = {{"correctness", corr}, {"timing", timing}};
    r["failure"] = f ? f->to_json() : nlohmann::json(nullptr);
    return r;
  };
  if (job_.check_correctness)
    for (const auto& w : task_.workloads) {
      if (!w.checks_correctness() || !selected(job_, w)) continue;
      nlohmann::json rec = {{"workload", w.uuid}};
      if (auto f = check_correctness(candidate, w, rec)) return finish(f);
      corr.push_back(rec);
    }
  if (job_.time)
    for (const auto& w : task_.workloads) {
      if (!w.is_perf() || !selected(job_, w)) continue;
      nlohmann::json rec;
      if (auto f = time_workload(candidate, w, rec)) return finish(f);
      timing.push_back(rec);
    }
  return finish(std::nullopt);
}

nlohmann::json Session::run_ab(EntryFn leader, EntryFn candidate) {
  nlohmann::json out = nlohmann::json::array();
  const TimingPlan& plan = job_.timing;
  for (const auto& w : task_.workloads) {
    if (!w.is_perf() || !selected(job_, w)) continue;
    auto b = prepare(w);
    EntryFn fs[2] = {leader, candidate};
    auto pristine = keep_pristine(*b, w, InputSpec{plan.seed_base});
    for (int k = 0; k < plan.warmup; ++k)
      for (EntryFn f : fs) {
        restore_and_perturb(*b, *pristine, w, timing_input(plan, 1000000 + k));
        poison_outputs(*b, Poison::a);
        if (auto fl = guarded_call(f, *b, w, "warm-up")) return {{"failure", fl->to_json()}};
      }
    std::vector<double> a, bb;
    StoppingRule rule{static_cast<std::size_t>(plan.min_samples), static_cast<std::size_t>(plan.max_samples), plan.target_noise,
                      plan.time_cap_s * 2};
    auto t0 = std::chrono::steady_clock::now();
    progress_(Check::acceptance, w.uuid, "interleaved A/B samples");
    for (int k = 0;; ++k) {
      InputSpec spec = timing_input(plan, k);
      double t[2] = {0, 0};
      for (int r = 0; r < 2; ++r) {
        int which = (k % 2 == 0) ? r : 1 - r;   // ABBA order cancels slow drift
        restore_and_perturb(*b, *pristine, w, spec);
        poison_outputs(*b, Poison::a);
        {
          PhaseTimer pt(*this, "flush");
          dev_.flush(regions(*b));
        }
        try {
          PhaseTimer pt(*this, "kernel");
          t[which] = dev_.timed_call(fs[which], b->args.data()).seconds;
        } catch (const CallFault& e) {
          return {{"failure", Failure{Check::run, e.reason, w.uuid, e.what(), ""}.to_json()}};
        }
        if (which == 1 && std::find(plan.validate_at.begin(), plan.validate_at.end(), k) != plan.validate_at.end())
          if (auto fl = check_outputs(*b, w, spec, Poison::a, Check::timed_outputs, "timed_output_wrong",
                                      fmt::format("workload {} (A/B sample {})", w.uuid, k))) {
            fl->check = Check::timed_outputs;
            fl->reason = "timed_output_wrong";
            return {{"failure", fl->to_json()}};
          }
      }
      a.push_back(t[0]);
      bb.push_back(t[1]);
      std::vector<double> ratio(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) ratio[i] = a[i] / bb[i];
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (should_stop(ratio, elapsed, rule)) break;
    }
    out.push_back({{"workload", w.uuid}, {"a_s", a}, {"b_s", bb}});
  }
  return {{"ab", out}, {"failure", nullptr}};
}

}  // namespace khive
