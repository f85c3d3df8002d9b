// input_keys.hpp: what the judge derives from the input secret.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "khive/job/input_keys.hpp"

using namespace khive;

TEST(InputSecret, HexRoundTripAndErrorsNameTheField) {
  const InputSecret s = InputSecret::random();
  EXPECT_EQ(InputSecret::from_hex(s.hex()).bytes, s.bytes);
  EXPECT_EQ(s.hex().size(), 64u);
  try {
    InputSecret::from_hex("abc");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input_secret"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("64 hex digits"), std::string::npos);
  }
  EXPECT_THROW(InputSecret::from_hex(std::string(63, '0') + "g"), std::invalid_argument);
}

TEST(InputSecret, RandomSecretsDifferAndReproducibleOnesRepeat) {
  EXPECT_NE(InputSecret::random().bytes, InputSecret::random().bytes);
  EXPECT_EQ(InputSecret::reproducible(11).bytes, InputSecret::reproducible(11).bytes);
  EXPECT_NE(InputSecret::reproducible(11).bytes, InputSecret::reproducible(12).bytes);
  EXPECT_NE(InputSecret::reproducible(11).bytes, InputSecret::from_legacy(11).bytes) << "two purposes, two secrets";
  // The fingerprint names a secret without being it.
  const InputSecret s = InputSecret::reproducible(5);
  EXPECT_EQ(s.fingerprint().size(), 16u);
  EXPECT_EQ(s.hex().find(s.fingerprint()), std::string::npos);
}

TEST(InputKeys, KeysDependOnTheSecretAndTheLabel) {
  const InputKeys a(InputSecret::reproducible(1)), b(InputSecret::reproducible(2));
  EXPECT_EQ(a.draw(InputSpec{7}).data, a.draw(InputSpec{7}).data) << "the same set is made again bit for bit";
  EXPECT_FALSE(a.draw(InputSpec{7}).data == a.draw(InputSpec{8}).data);
  EXPECT_FALSE(a.draw(InputSpec{7}).data == b.draw(InputSpec{7}).data) << "another secret, other data";
  // A perturbed set keeps its base data and draws its changes under a key of their own.
  const InputDraw p = a.draw(InputSpec{7, 9, 0.01});
  EXPECT_TRUE(p.perturbed);
  EXPECT_EQ(p.data, a.draw(InputSpec{7}).data);
  EXPECT_FALSE(p.perturb == p.data);
  EXPECT_FALSE(a.draw(InputSpec{7}).perturbed);
  EXPECT_NE(a.sample_key(InputSpec{7}), b.sample_key(InputSpec{7}));
  EXPECT_NE(a.sample_key(InputSpec{7}), a.sample_key(InputSpec{8}));
}

TEST(InputKeys, CallLabelsAreDistinctAndNeverSmall) {
  const InputKeys k(InputSecret::reproducible(3));
  std::set<uint64_t> seen;
  for (CallKind kind : {CallKind::timed, CallKind::warmup})
    for (const char* w : {"w1", "w2", "w10"})
      for (uint64_t i = 0; i < 200; ++i) {
        const uint64_t l = k.call_label(kind, 100, w, i);
        EXPECT_TRUE(l >> 63) << "correctness labels are seed_base + small: never equal to a call's";
        EXPECT_TRUE(seen.insert(l).second) << w << " " << i;
      }
  EXPECT_NE(k.call_label(CallKind::timed, 100, "w1", 0), k.call_label(CallKind::timed, 101, "w1", 0))
      << "the seed base counts";
  EXPECT_NE(k.call_label(CallKind::timed, 100, "w1", 0),
            InputKeys(InputSecret::reproducible(4)).call_label(CallKind::timed, 100, "w1", 0));
}
