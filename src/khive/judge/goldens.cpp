#include "khive/judge/goldens.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"

namespace khive {

GoldenStore::GoldenStore(JudgeDevice& dev, const Task& task, const Job& job, const InputKeys& keys,
                         RunReference run_reference)
    : dev_(dev), task_(task), job_(job), keys_(keys), run_reference_(std::move(run_reference)) {}

int64_t GoldenStore::sample_count(int64_t n, DType t, bool timed) const {
  const int64_t bytes = n * static_cast<int64_t>(dtype_size(t));
  const int64_t limit =
      timed ? std::min(job_.golden_timed_limit_bytes, job_.golden_full_limit_bytes) : job_.golden_full_limit_bytes;
  const int64_t count =
      timed ? std::min<int64_t>(job_.golden_sample_count, int64_t{1} << 16) : job_.golden_sample_count;
  return bytes <= limit || n <= count ? 0 : count;
}

namespace {

// A cached golden file is its bytes, then this trailer: a magic and the SHA-256 of the bytes (hex). Checked on every
// read: a file with flipped bytes (3 were enough to fail a correct kernel at check 5) is made again, never compared.
constexpr std::string_view kGoldenMagic = "KHGOLD1\n";
constexpr std::size_t kGoldenTrailer = 8 + 64;

std::string with_trailer(const std::string& data) { return data + std::string(kGoldenMagic) + sha256_hex(data); }

// The bytes of a cached file of `want` bytes when its trailer vouches for them; nullopt when it does not.
std::optional<std::string> checked(std::string file, std::size_t want) {
  if (file.size() != want + kGoldenTrailer || std::string_view(file).substr(want, 8) != kGoldenMagic)
    return std::nullopt;
  if (sha256_hex(std::string_view(file).substr(0, want)) != std::string_view(file).substr(want + 8))
    return std::nullopt;
  file.resize(want);
  return file;
}

}  // namespace

std::string GoldenStore::path(const Workload& w, const InputSpec& s, std::size_t o) const {
  return (std::filesystem::path(job_.golden_dir) / w.uuid /
          (s.key() + "-" + keys_.fingerprint() + "." + task_.outputs[o].name + ".bin"))
      .string();
}

std::vector<Golden> GoldenStore::ensure(Arena& a, int set, const Workload& w, const InputSpec& s, bool timed,
                                        bool keep_on_host) {
  const std::size_t n_out = task_.outputs.size();
  std::vector<Golden> gold(n_out);
  // The cache, when every output's file is there and whole.
  bool cached = !job_.golden_dir.empty();
  for (std::size_t o = 0; o < n_out && cached; ++o) {
    const int64_t count = sample_count(a.n_out(o), task_.outputs[o].dtype, timed);
    const std::size_t want = static_cast<std::size_t>(count ? count : a.n_out(o)) * dtype_size(task_.outputs[o].dtype);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path(w, s, o), ec);
    if (ec || size != want + kGoldenTrailer) {
      cached = false;  // absent, still being written by another evaluation, or of an older format
      break;
    }
    std::optional<std::string> data;
    try {
      data = checked(read_file(path(w, s, o)), want);
    } catch (const std::exception&) {
      cached = false;  // removed under us: make it again
      break;
    }
    if (!data) {
      ++stats_.corrupt;  // whole in size, wrong in content: made again below (and rewritten)
      cached = false;
      break;
    }
    gold[o].data = std::move(*data);
    gold[o].kind = count ? Golden::Kind::host_sampled : Golden::Kind::host_full;
    gold[o].count = count;
    gold[o].key = keys_.sample_key(s);
  }
  if (cached) {
    ++stats_.cached;
    return gold;
  }
  // Made now, by the reference, on spec's inputs in `set` of the reference's view.
  for (std::size_t o = 0; o < n_out; ++o) dev_.poison(task_.outputs[o].dtype, a.golden(set, o), a.n_out(o), Poison::a);
  dev_.synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  run_reference_(a, set, w, s);
  stats_.reference_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.made;
  for (std::size_t o = 0; o < n_out; ++o) {
    const auto& spec = task_.outputs[o];
    const int64_t count = sample_count(a.n_out(o), spec.dtype, timed);
    std::string data(static_cast<std::size_t>(count ? count : a.n_out(o)) * dtype_size(spec.dtype), '\0');
    if (count)
      dev_.gather_sample(spec.dtype, a.golden(set, o), a.n_out(o), keys_.sample_key(s), count, data.data());
    else
      dev_.to_host(data.data(), a.golden(set, o), data.size());
    const int64_t kept = count ? count : a.n_out(o);
    int64_t unwritten = 0;
    for (int64_t i = 0; i < kept; ++i) unwritten += is_poison(spec.dtype, data.data(), i, Poison::a) ? 1 : 0;
    if (unwritten)
      throw std::runtime_error(
          fmt::format("the task's reference left {} of {} {}elements of output {} unwritten (workload {})", unwritten,
                      kept, count ? "sampled " : "", spec.name, w.uuid));
    if (!job_.golden_dir.empty()) write_file_atomic(path(w, s, o), with_trailer(data));
    if (keep_on_host && !count) {
      gold[o].kind = Golden::Kind::host_full;
      gold[o].data = std::move(data);
    } else if (keep_on_host) {
      gold[o].kind = Golden::Kind::host_sampled;
      gold[o].data = std::move(data);
      gold[o].count = count;
      gold[o].key = keys_.sample_key(s);
    } else {
      gold[o].kind = Golden::Kind::device;  // compared whole, on the device, before the set is refilled
      gold[o].set = set;
    }
  }
  return gold;
}

CompareStats GoldenStore::compare(const Arena& a, int set, std::size_t o, const Golden& g, const Tolerance& tol,
                                  Poison p) const {
  const auto& spec = task_.outputs[o];
  const int64_t n = a.n_out(o);
  switch (g.kind) {
    case Golden::Kind::device:
      return dev_.compare(spec.dtype, a.output(set, o), a.golden(g.set, o), true, n, a.cols_out(o), tol, p);
    case Golden::Kind::host_full:
      return dev_.compare(spec.dtype, a.output(set, o), g.data.data(), false, n, a.cols_out(o), tol, p);
    case Golden::Kind::host_sampled: {
      std::string got(static_cast<std::size_t>(g.count) * dtype_size(spec.dtype), '\0');
      dev_.gather_sample(spec.dtype, a.output(set, o), n, g.key, g.count, got.data());
      CompareStats st = compare_host(spec.dtype, got.data(), g.data.data(), g.count, 1, tol, p);
      // Indices in the statistics point into the output itself.
      for (int64_t* idx : {&st.first_bad, &st.first_unwritten, &st.worst_index})
        if (*idx >= 0) *idx = sample_index(g.key, *idx, g.count, n);
      st.rows = std::max<int64_t>(1, n / std::max<int64_t>(1, a.cols_out(o)));
      st.cols = a.cols_out(o);
      st.bad_per_row.clear();
      st.bad_per_col.clear();
      return st;
    }
  }
  return {};
}

}  // namespace khive
