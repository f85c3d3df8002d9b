// The result channel: only signed frames, in sequence, and nothing else, count.
#include <gtest/gtest.h>

#include "khive/job/channel.hpp"

namespace khive {
namespace {

const std::string kKey(32, 'k');

TEST(Channel, AcceptsSignedFramesInSequence) {
  FrameReader r(kKey);
  std::string a = encode_frame(kKey, 0, {{"type", "progress"}}), b = encode_frame(kKey, 1, {{"type", "result"}});
  std::string all = a + b;
  for (char c : all) r.feed(&c, 1);  // byte by byte: frames may arrive split anywhere
  r.finish();
  ASSERT_FALSE(r.tampered()) << r.tamper_reason();
  ASSERT_EQ(r.frames().size(), 2u);
  EXPECT_EQ(r.frames()[1]["type"], "result");
}

TEST(Channel, RejectsAFrameSignedWithAnotherKey) {
  FrameReader r(kKey);
  std::string f = encode_frame(std::string(32, 'x'), 0, {{"type", "result"}, {"accepted", true}});
  r.feed(f.data(), f.size());
  r.finish();
  EXPECT_TRUE(r.tampered());
  EXPECT_NE(r.tamper_reason().find("forged"), std::string::npos);
  EXPECT_TRUE(r.frames().empty());
}

TEST(Channel, RejectsReplayedOrReorderedFrames) {
  FrameReader r(kKey);
  std::string f0 = encode_frame(kKey, 0, {{"n", 0}});
  r.feed(f0.data(), f0.size());
  r.feed(f0.data(), f0.size());  // the same frame again
  EXPECT_TRUE(r.tampered());
  EXPECT_NE(r.tamper_reason().find("sequence"), std::string::npos);
}

TEST(Channel, StrayBytesAreTampering) {
  FrameReader r(kKey);
  std::string f = "{\"verdict\":\"accepted\"}\n" + encode_frame(kKey, 0, {{"type", "result"}});
  r.feed(f.data(), f.size());
  r.finish();
  EXPECT_TRUE(r.tampered());
}

TEST(Channel, TrailingPartialFrameIsTampering) {
  FrameReader r(kKey);
  std::string f = encode_frame(kKey, 0, {{"type", "result"}});
  r.feed(f.data(), f.size() - 3);
  r.finish();
  EXPECT_TRUE(r.tampered());
}

TEST(Channel, ATamperedBodyFailsItsSignature) {
  FrameReader r(kKey);
  std::string f = encode_frame(kKey, 0, {{"accepted", false}});
  auto p = f.find("false");
  f.replace(p, 5, "true ");
  r.feed(f.data(), f.size());
  r.finish();
  EXPECT_TRUE(r.tampered());
}

}  // namespace
}  // namespace khive
