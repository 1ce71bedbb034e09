// Known answers from Microsoft's Open Specifications blog posts. Values are
// typed in as the posts print them (hex); each block names its source.
//   [ANATOMY] "SMB 2 and SMB 3 security in Windows 10: the anatomy of signing
//             and cryptographic keys" (E. Olougouna, 2017), Appendix: Key
//             derivation examples.
//   [ENC30]   "Encryption in SMB 3.0: a protocol perspective" (2012), Test
//             vector.
//   [ENC311]  "SMB 3.1.1 Encryption in Windows 10" (2015), Appendix A.1
//             Test vector with AES-GCM.
// And one from an independent implementation, since Microsoft has published
// no AES-GMAC signing example (none was found in its Open Specifications
// blog posts, Samba's libcli/smb tests, Wireshark's or impacket's tests):
//   [SMBRS]   smb-rs (github.com/afiffon/smb-rs, MIT licence), file
//             crates/smb/src/session/signer.rs, test `test_calc_signature`,
//             commit 145606a24427a9a3350ca92bed2f1355f33dd84b (2025-03-20):
//             a signed SMB2 LOGOFF request and its AES-128-GMAC signing key.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "common/hex.h"
#include "common/secret_bytes.h"
#include "smb/client.h"
#include "smb/gss_session.h"
#include "smb/kdf.h"
#include "smb/message.h"
#include "smb/signing.h"
#include "smb/transform.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;

Bytes H(const std::string& hex) {
  auto r = common::FromHex(hex);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Bytes();
}
std::string Up(ByteView b) {
  std::string s = common::ToHex(b);
  for (auto& c : s) c = static_cast<char>(toupper(c));
  return s;
}
ByteView L(const char* s) {  // label or context with its NUL
  return ByteView(reinterpret_cast<const uint8_t*>(s), strlen(s) + 1);
}

// Session keys, the GSS key they come from and the KDF's outputs wipe
// themselves when let go of (common::SecretBytes; its own tests are in
// tests/common/secret_bytes_test.cc).
using common::SecretBytes;
static_assert(std::is_same_v<decltype(SessionKeys::signing), SecretBytes>);
static_assert(std::is_same_v<decltype(SessionKeys::client_to_server), SecretBytes>);
static_assert(std::is_same_v<decltype(SessionKeys::server_to_client), SecretBytes>);
static_assert(std::is_same_v<decltype(SessionKeys::application), SecretBytes>);
static_assert(std::is_same_v<decltype(KerberosSmbSession::gss_key), SecretBytes>);
static_assert(std::is_same_v<decltype(std::declval<const SmbClient&>().gss_session_key()),
                             const SecretBytes&>);
static_assert(
    std::is_same_v<decltype(std::declval<const SmbClient&>().keys()), const SessionKeys&>);
static_assert(std::is_same_v<decltype(SmbSessionKey(ByteView())), SecretBytes>);
static_assert(std::is_same_v<decltype(Sp800108HmacSha256(ByteView(), ByteView(), ByteView(), 8)),
                             common::Result<SecretBytes>>);

// [ANATOMY] Key derivation example for SMB 3.0 multichannel.
TEST(Smb30Kdf, MicrosoftVectorFirstChannel) {
  auto keys = DeriveSmb30Keys(H("7CD451825D0450D235424E44BA6E78CC"));
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(Up(keys->signing), "0B7E9C5CAC36C0F6EA9AB275298CEDCE");
  EXPECT_EQ(Up(keys->client_to_server), "FAD27796665B313EBB578F388632B4F7");  // EncryptionKey
  EXPECT_EQ(Up(keys->server_to_client), "B0F0427F7CEB416D1D9DCC0CD4F99447");  // DecryptionKey
  EXPECT_EQ(Up(keys->application), "BB23A4575AA26C721AF525AF15A87B4F");
}

TEST(Smb30Kdf, MicrosoftVectorSecondChannelSigningKey) {
  auto keys = DeriveSmb30Keys(H("4E01A2B313BCF660CC250BEF021AEDE6"));
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(Up(keys->signing), "BA1A17DBBFEC349BCA105563D598952F");
}

// [ENC30] keys of the encryption example.
TEST(Smb30Kdf, MicrosoftEncryptionExampleKeys) {
  auto keys = DeriveSmb30Keys(H("B4546771B515F766A86735532DD6C4F0"));
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(Up(keys->signing), "F773CD23C18FD1E08EE510CADA7CF852");
  EXPECT_EQ(Up(keys->client_to_server), "261B72350558F2E9DCF613070383EDBF");
  EXPECT_EQ(Up(keys->server_to_client), "8FE2B57EC34D2DB5B1A9727F526BBDB5");
  EXPECT_EQ(Up(keys->application), "77432F808CE99156B5BC6A3676D730D1");
}

// [ANATOMY] SMB 3.1.1: the preauth-integrity chain over NEGOTIATE request
// and response, then the keys from the final hash.
TEST(Smb311Kdf, MicrosoftPreauthChainNegotiate) {
  Bytes hash(64, 0);
  ASSERT_TRUE(
      UpdatePreauthHash(
          &hash,
          H("FE534D4240000100000000000000800000000000000000000100000000000000FFFE000000000000"
            "00000000000000000000000000000000000000000000000024000500000000003F000000ECD86F32"
            "6276024F9F7752B89BB33F3A70000000020000000202100200030203110300000100260000000000"
            "010020000100FA49E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF0000"
            "0200060000000000020002000100"))
          .ok());
  EXPECT_EQ(Up(hash),
            "DD94EFC5321BB618A2E208BA8920D2F422992526947A409B5037DE1E0FE8C7362B8C47122594CDE0"
            "CE26AA9DFC8BCDBDE0621957672623351A7540F1E54A0426");
  ASSERT_TRUE(
      UpdatePreauthHash(
          &hash,
          H("FE534D4240000100000000000000010001000000000000000100000000000000FFFE000000000000"
            "000000000000000000000000000000000000000000000000410001001103020039CBCAF329714942"
            "BDCE5D60F09AB3FB2F000000000080000000800000008000D8DAE5ADCBAED00109094AB095AED001"
            "80004001C00100006082013C06062B0601050502A08201303082012CA01A3018060A2B0601040182"
            "3702021E060A2B06010401823702020AA282010C048201084E45474F455854530100000000000000"
            "60000000700000007C7CC0FD06D6362D02DDE1CF343BFE292900F49750B4AA97934D9C4296B26E51"
            "FD370471B235E15A50DAE15BD5489C87000000000000000060000000010000000000000000000000"
            "5C33530DEAF90D4DB2EC4AE3786EC3084E45474F4558545303000000010000004000000098000000"
            "7C7CC0FD06D6362D02DDE1CF343BFE295C33530DEAF90D4DB2EC4AE3786EC3084000000058000000"
            "3056A05430523027802530233121301F06035504031318546F6B656E205369676E696E6720507562"
            "6C6963204B65793027802530233121301F06035504031318546F6B656E205369676E696E67205075"
            "626C6963204B6579010026000000000001002000010060A3C3B95C3C7CCD51EC536648D9B3AC74C4"
            "83CA5B65385A251117BEB30712E50000020004000000000001000200"))
          .ok());
  EXPECT_EQ(Up(hash),
            "324BFA92A4F3A190E466EBEA08D9C110DC88BFED758D9846ECC6F541CC1D02AE3C94A79F36011E99"
            "7E13F841B91B50957AD07B19C8E2539C0B23FDAE09D2C513");
}

const char kAnatomyPreauth[] =
    "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB7928622DDDAD522D97"
    "51640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01";

TEST(Smb311Kdf, MicrosoftVectorKeys) {
  auto keys = DeriveSmb311Keys(H("270E1BA896585EEB7AF3472D3B4C75A7"), H(kAnatomyPreauth),
                               CipherId::kAes128Gcm);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(Up(keys->signing), "73FE7A9A77BEF0BDE49C650D8CCB5F76");
  EXPECT_EQ(Up(keys->client_to_server), "629BCBC54422A0F572B97F45989B6073");  // EncryptionKey
  EXPECT_EQ(Up(keys->server_to_client), "E2AF0DCEFAC68DA71A0DFBD0D1350D74");  // DecryptionKey
  EXPECT_EQ(Up(keys->application), "6D7AD7954E9EC61E907B4D473DC178FF");
}

// [ENC311] keys of the AES-GCM example.
const char kEnc311Preauth[] =
    "B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDBA7DB256BA2EA30E9"
    "77F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770";

TEST(Smb311Kdf, MicrosoftEncryptionExampleKeys) {
  auto keys = DeriveSmb311Keys(H("419FDDF34C1E001909D362AE7FB6AF79"), H(kEnc311Preauth),
                               CipherId::kAes128Gcm);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(Up(keys->signing), "8765949DFEAEE105CE9118B45BE988F0");
  EXPECT_EQ(Up(keys->client_to_server), "A2F5E80E5D59103034F32E52F698E5EC");
  EXPECT_EQ(Up(keys->server_to_client), "748C50868C90F302962A5C35F5F9A8BF");
  EXPECT_EQ(Up(keys->application), "099D610789FBE82055B313601C3E8CC4");
}

// No published vector covers the 256-bit (L=256) outputs, so they are
// checked against an independent implementation: OpenSSL's KBKDF.
TEST(Sp800108, MatchesOpenSslKbkdfFor128And256BitOutputs) {
  const Bytes key32 = H("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F");
  for (size_t bits : {128u, 256u, 384u, 512u}) {
    for (const char* label : {"SMBC2SCipherKey", "SMBS2CCipherKey", "SMBSigningKey"}) {
      auto mine = Sp800108HmacSha256(key32, L(label), H(kAnatomyPreauth), bits);
      auto theirs = Sp800108ViaOpenSslKbkdf(key32, L(label), H(kAnatomyPreauth), bits);
      ASSERT_TRUE(mine.ok() && theirs.ok())
          << mine.status().ToString() << " " << theirs.status().ToString();
      EXPECT_EQ(*mine, *theirs) << label << " L=" << bits;
      EXPECT_EQ(mine->size(), bits / 8);
    }
  }
}

TEST(Smb311Kdf, Aes256CiphersGet256BitKeysFromTheFullSessionKey) {
  const Bytes full = H("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F");
  for (CipherId c : {CipherId::kAes256Ccm, CipherId::kAes256Gcm}) {
    auto keys = DeriveSmb311Keys(full, H(kAnatomyPreauth), c);
    ASSERT_TRUE(keys.ok());
    ASSERT_EQ(keys->client_to_server.size(), 32u);
    ASSERT_EQ(keys->server_to_client.size(), 32u);
    auto want = Sp800108ViaOpenSslKbkdf(full, L("SMBC2SCipherKey"), H(kAnatomyPreauth), 256);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(keys->client_to_server, *want);
    // Signing stays 128-bit from the 16-byte SessionKey.
    auto sign =
        Sp800108ViaOpenSslKbkdf(SmbSessionKey(full), L("SMBSigningKey"), H(kAnatomyPreauth), 128);
    ASSERT_TRUE(sign.ok());
    EXPECT_EQ(keys->signing, *sign);
  }
}

TEST(Sp800108, RejectsBadArguments) {
  EXPECT_EQ(Sp800108HmacSha256(Bytes(), L("x"), L("y"), 128).status().code(),
            common::Code::kInvalidArgument);
  EXPECT_EQ(Sp800108HmacSha256(H("00"), L("x"), L("y"), 100).status().code(),
            common::Code::kInvalidArgument);
  EXPECT_EQ(DeriveSmb311Keys(H("00"), H("0011"), CipherId::kAes128Gcm).status().code(),
            common::Code::kInvalidArgument);
}

// [ANATOMY] The final SESSION_SETUP response of the SMB 3.1.1 example is
// signed (AES-128-CMAC, SMB 3.1.1 without signing negotiation) with the
// SigningKey derived above; its signature is EBE146DA120BA25FC3376A49DFE31BC1.
const char kSignedSessionSetupResponse[] =
    "FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
    "1900000000100000EBE146DA120BA25FC3376A49DFE31BC10900000048001D00A11B3019A0030A01"
    "00A3120410010000003B453CDC3524164200000000";

TEST(Signing, MicrosoftAesCmacVector) {
  auto signer = Signer::Create(SigningAlgorithm::kAesCmac, H("73FE7A9A77BEF0BDE49C650D8CCB5F76"));
  ASSERT_TRUE(signer.ok()) << signer.status().ToString();
  Bytes message = H(kSignedSessionSetupResponse);
  uint8_t sig[16];
  ASSERT_TRUE((*signer)->Compute(message, sig).ok());
  EXPECT_EQ(Up(ByteView(sig, 16)), "EBE146DA120BA25FC3376A49DFE31BC1");
  EXPECT_TRUE((*signer)->Verify(message).ok());
  // Re-signing from a zeroed field reproduces the same bytes.
  Bytes resigned = message;
  std::fill(resigned.begin() + 48, resigned.begin() + 64, 0);
  ASSERT_TRUE((*signer)->Sign(resigned).ok());
  EXPECT_EQ(resigned, message);
}

// [SMBRS] AES-128-GMAC (SMB 3.1.1 with SMB2_SIGNING_CAPABILITIES): a LOGOFF
// request, MessageId 9, SessionId 0x210c2053, Flags SIGNED | priority 1.
// smb-rs states the signature as the little-endian u128
// 0x28ebd443faf95c8aab512f813c4b2376, i.e. these 16 bytes on the wire.
const char kGmacLogoffRequest[] =
    "FE534D4240000100000000000200010018000000000000000900000000000000"
    "000000000000000053200C210000000076234B3C812F51AB8A5CF9FA43D4EB28"
    "04000000";

TEST(Signing, PublishedAesGmacVector) {
  auto signer = Signer::Create(SigningAlgorithm::kAesGmac, H("AC36E9543CD888F0A84123E46BB2A0D7"));
  ASSERT_TRUE(signer.ok()) << signer.status().ToString();
  Bytes message = H(kGmacLogoffRequest);
  ASSERT_EQ(message.size(), 68u);
  uint8_t sig[16];
  ASSERT_TRUE((*signer)->Compute(message, sig).ok());
  EXPECT_EQ(Up(ByteView(sig, 16)), "76234B3C812F51AB8A5CF9FA43D4EB28");
  EXPECT_TRUE((*signer)->Verify(message).ok());
  Bytes resigned = message;
  std::fill(resigned.begin() + 48, resigned.begin() + 64, 0);
  ASSERT_TRUE((*signer)->Sign(resigned).ok());
  EXPECT_EQ(resigned, message);
  // The nonce is the MessageId: the same bytes under MessageId 10 are not
  // validly signed.
  Bytes other_id = message;
  other_id[24] = 10;
  EXPECT_EQ((*signer)->Verify(other_id).code(), common::Code::kAuthFailed);
}

// [ENC30] WRITE request encryption and READ response decryption, AES-128-CCM.
const char kEnc30WritePlain[] =
    "FE534D4240000100000000000900400008000000000000000400000000000000"
    "FFFE0000010000001100001400E4080000000000000000000000000000000000"
    "3100700017000000000000000000000015010000390000020100000039020000"
    "00000000000000007000000000000000536D623320656E6372797074696F6E20"
    "74657374696E67";
const char kEnc30WriteTransformed[] =
    "FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A"
    "744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5"
    "2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4"
    "4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5"
    "AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6"
    "C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB";
const char kEnc30ReadResponseTransformed[] =
    "FD534D42ABD518B68C2F04D7879F482B689EB83F870000000000000011000014"
    "00E4080067000000000001001100001400E40800493D6FE2BDBEB435CF5F5469"
    "70C7BB57BF20E713C75A3D045507E0D68E5C0346659D6FFB8AC1504A786CA2BB"
    "89C9E7FE4F313E910A04180D2D0EA7DF636329E5A3285984500EF86FE9D55DA4"
    "FAB9531CFDD4C551D47F3C73124BB4590A45052B694048B991CCF5";
const char kEnc30ReadResponsePlain[] =
    "FE534D4240000100000000000800210009000000000000000500000000000000"
    "FFFE0000010000001100001400E4080000000000000000000000000000000000"
    "11005000170000000000000000000000536D623320656E6372797074696F6E20"
    "74657374696E67";
constexpr uint64_t kEnc30SessionId = 0x8e40014000011ull;

TEST(Encryption, MicrosoftSmb30AesCcmWriteRequest) {
  auto enc = Encryptor::Create(CipherId::kAes128Ccm, H("261B72350558F2E9DCF613070383EDBF"),
                               kEnc30SessionId);
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  const Bytes nonce = H("66E69A111892584FB5ED524A744DA3EE");
  const Bytes plain = H(kEnc30WritePlain);
  Bytes wire;
  ASSERT_TRUE((*enc)->SealWithNonce(nonce.data(), {plain}, &wire).ok());
  EXPECT_EQ(Up(wire), kEnc30WriteTransformed);
  // The same message laid out as fixed part + data (as the legs do) gives
  // the same bytes.
  Bytes split;
  ASSERT_TRUE((*enc)
                  ->SealWithNonce(nonce.data(),
                                  {ByteView(plain).first(112), ByteView(plain).subspan(112)},
                                  &split)
                  .ok());
  EXPECT_EQ(split, wire);
  auto dec = Decryptor::Create(CipherId::kAes128Ccm, H("261B72350558F2E9DCF613070383EDBF"),
                               kEnc30SessionId);
  ASSERT_TRUE(dec.ok());
  Bytes opened;
  ASSERT_TRUE((*dec)->Open(H(kEnc30WriteTransformed), &opened).ok());
  EXPECT_EQ(opened, plain);
}

TEST(Encryption, MicrosoftSmb30AesCcmReadResponse) {
  auto dec = Decryptor::Create(CipherId::kAes128Ccm, H("8FE2B57EC34D2DB5B1A9727F526BBDB5"),
                               kEnc30SessionId);
  ASSERT_TRUE(dec.ok());
  Bytes opened;
  auto s = (*dec)->Open(H(kEnc30ReadResponseTransformed), &opened);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Up(opened), kEnc30ReadResponsePlain);
  auto span = ParseReadResponse(opened);
  ASSERT_TRUE(span.ok()) << span.status().ToString();
  EXPECT_EQ(std::string(opened.begin() + span->offset, opened.end()), "Smb3 encryption testing");
}

// [ENC311] AES-128-GCM.
const char kEnc311WritePlain[] =
    "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
    "25000000001000000000000000000000000000000000000031007000170000000000000000000000"
    "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"
    "72797074696F6E2074657374696E67";
const char kEnc311WriteTransformed[] =
    "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
    "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"
    "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"
    "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"
    "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8";
const char kEnc311ReadResponseTransformed[] =
    "FD534D427F714B3B9D8FA1198584E71C2BAA1CB6E16831DD2E8EB7B4000000000000000067000000"
    "000001002500000000100000FECEDF4D03BB11A6CC5D8A53BE33D6D8701986342B4197D306E16F9C"
    "BB218E92F7F8281F51CE68BB85A20D87DE90EBBF80538066D1C37513C0A58D70936D537B624F5500"
    "202A612B6CD30D448A82791A0B2E049ED512AFAEFB06E98AB3D6F931D7D50DB2DBD36A";
const char kEnc311ReadResponsePlain[] =
    "FE534D4240000100000000000800010001000000000000000600000000000000FFFE000001000000"
    "25000000001000000000000000000000000000000000000011005000170000000000000000000000"
    "536D623320656E6372797074696F6E2074657374696E67";
constexpr uint64_t kEnc311SessionId = 0x100000000025ull;

TEST(Encryption, MicrosoftSmb311AesGcmWriteRequest) {
  auto enc = Encryptor::Create(CipherId::kAes128Gcm, H("A2F5E80E5D59103034F32E52F698E5EC"),
                               kEnc311SessionId);
  ASSERT_TRUE(enc.ok());
  const Bytes nonce = H("C7D6822D269CAF48904C664C00000000");
  const Bytes plain = H(kEnc311WritePlain);
  Bytes wire;
  ASSERT_TRUE((*enc)
                  ->SealWithNonce(nonce.data(),
                                  {ByteView(plain).first(112), ByteView(plain).subspan(112)}, &wire)
                  .ok());
  EXPECT_EQ(Up(wire), kEnc311WriteTransformed);
  auto dec = Decryptor::Create(CipherId::kAes128Gcm, H("A2F5E80E5D59103034F32E52F698E5EC"),
                               kEnc311SessionId);
  ASSERT_TRUE(dec.ok());
  Bytes opened;
  ASSERT_TRUE((*dec)->Open(wire, &opened).ok());
  EXPECT_EQ(opened, plain);
  auto span = ParseWriteRequest(opened);
  ASSERT_TRUE(span.ok()) << span.status().ToString();
  EXPECT_EQ(span->offset, kWriteDataOffset);
  EXPECT_EQ(span->length, 23u);
}

TEST(Encryption, MicrosoftSmb311AesGcmReadResponse) {
  auto dec = Decryptor::Create(CipherId::kAes128Gcm, H("748C50868C90F302962A5C35F5F9A8BF"),
                               kEnc311SessionId);
  ASSERT_TRUE(dec.ok());
  Bytes opened;
  auto s = (*dec)->Open(H(kEnc311ReadResponseTransformed), &opened);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Up(opened), kEnc311ReadResponsePlain);
}

// Our message builder produces the blog's WRITE request byte for byte when
// given its fields (FileId 0x400000006/0x400000001, MessageId 5, TreeId 1,
// credits 1, SessionId 0x100000000025), except for the flags the blog's
// client set (SIGNED) and the CreditCharge.
TEST(Message, BuildWriteRequestMatchesTheBlogShape) {
  HeaderFields h;
  h.command = Command::kWrite;
  h.message_id = 5;
  h.session_id = kEnc311SessionId;
  h.flags = kFlagSigned;
  h.credits = 1;
  Bytes built;
  BuildWriteRequest(h, common::AsBytes("Smb3 encryption testing"), &built);
  Bytes want = H(kEnc311WritePlain);
  ASSERT_EQ(built.size(), want.size());
  EXPECT_EQ(Up(built), Up(want));
}

}  // namespace
}  // namespace secmode::smb
