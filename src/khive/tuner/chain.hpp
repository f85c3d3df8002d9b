// Chains (family "chain"): a task computed as 2 to Task::kMaxStages (32) stages, each one family's binding (a
// convolution or GEMM with its epilogue, then a pooling, a normalisation, a reduction, a row op or a pointwise op),
// stage i writing an intermediate tensor that later stages read. KernelBench level 2 is mostly such compositions; each
// stage keeps its own templates and tuning, the chain only carries the intermediates between them.
//
// A task of several outputs (a backward pass's grad_input and grad_weight, a projection's q, k and v) is a chain whose
// stages each write an intermediate or one of the task's outputs (each output written by exactly one stage, every
// intermediate read by a later stage); a stage may read the task's inputs, the intermediates and the task outputs
// that earlier stages wrote, so independent stages (one product per output) and shared ones both fit.
//
//   {"family": "chain", "stages": [
//     {"family": "conv", "x": "x", "weight": "w", "bias": "b", "y": "t1", "stride": [1, 1]},
//     {"family": "pool", "op": "max", "x": "t1", "y": "out", "kernel": [2, 2]}]}
//
// An intermediate is named by the stage that writes it (any name that is no tensor of the task); its sizes come from
// that stage's family (conv's and pool's output formulas, a product's M x N, a reduction's dropped axis, else the
// input's shape). Each stage is bound by its own family's binder against a stage task (its tensors, the task's axes,
// and var axes for intermediate sizes that no axis of the task has), so every family check applies per stage.
//
// The tuner's point of a chain is the stages' points side by side: template "chain:conv.cpu+pool.cpu" (made on
// demand from the stage templates, Library::find_template) has parameters S1_<conv's>, S2_<pool's> and strategies
// stage1.conv.*, stage2.pool.*. Rendered (render_chain): each stage's kernel in its own namespace khive_s<i> (as a
// tuner.dispatch variant is, compose.hpp), its khive_launch renamed khive_stage, and the glue of kernels/chain/
// (intermediate buffers kept between calls) calling them in order.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/tuner/bind.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"

namespace khive::tuner {

inline constexpr const char* kChainFamily = "chain";
inline constexpr const char* kChainPrefix = "chain:";  // "chain:conv.cpu+pool.cpu"

// The binding fields of a family that name the tensors a stage reads and the one it writes; empty output: the
// family cannot be a stage.
struct StageTensorFields {
  std::vector<std::string> inputs;  // fields holding one tensor name (elementwise: "inputs", a list)
  std::vector<std::string> lists;   // fields holding a list of tensor names
  std::string output;
};
StageTensorFields stage_tensor_fields(const std::string& family);
std::string stage_families_text();  // "conv, gemm, pool, norm, reduce, rowop or elementwise"

// The intermediates of a chain as they are added stage by stage: their shapes (axis names of the task, literals,
// or new var axes "khive_m<stage>_<axis>" with their per-workload values and C++ over the task's launch
// parameters), and the stage tasks the family binders check.
class ChainLayout {
 public:
  explicit ChainLayout(const Task& task);

  // The tensors a stage spec (a binding object with its family) reads and writes, by its family's fields.
  // Throws std::runtime_error naming the field when one is missing or not a string.
  static std::vector<std::string> stage_inputs(const nlohmann::ordered_json& spec);
  static std::string stage_output(const nlohmann::ordered_json& spec);

  // The stage task of a stage reading `inputs` (task inputs or intermediates) and writing `output` (an intermediate
  // with a shape, or the task's output). An intermediate not yet shaped gets `inputs[0]`'s shape (a guess for the
  // recognisers that read shapes; add_stage sets the real one).
  Task stage_task(const std::vector<std::string>& inputs, const std::string& output, std::size_t stage) const;

  // Shapes intermediate `output` by family's rule from the stage's binding spec and its inputs. Throws
  // std::runtime_error with the reason (a field of the spec the rule needs, sizes that do not fit).
  void shape_output(const std::string& family, const nlohmann::ordered_json& spec, const std::string& output,
                    std::size_t stage);

  // An elementwise stage's "dtype" (the storage type of the intermediate it writes, as the reference holds it:
  // float32 where a bf16 reference computes in float32), nullopt without one. Throws std::runtime_error naming
  // "dtype" for anything but float32, bfloat16 or float16.
  static std::optional<DType> stored_dtype(const nlohmann::ordered_json& spec);

  // A copy stage's intermediate of the sizes `exprs` (axis expressions of in0.., its input's axes: a view of
  // `input` made contiguous), shaped before the stage is bound; each size named as shape_output names them.
  // Stored as `dtype` when given, else as `input`.
  void shape_as(const std::string& output, const std::string& input, const std::vector<std::string>& exprs,
                std::size_t stage, std::optional<DType> dtype = std::nullopt);
  bool is_intermediate(const std::string& name) const;
  // A task output an earlier stage wrote (a multi-output chain): later stages may read it as an input.
  void mark_written(const std::string& output) { written_[output] = true; }
  const std::vector<TensorSpec>& intermediates() const { return mids_; }
  // The new var axes and their C++ (over the task's launch parameters), in the order they were made.
  const std::vector<std::pair<std::string, std::string>>& fresh_axes() const { return fresh_cpp_; }
  // C++ for an axis name or literal of any stage task, over the task's launch parameters.
  std::string cpp(const std::string& axis) const;

 private:
  struct Dim {
    std::string name;            // the axis name or literal it was read from ("" when computed)
    std::vector<int64_t> value;  // per workload
    std::string cpp;
  };
  Dim dim_of(const std::string& name) const;
  Dim computed(std::vector<int64_t> v, std::string cpp) const { return Dim{"", std::move(v), std::move(cpp)}; }
  const TensorSpec& tensor(const std::string& name) const;
  std::vector<Dim> dims_of(const TensorSpec& t) const;
  // taken: the names given to the intermediate's axes before pos (an axis of the task is not reused for a second
  // axis of the same sizes while another one fits: [N, C, H - 2, W - 2] with H == W is [N, C, d0, d1], not d0 twice).
  std::string name_dim(const Dim& d, std::size_t pos, std::size_t rank, std::size_t stage,
                       const std::vector<std::string>& taken = {});

  const Task& task_;
  std::vector<AxisValues> values_;  // per workload: the task's resolved axes and the new ones
  std::vector<TensorSpec> mids_;
  std::vector<std::pair<std::string, std::string>> fresh_cpp_;
  std::map<std::string, bool> shaped_;
  std::map<std::string, bool> written_;
};

// A chain template's name: kChainPrefix and the stages' template names joined by '+' ("chain:conv.cpu+pool.cpu").
std::string chain_template_name(const std::vector<const Template*>& stages);
// A chain template of the stage templates (copies inside, so it stands alone): parameters S<i>_<name>, strategies
// stage<i>.<name>, source the backend's glue. Throws std::runtime_error when the stages' backends differ or there is
// no glue.
Template make_chain_template(const std::vector<const Template*>& stages, const std::string& glue,
                             const std::filesystem::path& glue_path);
// The point of stage i (0-based) of a chain point.
Point stage_point(const Template& chain, const Point& p, std::size_t i);
// check_point and render for chain templates (space.hpp calls them for a template with stages).
Validity check_chain_point(const Template& t, const BoundTask& bt, const Point& p);
std::string render_chain(const Template& t, const BoundTask& bt, const Point& p);

}  // namespace khive::tuner
