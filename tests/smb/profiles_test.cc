// The cipher and signing tables (smb/profiles.h) hold what their header
// promises: one row per id, names that parse back to their row, and facts
// that agree with the OpenSSL primitive each row names.
#include "smb/profiles.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <set>
#include <string>

#include "common/openssl_handles.h"
#include "smb/legs.h"
#include "smb/signing.h"
#include "smb/transform.h"

namespace secmode::smb {
namespace {

TEST(CipherProfiles, EachRowIsFoundByItsIdAndItsModeName) {
  std::set<uint16_t> ids;
  std::set<std::string> names, modes;
  for (const CipherProfile& c : CipherProfiles()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(ids.insert(static_cast<uint16_t>(c.id)).second);
    EXPECT_TRUE(names.insert(c.name).second);
    EXPECT_TRUE(modes.insert(c.mode).second);
    auto by_id = ParseCipherId(static_cast<uint16_t>(c.id));
    ASSERT_TRUE(by_id.ok());
    EXPECT_EQ(*by_id, &c);
    auto mode = ParseSmbModeName(c.mode);
    ASSERT_TRUE(mode.ok()) << mode.status().ToString();
    EXPECT_EQ(mode->protection, Protection::kEncrypt);
    EXPECT_EQ(mode->cipher, &c);
    EXPECT_STREQ(SmbModeName(*mode), c.mode);
    EXPECT_EQ(SmbModeDialect(*mode), 0x0311);
  }
}

TEST(CipherProfiles, FactsAgreeWithTheOpenSslCipher) {
  for (const CipherProfile& c : CipherProfiles()) {
    SCOPED_TRACE(c.name);
    common::OsslPtr<EVP_CIPHER> evp(EVP_CIPHER_fetch(nullptr, c.evp_name, nullptr));
    ASSERT_TRUE(evp);
    EXPECT_EQ(static_cast<size_t>(EVP_CIPHER_get_key_length(evp.get())), c.key_bytes);
    EXPECT_NE(EVP_CIPHER_get_flags(evp.get()) & EVP_CIPH_FLAG_AEAD_CIPHER, 0u);
    EXPECT_EQ(EVP_CIPHER_get_mode(evp.get()) == EVP_CIPH_CCM_MODE, c.aead == Aead::kCcm);
    // A counter of 8 bytes and at least a 3-byte channel id fit the nonce.
    EXPECT_GE(c.nonce_bytes, 11u);
    EXPECT_LE(c.nonce_bytes, 12u);
    // What the transform takes from the row: the key size it checks.
    EXPECT_TRUE(Encryptor::Create(c.id, common::Bytes(c.key_bytes, 1), 1).ok());
    EXPECT_FALSE(Decryptor::Create(c.id, common::Bytes(c.key_bytes + 1, 1), 1).ok());
  }
}

TEST(SigningProfiles, EachRowIsFoundByItsIdAndItsModeName) {
  std::set<uint16_t> ids;
  for (const SigningProfile& s : SigningProfiles()) {
    SCOPED_TRACE(s.name);
    EXPECT_TRUE(ids.insert(static_cast<uint16_t>(s.id)).second);
    auto by_id = SigningProfileOf(s.id);
    ASSERT_TRUE(by_id.ok());
    EXPECT_EQ(*by_id, &s);
    EXPECT_STREQ(SigningAlgorithmName(s.id), s.name);
    auto mode = ParseSmbModeName(s.mode);
    ASSERT_TRUE(mode.ok()) << mode.status().ToString();
    EXPECT_EQ(mode->protection, Protection::kSign);
    EXPECT_EQ(mode->signing, &s);
    EXPECT_STREQ(SmbModeName(*mode), s.mode);
    EXPECT_EQ(SmbModeDialect(*mode), s.dialect);
    EXPECT_TRUE(Signer::Create(s.id, common::Bytes(s.key_bytes ? s.key_bytes : 16, 1)).ok());
  }
}

TEST(SigningProfiles, TheRawPrimitiveEachRowNamesExists) {
  for (const SigningProfile& s : SigningProfiles()) {
    SCOPED_TRACE(s.name);
    if (s.evp_mac == nullptr) {
      common::OsslPtr<EVP_CIPHER> evp(EVP_CIPHER_fetch(nullptr, s.evp_param, nullptr));
      ASSERT_TRUE(evp);
      EXPECT_EQ(EVP_CIPHER_get_mode(evp.get()), EVP_CIPH_GCM_MODE);
    } else {
      common::OsslPtr<EVP_MAC> mac(EVP_MAC_fetch(nullptr, s.evp_mac, nullptr));
      EXPECT_TRUE(mac);
      EXPECT_NE(s.evp_param_name, nullptr);
    }
  }
}

TEST(SmbModes, EveryNameInTheHelpTextParses) {
  const std::string names = SmbModeNames();
  size_t start = 0, count = 0;
  while (start < names.size()) {
    size_t comma = names.find(", ", start);
    if (comma == std::string::npos) comma = names.size();
    const std::string name = names.substr(start, comma - start);
    EXPECT_TRUE(ParseSmbModeName(name).ok()) << name;
    ++count;
    start = comma + 2;
  }
  EXPECT_EQ(count, 1 + SigningProfiles().size() + CipherProfiles().size());
  EXPECT_FALSE(ParseSmbModeName("smb-enc-aes-512-gcm").ok());
}

TEST(SmbModes, AModeWithoutItsRowIsRefused) {
  SmbMode sign{Protection::kSign, nullptr, nullptr};
  SmbMode encrypt{Protection::kEncrypt, nullptr, nullptr};
  EXPECT_FALSE(CheckSmbMode(sign).ok());
  EXPECT_FALSE(CheckSmbMode(encrypt).ok());
  EXPECT_FALSE(MakeSmbAssociation(encrypt, SessionKeys{}, 1).ok());
  EXPECT_FALSE(CheckSmbMode(EncryptingMode(static_cast<CipherId>(9))).ok());
  EXPECT_TRUE(CheckSmbMode(SmbMode{}).ok());
}

}  // namespace
}  // namespace secmode::smb
