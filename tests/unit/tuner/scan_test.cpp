// The scan family (kernels/scan, tests/tuner-fixtures/scan_masked_cumsum): the binding's checks and workload
// variables, the binding the tuner infers from a recognised scan (khive.op.dim and flags), and the rendered CPU
// kernel of cumsum and cumprod, forward and reverse, inclusive and exclusive, masked or not, with the axis last and in
// the middle, against a plain double-precision reference.
#include <fmt/format.h>

#include "tuner_support.hpp"

#include "khive/support/text.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/scan_masked_cumsum";

// A copy of the fixture with its definition edited; `with_d`: every workload gives a third axis D = 2 too.
Task scan_task(const std::function<void(json&)>& edit, bool with_d = false) {
  return edited_copy(kFixture, edit, [with_d](std::string& w) {
    if (!with_d) return;
    std::string out;
    for (const auto& line : split_lines(w)) {
      if (line.empty()) continue;
      json j = json::parse(line);
      j["axes"]["D"] = 2;
      out += j.dump() + "\n";
    }
    w = out;
  });
}

// x[B, N, D] (no mask) or the fixture as it is.
Task three_d(bool masked) {
  return scan_task(
      [&](json& d) {
        d["axes"]["D"] = {{"type", "var"}};
        for (const char* t : {"x", "mask"}) d["inputs"][t]["shape"] = json::array({"B", "N", "D"});
        d["outputs"]["y"]["shape"] = json::array({"B", "N", "D"});
        if (!masked) d["inputs"].erase("mask");
      },
      true);
}

Binding scan_binding(const Task& t, json spec) {
  spec["family"] = "scan";
  return binding_with(t, spec);
}

}  // namespace

TEST(ScanBinding, TheFixtureBindsWithItsMask) {
  const Task task = load_task(kFixture);
  const Binding* b = repo_library().binding_for(task);
  ASSERT_NE(b, nullptr);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.family, "scan");
    EXPECT_EQ(bt.op, "cumsum");
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      EXPECT_EQ(bt.workload_vars[w].at("OUTER"), task.workloads[w].axes.at("B"));
      EXPECT_EQ(bt.workload_vars[w].at("R"), task.workloads[w].axes.at("N"));
      EXPECT_EQ(bt.workload_vars[w].at("INNER"), 1);
    }
    const std::string& p = bt.placeholders.at("PROLOGUE");
    EXPECT_NE(p.find("KHIVE_REVERSE = false, KHIVE_EXCLUSIVE = false, KHIVE_HAS_MASK = true"), std::string::npos) << p;
    EXPECT_NE(bt.placeholders.at("ENTRY").find(be == Backend::cuda
                                                   ? "khive_run(x, mask, y, int64_t(1) * B, N, int64_t(1), stream);"
                                                   : "khive_run(x, mask, y, int64_t(1) * B, N, int64_t(1));"),
              std::string::npos)
        << bt.placeholders.at("ENTRY");
  }
}

TEST(ScanBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = load_task(kFixture);
  const json good = repo_library().binding_for(task)->spec;
  auto msg = [&](const json& edit) {
    json s = good;
    for (auto it = edit.begin(); it != edit.end(); ++it) s[it.key()] = it.value();
    return std::string(bind_error(task, binding_with(task, s)).what());
  };
  auto has = [](const std::string& m, const char* s) { return m.find(s) != std::string::npos; };
  std::string m = msg({{"op", "cummax"}});
  EXPECT_TRUE(has(m, "tasks.scan_masked_cumsum.op") && has(m, "cumsum or cumprod")) << m;
  m = msg({{"dim", 2}});
  EXPECT_TRUE(has(m, "tasks.scan_masked_cumsum.dim") && has(m, "-2 to 1")) << m;
  m = msg({{"reverse", "yes"}});
  EXPECT_TRUE(has(m, "tasks.scan_masked_cumsum.reverse") && has(m, "true or false")) << m;
  m = msg({{"mask", "y"}});
  EXPECT_TRUE(has(m, "tasks.scan_masked_cumsum.mask") && has(m, "an input tensor")) << m;
  json no_mask = good;
  no_mask.erase("mask");
  m = std::string(bind_error(task, binding_with(task, no_mask)).what());
  EXPECT_TRUE(has(m, "\"mask\" left out")) << m;
  EXPECT_TRUE(has(m, "kernels/bindings/tuner-fixtures.json")) << m;
}

// A task no bindings file names binds by its recognised scan, axis and flags; the mask is whichever input is not
// the float one.
TEST(ScanBinding, InferredFromTheRecognisedOpAxisAndFlags) {
  const Task t = scan_task([](json& d) {
    d["name"] = "kb1_093_masked_cumsum";
    d["op_type"] = "kernelbench";
    json ins = json::object();
    ins["mask"] = d["inputs"]["mask"];  // the mask first: the binder still finds x by its dtype
    ins["x"] = d["inputs"]["x"];
    d["inputs"] = ins;
    d["khive"]["op"]["flags"] = {"masked", "reverse"};
  });
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "scan");
  EXPECT_EQ(b->spec["x"], "x");
  EXPECT_EQ(b->spec["mask"], "mask");
  EXPECT_EQ(b->spec["reverse"], true);
  EXPECT_FALSE(b->spec.contains("exclusive"));
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  try {
    scan_task([](json& d) { d["khive"]["op"]["flags"] = {"backwards"}; });
    ADD_FAILURE() << "khive.op.flags = [backwards] loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("khive.op.flags"), std::string::npos) << e.what();
  }
}

// cumsum and cumprod x reverse x exclusive x masked, the axis in the middle (dim 1 of [B, N, D]) and last (dim 2), at
// ICHUNK 8: the rendered scan.cpu kernel against a double-precision reference.
TEST(ScanCpuKernel, EveryVariantOnBothPathsMatchesAPlainScan) {
  const Template& t = repo_template("scan.cpu");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 1}, {3, 257, 5}, {2, 9, 1}, {4, 33, 70}, {1, 3000, 2}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long B = s[0], N = s[1], D = s[2];
    const long long outer = DIM == 1 ? B : B * N, R = DIM == 1 ? N : D, inner = DIM == 1 ? D : 1;
    std::vector<float> x(B * N * D), y(B * N * D, -7.0f);
    std::vector<unsigned char> m(B * N * D);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = OP == 1 ? 0.9f + 0.05f * float((i * 37) % 5) : float(int((i * 7919) % 11) - 5) * 0.25f;
      m[i] = (i * 2654435761u) % 3 != 0;
    }
#if MASKED
    khive_launch(x.data(), reinterpret_cast<const bool*>(m.data()), y.data(), B, N, D);
#else
    khive_launch(x.data(), y.data(), B, N, D);
#endif
    for (long long o = 0; o < outer; ++o)
      for (long long i = 0; i < inner; ++i) {
        double acc = OP == 1 ? 1.0 : 0.0;
        for (long long jj = 0; jj < R; ++jj) {
          const long long j = REVERSE ? R - 1 - jj : jj;
          const long long at = (o * R + j) * inner + i;
          const double v = MASKED && !m[at] ? 0.0 : double(x[at]);
          const double before = acc;
          acc = OP == 1 ? acc * v : acc + v;
          const double want = EXCLUSIVE ? before : acc;
          // cumsum: every partial sum is a multiple of 0.25, exact in fp32; cumprod: 3000 fp32 roundings
          if (std::fabs(y[at] - want) > (OP == 1 ? 1e-3 : 1e-6) * std::fabs(want) + 1e-6 && bad++ < 5)
            std::printf("shape %lld %lld %lld at %lld: got %g want %g\n", B, N, D, at, double(y[at]), want);
        }
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  for (bool masked : {false, true}) {
    const Task task = three_d(masked);
    for (const char* op : {"cumsum", "cumprod"})
      for (int dim : {1, 2})
        for (bool reverse : {false, true})
          for (bool exclusive : {false, true}) {
            json spec{{"op", op}, {"x", "x"}, {"y", "y"}, {"dim", dim}, {"reverse", reverse}, {"exclusive", exclusive}};
            if (masked) spec["mask"] = "mask";
            const BoundTask bt = bind_task(task, Backend::cpu, scan_binding(task, spec));
            Point p = t.default_point();
            p["ICHUNK"] = "8";
            p["MIN_PAR"] = "0";
            const std::string defs = fmt::format(
                "#define OP {}\n#define DIM {}\n#define REVERSE {}\n#define EXCLUSIVE {}\n#define MASKED {}\n",
                std::string(op) == "cumprod" ? 1 : 0, dim, int(reverse), int(exclusive), int(masked));
            const std::string out = run_cpu_kernel(render(t, bt, p), defs + harness,
                                                   fmt::format("scan{}{}{}{}{}", op, dim, reverse, exclusive, masked));
            EXPECT_EQ(out, "bad 0\n") << op << " dim " << dim << " reverse " << reverse << " exclusive " << exclusive
                                      << " masked " << masked;
          }
  }
}
