#include "khive/job/channel.hpp"

#include <charconv>

#include "khive/support/hash.hpp"

namespace khive {

namespace {
constexpr std::size_t kMaxFrame = 64u << 20;  // a result larger than this is not a judge's
std::string mac_input(uint64_t seq, const std::string& json) { return std::to_string(seq) + "\n" + json; }
}  // namespace

std::string encode_frame(const std::string& key, uint64_t seq, const nlohmann::json& body) {
  std::string js = body.dump();
  std::string mac = hmac_sha256_hex(key, mac_input(seq, js));
  return "KHV1 " + std::to_string(seq) + " " + std::to_string(js.size()) + " " + mac + "\n" + js + "\n";
}

void FrameReader::feed(const char* data, std::size_t n) {
  if (!tamper_.empty()) return;
  buf_.append(data, n);
  parse();
}

void FrameReader::finish() {
  parse();
  if (tamper_.empty() && !buf_.empty())
    tamper_ = "the result channel ended with " + std::to_string(buf_.size()) + " stray bytes";
}

void FrameReader::parse() {
  while (tamper_.empty() && !buf_.empty()) {
    if (buf_.size() < 5) {
      if (std::string_view("KHV1 ").substr(0, buf_.size()) != buf_)
        tamper_ = "bytes that are not a frame on the result channel";
      return;
    }
    if (buf_.compare(0, 5, "KHV1 ") != 0) {
      tamper_ = "bytes that are not a frame on the result channel";
      return;
    }
    auto nl = buf_.find('\n');
    if (nl == std::string::npos) {
      if (buf_.size() > 256) tamper_ = "an oversized frame header on the result channel";
      return;
    }
    // header: KHV1 <seq> <len> <mac>
    std::string_view h(buf_.data() + 5, nl - 5);
    uint64_t seq = 0, len = 0;
    auto sp1 = h.find(' '), sp2 = h.find(' ', sp1 == std::string_view::npos ? 0 : sp1 + 1);
    if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
        std::from_chars(h.data(), h.data() + sp1, seq).ec != std::errc() ||
        std::from_chars(h.data() + sp1 + 1, h.data() + sp2, len).ec != std::errc() || len > kMaxFrame) {
      tamper_ = "a malformed frame header on the result channel";
      return;
    }
    std::string mac(h.substr(sp2 + 1));
    if (buf_.size() < nl + 1 + len + 1) return;  // wait for the body
    std::string js = buf_.substr(nl + 1, len);
    if (buf_[nl + 1 + len] != '\n') {
      tamper_ = "a frame with a wrong length on the result channel";
      return;
    }
    if (seq != next_seq_) {
      tamper_ = "a frame out of sequence on the result channel (replayed or injected)";
      return;
    }
    if (!equal_constant_time(mac, hmac_sha256_hex(key_, mac_input(seq, js)))) {
      tamper_ = "a frame with an invalid signature on the result channel (forged)";
      return;
    }
    auto j = nlohmann::json::parse(js, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      tamper_ = "a signed frame that is not a JSON object";
      return;
    }
    frames_.push_back(std::move(j));
    ++next_seq_;
    buf_.erase(0, nl + 1 + len + 1);
  }
}

}  // namespace khive
