// Fuzz target for the SMB parsers that face the network: TRANSFORM_HEADER
// parsing and decryption (every cipher), signature verification of single
// messages and compound chains (every algorithm), the SMB2 header and
// READ/WRITE parsers, the legs' openers, and the client's parsers of a
// real server's responses (smb/client_messages.h: NEGOTIATE with its 3.1.1
// contexts, SESSION_SETUP, TREE_CONNECT, CREATE, WRITE, QUERY_INFO). Any input must give an OK or a
// Status, never a crash, leak or undefined behaviour.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/bytes.h"
#include "smb/client_messages.h"
#include "smb/legs.h"
#include "smb/message.h"
#include "smb/signing.h"
#include "smb/transform.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
namespace smb = secmode::smb;

constexpr uint64_t kSession = 0x0000100000000025ull;

// A response of `command` with `body` after the header (offsets in the
// body count from the header, as on the wire).
Bytes Response(smb::Command command, const Bytes& body) {
  Bytes m(smb::kHeaderSize);
  smb::HeaderFields h;
  h.command = command;
  h.flags = smb::kFlagServerToRedir;
  h.session_id = kSession;
  smb::WriteHeader(h, m.data());
  m.insert(m.end(), body.begin(), body.end());
  return m;
}

// Valid responses of a server, one per parser, for the mutations to start
// from: a 3.1.1 NEGOTIATE with a security buffer and preauth, cipher and
// signing contexts; SESSION_SETUP with a token; TREE_CONNECT; CREATE;
// WRITE; QUERY_INFO with FileStandardInformation.
std::vector<Bytes> ServerResponses() {
  std::vector<Bytes> out;
  Bytes neg(64 + 8, 0);
  smb::PutLe16(&neg[0], 65);
  smb::PutLe16(&neg[4], smb::kDialect311);
  smb::PutLe16(&neg[6], 3);             // NegotiateContextCount
  smb::PutLe32(&neg[32], 1 << 20);      // MaxReadSize
  smb::PutLe32(&neg[36], 1 << 20);      // MaxWriteSize
  smb::PutLe16(&neg[56], 64 + 64);      // SecurityBufferOffset
  smb::PutLe16(&neg[58], 8);            // SecurityBufferLength
  smb::PutLe32(&neg[60], 64 + 64 + 8);  // NegotiateContextOffset
  const uint8_t contexts[] = {1, 0, 38, 0, 0, 0, 0, 0, 1, 0, 32, 0, 1, 0};  // preauth, SHA-512
  neg.insert(neg.end(), contexts, contexts + sizeof contexts);
  neg.resize(neg.size() + 32);                                    // salt
  neg.resize((neg.size() + 7) & ~size_t{7});                      // 8-aligned
  const uint8_t cipher[] = {2, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2, 0};  // AES-128-GCM
  neg.insert(neg.end(), cipher, cipher + sizeof cipher);
  neg.resize((neg.size() + 7) & ~size_t{7});
  const uint8_t signing[] = {8, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2, 0};  // AES-GMAC
  neg.insert(neg.end(), signing, signing + sizeof signing);
  out.push_back(Response(smb::Command::kNegotiate, neg));
  Bytes setup(8 + 16, 0x61);
  smb::PutLe16(&setup[0], 9);
  smb::PutLe16(&setup[2], 0);
  smb::PutLe16(&setup[4], 64 + 8);
  smb::PutLe16(&setup[6], 16);
  out.push_back(Response(smb::Command::kSessionSetup, setup));
  Bytes tree(16, 0);
  smb::PutLe16(&tree[0], 16);
  out.push_back(Response(smb::Command::kTreeConnect, tree));
  Bytes create(88, 0);
  smb::PutLe16(&create[0], 89);
  out.push_back(Response(smb::Command::kCreate, create));
  Bytes write(16, 0);
  smb::PutLe16(&write[0], 17);
  out.push_back(Response(smb::Command::kWrite, write));
  Bytes query(8 + 24, 0);
  smb::PutLe16(&query[0], 9);
  smb::PutLe16(&query[2], 64 + 8);
  smb::PutLe32(&query[4], 24);
  out.push_back(Response(smb::Command::kQueryInfo, query));
  return out;
}

struct State {
  std::vector<std::unique_ptr<smb::Decryptor>> decryptors;
  std::vector<std::unique_ptr<smb::Signer>> signers;
  std::vector<secmode::common::Association> associations;
  // Valid messages the input may mutate instead of replacing (no mutation
  // gets past an AEAD tag or a signature, so without them the code after
  // the checks would never run): one transform per cipher under this
  // process's keys, a plain WRITE request, a signed one and a READ response.
  std::vector<Bytes> templates;
  State() {
    for (smb::CipherId c : {smb::CipherId::kAes128Ccm, smb::CipherId::kAes128Gcm,
                            smb::CipherId::kAes256Ccm, smb::CipherId::kAes256Gcm}) {
      auto d = smb::Decryptor::Create(c, secmode::common::PatternBytes(smb::CipherKeyBytes(c), 1),
                                      kSession);
      if (d.ok()) decryptors.push_back(std::move(*d));
      auto e = smb::Encryptor::Create(c, secmode::common::PatternBytes(smb::CipherKeyBytes(c), 1),
                                      kSession);
      Bytes msg, wire;
      smb::HeaderFields h;
      h.session_id = kSession;
      smb::BuildWriteRequest(h, secmode::common::PatternBytes(40, 3), &msg);
      if (e.ok() && (*e)->Seal({msg}, &wire).ok()) templates.push_back(wire);
    }
    for (smb::SigningAlgorithm a :
         {smb::SigningAlgorithm::kHmacSha256, smb::SigningAlgorithm::kAesCmac,
          smb::SigningAlgorithm::kAesGmac}) {
      auto s = smb::Signer::Create(a, secmode::common::PatternBytes(16, 2));
      if (s.ok()) signers.push_back(std::move(*s));
    }
    {
      smb::HeaderFields h;
      h.session_id = kSession;
      h.message_id = 7;
      Bytes msg;
      smb::BuildWriteRequest(h, secmode::common::PatternBytes(40, 4), &msg);
      templates.push_back(msg);
      if (!signers.empty() && signers.back()->Sign(msg).ok()) templates.push_back(msg);
      h.command = smb::Command::kRead;
      h.flags = smb::kFlagServerToRedir;
      smb::BuildReadResponse(h, secmode::common::PatternBytes(40, 5), &msg);
      templates.push_back(msg);
    }
    for (Bytes& r : ServerResponses()) templates.push_back(std::move(r));
    smb::SessionKeys keys;
    keys.signing = secmode::common::SecretBytes(secmode::common::PatternBytes(16, 2));
    keys.client_to_server = secmode::common::SecretBytes(secmode::common::PatternBytes(16, 1));
    keys.server_to_client = secmode::common::SecretBytes(secmode::common::PatternBytes(16, 1));
    for (const char* mode : {"smb-plain", "smb-sign-aes-gmac", "smb-enc-aes-128-gcm"}) {
      auto m = smb::ParseSmbModeName(mode);
      if (!m.ok()) continue;
      auto a = smb::MakeSmbAssociation(*m, keys, kSession);
      if (a.ok()) associations.push_back(std::move(*a));
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static State* state = new State();  // lives for the whole run
  // First byte even: the input is the message. Odd: it picks a template,
  // the second byte cuts bytes off its end, and the rest are (offset, xor)
  // pairs applied to it.
  Bytes mutated;
  ByteView in(data, size);
  if (size >= 2 && (data[0] & 1) && !state->templates.empty()) {
    mutated = state->templates[(data[0] >> 1) % state->templates.size()];
    mutated.resize(mutated.size() -
                   std::min<size_t>(mutated.size(), data[1] % 8 == 0 ? data[1] / 8 : 0));
    for (size_t i = 2; i + 1 < size && !mutated.empty(); i += 2) {
      mutated[data[i] % mutated.size()] ^= data[i + 1];
    }
    in = ByteView(mutated);
  }
  (void)smb::ParseTransformHeader(in);
  (void)smb::ParseHeader(in);
  (void)smb::ParseWriteRequest(in);
  (void)smb::ParseReadResponse(in);
  (void)smb::SplitChain(in);
  (void)smb::ParseNegotiateResponse(in);
  (void)smb::ParseSessionSetupResponse(in);
  (void)smb::ParseTreeConnectResponse(in);
  (void)smb::ParseCreateResponse(in);
  (void)smb::ParseWriteResponse(in);
  (void)smb::ParseQueryInfoResponse(in);
  (void)smb::CheckBody(in, 60, "CLOSE");
  (void)smb::DescribeError(in);

  // Reach the AEAD: put this session's id into a copy so the decryptors get
  // past the SessionId check.
  Bytes copy(in.begin(), in.end());
  if (copy.size() >= smb::kTransformHeaderSize) smb::PutLe64(copy.data() + 44, kSession);
  Bytes out;
  uint8_t head[smb::kWriteDataOffset];
  for (auto& d : state->decryptors) {
    (void)d->Open(copy, &out);
    (void)d->Open(copy, secmode::common::MutableByteView(head, size % sizeof head), &out);
  }
  for (auto& s : state->signers) {
    (void)s->Verify(in);
    (void)s->VerifyChain(in);
  }
  for (auto& a : state->associations) {
    (void)a.server_open->Open(in, &out);
    (void)a.client_open->Open(copy, &out);
  }
  return 0;
}
