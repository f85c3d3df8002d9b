#include "khive/judge/arena.hpp"

#include <unistd.h>

#include <stdexcept>

#include "khive/executor/protocol.hpp"

namespace khive {

namespace {
constexpr std::size_t kAlign = 256;  // cudaMalloc's alignment: vector loads of any width work on every tensor
std::size_t align(std::size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::size_t Arena::set_bytes(const Task& task, const std::map<std::string, int64_t>& axes) {
  std::size_t b = 0;
  for (const auto& s : task.inputs)
    if (!s.scalar) b += align(static_cast<std::size_t>(element_count(s, axes)) * dtype_size(s.dtype));
  for (const auto& s : task.outputs) b += align(static_cast<std::size_t>(element_count(s, axes)) * dtype_size(s.dtype));
  return 2 * b;  // the kernels' inputs and outputs, and the reference's copy of both (ref_inputs, goldens)
}

Arena::Arena(JudgeDevice& dev, const Task& task, const Workload& w, int sets) : dev_(dev), task_(task), sets_(sets) {
  static uint64_t next_id = 0;
  id_ = ++next_id;
  axes_ = resolve_axes(task, w);
  for (const auto& s : task.inputs) {
    const int64_t n = element_count(s, axes_);
    n_in_.push_back(n);
    in_bytes_.push_back(s.scalar ? 0 : static_cast<std::size_t>(n) * dtype_size(s.dtype));
    in_off_.push_back(in_stride_);
    in_stride_ += align(in_bytes_.back());
  }
  for (const auto& s : task.outputs) {
    const int64_t n = element_count(s, axes_);
    n_out_.push_back(n);
    out_bytes_.push_back(static_cast<std::size_t>(n) * dtype_size(s.dtype));
    // The last dimension may be a literal ("4096": KernelBench's Linear layers, SOL-ExecBench's fixed sizes).
    cols_out_.push_back(s.shape.empty() ? 1 : std::max<int64_t>(1, dim_size(s, s.shape.back(), axes_)));
    out_off_.push_back(out_stride_);
    out_stride_ += align(out_bytes_.back());
  }
  const std::size_t n = static_cast<std::size_t>(sets);
  try {
    in_ = dev.region(std::max<std::size_t>(in_stride_ * n, kAlign));
    out_ = dev.region(std::max<std::size_t>(out_stride_ * n, kAlign));
    ref_in_ = dev.region(std::max<std::size_t>(in_stride_ * n, kAlign));
    gold_ = dev.region(std::max<std::size_t>(out_stride_ * n, kAlign));
  } catch (const std::exception& e) {
    // Most likely the device's memory: say how much this arena asked for, so "the workload is too big for this GPU"
    // reads as that and not as a driver code.
    throw std::runtime_error("workload " + w.uuid + ": " + std::to_string(sets) + " set(s) of inputs and outputs, " +
                             std::to_string((2 * (in_stride_ + out_stride_) * n + (1u << 29)) >> 30) +
                             " GB with the reference's copies and goldens, could not be allocated: " + e.what());
  }
  // Sealed before any executor has a descriptor: from here only the judge's own mapping can write the inputs.
  sealed_ = in_->seal_against_writes();
  ref_in_->seal_against_writes();
  scalars_.assign(static_cast<std::size_t>(sets) * task.inputs.size(), {});
  ref_holds_.assign(static_cast<std::size_t>(sets), std::nullopt);
  for (const auto& a : task.var_axes()) axis_values_.push_back(axes_.at(a));
}

char* Arena::input(int set, std::size_t i) const {
  return task_.inputs[i].scalar ? nullptr : in_->ptr() + static_cast<std::size_t>(set) * in_stride_ + in_off_[i];
}
char* Arena::ref_input(int set, std::size_t i) const {
  return task_.inputs[i].scalar ? nullptr : ref_in_->ptr() + static_cast<std::size_t>(set) * in_stride_ + in_off_[i];
}
char* Arena::output(int set, std::size_t o) const {
  return out_->ptr() + static_cast<std::size_t>(set) * out_stride_ + out_off_[o];
}
char* Arena::golden(int set, std::size_t o) const {
  return gold_->ptr() + static_cast<std::size_t>(set) * out_stride_ + out_off_[o];
}
unsigned char* Arena::scalar(int set, std::size_t i) {
  return scalars_[static_cast<std::size_t>(set) * task_.inputs.size() + i].data();
}

nlohmann::json Arena::touch_spans(int set) const {
  nlohmann::json spans = nlohmann::json::array();
  const std::size_t k = static_cast<std::size_t>(set);
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    if (!task_.inputs[i].scalar && in_bytes_[i] > 0)
      spans.push_back(
          {{"region", 0}, {"offset", k * in_stride_ + in_off_[i]}, {"bytes", in_bytes_[i]}, {"write", false}});
  for (std::size_t o = 0; o < task_.outputs.size(); ++o)
    if (out_bytes_[o] > 0)
      spans.push_back(
          {{"region", 1}, {"offset", k * out_stride_ + out_off_[o]}, {"bytes", out_bytes_[o]}, {"write", true}});
  return spans;
}

Arena::Share Arena::share(bool goldens, bool described) const {
  return goldens ? share_regions(true, described, *ref_in_, *gold_) : share_regions(false, described, *in_, *out_);
}

Arena::Share Arena::share_staged(SharedRegion& inputs, SharedRegion& goldens) const {
  if (inputs.bytes() != ref_in_->bytes() || goldens.bytes() != gold_->bytes())
    throw std::logic_error("Arena::share_staged: regions of another size");
  return share_regions(true, true, inputs, goldens);
}

Arena::Share Arena::share_regions(bool goldens, bool described, const SharedRegion& ins,
                                  const SharedRegion& outs) const {
  Share s;
  s.map = {{"op", "map"},
           {"regions", {{{"bytes", ins.bytes()}, {"access", "r"}}, {{"bytes", outs.bytes()}, {"access", "rw"}}}}};
  s.fds = {const_cast<SharedRegion&>(ins).share(), const_cast<SharedRegion&>(outs).share()};
  auto describe = [&](nlohmann::json arg, const TensorSpec& t) {
    if (!described) return arg;
    arg["dtype"] = std::string(dtype_name(t.dtype));
    if (t.scalar) return arg;
    nlohmann::json shape = nlohmann::json::array();
    for (const auto& d : t.shape) shape.push_back(element_count(TensorSpec{t.name, t.dtype, false, {d}}, axes_));
    arg["shape"] = shape;
    return arg;
  };
  nlohmann::json sets = nlohmann::json::array();
  for (int k = 0; k < sets_; ++k) {
    nlohmann::json args = nlohmann::json::array();
    std::size_t slot = 0;
    for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
      if (task_.inputs[i].scalar)
        args.push_back(describe({{"scalar", slot++}}, task_.inputs[i]));
      else
        args.push_back(describe({{"region", 0}, {"offset", static_cast<std::size_t>(k) * in_stride_ + in_off_[i]}},
                                task_.inputs[i]));
    }
    for (std::size_t o = 0; o < task_.outputs.size(); ++o)
      args.push_back(describe({{"region", 1}, {"offset", static_cast<std::size_t>(k) * out_stride_ + out_off_[o]}},
                              task_.outputs[o]));
    for (int64_t v : axis_values_) args.push_back({{"axis", v}});
    sets.push_back({{"args", args}});
  }
  s.layout = {{"op", "layout"}, {"sets", sets}};
  return s;
}

nlohmann::json Arena::scalars(int set) const {
  nlohmann::json v = nlohmann::json::array();
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    if (task_.inputs[i].scalar)
      v.push_back(exec::to_hex(scalars_[static_cast<std::size_t>(set) * task_.inputs.size() + i].data(), 8));
  return v;
}

std::vector<JudgeDevice::Region> Arena::touched(int first, int count) const {
  std::vector<JudgeDevice::Region> r;
  for (int k = first; k < first + count; ++k) {
    for (std::size_t i = 0; i < task_.inputs.size(); ++i)
      if (!task_.inputs[i].scalar) r.push_back({input(k, i), in_bytes_[i]});
    for (std::size_t o = 0; o < task_.outputs.size(); ++o) r.push_back({output(k, o), out_bytes_[o]});
  }
  return r;
}

}  // namespace khive
