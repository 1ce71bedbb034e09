// libFuzzer target: SmbClient's receive path (smb/client.h), the bytes a
// server sends on a session that is set up: the NetBIOS-style length
// prefix, the SMB2 header, the TRANSFORM_HEADER decrypted under the
// session's key, the signature verified, interim (async pending) responses
// waited through, compound and unexpected responses refused, then Check
// and ReadData on each completion. The client is made by
// SmbClient::ReceiveOnly over one end of a socketpair; the input's stream
// is written into the other end, which is then shut (so a short stream
// ends in "the server closed the connection", never a wait).
//
// Keys: derived once per mode (smb/legs.h DeriveKeysForMode) from a fixed
// GSS key and preauth hash; the target signs and seals the responses the
// input describes with them, as the server would, so the seeds (written by
// fuzz_corpus_gen) are descriptions and need no keys.
//
// Input (FuzzReader, total): mode (byte: the 8 modes, smb-plain first),
// number of requests in flight (1..8) and their commands (a byte each:
// READ, WRITE, QUERY_INFO, CREATE, CLOSE), then items until the input ends
// (at most 64):
//   0  a response: request index (byte; 0xff: MessageId 0x77 none sent),
//      NTSTATUS (32), flags byte (bit 0 SERVER_TO_REDIR, 1 ASYNC, 2 sign,
//      3 seal, 4 a NextCommand, 5 another command), credits (16), body of
//      a 16-bit length; framed with its length;
//   1  raw stream bytes (16-bit length, then the bytes);
//   2  a length prefix alone (32 bits, as given).
// What must hold, or the target crashes: every completion is for a request
// in flight, with its command; on an encrypting session every completion
// was decrypted, on a signing one verified; every error names its cause.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/socket.h"
#include "smb/client.h"
#include "smb/client_messages.h"
#include "smb/legs.h"
#include "smb/message.h"
#include "smb/signing.h"
#include "smb/transform.h"
#include "tests/fuzz/fuzz_io.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
using secmode::fuzz::FuzzReader;
using secmode::fuzz::Require;
namespace smb = secmode::smb;

constexpr uint64_t kSession = 0x0000100000000041ull;
constexpr size_t kMaxStream = 128 << 10;
const char* const kModes[] = {"smb-plain",           "smb-sign-hmac-sha256", "smb-sign-aes-cmac",
                              "smb-sign-aes-gmac",   "smb-enc-aes-128-ccm",  "smb-enc-aes-128-gcm",
                              "smb-enc-aes-256-ccm", "smb-enc-aes-256-gcm"};
constexpr smb::Command kCommands[] = {smb::Command::kRead, smb::Command::kWrite,
                                      smb::Command::kQueryInfo, smb::Command::kCreate,
                                      smb::Command::kClose};

// What the server side of a mode holds: the session's keys, its signer and
// (encrypting) its encryptor, made once.
struct ModeKeys {
  smb::SmbMode mode;
  uint16_t dialect = smb::kDialect311;
  smb::SessionKeys keys;
  std::unique_ptr<smb::Signer> signer;
  std::unique_ptr<smb::Encryptor> encryptor;
};

void Fail(const char* what, const secmode::common::Status& s) {
  fprintf(stderr, "smb_client_fuzz fixture: %s: %s\n", what, s.ToString().c_str());
  abort();
}

ModeKeys* g_modes = nullptr;

void MakeModes() {
  g_modes = new ModeKeys[8];
  const Bytes gss_key(32, 0x5c), preauth(64, 0xa3);
  for (int i = 0; i < 8; ++i) {
    ModeKeys& m = g_modes[i];
    auto mode = smb::ParseSmbModeName(kModes[i]);
    if (!mode.ok()) Fail(kModes[i], mode.status());
    m.mode = *mode;
    m.dialect = smb::SmbModeDialect(m.mode);
    const bool hmac = m.dialect == smb::kDialect210;
    // smb-plain still has a session's keys (it signs TREE_CONNECT).
    const smb::SmbMode keyed = m.mode.protection == smb::Protection::kPlain
                                   ? smb::SigningMode(smb::SigningAlgorithm::kAesCmac)
                                   : m.mode;
    auto keys = smb::DeriveKeysForMode(keyed, gss_key, preauth);
    if (!keys.ok()) Fail(kModes[i], keys.status());
    m.keys = *keys;
    const smb::SigningAlgorithm alg = hmac ? smb::SigningAlgorithm::kHmacSha256
                                      : m.mode.protection == smb::Protection::kSign
                                          ? m.mode.signing->id
                                          : smb::SigningAlgorithm::kAesCmac;
    auto signer = smb::Signer::Create(alg, m.keys.signing);
    if (!signer.ok()) Fail(kModes[i], signer.status());
    m.signer = std::move(signer).value();
    if (m.mode.protection == smb::Protection::kEncrypt) {
      auto enc = smb::Encryptor::Create(m.mode.cipher->id, m.keys.server_to_client, kSession);
      if (!enc.ok()) Fail(kModes[i], enc.status());
      m.encryptor = std::move(enc).value();
    }
  }
}

// Item 0: a response the input describes, signed or sealed as it says.
void AppendResponse(FuzzReader& in, ModeKeys& m, const std::vector<smb::SmbClient::Sent>& sent,
                    Bytes* stream) {
  const uint8_t which = in.U8();
  smb::HeaderFields h;
  h.session_id = kSession;
  if (which == 0xff) {
    h.message_id = 0x77;
    h.command = smb::Command::kRead;
  } else {
    const smb::SmbClient::Sent& s = sent[which % sent.size()];
    h.message_id = s.message_id;
    h.command = s.command;
  }
  h.status = in.U32();
  const uint8_t flags = in.U8();
  h.flags = (flags & 1 ? smb::kFlagServerToRedir : 0) | (flags & 2 ? smb::kFlagAsync : 0);
  if (flags & 16) h.next_command = smb::kHeaderSize + 8;
  if (flags & 32) h.command = kCommands[(static_cast<int>(h.command) + 1) % 5];
  h.credits = in.U16();
  Bytes message(smb::kHeaderSize);
  smb::WriteHeader(h, message.data());
  ByteView body = in.Bytes(in.U16());
  message.insert(message.end(), body.begin(), body.end());
  if (flags & 4) (void)m.signer->Sign(secmode::common::MutableByteView(message));
  if ((flags & 8) && m.encryptor) {
    Bytes wire;
    if (!m.encryptor->Seal({ByteView(message)}, &wire).ok()) return;
    smb::AppendFramed(wire, stream);
    return;
  }
  smb::AppendFramed(message, stream);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  MakeModes();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzReader in(ByteView(data, size));
  const int mode_index = in.U8() % 8;
  ModeKeys& m = g_modes[mode_index];
  std::vector<smb::SmbClient::Sent> sent(in.U8() % 8 + 1);
  for (size_t i = 0; i < sent.size(); ++i) {
    sent[i].message_id = 2 * i + 5;
    sent[i].command = kCommands[in.U8() % 5];
  }
  Bytes stream;
  for (int items = 0; items < 64 && !in.Done() && stream.size() < kMaxStream; ++items) {
    switch (in.U8() % 3) {
      case 0: AppendResponse(in, m, sent, &stream); break;
      case 1: {
        ByteView raw = in.Bytes(in.U16());
        stream.insert(stream.end(), raw.begin(), raw.end());
        break;
      }
      default: {
        const uint32_t v = in.U32();
        for (int s = 24; s >= 0; s -= 8) stream.push_back(static_cast<uint8_t>(v >> s));
        break;
      }
    }
  }
  if (stream.size() > kMaxStream) stream.resize(kMaxStream);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) abort();
  secmode::common::Fd server(sv[1]);
  const int buf = 1 << 20;
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  smb::SmbClientConfig config;
  config.mode = m.mode;
  config.timeout_ms = 1000;
  auto client = smb::SmbClient::ReceiveOnly(secmode::common::Fd(sv[0]), config, m.dialect, kSession,
                                            m.keys, sent);
  if (!client.ok()) Fail("ReceiveOnly", client.status());
  // As much of the stream as the socket takes goes in before the client
  // reads, then the server's end is shut: no read ever waits.
  size_t off = 0;
  while (off < stream.size()) {
    const ssize_t n =
        send(server.get(), stream.data() + off, stream.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  shutdown(server.get(), SHUT_WR);

  smb::SmbClient& c = **client;
  while (c.in_flight() > 0) {
    const uint64_t decrypted = c.counters().responses_decrypted;
    const uint64_t verified = c.counters().responses_verified;
    auto got = c.Receive(secmode::common::Deadline::AfterMs(1000));
    if (!got.ok()) {
      Require(!got.status().message().empty());
      break;
    }
    bool known = false;
    for (const smb::SmbClient::Sent& s : sent) {
      known |= s.message_id == got->message_id && s.command == got->command;
    }
    Require(known);
    if (m.mode.protection == smb::Protection::kEncrypt) {
      Require(c.counters().responses_decrypted > decrypted);
    } else if (c.signs()) {
      Require(c.counters().responses_verified > verified);
    }
    (void)smb::SmbClient::Check(*got, 16);
    if (got->command == smb::Command::kRead) (void)smb::SmbClient::ReadData(*got);
  }
  return 0;
}
