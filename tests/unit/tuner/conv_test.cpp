// The conv family (kernels/conv, tests/tuner-fixtures/conv2d_grouped_epilogue): the binding's checks (channels,
// groups, torch's output size on every workload) and the variables it gives, the binding the tuner infers from a
// recognised convolution (khive.op.conv), and the rendered CPU kernel over 1-, 2- and 3-D, standard and transposed,
// strided, padded, dilated and grouped convolutions against a plain reference that scatters where the kernel gathers.
#include <fmt/format.h>

#include "tuner_support.hpp"

#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/conv2d_grouped_epilogue";

json fixture_binding() {
  return json{{"family", "conv"},
              {"x", "x"},
              {"weight", "weight"},
              {"bias", "bias"},
              {"vector", "scale"},
              {"y", "y"},
              {"stride", {2, 1}},
              {"padding", {1, 2}},
              {"dilation", {1, 2}},
              {"groups", 2},
              {"epilogue", "(x > 0.0f ? x : 0.0f) * b"}};
}

// One convolution as a test case: every size literal but the batch N.
struct ConvCase {
  const char* name;
  int dims, cin, cout, groups;
  std::vector<int> in, k, stride, pad, dil, out_pad;
  bool transposed;
  std::vector<int> out() const {
    std::vector<int> o;
    for (int a = 0; a < dims; ++a)
      o.push_back(transposed ? (in[a] - 1) * stride[a] - 2 * pad[a] + dil[a] * (k[a] - 1) + out_pad[a] + 1
                             : (in[a] + 2 * pad[a] - dil[a] * (k[a] - 1) - 1) / stride[a] + 1);
    return o;
  }
};

json literal_shape(std::vector<std::string> head, const std::vector<int>& tail) {
  for (int v : tail) head.push_back(std::to_string(v));
  return json(head);
}

// The fixture edited into the case's shapes (x, weight, bias, scale and y; workloads over N only).
Task case_task(const ConvCase& k) {
  return edited_copy(
      kFixture,
      [&](json& d) {
        d["axes"] = {{"N", {{"type", "var"}}}};
        d["inputs"]["x"]["shape"] = literal_shape({"N", std::to_string(k.cin)}, k.in);
        d["inputs"]["weight"]["shape"] =
            literal_shape({std::to_string(k.transposed ? k.cin : k.cout),
                           std::to_string(k.transposed ? k.cout / k.groups : k.cin / k.groups)},
                          k.k);
        d["inputs"]["bias"]["shape"] = json::array({std::to_string(k.cout)});
        d["inputs"]["scale"]["shape"] = literal_shape({std::to_string(k.cout)}, std::vector<int>(k.dims, 1));
        d["outputs"]["y"]["shape"] = literal_shape({"N", std::to_string(k.cout)}, k.out());
        d["constraints"] = {"N >= 1"};
        d["khive"].erase("cost");
        d["khive"].erase("op");
      },
      [](std::string& w) {
        w = "{\"uuid\": \"n1\", \"axes\": {\"N\": 1}, \"khive\": {\"role\": \"correctness\"}}\n"
            "{\"uuid\": \"n3\", \"axes\": {\"N\": 3}, \"khive\": {\"role\": \"both\"}}\n";
      });
}

Binding case_binding(const Task& t, const ConvCase& k, bool epilogue) {
  json spec{{"family", "conv"}, {"x", "x"},           {"weight", "weight"}, {"bias", "bias"},    {"vector", "scale"},
            {"y", "y"},         {"stride", k.stride}, {"padding", k.pad},   {"dilation", k.dil}, {"groups", k.groups}};
  if (k.transposed) spec["transposed"] = true, spec["output_padding"] = k.out_pad;
  if (epilogue) spec["epilogue"] = "(x > 0.0f ? x : 0.0f) * b";
  return binding_with(t, spec);
}

// The kernel against a plain convolution that scatters where the kernel gathers (DIMS ... EPI defined before it).
const char* const kConvHarness = R"(
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  const int cin = CIN, cout = COUT, G = GROUPS, cig = cin / G, cog = cout / G;
  const int in3[3] = {IN3}, k3[3] = {K3}, out3[3] = {OUT3}, s3[3] = {S3}, p3[3] = {P3}, d3[3] = {D3};
  const long N = 3, in_px = in3[0] * in3[1] * in3[2], out_px = out3[0] * out3[1] * out3[2], taps = k3[0] * k3[1] * k3[2];
  std::vector<float> x(N * cin * in_px), w((TR ? cin * cog : cout * cig) * taps), bias(cout), scale(cout);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 7919) % 23) - 11) / 8.0f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(int((i * 104729) % 19) - 9) / 16.0f;
  for (int c = 0; c < cout; ++c) bias[c] = float(c % 5) / 4.0f - 0.5f, scale[c] = 1.0f + float(c % 3) / 2.0f;
  std::vector<double> ref(N * cout * out_px, 0.0);
  for (long n = 0; n < N; ++n)
    for (int ic = 0; ic < cin; ++ic)
      for (int id = 0; id < in3[0]; ++id) for (int ih = 0; ih < in3[1]; ++ih) for (int iw = 0; iw < in3[2]; ++iw)
        for (int kd = 0; kd < k3[0]; ++kd) for (int kh = 0; kh < k3[1]; ++kh) for (int kw = 0; kw < k3[2]; ++kw) {
          const int i3[3] = {id, ih, iw}, kk[3] = {kd, kh, kw};
          const double xv = x[((n * cin + ic) * in3[0] + id) * in3[1] * in3[2] + ih * in3[2] + iw];
          const int g = ic / cig, tap = (kd * k3[1] + kh) * k3[2] + kw;
          for (int j = 0; j < cog; ++j) {
            const int oc = g * cog + j;
            int o[3];
            bool ok = true;
            for (int a = 0; a < 3; ++a) {
              if (TR) {  // scatter: input i reaches output i * s - p + k * d
                o[a] = i3[a] * s3[a] - p3[a] + kk[a] * d3[a];
                ok = ok && o[a] >= 0 && o[a] < out3[a];
              } else {   // output o reads input o * s - p + k * d: find o from i
                const int num = i3[a] + p3[a] - kk[a] * d3[a];
                ok = ok && num >= 0 && num % s3[a] == 0 && num / s3[a] < out3[a];
                o[a] = ok ? num / s3[a] : 0;
              }
            }
            if (!ok) continue;
            const double wv = TR ? w[(ic * cog + j) * taps + tap] : w[(oc * cig + (ic - g * cig)) * taps + tap];
            ref[((n * cout + oc) * out3[0] + o[0]) * out3[1] * out3[2] + o[1] * out3[2] + o[2]] += xv * wv;
          }
        }
  std::vector<float> y(ref.size(), -1234.5f);
  khive_launch(x.data(), w.data(), bias.data(), scale.data(), y.data(), N);
  long bad = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const int oc = int(i / out_px % cout);
    double v = ref[i] + bias[oc];
    if (EPI) v = (v > 0 ? v : 0) * scale[oc];
    if (!(std::fabs(y[i] - v) <= 1e-4 * (1 + std::fabs(v))) && bad++ < 5) std::printf("at %zu: got %g want %g\n", i, y[i], v);
  }
  std::printf("bad %ld of %zu\n", bad, y.size());
}
)";

}  // namespace

TEST(ConvBinding, TheFixtureBindsWithTorchsOutputSizes) {
  const Task task = load_task(kFixture);
  const Binding* b = repo_library().binding_for(task);
  ASSERT_NE(b, nullptr);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.family, "conv");
    EXPECT_EQ(bt.op, "conv");
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      const int64_t oh = (ax.at("H") - 1) / 2 + 1;
      EXPECT_EQ(bt.workload_vars[w].at("N"), ax.at("N"));
      EXPECT_EQ(bt.workload_vars[w].at("C_IN"), 8);
      EXPECT_EQ(bt.workload_vars[w].at("C_OUT"), 12);
      EXPECT_EQ(bt.workload_vars[w].at("GROUPS"), 2);
      EXPECT_EQ(bt.workload_vars[w].at("OUT_SPATIAL"), oh * ax.at("W"));
      EXPECT_EQ(bt.workload_vars[w].at("KSIZE"), 9);
    }
    const std::string& p = bt.placeholders.at("PROLOGUE");
    for (const char* s : {"khive_stride(int a) { return a == 0 ? 1 : a == 1 ? 2 : 1; }",
                          "khive_dil(int a) { return a == 0 ? 1 : a == 1 ? 1 : 2; }", "KHIVE_GROUPS = 2;",
                          "KHIVE_TRANSPOSED = false, KHIVE_HAS_BIAS = true, KHIVE_HAS_VECTOR = true;",
                          "return (x > 0.0f ? x : 0.0f) * b;"})
      EXPECT_NE(p.find(s), std::string::npos) << s << "\n" << p;
    // y's sizes come from the formula (the fixture's OH is "(H - 1) // 2 + 1", which C++ does not spell).
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_NE(e.find("khive_conv_out(H, int64_t(3), 1)"), std::string::npos) << e;
    EXPECT_NE(e.find(be == Backend::cuda ? "khive_run(x, weight, bias, khive_conv_vecs{{scale}}, y, s, stream);"
                                         : "khive_run(x, weight, bias, khive_conv_vecs{{scale}}, y, s);"),
              std::string::npos)
        << e;
  }
}

TEST(ConvBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = load_task(kFixture);
  auto msg = [&](const std::function<void(json&)>& edit) {
    json spec = fixture_binding();
    edit(spec);
    return std::string(bind_error(task, binding_with(task, spec)).what());
  };
  EXPECT_EQ(has_all(msg([](json& s) { s["groups"] = 3; }), {"tasks.conv2d_grouped_epilogue.groups", "divisor"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["stride"] = {2}; }), {".stride", "2 integers"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["padding"] = {-1, 0}; }), {".padding", ">= 0"}), "");
  // Another stride: y's OH no longer torch's size; the workload is named.
  EXPECT_EQ(has_all(msg([](json& s) { s["stride"] = {1, 1}; }), {".y", "spatial axis 0", "workload n2h7w5"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["groups"] = 1; }), {".weight", "C_in / groups = 8"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["transposed"] = "yes"; }), {".transposed", "true or false"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["output_padding"] = {1, 0}; }), {".output_padding", "transposed"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s.erase("vector"); }), {"scale", "left out"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["vector"] = "bias"; }), {".vector", "[12, 1, 1]"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["bias"] = "scale"; }), {".bias", "[C_out = 12]"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["epilogue"] = " "; }), {".epilogue"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["sparse"] = true; }), {"sparse"}), "");
}

// A task no bindings file names binds by its recognised convolution (khive.op.conv and operands); a malformed record
// names the field at load; a convolution with more than a pointwise epilogue says why.
TEST(ConvBinding, InferredFromTheRecognisedConvolution) {
  const Task t = load_task(kFixture);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "conv");
  EXPECT_EQ(b->spec["groups"], 2);
  EXPECT_EQ(b->spec["vector"], "scale");
  EXPECT_EQ(b->spec["epilogue"], "(x > 0.0f ? x : 0.0f) * b");
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  const Task pooled = edited_copy(kFixture, [](json& d) {
    d["khive"]["op"] = {{"op", "conv+epilogue"}, {"family", "conv"}, {"ops", {"convolution", "max_pool2d"}}};
  });
  EXPECT_FALSE(infer_binding(pooled, &why));
  EXPECT_NE(why.find("khive.op.conv"), std::string::npos) << why;
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"stride", json::array({0, 1})}, {"padding", json::array({1, 2, 3})}, {"groups", 0}, {"transposed", 1}}) {
    try {
      edited_copy(kFixture, [&](json& d) { d["khive"]["op"]["conv"][field] = value; });
      ADD_FAILURE() << "khive.op.conv." << field << " = " << value.dump() << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.conv." + field), std::string::npos) << e.what();
    }
  }
}

// Every case, with and without the epilogue, OCB 1, 4 and 16 (more than a group's channels: the block's tail): the
// rendered conv.cpu kernel against a plain double-precision reference (the transposed one scatters each input).
TEST(ConvCpuKernel, EveryVariantMatchesAPlainConvolution) {
  const std::vector<ConvCase> cases = {
      {"conv1d_strided_dilated", 1, 4, 6, 1, {20}, {3}, {3}, {0}, {4}, {0}, false},
      {"conv2d_grouped", 2, 8, 12, 2, {7, 5}, {3, 3}, {2, 1}, {1, 2}, {1, 2}, {0, 0}, false},
      {"conv3d_padded", 3, 3, 5, 1, {4, 5, 6}, {2, 3, 1}, {1, 2, 1}, {1, 0, 0}, {1, 1, 1}, {0, 0, 0}, false},
      {"depthwise2d", 2, 6, 6, 6, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false},
      {"convt2d_grouped", 2, 4, 6, 2, {5, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true},
      {"convt1d_dilated", 1, 3, 5, 1, {7}, {4}, {3}, {2}, {2}, {0}, true},
      {"convt3d_mixed", 3, 2, 4, 2, {3, 3, 4}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {1, 1, 2}, {1, 0, 1}, true},
  };
  const Template& t = repo_template("conv.cpu");
  const std::string harness = kConvHarness;
  for (const auto& k : cases) {
    const Task task = case_task(k);
    auto pad3 = [&](const std::vector<int>& v, int fill) {
      std::vector<int> r(3 - k.dims, fill);
      r.insert(r.end(), v.begin(), v.end());
      return fmt::format("{}", fmt::join(r, ", "));
    };
    const std::vector<int> out = k.out();
    for (bool epi : {false, true}) {
      const BoundTask bt = bind_task(task, Backend::cpu, case_binding(task, k, epi));
      EXPECT_EQ(bt.op, k.transposed ? "conv_transpose" : "conv");
      const std::string defs = fmt::format(
          "#define DIMS {}\n#define CIN {}\n#define COUT {}\n#define GROUPS {}\n#define IN3 {}\n#define K3 {}\n"
          "#define OUT3 {}\n#define S3 {}\n#define P3 {}\n#define D3 {}\n#define TR {}\n#define EPI {}\n",
          k.dims, k.cin, k.cout, k.groups, pad3(k.in, 1), pad3(k.k, 1), pad3(out, 1), pad3(k.stride, 1), pad3(k.pad, 0),
          pad3(k.dil, 1), k.transposed ? 1 : 0, epi ? 1 : 0);
      for (const char* ocb : {"1", "4", "16"}) {
        Point p = t.default_point();
        p["OCB"] = ocb;
        p["MIN_PAR"] = "0";
        const std::string got =
            run_cpu_kernel(render(t, bt, p), defs + harness, fmt::format("conv-{}-{}-{}", k.name, epi, ocb));
        EXPECT_EQ(got.substr(0, 6), "bad 0 ") << k.name << " epilogue " << epi << " OCB " << ocb << "\n" << got;
      }
    }
  }
}

// More vectors in the epilogue ("vectors": b1, b2, ...; KernelBench level 2's `x * scale + shift` after a
// convolution), one of them a 0-d parameter (one value for all of y): the binding reads each per channel or at [0],
// and the rendered kernel computes (x * b + b1) * b2 against the plain convolution. A shift read at [0] (the planted
// index of a 0-d vector) fails it.
TEST(ConvCpuKernel, SeveralVectorsInTheEpilogue) {
  const ConvCase k{"conv2d_grouped", 2, 8, 12, 2, {7, 5}, {3, 3}, {2, 1}, {1, 2}, {1, 2}, {0, 0}, false};
  const Task base = case_task(k);
  const Task task = edited_copy(base.dir, [](json& d) {
    json ins = json::object();
    for (auto it = d["inputs"].begin(); it != d["inputs"].end(); ++it) {
      ins[it.key()] = it.value();
      if (it.key() == "scale") {
        ins["shift"] = {{"shape", {"1", "12", "1", "1"}}, {"dtype", "float32"}};
        ins["gain"] = {{"shape", json::array()}, {"dtype", "float32"}};
      }
    }
    d["inputs"] = ins;
  });
  json spec = case_binding(task, k, true).spec;
  spec["vectors"] = {"shift", "gain"};
  spec["epilogue"] = "(x * b + b1) * b2";
  const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, spec));
  const std::string& p = bt.placeholders.at("PROLOGUE");
  for (const char* s : {"struct khive_epi_vals { float b[3]; };", "v.b[0] = khive_to_float_t(vs.p[0][oc]);",
                        "v.b[1] = khive_to_float_t(vs.p[1][oc]);", "v.b[2] = khive_to_float_t(vs.p[2][0]);",
                        "const float b2 = v.b[2];", "return (x * b + b1) * b2;"})
    EXPECT_NE(p.find(s), std::string::npos) << s << "\n" << p;
  EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_conv_vecs{{scale, shift, gain}}"), std::string::npos);
  EXPECT_NE(bt.summary.find("with b = scale, b1 = shift, b2 = gain"), std::string::npos) << bt.summary;

  std::string h = kConvHarness;
  auto swap = [&](const std::string& from, const std::string& to) {
    const auto at = h.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    h.replace(at, from.size(), to);
  };
  swap("khive_launch(x.data(), w.data(), bias.data(), scale.data(), y.data(), N);",
       "std::vector<float> shift(cout), gain{1.75f};\n"
       "  for (int c = 0; c < cout; ++c) shift[c] = float(c % 4) - 1.5f;\n"
       "  khive_launch(x.data(), w.data(), bias.data(), scale.data(), shift.data(), gain.data(), y.data(), N);");
  swap("if (EPI) v = (v > 0 ? v : 0) * scale[oc];", "v = (v * scale[oc] + shift[oc]) * gain[0];");
  const std::string defs =
      "#define DIMS 2\n#define CIN 8\n#define COUT 12\n#define GROUPS 2\n#define IN3 1, 7, 5\n#define K3 1, 3, 3\n"
      "#define OUT3 1, 4, 5\n#define S3 1, 2, 1\n#define P3 0, 1, 2\n#define D3 1, 1, 2\n#define TR 0\n#define EPI 1\n";
  const Template& t = repo_template("conv.cpu");
  Point pt = t.default_point();
  pt["MIN_PAR"] = "0";
  std::string src = render(t, bt, pt);
  EXPECT_EQ(run_cpu_kernel(src, defs + h, "conv-vectors").substr(0, 6), "bad 0 ");
  const auto at = src.find("vs.p[1][oc]");
  ASSERT_NE(at, std::string::npos);
  src.replace(at, std::string("vs.p[1][oc]").size(), "vs.p[1][0]");
  EXPECT_NE(run_cpu_kernel(src, defs + h, "conv-vectors-planted").substr(0, 6), "bad 0 ");
}

// The "vectors" field's refusals, each naming its field.
TEST(ConvBinding, VectorsRefusalsNameTheField) {
  const Task task = edited_copy(kFixture, [](json& d) {
    d["inputs"]["shift"] = {{"shape", {"12", "1", "1"}}, {"dtype", "float32"}};
    d["inputs"]["wide"] = {{"shape", {"12", "2", "1"}}, {"dtype", "float32"}};
  });
  auto msg = [&](const std::function<void(json&)>& edit) {
    json spec = fixture_binding();
    spec["vectors"] = {"shift", "wide"};
    spec["epilogue"] = "x * b + b1 + b2";
    edit(spec);
    return std::string(bind_error(task, binding_with(task, spec)).what());
  };
  const std::string k = "tasks.conv2d_grouped_epilogue.";
  EXPECT_EQ(has_all(msg([](json&) {}), {(k + "vectors[1]").c_str(), "one value per output channel", "[12, 2, 1]"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s.erase("vector"); }), {(k + "vectors").c_str(), "nothing without \"vector\""}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s.erase("epilogue"); }), {(k + "vectors").c_str(), "an epilogue"}), "");
  EXPECT_EQ(has_all(msg([](json& s) {
                      s["vectors"] = {"shift", "scale"};
                    }),
                    {(k + "vectors[1]").c_str(), "no other field"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s["vectors"] = "shift"; }), {(k + "vectors").c_str(), "a non-empty list"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["vectors"] = {"nope"}; }), {(k + "vectors[0]").c_str(), "an input tensor"}),
            "");
}
