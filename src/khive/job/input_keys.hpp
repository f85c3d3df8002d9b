// Where every input the judge makes comes from (docs/guard.md, "Inputs"): a 256-bit secret that khive draws per
// run (the hive, `khive bench`) or per evaluation, hands the judge in the job, and never puts where a kernel, an
// agent or a prompt can read it. From it the judge derives, with HMAC-SHA256, one ChaCha20 key per input set
// (numerics/prf.hpp). Knowing any number of earlier inputs therefore says nothing about the next: an input set's key
// is a PRF of the secret, and its values are a PRF of its key.
//
//   InputSecret s = InputSecret::random();          // khive; s.hex() travels in Job::input_secret
//   InputKeys keys(s);                              // the judge
//   InputDraw d = keys.draw(InputSpec{label});      // the keys a fill of that input set uses
//   uint64_t l = keys.call_label(CallKind::timed, seed_base, "w3", 17);   // timed call 17 of workload w3
//
// An InputSpec's seed is only a label (it names the set in messages and goldens): the data come from the secret, so
// two runs with different secrets never share data or goldens, and one run's evaluations (which share the secret)
// reuse goldens made once.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "khive/job/protocol.hpp"
#include "khive/numerics/prf.hpp"

namespace khive {

struct InputSecret {
  std::array<unsigned char, 32> bytes{};

  static InputSecret random();  // OpenSSL's RAND_bytes
  // `khive eval --seed N`: reproducible inputs (and reusable goldens); anyone who knows N can predict them.
  static InputSecret reproducible(uint64_t seed);
  // A run recorded before secrets were 256 bits (a 64-bit number): the same number gives the same secret.
  static InputSecret from_legacy(uint64_t v);
  // 64 hex digits; throws std::invalid_argument naming what is wrong.
  static InputSecret from_hex(const std::string& hex);
  std::string hex() const;
  // 16 hex digits that name the secret without revealing it (golden file names: sets of different secrets never
  // meet in the cache).
  std::string fingerprint() const;
};

// The keys of one input set: its data, and (check 7) its perturbation.
struct InputDraw {
  InputKey data, perturb;
  bool perturbed = false;
  double fraction = 0;
};

enum class CallKind { timed, warmup };

class InputKeys {
 public:
  explicit InputKeys(const InputSecret& secret) : secret_(secret), fingerprint_(secret.fingerprint()) {}
  InputDraw draw(const InputSpec& spec) const;
  // Where a sampled golden looks (sample_index): secret too, so a kernel cannot know which elements count.
  uint64_t sample_key(const InputSpec& spec) const;
  // The label of call k of workload `uuid` of the given kind: distinct per (kind, seed base, workload, k), never 0
  // and never a small number (correctness labels are seed_base + 1 ..).
  uint64_t call_label(CallKind kind, uint64_t seed_base, const std::string& uuid, uint64_t k) const;
  const std::string& fingerprint() const {
    return fingerprint_;
  }  // the secret's, computed once (every golden path has it)

 private:
  InputSecret secret_;
  std::string fingerprint_;
};

}  // namespace khive
