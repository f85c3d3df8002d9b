#include "khive/eval/evaluator.hpp"

#include <stdexcept>

namespace khive {

Evaluation Evaluator::prepare_pytorch() {
  Evaluation e;
  e.status = EvalStatus::unsupported;
  e.message = "this evaluator cannot time a PyTorch reference";
  return e;
}

Evaluation Evaluator::build_only(const std::filesystem::path& source) {
  throw std::runtime_error("this evaluator cannot defer evaluation (no build-only check) for " + source.string());
}

Prebuilt Evaluator::prebuild(const std::filesystem::path&, const std::atomic<bool>*) { return {}; }

}  // namespace khive
