#include "gss/context_pair.h"

#include <gtest/gtest.h>

#include "tests/support/shared_realm.h"

namespace secmode::gss {
namespace {

class ContextPairTest : public ::testing::TestWithParam<Enctype> {};

TEST_P(ContextPairTest, EstablishesWithTheChosenEnctype) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  auto pair = ContextPair::Establish(*realm, GetParam());
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  EXPECT_EQ((*pair)->round_trips(), 1);  // AP-REQ / AP-REP with mutual auth
  for (gss_ctx_id_t ctx : {(*pair)->initiator(), (*pair)->acceptor()}) {
    auto key = InquireSessionKey(ctx);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(key->enctype, static_cast<int32_t>(GetParam()));
    // MIT's session key has the size the enctype's row says.
    const EnctypeProfile* row = FindEnctype(static_cast<int32_t>(GetParam()));
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(key->key.size(), row->key_size);
  }
  // Both ends agree on the key.
  EXPECT_EQ(InquireSessionKey((*pair)->initiator())->key,
            InquireSessionKey((*pair)->acceptor())->key);
  OM_uint32 minor, flags = 0;
  int open = 0;
  ASSERT_FALSE(GSS_ERROR(gss_inquire_context(&minor, (*pair)->initiator(), nullptr, nullptr,
                                             nullptr, nullptr, &flags, nullptr, &open)));
  EXPECT_TRUE(open);
  for (OM_uint32 f : {GSS_C_MUTUAL_FLAG, GSS_C_INTEG_FLAG, GSS_C_CONF_FLAG, GSS_C_REPLAY_FLAG,
                      GSS_C_SEQUENCE_FLAG}) {
    EXPECT_TRUE(flags & f) << "flag " << f;
  }
}

INSTANTIATE_TEST_SUITE_P(AllEnctypes, ContextPairTest, ::testing::ValuesIn(kAllEnctypes),
                         [](const auto& info) {
                           std::string n = EnctypeName(info.param);
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

TEST(ContextPairTest, TwoPairsHaveDifferentKeys) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  auto a = ContextPair::Establish(*realm, kDefaultEnctype);
  auto b = ContextPair::Establish(*realm, kDefaultEnctype);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(InquireSessionKey((*a)->initiator())->key, InquireSessionKey((*b)->initiator())->key);
}

}  // namespace
}  // namespace secmode::gss
