// A kernel task: what to compute, on which shapes, with which reference, tolerance and cost model.
//
// On disk (docs/task-format.md):
//   tasks/<suite>/<task>/definition.json   FlashInfer-Bench / SOL-ExecBench definition + a "khive" block
//                        workload.jsonl     one workload a line (+ an optional "khive" block a line)
//                        reference.cu       CUDA reference (entry point khive_launch)
//                        reference.cpp      CPU reference (optional)
//                        baselines/*.cu|cpp vendor baselines (optional)
//
// Worked example (definition.json):
//   { "name": "gemm_fp32", "op_type": "gemm",
//     "axes": { "M": {"type":"var"}, "N": {"type":"var"}, "K": {"type":"const","value":64},
//               "MN": {"type":"expr","expression":"M * N"} },
//     "inputs":  { "A": {"shape":["M","K"], "dtype":"float32"}, "B": {"shape":["K","N"], "dtype":"float32"},
//                  "alpha": {"shape":null, "dtype":"float32"} },
//     "outputs": { "C": {"shape":["M","N"], "dtype":"float32"} },
//     "constraints": ["M % 1 == 0"],
//     "khive": { "cost": {"flops":"2*M*N*K", "bytes":"4*(M*K + K*N + M*N)", "unit":"fp32"},
//                "tolerance": {"C": {"atol":1e-4, "rtol":1e-4}},
//                "inputs": {"A": {"dist":"normal", "mean":0.5, "std":1.0}},
//                "policy": {"libraries": []},
//                "reference": {"cuda":"reference.cu", "cpu":"reference.cpp"},
//                "baselines": ["baselines/cublas.cu"] } }
//   khive_launch(const float* A, const float* B, float alpha, float* C, int64_t M, int64_t N, cudaStream_t)
//   (inputs in definition order, then outputs, then var axes in definition order, then the stream on CUDA).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "khive/support/json_fields.hpp"
#include "khive/task/dtype.hpp"

namespace khive {

// A malformed task file. what() reads: "<file>: <field>: expected <expected>[, got <got>]".
// file is relative to the task's parent directory ("gemm/definition.json"); for workload.jsonl the field
// starts with "line N: " ("line 3: axes.M"). The files next to a task (the tuner's library, hardware profiles,
// baselines) report the same way.
struct TaskFormatError : FieldError {
  using FieldError::FieldError;
};

// Throws TaskFormatError: what a shared JSON reader (json_fields.hpp) raises for task-format files.
[[noreturn]] void throw_task_format_error(const std::string& file, const std::string& field,
                                          const std::string& expected, const std::string& got);

struct Axis {
  enum class Kind { constant, var, expr };
  std::string name;
  Kind kind = Kind::var;
  int64_t value = 0;       // Kind::constant
  std::string expression;  // Kind::expr, e.g. "hidden_size // num_heads"
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  bool scalar = false;             // "shape": null
  std::vector<std::string> shape;  // axis names; empty and !scalar = 0-D tensor (one element)
};

// How random inputs are drawn. Default: normal with a non-zero mean, so that ops that only look right
// on zero-mean data (a known reward hack, docs/guard.md) are caught.
struct Distribution {
  enum class Kind { normal, uniform, constant, integers };
  Kind kind = Kind::normal;
  double mean = 0.5, stddev = 1.0;  // normal
  double low = -1.0, high = 1.0;    // uniform and integers (inclusive bounds for integers)
  double value = 0.0;               // constant
};

// Elementwise rule: |out - ref| <= atol + rtol * |ref|. matched_ratio: the fraction of elements that
// must satisfy it. max_error_cap: no element may be further off than this (absolute), matched or not.
// allow_negative_inf (SOL-ExecBench): where output and reference are both -inf the element counts as matched
// and is left out of the error statistics; -inf on one side only still fails.
struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
  double matched_ratio = 1.0;
  std::optional<double> max_error_cap;
  bool allow_negative_inf = false;
};
Tolerance default_tolerance(DType t);  // per-dtype defaults (documented in docs/task-format.md)
// SOL-ExecBench's ToleranceSpec defaults (max_atol = max_rtol = 1e-2, required_matched_ratio 0.99): the
// default of every output of an upstream task (a definition without a "khive" block).
Tolerance upstream_default_tolerance();

// Which hardware unit bounds the arithmetic: selects the peak rate in a hardware profile.
enum class ComputeUnit { tc_bf16, tc_fp16, tc_tf32, tc_fp8, tc_int8, fp32, fp64 };
std::optional<ComputeUnit> parse_compute_unit(std::string_view s);  // "bf16","fp16","tf32","fp8","int8","fp32","fp64"
std::string_view compute_unit_name(ComputeUnit u);

// The least work the operation needs (a row scaling is not a GEMM). Formulas over axis names.
// derived_*: the formula was not in the task (khive.cost absent or partial) and load_task derived it from the
// tensors' sizes (bytes) or from a recognised op (flops); `derivation` says how, for reports.
struct CostModel {
  std::string flops = "0";
  std::string bytes = "0";
  ComputeUnit unit = ComputeUnit::fp32;
  bool derived_flops = false, derived_bytes = false, derived_unit = false;
  std::string derivation;  // "" when nothing was derived
  bool derived() const { return derived_flops || derived_bytes || derived_unit; }
};

struct LibraryPolicy {
  std::vector<std::string> libraries;  // allowed vendor libraries: "cublas", "cublasLt"; empty = none
  bool allows(std::string_view lib) const;
};

enum class WorkloadRole { correctness, perf, both };

// Per-workload: how one input is made (SOL-ExecBench / FlashInfer-Bench input descriptors).
//   random       drawn from the task's distribution for that input
//   scalar       the given value
//   safetensors  the tensor `tensor_key` of a .safetensors file; `path` as written, `file` where it was found
//                (the task directory first, then each parent directory: the dataset root of a FlashInfer layout)
//   custom       made by the definition's custom_inputs_entrypoint (Python, run by the PyTorch oracle)
struct InputSource {
  enum class Kind { random, scalar, safetensors, custom };
  Kind kind = Kind::random;
  double value = 0.0;            // Kind::scalar
  std::string path, tensor_key;  // Kind::safetensors
  std::filesystem::path file;    // Kind::safetensors, absolute
};

struct Workload {
  std::string uuid;                     // from the file, or "w<line>" when absent
  int line = 0;                         // 1-based line in workload.jsonl
  std::map<std::string, int64_t> axes;  // values of the var axes
  std::map<std::string, InputSource> inputs;
  // khive.inputs: this workload's own input distributions, over the task's (Task::distribution_for).
  std::map<std::string, Distribution> distributions;
  WorkloadRole role = WorkloadRole::both;
  double weight = 1.0;
  // Per-output overrides. load_task folds the line's top-level "tolerance" / SOL-ExecBench "correctness"
  // (every output) and its khive per-output tolerance into this map, each merged field by field over
  // the task's tolerance for that output; use Task::tolerance_for rather than reading it directly.
  std::map<std::string, Tolerance> tolerance;
  // khive.backends: where this workload runs (default both). A huge perf shape can be CUDA-only and a
  // small one CPU-only; a workload not listed for the evaluating backend is skipped entirely (no
  // goldens, not checked, not timed, not scored).
  bool on_cpu = true, on_cuda = true;
  bool checks_correctness() const { return role != WorkloadRole::perf; }
  // Some input comes from a .safetensors file or from the custom-inputs entrypoint: only the PyTorch side
  // (python/khive_torch) can make it.
  bool needs_python_inputs() const;
  bool is_perf() const { return role != WorkloadRole::correctness; }
  bool runs_on(Backend b) const { return b == Backend::cpu ? on_cpu : on_cuda; }
  bool timed_on(Backend b) const { return is_perf() && runs_on(b); }  // timed (and scored) on this backend
};

struct Task {
  std::filesystem::path dir;
  std::string name, description, op_type;
  std::vector<std::string> tags;
  std::vector<Axis> axes;          // definition order
  std::vector<TensorSpec> inputs;  // definition order (JSON object order is kept)
  std::vector<TensorSpec> outputs;
  std::vector<std::string> constraints;  // over axes only: checked for every workload at load
  // Constraints that read input data (FlashInfer-Bench: "num_kv_indices == kv_indptr[-1].item()"): a safe
  // Python subset (axes, input names, numbers, arithmetic, comparisons, and/or/not, indexing, .item(),
  // .shape, .numel(), len/min/max/abs). Checked for syntax and names at load; evaluated on the inputs by
  // python/khive_torch (constraints.py), since their value depends on the data.
  std::vector<std::string> data_constraints;
  std::string pytorch_reference;  // SOL-ExecBench / FlashInfer-Bench "reference" (Python source with run())
  // khive.op: what the PyTorch reference computes, recognised from its ATen graph at import (python/khive_torch/
  // recognize.py): the op ("matmul", "softmax", "relu", "elementwise", ...), its family, for an elementwise chain of
  // one input the float C expression of x, for an RMSNorm its eps. The tuner binds its families by them.
  std::string op_recognized, op_family, op_expression;
  std::optional<double> op_eps;
  std::optional<int> op_dim;  // a reduction's or scan's axis: its index in the input's shape (< 0: from the end)
  std::vector<int> op_dims;   // a reduction over several axes (khive.op.dim a list): their indices, as written
  std::vector<std::string> op_flags;  // how a scan walks: "reverse", "exclusive", "masked" (x * the other input);
                                      // "keepdim": a reduction's result keeps the reduced axes as 1s
  // A gemm+epilogue's operands: "A", "B", "bias", "residual" (input names), "layout_a", "layout_b" ("row" or "col");
  // its op_expression is then of x (the product, + the residual: an input of the output's shape added to it) and b
  // (the bias's element of x's column). A of rank >= 3 is [*rows, K] (its leading axes the output's rows).
  std::map<std::string, std::string> op_operands;
  // More vectors of a convolution's or product's epilogue (khive.op.operands.vectors), after its "vector" / "bias" (b):
  // b1, b2, ... in op_expression, each one value per output channel (column) or one value for every element.
  std::vector<std::string> op_vectors;
  // A convolution's options (aten.convolution's): one entry per spatial axis in each list. Its op_operands are "x",
  // "weight", "bias" (its own, [C_out]) and "vector" (one value per output channel, b in op_expression).
  struct ConvOptions {
    std::vector<int64_t> stride, padding, dilation, output_padding;
    int64_t groups = 1;
    bool transposed = false;
  };
  std::optional<ConvOptions> op_conv;
  // A pooling's options (torch's max_pool / avg_pool), one entry per pooled axis in each list; divisor_override 0:
  // none.
  struct PoolOptions {
    std::string op;  // "max" or "avg"
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil_mode = false, count_include_pad = true;
    int64_t divisor_override = 0;
  };
  std::optional<PoolOptions> op_pool;
  // A normalisation's statistics (khive.op.norm): y = (x - mean) / sqrt(var + eps) ("var"), x / sqrt(mean(x^2) +
  // eps) ("rms"), x / sqrt(sum(x^2) + eps) ("l2") or x / (mean(|x|) + eps) ("mean_abs"), taken over `axes` of x
  // (sorted, >= 0) for every index of the others, the first of them split into `groups` groups kept apart; then *
  // weight + bias (op_operands "weight", "bias"), shaped as x's `affine_axes` (empty: neither).
  struct NormOptions {
    std::string stat;
    std::vector<int64_t> axes, affine_axes;
    int64_t groups = 1;
    double eps = 0;
  };
  std::optional<NormOptions> op_norm;
  // A chain (op "chain", khive.op.stages): each stage's op object (JSON text) with "inputs" (what it reads: task
  // inputs or "khive_t<i>", what stage i wrote) and "output" (null: the task's output). The tuner reads each against
  // its stage's tensors (read_recognised_op).
  std::vector<std::string> op_stages;
  // An elementwise op's inputs read through a strided view of the output's flat index (khive.op.views: {input name:
  // {"shape", "strides", "offset"}}, axis expressions of in0.. (the input's axes) and out0.. (the output's); the
  // elementwise binding's "views", as JSON text); a chain's copy stage that writes an intermediate has its sizes
  // (khive.op.shape: axis expressions of its input's in0..).
  std::string op_views;
  std::vector<std::string> op_shape;
  // An elementwise op that reads an input through more than one view (khive.op.aliases: {alias: input name}, each
  // alias a second name of the input with its own view), and one whose output axis is cut into equal parts that the
  // expression tells apart by khive_piece (khive.op.select: {"axis", "pieces"}: a cat's parts); the elementwise
  // binding's "aliases" and "select", as JSON text.
  std::string op_aliases;
  std::string op_select;
  // A chain's scalar inputs that its graph never reads, traced with two different values to the same stages
  // (khive.op.unread_scalars): no Python branch on them, so the chain may leave them unread (an unused eps).
  std::vector<std::string> op_unread_scalars;
  // An attention that is exactly what the attention templates' kind computes, o = softmax(q·k^T·scale [+ causal
  // mask])·v of three inputs (khive.op.attention, python/khive_torch/recognize_attention.py): the facts as the graph
  // and the reference's outputs showed them; the tuner binds the templates only when each is theirs.
  struct AttentionReading {
    std::string q, k, v;                        // the task's input names
    std::map<std::string, std::string> layout;  // "q", "k", "v", "o" -> "bshd" ([B, S, H, D]), "bhsd", "bhd" (decode's
                                                // [B, H, D]), "bsd" (one head), "bs(hd)" (o as [B, S, H*D])
    std::string gqa = "none";     // query head h reads KV head: "interleave" h / (Hq / Hkv), "tile" h % Hkv
    std::string causal = "none";  // "none", "bottom_right" (j <= i + Skv - Sq), "top_left" (j <= i: torch's is_causal)
    std::optional<double> scale;  // the scores' scale; nullopt: 1/sqrt(D) on every workload
    int64_t head_dim = 0;         // D where the reading was traced
  };
  std::optional<AttentionReading> op_attention;
  // khive.op.why: why the reference was not recognised (op "unknown"), or why a recognised attention is not one the
  // templates compute (no khive.op.attention then).
  std::string op_why;
  // The most stages a chain has (khive.op.stages and the chain binding's "stages"): KernelBench level 2's longest
  // composition is 6, SOL-ExecBench's L2 042 (an MLP's and a layer norm's backward, 7 outputs) 15, L2 001 and L2 003
  // (attention backward passes through the softmax, RoPE and the q/k/v projections) 24; the chain glue keeps one
  // buffer per intermediate and renders any number of stages.
  static constexpr std::size_t kMaxStages = 32;
  // Forgets every op_* field above (what khive.op recognised), keeping op_type: a chain's stage task is what its own
  // op says, not the whole task (tuner/chain.cpp). Kept beside the fields so a new one is cleared too.
  void clear_recognised_op();
  std::string custom_inputs_entrypoint;  // SOL-ExecBench: a function of `reference` that makes "custom" inputs
  // No "khive" block: an upstream definition, read with upstream defaults (tolerance, cost derived).
  bool upstream = false;
  // khive.source: where an imported task came from ({"kind": "kernelbench", "file": "kernelbench.py",
  // "init_inputs": [...], "forward_inputs": [...], "parameters": {input: "conv.weight"}}); read by
  // `khive export --solution` to write a KernelBench ModelNew. Empty when the task was written by hand.
  std::string source_kind, source_json;
  CostModel cost;
  std::map<std::string, Tolerance> tolerance;         // per output; missing = default_tolerance(dtype)
  std::map<std::string, Distribution> distributions;  // per input; missing = default Distribution
  LibraryPolicy policy;
  std::optional<std::filesystem::path> reference_cuda, reference_cpu;  // absolute paths
  std::vector<std::filesystem::path> baselines;                        // absolute paths
  std::vector<Workload> workloads;
  std::string hash;         // sha256 over the task's files (identity)
  std::string perf_filter;  // select_perf_workloads' pattern once applied (the judge applies it too)

  const TensorSpec* find_input(std::string_view n) const;
  const TensorSpec* find_output(std::string_view n) const;
  std::vector<std::string> var_axes() const;  // names of var axes, in definition order
  Tolerance tolerance_for(const std::string& output, const Workload& w) const;
  Distribution distribution_for(const std::string& input) const;
  // The workload's own distribution of `input` when it declares one (khive.inputs in its line), else the task's.
  Distribution distribution_for(const std::string& input, const Workload& w) const;
  std::optional<std::filesystem::path> reference_for(Backend b) const;
};

// Loads and validates a task directory. Throws TaskFormatError naming file, field and expectation.
Task load_task(const std::filesystem::path& dir);

// Narrows what is timed to the perf workloads (running on backend b) whose uuid matches `pattern`, an ECMAScript
// regex searched in the uuid ("M8192", "^gemm_bf16-M4096-N4096-K4096$"): every correctness check stays; a
// workload that was both correctness and perf and does not match keeps only its check; a perf-only one that
// does not match is dropped. Used by `khive optimize --perf-workloads` to tune for the shapes a user cares about.
// Returns the uuids still timed, in file order. Throws std::invalid_argument naming the option and listing the
// perf workloads when the pattern is not a regex or matches none of them; the task is then unchanged.
std::vector<std::string> select_perf_workloads(Task& t, const std::string& pattern, Backend b);

// Every task directory under root (a directory holding definition.json counts as one task), sorted.
// root itself may be a task; hidden directories and directories inside a task are not searched.
// Throws std::runtime_error when root is not a directory.
std::vector<std::filesystem::path> find_tasks(const std::filesystem::path& root);

// All axis values for one workload: constants, the workload's vars, and exprs evaluated in order.
// Throws TaskFormatError (file workload.jsonl, field "line N: axes.X") when a var is missing or a
// constraint does not hold.
std::map<std::string, int64_t> resolve_axes(const Task& t, const Workload& w);

// The size of one dimension of `s` for resolved axes: a literal ("4096", as SOL-ExecBench and KernelBench imports
// write a fixed size) or an axis name. Throws std::invalid_argument naming the tensor and the dimension.
int64_t dim_size(const TensorSpec& s, const std::string& dim, const std::map<std::string, int64_t>& axes);
// Element count of a tensor for resolved axes (1 for scalars and 0-D).
int64_t element_count(const TensorSpec& s, const std::map<std::string, int64_t>& axes);
// Bytes one tensor occupies (dtype_size per stored element); throws std::overflow_error past 2^63.
int64_t tensor_bytes(const TensorSpec& s, const std::map<std::string, int64_t>& axes);
// The most bytes one workload's tensors (inputs and outputs together) may take: 256 GiB, more than any
// single device holds; a larger workload is refused when the task loads.
inline constexpr int64_t kMaxWorkloadBytes = int64_t(1) << 38;

// Cost of one workload from the cost formulas.
struct WorkloadCost {
  double flops = 0, bytes = 0;
};
WorkloadCost workload_cost(const Task& t, const std::map<std::string, int64_t>& axes);

// khive.op's fields (as a definition's, op_json one op object) into t's op_* fields; errors are TaskFormatErrors
// naming `file` and fields under `field` ("khive.op.stages[1].conv.stride").
void read_recognised_op(const std::string& file, const std::string& field, const std::string& op_json, Task& t);

// "extern \"C\" void khive_launch(const float* A, ..., cudaStream_t stream)" for the backend.
std::string launch_signature(const Task& t, Backend b);

}  // namespace khive
