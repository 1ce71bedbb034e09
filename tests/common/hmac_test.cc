// common::Hmac against OpenSSL's EVP_MAC HMAC for every hash, key lengths
// below, at and above the block size, and message lengths around block
// boundaries, with updates split at arbitrary points.
#include "common/hmac.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <algorithm>
#include <new>
#include <string>

#include "common/bytes.h"
#include "common/hex.h"
#include "common/openssl_handles.h"

namespace secmode::common {
namespace {

std::string Hx(ByteView b) { return ToHex(b); }

TEST(HmacTest, MatchesEvpMacForEveryHashKeyAndLength) {
  for (HashKind h : {HashKind::kSha1, HashKind::kSha256, HashKind::kSha384}) {
    const char* name = h == HashKind::kSha1 ? "SHA1" : h == HashKind::kSha256 ? "SHA256" : "SHA384";
    for (size_t key_len : {16u, 24u, 32u, 64u, 129u}) {
      Bytes key = PatternBytes(key_len, static_cast<uint32_t>(key_len));
      Hmac mine;
      ASSERT_TRUE(mine.Init(h, key).ok());
      for (size_t len : {0u, 1u, 55u, 64u, 65u, 127u, 128u, 1000u, 70000u}) {
        Bytes data = PatternBytes(len, static_cast<uint32_t>(len) + 3);
        uint8_t got[64], want[64];
        mine.Start();
        // Split updates must not matter.
        mine.Update(data.data(), len / 3);
        mine.Update(data.data() + len / 3, len - len / 3);
        mine.Finish(got);
        size_t want_len = 0;
        OsslPtr<EVP_MAC> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
        ASSERT_TRUE(mac);
        OsslPtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_new(mac.get()));
        ASSERT_TRUE(ctx);
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(name), 0),
            OSSL_PARAM_construct_end()};
        ASSERT_EQ(EVP_MAC_init(ctx.get(), key.data(), key.size(), params), 1);
        ASSERT_EQ(EVP_MAC_update(ctx.get(), data.data(), data.size()), 1);
        ASSERT_EQ(EVP_MAC_final(ctx.get(), want, &want_len, sizeof want), 1);
        ASSERT_EQ(want_len, mine.digest_size());
        EXPECT_EQ(Hx(ByteView(got, want_len)), Hx(ByteView(want, want_len)))
            << name << " key " << key_len << " len " << len;
      }
    }
  }
}

TEST(HmacTest, HashNamesAreTheOnesOpenSslFetches) {
  for (HashKind h : {HashKind::kSha1, HashKind::kSha256, HashKind::kSha384}) {
    OsslPtr<EVP_MD> md(EVP_MD_fetch(nullptr, HashName(h), nullptr));
    ASSERT_TRUE(md) << HashName(h);
    Hmac mac;
    ASSERT_TRUE(mac.Init(h, PatternBytes(16)).ok());
    EXPECT_EQ(static_cast<size_t>(EVP_MD_get_size(md.get())), mac.digest_size()) << HashName(h);
  }
}

TEST(HmacTest, DestructionWipesTheKeyedState) {
  // The inner and outer pad states are as good as the key. The Hmac lives
  // in storage the test owns, so its bytes can be read after it is gone.
  for (HashKind h : {HashKind::kSha1, HashKind::kSha256, HashKind::kSha384}) {
    alignas(Hmac) unsigned char storage[sizeof(Hmac)] = {};
    Hmac* mac = new (storage) Hmac();
    ASSERT_TRUE(mac->Init(h, PatternBytes(32, 11)).ok());
    uint8_t out[64];
    mac->Start();
    const uint8_t message[3] = {1, 2, 3};
    mac->Update(message, sizeof message);
    mac->Finish(out);
    auto nonzero = [&] {
      return std::count_if(storage, storage + sizeof storage,
                           [](unsigned char b) { return b != 0; });
    };
    ASSERT_GT(nonzero(), 32) << HashName(h);  // the two pad states at least
    mac->~Hmac();
    // At most the hash kind's bytes are left.
    EXPECT_LE(nonzero(), static_cast<long>(sizeof(HashKind))) << HashName(h);
  }
}

}  // namespace
}  // namespace secmode::common
