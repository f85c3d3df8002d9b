#include "khive/hive/prebuild.hpp"

#include <algorithm>

#include "khive/support/files.hpp"

namespace khive {

nlohmann::json PrebuildStats::to_json() const {
  return {{"jobs", jobs},       {"offered", offered},     {"built", built}, {"cached", cached},      {"failed", failed},
          {"dropped", dropped}, {"cancelled", cancelled}, {"used", used},   {"compile_s", compile_s}};
}

Prebuilder::Prebuilder(Evaluator& eval, std::filesystem::path scratch, int jobs, std::size_t max_queue)
    : eval_(eval), scratch_(std::move(scratch)), jobs_(std::max(0, jobs)),
      max_queue_(max_queue ? max_queue : static_cast<std::size_t>(4 * std::max(1, jobs))) {
  st_.jobs = jobs_;
  if (jobs_ == 0) return;
  std::filesystem::create_directories(scratch_);
  for (int i = 0; i < jobs_; ++i) workers_.emplace_back([this] { work(); });
}

Prebuilder::~Prebuilder() { stop(); }

void Prebuilder::offer(const std::string& hash, const std::string& ext, const std::string& source) {
  if (jobs_ == 0) return;
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_ || !offered_.insert(hash).second) return;
  ++st_.offered;
  queue_.push_front({hash, ext, source});
  if (queue_.size() > max_queue_) {
    queue_.pop_back();
    ++st_.dropped;
  }
  cv_.notify_one();
}

void Prebuilder::used(const std::string& build_key) {
  if (jobs_ == 0 || build_key.empty()) return;
  std::lock_guard<std::mutex> lk(mu_);
  if (built_keys_.count(build_key) && used_keys_.insert(build_key).second) ++st_.used;
}

void Prebuilder::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return;
    stopping_ = true;
    st_.dropped += static_cast<int>(queue_.size());
    queue_.clear();
  }
  cancel_ = true;
  cv_.notify_all();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  std::error_code ec;
  if (jobs_ > 0) std::filesystem::remove_all(scratch_, ec);
}

PrebuildStats Prebuilder::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return st_;
}

void Prebuilder::work() {
  for (;;) {
    Item it;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      it = std::move(queue_.front());
      queue_.pop_front();
    }
    // Built from its own folder under the name every candidate is compiled as (the key is the content's).
    Prebuilt p;
    try {
      const auto dir = make_temp_dir(scratch_, "p");
      const auto file = dir / ("kernel." + it.ext);
      write_file_atomic(file, it.source);
      p = eval_.prebuild(file, &cancel_);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    } catch (const std::exception&) {
      p = {};  // a speculative build that could not even start changes nothing: the guard builds for itself
      p.built = true;
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (!p.built) continue;
    if (p.cancelled) {
      ++st_.cancelled;
      continue;
    }
    if (p.cached) {
      ++st_.cached;
      continue;
    }
    ++st_.built;
    if (!p.ok) ++st_.failed;
    st_.compile_s += p.seconds;
    if (!p.key.empty()) built_keys_.insert(p.key);
  }
}

int default_prebuild_jobs(Backend backend, int agents, unsigned cores) {
  if (backend != Backend::cuda) return 0;
  const int spare = static_cast<int>(cores) - std::max(0, agents) - 2;
  return std::clamp(spare, 0, 8);
}

}  // namespace khive
