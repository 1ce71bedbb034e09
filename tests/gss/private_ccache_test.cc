// PrivateCcache with a user's own tickets: a password principal's ticket
// from the real `kinit`, no client keytab (so MIT cannot fetch a ticket on
// its own), found through a named ccache, KRB5CCNAME and the default
// ccache; and the errors for a missing and an expired ticket.
#include "gss/private_ccache.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "common/files.h"
#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "tests/gss/kinit_user.h"
#include "tests/support/shared_realm.h"

namespace secmode::gss {
namespace {

using testing::KinitUser;
using testing::ScopedEnv;

// What an initiator credential acquired from `ccache` is for ("" on
// failure, with the GSS error in *error).
std::string InitiatorName(const std::string& ccache, std::string* error) {
  OM_uint32 minor = 0;
  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  gss_key_value_element_desc elems[] = {{"ccache", ccache.c_str()}};
  gss_key_value_set_desc store{1, elems};
  CredPtr cred;
  OM_uint32 major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs,
                                          GSS_C_INITIATE, &store, Out(cred), nullptr, nullptr);
  if (GSS_ERROR(major)) {
    *error = GssError("gss_acquire_cred_from", major, minor).ToString();
    return "";
  }
  NamePtr name;
  major = gss_inquire_cred(&minor, cred.get(), Out(name), nullptr, nullptr, nullptr);
  if (GSS_ERROR(major)) {
    *error = GssError("gss_inquire_cred", major, minor).ToString();
    return "";
  }
  BufferHandle text;
  gss_display_name(&minor, name.get(), &text.h, nullptr);
  return std::string(static_cast<const char*>(text.h.value), text.h.length);
}

class PrivateCcacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    realm_ = secmode::testing::SharedRealm();
    ASSERT_NE(realm_, nullptr);
    alice_ = std::string(testing::kKinitUser) + "@" + realm_->name();
  }
  Realm* realm_ = nullptr;
  std::string alice_;
  // MIT must not find a client keytab in this process either.
  ScopedEnv no_client_keytab_{"KRB5_CLIENT_KTNAME", "FILE:/nonexistent/secmode-client.keytab"};
};

TEST_F(PrivateCcacheTest, CopiesAKinitTicketWithItsPrincipal) {
  const std::string cc = "FILE:" + realm_->dir() + "/alice-named.ccache";
  ASSERT_TRUE(KinitUser(*realm_, cc).ok());
  PrivateCcache p;
  auto made = p.Make(cc);
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(p.principal(), alice_);
  EXPECT_EQ(p.source(), cc);
  // The copy is a usable initiator ccache for that principal (before the
  // copy was initialised, this failed: "No credentials cache found").
  std::string error;
  EXPECT_EQ(InitiatorName(p.name(), &error), alice_) << error;
}

TEST_F(PrivateCcacheTest, FindsTheTicketThroughKrb5ccname) {
  const std::string cc = "FILE:" + realm_->dir() + "/alice-env.ccache";
  ASSERT_TRUE(KinitUser(*realm_, cc).ok());
  ScopedEnv env("KRB5CCNAME", cc.c_str());
  PrivateCcache p;
  auto made = p.Make("");
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(p.principal(), alice_);
  EXPECT_EQ(p.source(), cc);
  std::string error;
  EXPECT_EQ(InitiatorName(p.name(), &error), alice_) << error;
}

TEST_F(PrivateCcacheTest, FindsTheTicketInTheDefaultCcache) {
  // A configuration like the realm's whose default_ccache_name is a file of
  // this test's own, and no KRB5CCNAME: kinit writes the default ccache and
  // Make("") reads it.
  auto conf = common::ReadFile(realm_->krb5_conf());
  ASSERT_TRUE(conf.ok());
  const std::string cc = "FILE:" + realm_->dir() + "/alice-default.ccache";
  const std::string edited = std::regex_replace(*conf, std::regex("default_ccache_name = [^\n]*"),
                                                "default_ccache_name = " + cc);
  ASSERT_NE(edited, *conf);
  const std::string path = realm_->dir() + "/krb5-default-ccache.conf";
  ASSERT_TRUE(common::WriteFileAtomically(path, edited).ok());
  ScopedEnv no_ccname("KRB5CCNAME", nullptr);
  ScopedEnv config("KRB5_CONFIG", path.c_str());
  ASSERT_TRUE(KinitUser(*realm_, "", {}, {{"KRB5_CONFIG", path}}).ok());
  PrivateCcache p;
  auto made = p.Make("");
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(p.principal(), alice_);
  EXPECT_EQ(p.source(), cc);
  std::string error;
  EXPECT_EQ(InitiatorName(p.name(), &error), alice_) << error;
}

TEST_F(PrivateCcacheTest, AMissingCcacheIsNamed) {
  const std::string cc = "FILE:" + realm_->dir() + "/never-written.ccache";
  PrivateCcache p;
  auto made = p.Make(cc);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.message().find(cc), std::string::npos) << made.ToString();
  EXPECT_NE(made.message().find("kinit"), std::string::npos) << made.ToString();
  EXPECT_TRUE(p.name().empty());
}

TEST_F(PrivateCcacheTest, AnExpiredTicketNamesThePrincipalAndTheCcache) {
  const std::string cc = "FILE:" + realm_->dir() + "/alice-expired.ccache";
  ASSERT_TRUE(KinitUser(*realm_, cc, {"-l", "4s"}).ok());
  {
    PrivateCcache fresh;
    ASSERT_TRUE(fresh.Make(cc).ok()) << "the ticket should still be valid right after kinit";
  }
  sleep(5);
  PrivateCcache p;
  auto made = p.Make(cc);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.message().find("expired"), std::string::npos) << made.ToString();
  EXPECT_NE(made.message().find(alice_), std::string::npos) << made.ToString();
  EXPECT_NE(made.message().find(cc), std::string::npos) << made.ToString();
}

// With a client keytab holding the principal's key, MIT gets tickets on its
// own: for an empty source, and to renew expired ones.
TEST_F(PrivateCcacheTest, AClientKeytabStandsInForMissingOrExpiredTickets) {
  const std::string keytab = "FILE:" + realm_->user_keytab();
  ScopedEnv with_keytab("KRB5_CLIENT_KTNAME", keytab.c_str());
  const std::string user = realm_->user_principal();
  {
    PrivateCcache p;
    auto made = p.Make("FILE:" + realm_->dir() + "/never-written-either.ccache");
    ASSERT_TRUE(made.ok()) << made.ToString();
    EXPECT_EQ(p.principal(), user);
    std::string error;
    EXPECT_EQ(InitiatorName(p.name(), &error), user) << error;
  }
  const std::string cc = "FILE:" + realm_->dir() + "/user-short.ccache";
  common::Command kinit{{"kinit", "-k", "-t", realm_->user_keytab(), "-l", "2s", "-c", cc, user},
                        realm_->Environment(),
                        realm_->dir() + "/kinit-short.log",
                        ""};
  auto rc = common::RunAndWait(kinit, 30000);
  ASSERT_TRUE(rc.ok() && *rc == 0) << common::TailOfFile(kinit.log_path);
  sleep(3);
  PrivateCcache p;
  auto made = p.Make(cc);
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(p.principal(), user);
  std::string error;
  EXPECT_EQ(InitiatorName(p.name(), &error), user) << error;
}

}  // namespace
}  // namespace secmode::gss
