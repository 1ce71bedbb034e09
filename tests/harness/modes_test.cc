#include "harness/modes.h"

#include <gtest/gtest.h>

namespace secmode::harness {
namespace {

TEST(ModeNameTest, DefaultsAreFilledIn) {
  auto sys = ParseModeName("sys");
  ASSERT_TRUE(sys.ok());
  EXPECT_EQ(sys->ToString(), "sys");
  EXPECT_EQ(sys->engine, "none");
  auto p = ParseModeName("krb5p");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ToString(), "krb5p:aes256-cts-hmac-sha1-96:mit");
  auto q = ParseModeName("krb5p:19");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->enctype, "aes128-cts-hmac-sha256-128");
}

TEST(ModeNameTest, BadNamesSayWhatIsWrong) {
  auto unknown = ParseModeName("krb9");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown mode 'krb9'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("sys"), std::string::npos);
  auto enctype = ParseModeName("krb5p:des3");
  ASSERT_FALSE(enctype.ok());
  EXPECT_NE(enctype.status().message().find("unknown enctype 'des3'"), std::string::npos);
  auto engine = ParseModeName("krb5p:aes256-cts-hmac-sha1-96:heimdal");
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("unknown engine 'heimdal'"), std::string::npos);
  EXPECT_FALSE(ParseModeName("sys:aes256-cts-hmac-sha1-96").ok());
  EXPECT_FALSE(ParseModeName("krb5p:a:b:c").ok());
}

// The typed form the RPC client takes: parsed once, errors as
// ParseModeName's; an enctype left out stays the KDC's choice (0).
TEST(RpcModeTest, NfsModesParseToTypedValues) {
  auto sys = ParseRpcMode("sys");
  ASSERT_TRUE(sys.ok()) << sys.status().ToString();
  EXPECT_EQ(sys->security, rpc::Security::kSys);
  EXPECT_FALSE(sys->kerberos());
  auto p = ParseRpcMode("krb5p");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->security, rpc::Security::kKrb5p);
  EXPECT_EQ(p->engine, gss::Engine::kMit);
  EXPECT_EQ(p->enctype, 0);
  auto q = ParseRpcMode("krb5i:aes128-cts-hmac-sha256-128:native");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->security, rpc::Security::kKrb5i);
  EXPECT_EQ(q->engine, gss::Engine::kNative);
  EXPECT_EQ(q->enctype, 19);
  auto r = ParseRpcMode("krb5::mit-iov");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->security, rpc::Security::kKrb5);
  EXPECT_EQ(r->engine, gss::Engine::kMitIov);
  EXPECT_EQ(r->enctype, 0);
  // A parsed name has its enctype filled in; the typed form keeps it.
  auto filled = RpcModeOf(*ParseModeName("krb5p"));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->enctype, 18);
}

TEST(RpcModeTest, OtherNamesAreRefusedWithTheirCause) {
  auto unknown = ParseRpcMode("krb6");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown RPC mode 'krb6'"), std::string::npos);
  auto smb = ParseRpcMode("smb-plain");
  ASSERT_FALSE(smb.ok());
  EXPECT_NE(smb.status().message().find("unknown RPC mode 'smb-plain'"), std::string::npos);
  auto engine = ParseRpcMode("krb5p::heimdal");
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("unknown engine 'heimdal'"), std::string::npos);
  EXPECT_FALSE(ParseRpcMode("sys:aes256-cts-hmac-sha1-96").ok());
}

TEST(ModeRegistryTest, DefaultModesAreRegisteredAndParse) {
  auto modes = DefaultModes();
  ASSERT_GE(modes.size(), 2u);
  for (const auto& m : modes) {
    auto parsed = ParseModeName(m.ToString());
    ASSERT_TRUE(parsed.ok()) << m.ToString();
    EXPECT_EQ(parsed->ToString(), m.ToString());
  }
}

TEST(ModeRegistryTest, SysAssociationCopiesBothWays) {
  ModeEnvironment env;
  auto a = MakeAssociation(*ParseModeName("sys"), env);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(env.has_realm());  // sys needs no Kerberos
  common::Bytes payload = common::PatternBytes(33), wire, out;
  ASSERT_TRUE(a->client_seal->Seal(payload, &wire).ok());
  ASSERT_TRUE(a->server_open->Open(wire, &out).ok());
  EXPECT_EQ(out, payload);
  EXPECT_EQ(a->mode, "sys");
}

}  // namespace
}  // namespace secmode::harness
