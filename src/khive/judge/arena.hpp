// One workload's memory, owned by the judge: `sets` independent argument sets (each with every input and output
// of the task at the workload's shape), in four shared regions:
//   inputs      handed to the kernels' executors read-only (CPU: sealed, so it stays read-only); the judge writes a
//               set's inputs only when that call is due, so no kernel sees an input before its call (no look-ahead)
//   outputs     handed to the kernels' executors read-write; the judge poisons and checks them
//   ref_inputs  handed to the reference's executor only: the same inputs, made earlier for the goldens
//   goldens     handed to the reference's executor only, as its outputs (goldens made live)
// Sets have different addresses, so "the same data at new addresses" (check 7) and timed batches of several
// calls (each on inputs of its own) need nothing else.
//
//   Arena a(dev, task, w, 4);
//   a.input(2, 0) -> the judge's pointer to input 0 of set 2; a.layout() -> the executor's "layout" message
#pragma once
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/judge/device.hpp"
#include "khive/task/task.hpp"

namespace khive {

class Arena {
 public:
  Arena(JudgeDevice& dev, const Task& task, const Workload& w, int sets);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // The bytes of one set (inputs + outputs), for sizing how many fit.
  static std::size_t set_bytes(const Task& task, const std::map<std::string, int64_t>& axes);

  int sets() const { return sets_; }
  uint64_t id() const { return id_; }  // unique per arena in this process (an address may be reused)
  const std::map<std::string, int64_t>& axes() const { return axes_; }
  char* input(int set, std::size_t i) const;      // nullptr for a scalar input
  char* ref_input(int set, std::size_t i) const;  // the reference's copy (nullptr for a scalar input)
  char* output(int set, std::size_t o) const;
  char* golden(int set, std::size_t o) const;     // the reference's output for this set
  unsigned char* scalar(int set, std::size_t i);  // 8 bytes of host storage: the scalar input's value for the next call
  int64_t n_in(std::size_t i) const { return n_in_[i]; }
  int64_t n_out(std::size_t o) const { return n_out_[o]; }
  int64_t cols_out(std::size_t o) const { return cols_out_[o]; }
  std::size_t in_bytes(std::size_t i) const { return in_bytes_[i]; }
  std::size_t out_bytes(std::size_t o) const { return out_bytes_[o]; }
  bool inputs_sealed() const { return sealed_; }
  // Which input set the reference's copy of `set` holds (the session records it when it fills one), so revealing
  // that set to a kernel can copy it instead of generating it again.
  void set_ref_holds(int set, const InputSpec& s) { ref_holds_.at(static_cast<std::size_t>(set)) = s; }
  bool ref_holds(int set, const InputSpec& s) const {
    const auto& h = ref_holds_.at(static_cast<std::size_t>(set));
    return h && *h == s;
  }

  // The executor's messages: "map" (regions and their access) with fresh descriptors, then "layout".
  // `goldens`: the reference's view (ref_inputs + goldens) instead of a kernel's (inputs + outputs).
  struct Share {
    nlohmann::json map, layout;
    std::vector<int> fds;  // the caller sends and closes them
  };
  // The kernels' view (inputs, outputs) or the reference's (its inputs, the goldens); `described`: each argument also
  // names its dtype and shape (a PyTorch executor builds its tensors from them; khive-exec ignores them).
  Share share(bool goldens, bool described) const;
  // The reference's view over host copies of the ref_inputs and goldens regions (same sizes and offsets): a PyTorch
  // reference on a GPU judge works on host memory the judge copies the set's inputs into and its goldens out of.
  Share share_staged(SharedRegion& inputs, SharedRegion& goldens) const;
  const SharedRegion& inputs_region() const { return *in_; }
  const SharedRegion& ref_inputs_region() const { return *ref_in_; }
  const SharedRegion& goldens_region() const { return *gold_; }
  // Every input and output of `set` in the kernels' view, as the executor's calibration call reads and writes them
  // ([{"region", "offset", "bytes", "write"}], executor/device.hpp's TouchCall).
  nlohmann::json touch_spans(int set) const;
  // The scalar inputs' bytes for a call on `set` (hex, in input order).
  nlohmann::json scalars(int set) const;
  // Inputs and outputs of the given sets (the buffers a timed batch touches), for the cache flush.
  std::vector<JudgeDevice::Region> touched(int first, int count) const;

 private:
  Share share_regions(bool goldens, bool described, const SharedRegion& ins, const SharedRegion& outs) const;

  JudgeDevice& dev_;
  const Task& task_;
  int sets_;
  std::map<std::string, int64_t> axes_;
  std::vector<int64_t> n_in_, n_out_, cols_out_;
  std::vector<std::size_t> in_bytes_, out_bytes_;
  std::vector<std::size_t> in_off_, out_off_;   // within one set's slice
  std::size_t in_stride_ = 0, out_stride_ = 0;  // bytes per set
  std::unique_ptr<SharedRegion> in_, out_, ref_in_, gold_;
  std::vector<std::array<unsigned char, 8>> scalars_;  // sets x inputs
  std::vector<int64_t> axis_values_;
  bool sealed_ = false;
  std::vector<std::optional<InputSpec>> ref_holds_;
  uint64_t id_ = 0;
};

}  // namespace khive
