#include "common/hex.h"

#include <gtest/gtest.h>

namespace secmode::common {
namespace {

TEST(HexTest, RoundTripsAndIgnoresSpaces) {
  auto bytes = FromHex("00 ff 10\nAb");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{0x00, 0xff, 0x10, 0xab}));
  EXPECT_EQ(ToHex(*bytes), "00ff10ab");
}

TEST(HexTest, RejectsBadDigitsAndOddLength) {
  auto bad = FromHex("0g");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'g'"), std::string::npos);
  EXPECT_FALSE(FromHex("abc").ok());
}

TEST(BytesTest, PatternIsDeterministicAndNotConstant) {
  Bytes a = PatternBytes(64, 3), b = PatternBytes(64, 3), c = PatternBytes(64, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, Bytes(64, a[0]));
}

}  // namespace
}  // namespace secmode::common
