// Signing: the three algorithms against independent one-shot computations,
// GMAC nonce construction, compound chains, and bad input (wrong or zero
// signature, MessageId reuse).
#include "smb/signing.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/mman.h>

#include <climits>
#include <string>

#include "common/openssl_handles.h"
#include "smb/legs.h"
#include "smb/message.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

const Bytes kKey = common::PatternBytes(16, 11);

Bytes Message(uint64_t message_id, uint32_t flags = 0, Command command = Command::kWrite,
              size_t data = 100) {
  HeaderFields h;
  h.command = command;
  h.flags = flags;
  h.message_id = message_id;
  h.session_id = 0x1234;
  Bytes m;
  BuildWriteRequest(h, common::PatternBytes(data, static_cast<uint32_t>(message_id)), &m);
  return m;
}

Bytes ZeroedSignature(Bytes m) {
  std::fill(m.begin() + 48, m.begin() + 64, 0);
  return m;
}

std::unique_ptr<Signer> Make(SigningAlgorithm a) {
  auto s = Signer::Create(a, kKey);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// Independent GMAC: OpenSSL one-shot GCM with the nonce built here.
Bytes OneShotGmac(ByteView m, uint8_t role_and_cancel) {
  uint8_t nonce[12] = {};
  memcpy(nonce, m.data() + 24, 8);
  nonce[8] = role_and_cancel;
  common::OsslPtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  uint8_t tag[16];
  EXPECT_EQ(EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr, kKey.data(), nonce), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx.get(), nullptr, &len, m.data(), static_cast<int>(m.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx.get(), tag, &len), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16, tag), 1);
  return Bytes(tag, tag + 16);
}

TEST(Signing, HmacSha256IsTheFirst16BytesOfHmacOverTheZeroedMessage) {
  auto s = Make(SigningAlgorithm::kHmacSha256);
  Bytes m = Message(3);
  ASSERT_TRUE(s->Sign(m).ok());
  EXPECT_TRUE(Le32(m.data() + 16) & kFlagSigned);
  Bytes z = ZeroedSignature(m);
  uint8_t full[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), kKey.data(), static_cast<int>(kKey.size()), z.data(), z.size(), full, &len);
  EXPECT_EQ(Bytes(m.begin() + 48, m.begin() + 64), Bytes(full, full + 16));
  EXPECT_TRUE(s->Verify(m).ok());
}

TEST(Signing, GmacNonceIsMessageIdPlusRoleAndCancelBits) {
  auto s = Make(SigningAlgorithm::kAesGmac);
  Bytes req = Message(77);
  ASSERT_TRUE(s->Sign(req).ok());
  EXPECT_EQ(Bytes(req.begin() + 48, req.begin() + 64), OneShotGmac(ZeroedSignature(req), 0));
  Bytes resp = Message(77, kFlagServerToRedir);
  ASSERT_TRUE(s->Sign(resp).ok());
  EXPECT_EQ(Bytes(resp.begin() + 48, resp.begin() + 64), OneShotGmac(ZeroedSignature(resp), 1));
  Bytes cancel = Message(77, 0, Command::kCancel);
  ASSERT_TRUE(s->Sign(cancel).ok());
  EXPECT_EQ(Bytes(cancel.begin() + 48, cancel.begin() + 64),
            OneShotGmac(ZeroedSignature(cancel), 2));
  EXPECT_TRUE(s->Verify(req).ok());
  EXPECT_TRUE(s->Verify(resp).ok());
}

class SigningBadInput : public ::testing::TestWithParam<SigningAlgorithm> {};

TEST_P(SigningBadInput, WrongSignatureIsRejected) {
  auto s = Make(GetParam());
  Bytes m = Message(5);
  ASSERT_TRUE(s->Sign(m).ok());
  for (size_t bit = 0; bit < m.size() * 8; bit += 7) {
    Bytes bad = m;
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto st = s->Verify(bad);
    ASSERT_FALSE(st.ok()) << bit;
    EXPECT_EQ(st.code(), Code::kAuthFailed) << bit;
  }
  Bytes bad = m;
  bad[50] ^= 0x80;
  auto st = s->Verify(bad);
  EXPECT_NE(st.message().find("signature mismatch (MessageId 5)"), std::string::npos)
      << st.message();
}

TEST_P(SigningBadInput, ZeroSignatureIsRejected) {
  auto s = Make(GetParam());
  Bytes m = Message(5);
  ASSERT_TRUE(s->Sign(m).ok());
  Bytes z = ZeroedSignature(m);
  auto st = s->Verify(z);
  EXPECT_EQ(st.code(), Code::kAuthFailed);
  EXPECT_NE(st.message().find("all zero"), std::string::npos) << st.message();
}

TEST_P(SigningBadInput, UnsignedOrTruncatedMessageIsRejected) {
  auto s = Make(GetParam());
  Bytes m = Message(5);
  auto st = s->Verify(m);
  EXPECT_EQ(st.code(), Code::kAuthFailed);
  EXPECT_NE(st.message().find("not signed"), std::string::npos);
  st = s->Verify(ByteView(m).first(63));
  EXPECT_EQ(st.code(), Code::kCorrupt);
  EXPECT_NE(st.message().find("63 bytes"), std::string::npos);
}

TEST_P(SigningBadInput, OtherKeyIsRejected) {
  auto s = Make(GetParam());
  Bytes other = kKey;
  other[15] ^= 1;
  auto t = Signer::Create(GetParam(), other);
  ASSERT_TRUE(t.ok());
  Bytes m = Message(5);
  ASSERT_TRUE(s->Sign(m).ok());
  EXPECT_EQ((*t)->Verify(m).code(), Code::kAuthFailed);
}

// A message signed in two pieces (a WRITE's fixed part, then its data where
// it lies) carries the signature of the whole, and verifies as the whole.
TEST_P(SigningBadInput, TwoPiecesSignAsTheWhole) {
  auto signer = Make(GetParam());
  for (size_t data : {size_t{0}, size_t{1}, size_t{4096}, size_t{70000}}) {
    Bytes whole = Message(9, 0, Command::kWrite, data);
    Bytes head(whole.begin(), whole.begin() + kWriteDataOffset);
    const common::ByteView tail = common::ByteView(whole).subspan(kWriteDataOffset);
    ASSERT_TRUE(signer->Sign(head, tail).ok());
    ASSERT_TRUE(signer->Sign(whole).ok());
    EXPECT_TRUE(std::equal(head.begin(), head.end(), whole.begin())) << data << " data bytes";
    Bytes joined = head;
    joined.insert(joined.end(), tail.begin(), tail.end());
    EXPECT_TRUE(signer->Verify(joined).ok()) << data;
    // A changed data byte is noticed through the tail too.
    if (data > 0) {
      Bytes other(tail.begin(), tail.end());
      other[data / 2] ^= 1;
      Bytes head2(whole.begin(), whole.begin() + kWriteDataOffset);
      ASSERT_TRUE(signer->Sign(head2, other).ok());
      EXPECT_FALSE(std::equal(head2.begin() + 48, head2.begin() + 64, whole.begin() + 48));
    }
  }
}

TEST_P(SigningBadInput, CompoundChainIsSignedPerMessage) {
  auto s = Make(GetParam());
  // Three messages, each padded to 8 bytes, linked by NextCommand.
  Bytes parts[3] = {Message(10, 0, Command::kCreate, 51), Message(11, 0, Command::kWrite, 30),
                    Message(12, 0, Command::kClose, 7)};
  Bytes chain;
  std::vector<size_t> starts;
  for (int i = 0; i < 3; ++i) {
    if (i < 2) parts[i].resize((parts[i].size() + 7) / 8 * 8, 0);
    if (i < 2) PutLe32(parts[i].data() + 20, static_cast<uint32_t>(parts[i].size()));
    starts.push_back(chain.size());
    chain.insert(chain.end(), parts[i].begin(), parts[i].end());
  }
  ASSERT_TRUE(s->SignChain(chain).ok());
  ASSERT_TRUE(s->VerifyChain(chain).ok());
  for (int i = 0; i < 3; ++i) {
    Bytes alone = parts[i];
    ASSERT_TRUE(s->Sign(alone).ok());
    EXPECT_EQ(Bytes(chain.begin() + starts[i], chain.begin() + starts[i] + alone.size()), alone)
        << "message " << i << " of the chain is not signed on its own";
  }
  Bytes bad = chain;
  bad[starts[1] + 70] ^= 1;
  auto st = s->VerifyChain(bad);
  EXPECT_EQ(st.code(), Code::kAuthFailed);
  EXPECT_NE(st.message().find("compound message 1"), std::string::npos) << st.message();
  bad = chain;
  PutLe32(bad.data() + 20, 12);  // NextCommand not aligned / too small
  st = s->VerifyChain(bad);
  EXPECT_EQ(st.code(), Code::kCorrupt);
  EXPECT_NE(st.message().find("NextCommand 12"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, SigningBadInput,
                         ::testing::Values(SigningAlgorithm::kHmacSha256,
                                           SigningAlgorithm::kAesCmac, SigningAlgorithm::kAesGmac),
                         [](const auto& info) {
                           std::string n = SigningAlgorithmName(info.param);
                           for (auto& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Signing, KeyLengthIsChecked) {
  EXPECT_EQ(Signer::Create(SigningAlgorithm::kAesCmac, Bytes(15, 1)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Signer::Create(SigningAlgorithm::kAesGmac, Bytes(32, 1)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Signer::Create(SigningAlgorithm::kHmacSha256, Bytes()).status().code(),
            Code::kInvalidArgument);
}

// GMAC's nonce is the MessageId, so a repeated MessageId under one key is a
// repeated nonce. The receiver detects it: every opener keeps a
// MessageIdWindow and refuses an id it has already accepted, whether the
// message is a replay of the same bytes or a new message that reuses the id.
TEST(Signing, GmacMessageIdReuseIsDetectedByTheReceiver) {
  SessionKeys keys;
  keys.signing = common::SecretBytes(kKey);
  const SmbMode mode = SigningMode(SigningAlgorithm::kAesGmac);
  auto a = MakeSmbAssociation(mode, keys, 0x1234);
  ASSERT_TRUE(a.ok());
  Bytes wire, out;
  ASSERT_TRUE(a->client_seal->Seal(common::PatternBytes(64, 1), &wire).ok());
  ASSERT_TRUE(a->server_open->Open(wire, &out).ok());
  // Replay of the same message.
  auto st = a->server_open->Open(wire, &out);
  EXPECT_EQ(st.code(), Code::kReplay);
  EXPECT_NE(st.message().find("MessageId 1 was already used"), std::string::npos) << st.message();
  // A different message, validly signed, reusing MessageId 1.
  auto signer = Signer::Create(SigningAlgorithm::kAesGmac, kKey);
  ASSERT_TRUE(signer.ok());
  HeaderFields h;
  h.message_id = 1;
  h.session_id = 0x1234;
  Bytes reuse;
  BuildWriteRequest(h, common::PatternBytes(64, 2), &reuse);
  ASSERT_TRUE((*signer)->Sign(reuse).ok());
  EXPECT_EQ(a->server_open->Open(reuse, &out).code(), Code::kReplay);
  // The next fresh id is fine.
  ASSERT_TRUE(a->client_seal->Seal(common::PatternBytes(64, 3), &wire).ok());
  EXPECT_TRUE(a->server_open->Open(wire, &out).ok());
}

// `size` bytes of zeros that cost no memory until written (an anonymous
// MAP_NORESERVE mapping: untouched pages read as the shared zero page).
class LazyZeros {
 public:
  explicit LazyZeros(size_t size) : size_(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) data_ = static_cast<uint8_t*>(p);
  }
  ~LazyZeros() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  LazyZeros(const LazyZeros&) = delete;
  LazyZeros& operator=(const LazyZeros&) = delete;
  common::MutableByteView view() { return common::MutableByteView(data_, size_); }
  bool ok() const { return data_ != nullptr; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_;
};

// OpenSSL takes int lengths. A message whose body length does not fit one
// must be refused, not signed over the truncated length (2^32 + 36 bytes of
// body would have been signed as 36, its tail left unprotected).
TEST(Signing, MessagesLongerThanIntMaxAreRefusedNotTruncated) {
  LazyZeros big((size_t{1} << 32) + kHeaderSize + 36);
  ASSERT_TRUE(big.ok()) << "mmap of 4 GiB (MAP_NORESERVE) failed";
  common::MutableByteView m = big.view();
  PutLe32(m.data() + 16, kFlagSigned);
  m[48] = 1;  // a non-zero signature, so Verify gets to the length check
  for (SigningAlgorithm a :
       {SigningAlgorithm::kHmacSha256, SigningAlgorithm::kAesCmac, SigningAlgorithm::kAesGmac}) {
    auto signer = Make(a);
    ASSERT_NE(signer, nullptr);
    uint8_t sig[16];
    auto s = signer->Compute(m, sig);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << SigningAlgorithmName(a) << ": " << s.ToString();
    EXPECT_NE(s.message().find("larger than a signature here can cover"), std::string::npos)
        << s.message();
    EXPECT_EQ(signer->Verify(m).code(), Code::kInvalidArgument) << SigningAlgorithmName(a);
    EXPECT_EQ(signer->Sign(m).code(), Code::kInvalidArgument) << SigningAlgorithmName(a);
    // One byte over INT_MAX is the first length refused.
    EXPECT_EQ(signer->Compute(m.first(size_t{INT_MAX} + 1), sig).code(), Code::kInvalidArgument);
  }
}

// At INT_MAX bytes GMAC signs the whole message: its last byte counts.
TEST(Signing, GmacCoversAMessageOfIntMaxBytesToItsLastByte) {
  LazyZeros big(size_t{INT_MAX});
  ASSERT_TRUE(big.ok());
  common::MutableByteView m = big.view();
  auto signer = Make(SigningAlgorithm::kAesGmac);
  ASSERT_NE(signer, nullptr);
  ASSERT_TRUE(signer->Sign(m).ok());
  EXPECT_TRUE(signer->Verify(m).ok());
  m[m.size() - 1] ^= 1;
  EXPECT_EQ(signer->Verify(m).code(), Code::kAuthFailed);
}

TEST(MessageIdWindow, AcceptsOutOfOrderWithinTheWindowOnly) {
  MessageIdWindow w(64);
  EXPECT_TRUE(w.Accept(10).ok());
  EXPECT_TRUE(w.Accept(12).ok());
  EXPECT_TRUE(w.Accept(11).ok());
  EXPECT_EQ(w.Accept(11).code(), Code::kReplay);
  EXPECT_TRUE(w.Accept(200).ok());
  auto st = w.Accept(100);
  EXPECT_EQ(st.code(), Code::kReplay);
  EXPECT_NE(st.message().find("below the window"), std::string::npos);
  EXPECT_TRUE(w.Accept(199).ok());
  EXPECT_EQ(w.Accept(200).code(), Code::kReplay);
  EXPECT_TRUE(w.Accept(137).ok());  // 200 - 137 = 63 < 64
}

}  // namespace
}  // namespace secmode::smb
