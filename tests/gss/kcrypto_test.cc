// Known answers for gss/kcrypto: RFC 3961 n-fold (appendix A.1), RFC 3962
// appendix B (string-to-key through DK, AES-CTS), RFC 8009 appendix A (key
// derivation, string-to-key, encryption with the given confounders,
// checksums); plus the sequence window and the CFX header parser. No realm
// needed.
#include "gss/kcrypto.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "common/hex.h"
#include "common/secret_bytes.h"
#include "gss/cfx_token.h"
#include "gss/context_pair.h"
#include "gss/native_protector.h"
#include "gss/seq_state.h"

namespace secmode::gss {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

// Derived keys and their temporaries, the native engine's key and the GSS
// session key wipe themselves when let go of (common::SecretBytes; its own
// tests are in tests/common/secret_bytes_test.cc).
using common::SecretBytes;
static_assert(std::is_same_v<decltype(DeriveKeyDk(EnctypeProfile(), ByteView(), ByteView())),
                             common::Result<SecretBytes>>);
static_assert(std::is_same_v<decltype(DeriveUsageKey(EnctypeProfile(), ByteView(), 0, 0)),
                             common::Result<SecretBytes>>);
static_assert(std::is_same_v<decltype(StringToKey(EnctypeProfile(), "", ByteView(), 1)),
                             common::Result<SecretBytes>>);
static_assert(std::is_same_v<decltype(NativeKeys::key), SecretBytes>);
static_assert(std::is_same_v<decltype(SessionKey::key), SecretBytes>);

Bytes H(std::string_view hex) {
  auto b = common::FromHex(hex);
  EXPECT_TRUE(b.ok()) << hex;
  return b.ok() ? *b : Bytes();
}
Bytes Str(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string Hx(ByteView b) { return common::ToHex(b); }
std::string Lower(std::string_view hex) {
  std::string out;
  for (char c : hex) {
    if (c != ' ' && c != '\n')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}
EnctypeProfile P(int32_t e) {
  auto p = ProfileFor(e);
  EXPECT_TRUE(p.ok());
  return *p;
}

TEST(NFoldTest, Rfc3961AppendixA1) {
  struct V {
    const char* in;
    size_t bits;
    const char* out;
  } v[] = {
      {"012345", 64, "be072631276b1955"},
      {"password", 56, "78a07b6caf85fa"},
      {"Rough Consensus, and Running Code", 64, "bb6ed30870b7f0e0"},
      {"password", 168, "59e4a8ca7c0385c3c37b3f6d2000247cb6e6bd5b3e"},
      {"MASSACHVSETTS INSTITVTE OF TECHNOLOGY", 192,
       "db3b0d8f0b061e603282b308a50841229ad798fab9540c1b"},
      {"Q", 168, "518a54a215a8452a518a54a215a8452a518a54a215"},
      {"ba", 168, "fb25d531ae8974499f52fd92ea9857c4ba24cf297e"},
      {"kerberos", 64, "6b65726265726f73"},
      {"kerberos", 128, "6b65726265726f737b9b5b2b93132b93"},
      {"kerberos", 168, "8372c236344e5f1550cd0747e15d62ca7a5a3bcea4"},
      {"kerberos", 256, "6b65726265726f737b9b5b2b93132b935c9bdcdad95c9899c4cae4dee6d6cae4"},
  };
  for (const auto& t : v) {
    EXPECT_EQ(Hx(NFold(Str(t.in), t.bits)), t.out) << t.bits << "-fold(" << t.in << ")";
  }
}

// RFC 3962 appendix B: PBKDF2-HMAC-SHA1 then DK(tkey, "kerberos") - the DK
// step exercises n-fold, the DR chain and the two-block loop for AES-256.
TEST(Rfc3962Test, StringToKeyThroughDk) {
  struct V {
    uint32_t iter;
    Bytes pass, salt;
    const char *k128, *k256;
  } v[] = {
      {1, Str("password"), Str("ATHENA.MIT.EDUraeburn"), "42263c6e89f4fc28b8df68ee09799f15",
       "fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161"},
      {2, Str("password"), Str("ATHENA.MIT.EDUraeburn"), "c651bf29e2300ac27fa469d693bdda13",
       "a2e16d16b36069c135d5e9d2e25f896102685618b95914b467c67622225824ff"},
      {1200, Str("password"), Str("ATHENA.MIT.EDUraeburn"), "4c01cd46d632d01e6dbe230a01ed642a",
       "55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a"},
  };
  for (const auto& t : v) {
    std::string pass(t.pass.begin(), t.pass.end());
    auto k128 = StringToKey(P(17), pass, t.salt, t.iter);
    auto k256 = StringToKey(P(18), pass, t.salt, t.iter);
    ASSERT_TRUE(k128.ok() && k256.ok());
    EXPECT_EQ(Hx(*k128), t.k128) << "iterations " << t.iter;
    EXPECT_EQ(Hx(*k256), t.k256) << "iterations " << t.iter;
  }
}

// RFC 3962 appendix B CBC-CTS vectors (key "chicken teriyaki", zero IV),
// through UsageKeys with Ke = that key; the first 16 bytes play the
// confounder. Decrypt must invert them.
TEST(Rfc3962Test, CtsVectors) {
  const Bytes key = Str("chicken teriyaki");
  const Bytes input = Str("I would like the General Gau's Chicken, please, and wonton soup.");
  struct V {
    size_t len;
    const char* out;
  } v[] = {
      {17, "c6353568f2bf8cb4d8a580362da7ff7f97"},
      {31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5"},
      {32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584"},
      {47,
       "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcbcc98e"
       "bf5"},
      {48,
       "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7fcbcc98e"
       "bf5a8"},
      {64,
       "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a526730dbc2f7"
       "bc8409dad8bbb96c4cdc03bc103e1a194bbd8"},
  };
  UsageKeys k;
  ASSERT_TRUE(k.InitWithKeys(P(17), key, key, key).ok());
  for (const auto& t : v) {
    Bytes buf(input.begin(), input.begin() + static_cast<long>(t.len));
    buf.resize(t.len + 16);
    uint8_t tag[kMaxChecksumSize];
    ASSERT_TRUE(k.EncryptInPlace(buf.data(), t.len, buf.size(), tag).ok());
    EXPECT_EQ(Hx(ByteView(buf.data(), t.len)), t.out) << t.len;
    Bytes ct(buf.begin(), buf.begin() + static_cast<long>(t.len));
    ct.insert(ct.end(), tag, tag + k.checksum_size());
    uint8_t first[16];
    Bytes rest(t.len - 16);
    ASSERT_TRUE(k.Decrypt(ct, first, rest.data()).ok()) << t.len;
    Bytes back(first, first + 16);
    back.insert(back.end(), rest.begin(), rest.end());
    EXPECT_EQ(back, Bytes(input.begin(), input.begin() + static_cast<long>(t.len))) << t.len;
  }
}

TEST(Rfc8009Test, KeyDerivationForUsage2) {
  struct V {
    int32_t e;
    const char *base, *kc, *ke, *ki;
  } v[] = {
      {19, "3705D96080C17728A0E800EAB6E0D23C", "B31A018A48F54776F403E9A396325DC3",
       "9B197DD1E8C5609D6E67C3E37C62C72E", "9FDA0E56AB2D85E1569A688696C26A6C"},
      {20, "6D404D37FAF79F9DF0D33568D320669800EB4836472EA8A026D16B7182460C52",
       "EF5718BE86CC84963D8BBB5031E9F5C4BA41F28FAF69E73D",
       "56AB22BEE63D82D7BC5227F6773F8EA7A5EB1C825160C38312980C442E5C7E49",
       "69B16514E3CD8E56B82010D5C73012B622C4D00FFC23ED1F"},
  };
  for (const auto& t : v) {
    Bytes base = H(t.base);
    EXPECT_EQ(Hx(*DeriveUsageKey(P(t.e), base, 2, 0x99)), Lower(t.kc)) << t.e;
    EXPECT_EQ(Hx(*DeriveUsageKey(P(t.e), base, 2, 0xAA)), Lower(t.ke)) << t.e;
    EXPECT_EQ(Hx(*DeriveUsageKey(P(t.e), base, 2, 0x55)), Lower(t.ki)) << t.e;
  }
}

TEST(Rfc8009Test, StringToKey) {
  Bytes salt = H("10DF9DD783E5BC8ACEA1730E74355F61");
  Bytes realm = Str("ATHENA.MIT.EDUraeburn");
  salt.insert(salt.end(), realm.begin(), realm.end());
  EXPECT_EQ(Hx(*StringToKey(P(19), "password", salt, 32768)), "089bca48b105ea6ea77ca5d2f39dc5e7");
  EXPECT_EQ(Hx(*StringToKey(P(20), "password", salt, 32768)),
            "45bd806dbf6a833a9cffc1c94589a222367a79bc21c413718906e9f578a78467");
}

// RFC 8009 appendix A sample encryptions (usage 2, given confounders): the
// ciphertext is AES-CTS output | truncated HMAC(Ki, IV | C).
TEST(Rfc8009Test, EncryptionWithGivenConfounder) {
  const char* ke19 = "9B197DD1E8C5609D6E67C3E37C62C72E";
  const char* ki19 = "9FDA0E56AB2D85E1569A688696C26A6C";
  const char* ke20 = "56AB22BEE63D82D7BC5227F6773F8EA7A5EB1C825160C38312980C442E5C7E49";
  const char* ki20 = "69B16514E3CD8E56B82010D5C73012B622C4D00FFC23ED1F";
  struct V {
    int32_t e;
    const char *ke, *ki, *conf, *plain, *out;
  } v[] = {
      {19, ke19, ki19, "7e5895eaf2672435bad817f545a37148", "",
       "ef85fb890bb8472f4dab20394dca781dad877eda39d50c870c0d5a0a8e48c718"},
      {19, ke19, ki19, "7bca285e2fd4130fb55b1a5c83bc5b24", "000102030405",
       "84d7f30754ed987bab0bf3506beb09cfb55402cef7e6877ce99e247e52d16ed4421dfdf8976c"},
      {19, ke19, ki19, "56ab21713ff62c0a1457200f6fa9948f", "000102030405060708090a0b0c0d0e0f",
       "3517d640f50ddc8ad3628722b3569d2ae07493fa8263254080ea65c1008e8fc295fb4852e7d83e1e7c48c37eebe"
       "6b0d3"},
      {19, ke19, ki19, "a7a4e29a4728ce10664fb64e49ad3fac",
       "000102030405060708090a0b0c0d0e0f1011121314",
       "720f73b18d9859cd6ccb4346115cd336c70f58edc0c4437c5573544c31c813bce1e6d072c186b39a413c2f92ca9"
       "b8334a287ffcbfc"},
      {20, ke20, ki20, "f764e9fa15c276478b2c7d0c4e5f58e4", "",
       "41f53fa5bfe7026d91faf9be959195a058707273a96a40f0a01960621ac612748b9bbfbe7eb4ce3c"},
      {20, ke20, ki20, "b80d3251c1f6471494256ffe712d0b9a", "000102030405",
       "4ed7b37c2bcac8f74f23c1cf07e62bc7b75fb3f637b9f559c7f664f69eab7b6092237526ea0d1f61cb20d69d10f"
       "2"},
      {20, ke20, ki20, "53bf8a0d105265d4e276428624ce5e63", "000102030405060708090a0b0c0d0e0f",
       "bc47ffec7998eb91e8115cf8d19dac4bbbe2e163e87dd37f49beca92027764f68cf51f14d798c2273f35df574d1"
       "f932e40c4ff255b36a266"},
      {20, ke20, ki20, "763e65367e864f02f55153c7e3b58af1",
       "000102030405060708090a0b0c0d0e0f1011121314",
       "40013e2df58e8751957d2878bcd2d6fe101ccfd556cb1eae79db3c3ee86429f2b2a602ac86fef6ecb647d6295fa"
       "e077a1feb517508d2c16b4192e01f62"},
  };
  for (const auto& t : v) {
    UsageKeys k;
    ASSERT_TRUE(k.InitWithKeys(P(t.e), H(t.ke), H(t.ki), H(t.ki)).ok());
    Bytes buf = H(t.conf), plain = H(t.plain);
    buf.insert(buf.end(), plain.begin(), plain.end());
    const size_t n = buf.size();
    buf.resize(n + 16);
    uint8_t tag[kMaxChecksumSize];
    ASSERT_TRUE(k.EncryptInPlace(buf.data(), n, buf.size(), tag).ok());
    Bytes got(buf.begin(), buf.begin() + static_cast<long>(n));
    got.insert(got.end(), tag, tag + k.checksum_size());
    EXPECT_EQ(Hx(got), t.out) << t.e << " plaintext " << t.plain;
    uint8_t conf[16];
    Bytes rest(plain.size());
    ASSERT_TRUE(k.Decrypt(got, conf, rest.data()).ok());
    EXPECT_EQ(rest, plain);
    EXPECT_EQ(Hx(ByteView(conf, 16)), t.conf);
    got[got.size() / 2] ^= 0x10;
    auto s = k.Decrypt(got, conf, rest.data());
    EXPECT_EQ(s.code(), Code::kAuthFailed) << s.ToString();
    EXPECT_NE(s.message().find("bad checksum"), std::string::npos);
  }
}

TEST(Rfc8009Test, Checksums) {
  Bytes msg = H("000102030405060708090a0b0c0d0e0f1011121314");
  UsageKeys k19, k20;
  Bytes kc19 = H("B31A018A48F54776F403E9A396325DC3");
  Bytes kc20 = H("EF5718BE86CC84963D8BBB5031E9F5C4BA41F28FAF69E73D");
  ASSERT_TRUE(k19.InitWithKeys(P(19), H("9B197DD1E8C5609D6E67C3E37C62C72E"), kc19, kc19).ok());
  ASSERT_TRUE(
      k20.InitWithKeys(P(20), H("56AB22BEE63D82D7BC5227F6773F8EA7A5EB1C825160C38312980C442E5C7E49"),
                       kc20, kc20)
          .ok());
  uint8_t out[kMaxChecksumSize];
  // Split across the two inputs on purpose: the checksum covers a | b.
  k19.Checksum(ByteView(msg.data(), 7), ByteView(msg.data() + 7, msg.size() - 7), out);
  EXPECT_EQ(Hx(ByteView(out, 16)), "d78367186643d67b411cba9139fc1dee");
  k20.Checksum(msg, ByteView(), out);
  EXPECT_EQ(Hx(ByteView(out, 24)), "45ee791567eefca37f4ac1e0222de80d43c3bfa06699672a");
}

TEST(KcryptoTest, EncryptDecryptRoundTripsEveryLengthAndRejectsShortInput) {
  for (int32_t e : {17, 18, 19, 20}) {
    Bytes base = common::PatternBytes(P(e).key_size, static_cast<uint32_t>(e));
    UsageKeys k;
    ASSERT_TRUE(k.Init(P(e), base, 24).ok());
    for (size_t n = 16; n < 16 + 100; ++n) {
      Bytes buf = common::PatternBytes(n, static_cast<uint32_t>(n));
      Bytes orig = buf;
      buf.resize(n + 16);
      uint8_t tag[kMaxChecksumSize];
      ASSERT_TRUE(k.EncryptInPlace(buf.data(), n, buf.size(), tag).ok());
      Bytes ct(buf.begin(), buf.begin() + static_cast<long>(n));
      ct.insert(ct.end(), tag, tag + k.checksum_size());
      uint8_t conf[16];
      Bytes rest(n - 16);
      ASSERT_TRUE(k.Decrypt(ct, conf, rest.data()).ok()) << e << " " << n;
      Bytes back(conf, conf + 16);
      back.insert(back.end(), rest.begin(), rest.end());
      EXPECT_EQ(back, orig) << e << " " << n;
    }
    uint8_t conf[16], rest[64];
    Bytes short_ct(16 + k.checksum_size() - 1, 0);
    auto s = k.Decrypt(short_ct, conf, rest);
    EXPECT_EQ(s.code(), Code::kCorrupt);
    EXPECT_NE(s.message().find("need at least"), std::string::npos) << s.ToString();
    uint8_t buf[32] = {}, tag[24];
    EXPECT_EQ(k.EncryptInPlace(buf, 15, 32, tag).code(), Code::kInvalidArgument);
  }
  EXPECT_EQ(ProfileFor(23).status().code(), Code::kInvalidArgument);
  EXPECT_NE(ProfileFor(23).status().message().find("23"), std::string::npos);
}

TEST(SeqStateTest, FollowsMitVerdicts) {
  SeqState both(1000, true, true);
  EXPECT_EQ(both.Check(1000), SeqState::Verdict::kInOrder);
  EXPECT_EQ(both.Check(1000), SeqState::Verdict::kDuplicate);
  EXPECT_EQ(both.Check(1002), SeqState::Verdict::kGap);
  EXPECT_EQ(both.Check(1001), SeqState::Verdict::kUnseq);
  EXPECT_EQ(both.Check(1001), SeqState::Verdict::kDuplicate);
  EXPECT_EQ(both.Check(1003), SeqState::Verdict::kInOrder);
  EXPECT_EQ(both.Check(1200), SeqState::Verdict::kGap);
  EXPECT_EQ(both.Check(1004), SeqState::Verdict::kUnseq);  // > 64 behind: MIT says unseq
  EXPECT_EQ(both.Check(1004), SeqState::Verdict::kUnseq);
  SeqState replay_only(0, true, false);
  EXPECT_EQ(replay_only.Check(0), SeqState::Verdict::kInOrder);
  EXPECT_EQ(replay_only.Check(5), SeqState::Verdict::kInOrder);  // gaps not reported
  EXPECT_EQ(replay_only.Check(3), SeqState::Verdict::kInOrder);
  EXPECT_EQ(replay_only.Check(3), SeqState::Verdict::kDuplicate);
  EXPECT_EQ(replay_only.Check(200), SeqState::Verdict::kInOrder);
  EXPECT_EQ(replay_only.Check(100), SeqState::Verdict::kOld);
  // Wraparound of the 64-bit space.
  SeqState wrap(~uint64_t{0} - 1, true, true);
  EXPECT_EQ(wrap.Check(~uint64_t{0} - 1), SeqState::Verdict::kInOrder);
  EXPECT_EQ(wrap.Check(~uint64_t{0}), SeqState::Verdict::kInOrder);
  EXPECT_EQ(wrap.Check(0), SeqState::Verdict::kInOrder);
  EXPECT_EQ(wrap.Check(~uint64_t{0}), SeqState::Verdict::kDuplicate);
  SeqState off(0, false, false);
  EXPECT_EQ(off.Check(7), SeqState::Verdict::kInOrder);
  EXPECT_EQ(off.Check(7), SeqState::Verdict::kInOrder);
}

TEST(CfxTokenTest, HeaderRoundTripAndErrors) {
  uint8_t w[16];
  WriteWrapHeader(w, kFlagSealed | kFlagAcceptorSubkey, 3, 28, 0x0102030405060708ull);
  EXPECT_EQ(Hx(ByteView(w, 16)), "050406ff0003001c0102030405060708");
  CfxHeader h;
  ASSERT_TRUE(ParseCfxHeader(ByteView(w, 16), kTokWrap, &h).ok());
  EXPECT_EQ(h.ec, 3);
  EXPECT_EQ(h.rrc, 28);
  EXPECT_EQ(h.seq, 0x0102030405060708ull);
  uint8_t m[16];
  WriteMicHeader(m, kFlagSentByAcceptor, 9);
  EXPECT_EQ(Hx(ByteView(m, 16)), "040401ffffffffff0000000000000009");
  auto s = ParseCfxHeader(ByteView(m, 16), kTokWrap, &h);
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("wrong token ID 0x0404"), std::string::npos) << s.ToString();
  s = ParseCfxHeader(ByteView(m, 12), kTokMic, &h);
  EXPECT_NE(s.message().find("truncated MIC token: 12 bytes"), std::string::npos) << s.ToString();
  m[5] = 0;
  s = ParseCfxHeader(ByteView(m, 16), kTokMic, &h);
  EXPECT_NE(s.message().find("filler"), std::string::npos) << s.ToString();
  Bytes r = {1, 2, 3, 4, 5};
  RotateLeft(r, 2);
  EXPECT_EQ(r, (Bytes{3, 4, 5, 1, 2}));
}

}  // namespace
}  // namespace secmode::gss
