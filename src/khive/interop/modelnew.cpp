// KernelBench ModelNew (modelnew.hpp).
#include "khive/interop/modelnew.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "khive/compile/builder.hpp"
#include "khive/interop/binding.hpp"
#include "khive/support/hash.hpp"

namespace khive {
namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A Python triple-quoted raw string literal holding text (a stray """ is split so it cannot end the literal).
std::string py_raw(const std::string& text) {
  std::string body;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "\"\"\"") == 0) {
      body += "\"\"\" + '\"\"\"' + r\"\"\"";
      i += 2;
      continue;
    }
    body += text[i];
  }
  return "r\"\"\"" + body + "\"\"\"";
}

std::string torch_dtype(DType d) {
  switch (d) {
    case DType::f64: return "torch.float64";
    case DType::f32: return "torch.float32";
    case DType::f16: return "torch.float16";
    case DType::bf16: return "torch.bfloat16";
    case DType::f8e4m3: return "torch.float8_e4m3fn";
    case DType::f8e5m2: return "torch.float8_e5m2";
    case DType::i64: return "torch.int64";
    case DType::i32: return "torch.int32";
    case DType::i16: return "torch.int16";
    case DType::i8: return "torch.int8";
    case DType::boolean: return "torch.bool";
    default: return "torch.uint8";
  }
}

// Python lines that give every axis a value from the arguments (var axes from sizes, then const, then expr).
std::string axis_lines(const Task& t) {
  std::string s;
  for (const auto& a : t.axes) {
    if (a.kind == Axis::Kind::constant) s += fmt::format("        {} = {}\n", a.name, a.value);
    if (a.kind != Axis::Kind::var) continue;
    for (std::size_t i = 0; i < t.inputs.size() && s.find(" " + a.name + " = ") == std::string::npos; ++i)
      for (std::size_t d = 0; d < t.inputs[i].shape.size(); ++d)
        if (t.inputs[i].shape[d] == a.name) {
          s += fmt::format("        {} = args[{}].shape[{}]\n", a.name, i, d);
          break;
        }
  }
  for (const auto& a : t.axes)
    if (a.kind == Axis::Kind::expr) s += fmt::format("        {} = {}\n", a.name, a.expression);
  return s;
}

}  // namespace

std::string kernelbench_modelnew(const Task& t, const std::string& kernel_source, const std::string& label,
                                 Backend backend) {
  const std::string def_file = t.dir.filename().string() + "/definition.json";
  if (t.source_kind != "kernelbench")
    throw TaskFormatError(def_file, "khive.source.kind", "kernelbench (a task made by `khive import kernelbench`)",
                          t.source_kind.empty() ? "none" : "\"" + t.source_kind + "\"");
  auto src = nlohmann::json::parse(t.source_json);
  std::string file = src.value("file", "kernelbench.py");
  auto problem_path = t.dir / file;
  if (!std::filesystem::is_regular_file(problem_path))
    throw TaskFormatError(def_file, "khive.source.file", "the KernelBench problem file next to definition.json",
                          "\"" + file + "\" (not found)");
  std::vector<std::string> forward = src.value("forward_inputs", std::vector<std::string>{});
  std::map<std::string, std::string> params = src.value("parameters", std::map<std::string, std::string>{});

  const bool on_cuda = backend == Backend::cuda;
  // CUDA: the kernel, its prelude and the binding in one CUDA source, its declaration in the C++ one; CPU: all of it
  // in the C++ source, built as khive builds a CPU kernel (-O3 -march=native -fopenmp).
  std::string cuda = on_cuda ? generate_prelude(t, Backend::cuda) + "\n" + kernel_source + "\n" +
                                   torch_binding(t, Backend::cuda, "", false)
                             : "";
  std::string cpp = on_cuda ? "#include <torch/extension.h>\n" + torch_binding_declaration(t) + ";\n"
                            : generate_prelude(t, Backend::cpu) + "\n" + kernel_source + "\n" +
                                  torch_binding(t, Backend::cpu, "", false);
  Sha256 h;
  h.field(cuda);
  h.field(cpp);
  std::string ext_name = "khive_" + h.hex().substr(0, 16);

  std::string py;
  py += fmt::format("# KernelBench ModelNew for task {} (khive candidate {}), written by `khive export --solution`.\n",
                    t.name, label);
  py +=
      "# The problem follows verbatim; ModelNew keeps Model's constructor (KernelBench's seeded construction gives "
      "both\n"
      "# the same weights) and runs khive's kernel on the inputs and the parameters, outputs preallocated.\n";
  py += "import torch\nfrom torch.utils.cpp_extension import load_inline\n\n";
  py += read_text(problem_path) + "\n\n";
  if (on_cuda) py += "_KHIVE_CUDA = " + py_raw(cuda) + "\n\n";
  py += "_KHIVE_CPP = " + py_raw(cpp) + "\n\n";
  py += "_khive_ext = None\n\n\ndef _khive():\n    global _khive_ext\n    if _khive_ext is None:\n";
  if (on_cuda)
    py += fmt::format(
        "        _khive_ext = load_inline(name=\"{}\", cpp_sources=_KHIVE_CPP, cuda_sources=_KHIVE_CUDA, "
        "functions=[\"run\"],\n"
        "                                 extra_cuda_cflags=[\"-O3\", \"--expt-relaxed-constexpr\", "
        "\"-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1\"],\n"
        "                                 extra_ldflags=[\"-lcuda\"], verbose=False)\n",
        ext_name);
  else
    py += fmt::format(
        "        _khive_ext = load_inline(name=\"{}\", cpp_sources=_KHIVE_CPP, functions=[\"run\"],\n"
        "                                 extra_cflags=[\"-O3\", \"-march=native\", \"-fopenmp\"], "
        "extra_ldflags=[\"-fopenmp\"], verbose=False)\n",
        ext_name);
  py += "    return _khive_ext\n\n\nclass ModelNew(Model):\n    def forward(self, *inputs):\n";
  py += "        named = dict(self.named_parameters())\n";
  std::string param_list;
  for (const auto& in : t.inputs) {
    if (std::find(forward.begin(), forward.end(), in.name) != forward.end()) continue;
    auto it = params.find(in.name);
    if (it == params.end())
      throw TaskFormatError(def_file, "khive.source.parameters", "the model parameter behind input " + in.name, "none");
    param_list += fmt::format("named[\"{}\"], ", it->second);
  }
  py += fmt::format("        args = [x.contiguous() if torch.is_tensor(x) else x for x in list(inputs) + [{}]]\n",
                    param_list);
  py += axis_lines(t);
  py += "        device = next(x.device for x in args if torch.is_tensor(x))\n";
  std::string outs;
  for (const auto& o : t.outputs) {
    std::string dims;
    for (const auto& d : o.shape) dims += d + ", ";
    outs += fmt::format("torch.empty(({}), dtype={}, device=device), ", dims, torch_dtype(o.dtype));
  }
  py += fmt::format("        outs = [{}]\n", outs);
  py += "        _khive().run(*args, *outs)\n";
  py += t.outputs.size() == 1 ? "        return outs[0]\n" : "        return tuple(outs)\n";
  return py;
}

}  // namespace khive
