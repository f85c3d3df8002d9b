// The judge's result channel: the only way a verdict reaches khive.
//
// A pipe khive creates; the judge writes frames
//   "KHV1 <seq> <length> <hmac-hex>\n<json>\n"
// where hmac = HMAC-SHA256(key, "<seq>\n<json>") and key is 32 random bytes khive hands the judge through a
// second, one-shot pipe. Only the judge holds either: it never loads kernel code, and the executors it starts
// inherit neither descriptor. The signature is defence in depth: should any other process reach the pipe, khive
// accepts frames only in sequence, each with a valid MAC, and nothing but frames; any other byte (a forged,
// replayed or reordered frame, stray bytes) marks the channel as tampered and fails closed.
// stdout and stderr are captured for the log and never parsed for a verdict.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive {

std::string encode_frame(const std::string& key, uint64_t seq, const nlohmann::json& body);

class FrameReader {
 public:
  explicit FrameReader(std::string key) : key_(std::move(key)) {}
  void feed(const char* data, std::size_t n);  // bytes as they arrive
  void finish();                               // end of stream: leftover bytes are tampering
  const std::vector<nlohmann::json>& frames() const { return frames_; }
  bool tampered() const { return !tamper_.empty(); }
  const std::string& tamper_reason() const { return tamper_; }

 private:
  void parse();
  std::string key_, buf_, tamper_;
  uint64_t next_seq_ = 0;
  std::vector<nlohmann::json> frames_;
};

}  // namespace khive
