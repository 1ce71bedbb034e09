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

TEST(EnctypeTest, EachRowIsFoundByItsNumberAndName) {
  for (const EnctypeProfile& p : kEnctypeProfiles) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(FindEnctype(p.enctype), &p);
    EXPECT_STREQ(EnctypeName(static_cast<Enctype>(p.enctype)), p.name);
    EXPECT_TRUE(IsSupportedEnctype(p.enctype));
    EXPECT_TRUE(p.key_size == 16 || p.key_size == 32);
    EXPECT_GT(p.kdc_preference, 0);
  }
  EXPECT_EQ(FindEnctype(23), nullptr);
  EXPECT_FALSE(IsSupportedEnctype(23));
}

// The throwaway KDC's lists start as realm.cc spelled them before they were
// read from the table (an enctype added later may follow).
TEST(EnctypeTest, KdcListsKeepTheirOrder) {
  const std::string supported = KdcEnctypeList(":normal");
  EXPECT_EQ(supported.rfind("aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal "
                            "aes256-cts-hmac-sha384-192:normal aes128-cts-hmac-sha256-128:normal",
                            0),
            0u)
      << supported;
  const std::string permitted = KdcEnctypeList("");
  EXPECT_EQ(permitted.rfind("aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96 "
                            "aes256-cts-hmac-sha384-192 aes128-cts-hmac-sha256-128",
                            0),
            0u)
      << permitted;
}

}  // namespace
}  // namespace secmode::gss
