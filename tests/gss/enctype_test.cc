#include "gss/enctype.h"

#include <gtest/gtest.h>

namespace secmode::gss {
namespace {

TEST(EnctypeTest, ParsesNamesAndNumbers) {
  for (Enctype e : kAllEnctypes) {
    auto by_name = ParseEnctype(EnctypeName(e));
    ASSERT_TRUE(by_name.ok());
    EXPECT_EQ(*by_name, e);
    auto by_number = ParseEnctype(std::to_string(static_cast<int>(e)));
    ASSERT_TRUE(by_number.ok());
    EXPECT_EQ(*by_number, e);
  }
  auto bad = ParseEnctype("des-cbc-crc");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("des-cbc-crc"), std::string::npos);
  EXPECT_NE(bad.status().message().find("aes256-cts-hmac-sha1-96"), std::string::npos);
}

}  // namespace
}  // namespace secmode::gss
