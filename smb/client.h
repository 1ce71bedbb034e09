// SmbClient: an SMB2/3 client of a real server (Samba, Windows), enough to
// measure what a mode costs end to end: NEGOTIATE, a Kerberos session,
// TREE_CONNECT, then CREATE / READ / WRITE / QUERY_INFO / CLOSE on files of
// the share, and LOGOFF. Every request after SESSION_SETUP is signed or
// encrypted exactly as the mode says, with the smb/ signers and
// transforms, and every response is checked the same way.
//
// Per mode (legs.h's names):
//   smb-plain              SMB 3.1.1, requests neither signed nor encrypted
//                          (the server must not require signing), but for
//                          TREE_CONNECT, which 3.1.1 signs in every user
//                          session (MS-SMB2 3.2.4.1.1)
//   smb-sign-hmac-sha256   SMB 2.1 (the dialect whose signing that is),
//                          signing required, session key signs
//   smb-sign-aes-cmac/gmac SMB 3.1.1 with SMB2_SIGNING_CAPABILITIES naming
//                          only that algorithm, signing required
//   smb-enc-*              SMB 3.1.1 with SMB2_ENCRYPTION_CAPABILITIES naming
//                          only that cipher; every request after
//                          SESSION_SETUP in a TRANSFORM_HEADER, every
//                          response must come back in one
// A server that picks anything else is an error naming what it picked.
//
// Kerberos (MS-SMB2 3.2.5.3, MS-SPNG): the tokens are SPNEGO-wrapped krb5
// from MIT GSS-API, mutual authentication, from a ccache that must already
// hold a ticket for the server's principal (smb/samba_dc.h fetches one), so
// the KDC is not needed and the process's KRB5_CONFIG does not matter. The
// session key is GSS_C_INQ_SSPI_SESSION_KEY; SMB 3.1.1 keys come from it
// and the preauth-integrity hash of this connection's NEGOTIATE and
// SESSION_SETUP exchange (kdf.h). The final SESSION_SETUP response must be
// signed (3.x) and its signature is verified.
//
// Credits: each request asks for `credits_wanted`; a READ/WRITE of n bytes
// is charged ceil(n / 64 KiB) credits (CAP_LARGE_MTU). The file operations
// keep one request in flight; Start*/Receive keep many (a load
// generator's outstanding requests). STATUS_PENDING interim responses are
// waited through.
// Every wait has the config's deadline; a server that closes, answers
// with the wrong message, a bad signature or a transform that does not
// open is an error naming it, never a hang.
//
// Thread safety: one thread at a time. Ownership: owns the socket.
#ifndef SECMODE_SMB_CLIENT_H_
#define SECMODE_SMB_CLIENT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/delay_line.h"
#include "common/secret_bytes.h"
#include "common/socket.h"
#include "common/status.h"
#include "smb/client_messages.h"
#include "smb/kdf.h"
#include "smb/legs.h"
#include "smb/signing.h"
#include "smb/transform.h"

namespace secmode::smb {

struct SmbClientConfig {
  // Parsed where its name entered (legs.h: ParseSmbModeName).
  SmbMode mode = EncryptingMode(CipherId::kAes128Gcm);
  // A ccache ("FILE:/path") holding a ticket for `service_principal`.
  std::string ccache;
  std::string service_principal;  // "cifs/host.example@EXAMPLE"
  std::string unc;                // "\\host.example\share"
  int timeout_ms = 10000;         // each request's deadline
  uint16_t credits_wanted = 64;
  // When set, sees every NetBIOS frame as it goes on the wire or comes off
  // it, length prefix included (a capture for tshark); costs a copy each.
  // Bound channels and smb/load.h's threads share the config: an observer
  // used there must be thread-safe.
  std::function<void(bool from_client, common::ByteView frame)> wire_observer;
};

// Bytes of requests an emulated round trip (HoldRequests) holds at most.
inline constexpr size_t kDelayedBytesBound = size_t{64} << 20;

class SmbClient {
 public:
  // Negotiates, sets up the session and connects the tree over `fd` (a
  // connected TCP socket).
  static common::Result<std::unique_ptr<SmbClient>> Connect(common::Fd fd,
                                                            const SmbClientConfig& config);
  // SMB3 multichannel (MS-SMB2 3.2.4.2.3, 3.2.5.3.3): binds `fd` (a new
  // connection to the same server) to `session`'s session as channel
  // `channel` (1, 2 ...): NEGOTIATE with the session's ClientGuid, then a
  // SESSION_SETUP with SMB2_SESSION_FLAG_BINDING signed with the session's
  // signing key, authenticated afresh (a new Kerberos AP-REQ); the
  // channel signs with its own key (from this authentication's session key
  // and this binding's preauth hash) and seals with the session's keys
  // (its own nonce counters: transform.h's ledger). The session's tree and
  // files are usable on it. SMB 3.x only (not smb-sign-hmac-sha256's 2.1);
  // the server must offer CAP_MULTI_CHANNEL. `session` is only read, and
  // must not be used by another thread meanwhile.
  static common::Result<std::unique_ptr<SmbClient>> Bind(common::Fd fd, const SmbClient& session,
                                                         uint32_t channel);
  // The receive path alone, for its fuzz target (tests/fuzz/smb_client_fuzz.cc):
  // a client over `fd` (a socket whose other end the caller writes the
  // server's side into) whose session is set up already: `dialect`,
  // `session_id`, `keys` and config.mode's protection, signing or sealing
  // from now on as Connect would leave it; it counts `sent` (MessageId and
  // command of each) as in flight. Nothing goes on the wire. Receive,
  // Check and ReadData then run as on a real session.
  struct Sent {
    uint64_t message_id = 0;
    Command command = Command::kRead;
  };
  static common::Result<std::unique_ptr<SmbClient>> ReceiveOnly(
      common::Fd fd, const SmbClientConfig& config, uint16_t dialect, uint64_t session_id,
      const SessionKeys& keys, const std::vector<Sent>& sent);
  ~SmbClient() = default;
  SmbClient(const SmbClient&) = delete;
  SmbClient& operator=(const SmbClient&) = delete;

  // CREATE (open or create) `name` for reading and writing; with
  // `delete_on_close` the server removes it at the last CLOSE.
  common::Result<FileId> Open(const std::string& name, bool delete_on_close = false);
  common::Status Write(const FileId& f, uint64_t offset, common::ByteView data);
  // Reads `length` bytes at `offset` into *data (fewer at the end of file).
  common::Status Read(const FileId& f, uint64_t offset, uint32_t length, common::Bytes* data);
  common::Result<uint64_t> QueryEndOfFile(const FileId& f);
  common::Status Close(const FileId& f);
  // TREE_DISCONNECT and LOGOFF; the session is over afterwards.
  common::Status Logoff();

  // Pipelined requests for a load generator: Start* sends one (protected
  // as the mode says) and returns its MessageId; Receive returns the next
  // final response to any request in flight (interim ones are waited
  // through), decrypted and verified; Check says whether it is the success
  // its request expected. Start* refuses with kExhausted when the server
  // has not granted the credits the request needs (Receive, then retry)
  // and a READ or WRITE larger than the server's maximum.
  struct Completion {
    uint64_t message_id = 0;
    Command command = Command::kRead;
    uint32_t status = 0;
    uint64_t sent_ns = 0;  // when its request began to be sent (before signing or sealing)
    // The response (decrypted): the client's own buffer, valid until its
    // next Receive (no allocation per response).
    common::ByteView message;
  };
  common::Result<uint64_t> StartRead(const FileId& f, uint64_t offset, uint32_t length);
  common::Result<uint64_t> StartWrite(const FileId& f, uint64_t offset, common::ByteView data);
  common::Result<uint64_t> StartQueryInfo(const FileId& f);
  common::Result<Completion> Receive(common::Deadline deadline);
  // `bytes`: what a READ must return / a WRITE must have written.
  static common::Status Check(const Completion& c, uint32_t bytes);
  // A successful READ's data (inside c.message).
  static common::Result<common::ByteView> ReadData(const Completion& c);
  size_t in_flight() const { return in_flight_.size(); }
  uint32_t credits() const { return credits_; }
  // The credits a READ or WRITE of `bytes` costs (MS-SMB2 3.2.4.1.5).
  static uint16_t ChargeFor(size_t bytes);

  uint16_t dialect() const { return dialect_; }
  const SmbMode& mode() const { return mode_; }
  bool signs() const { return signer_ != nullptr && mode_.protection == Protection::kSign; }
  bool encrypts() const { return encryptor_ != nullptr; }
  uint64_t session_id() const { return session_id_; }
  uint32_t max_read_size() const { return max_read_; }
  uint32_t max_write_size() const { return max_write_; }
  const SessionKeys& keys() const { return keys_; }
  const common::SecretBytes& gss_session_key() const { return gss_key_; }

  struct Counters {
    uint64_t requests = 0, signed_requests = 0, encrypted_requests = 0;
    uint64_t responses_verified = 0, responses_decrypted = 0, interim_responses = 0;
  };
  const Counters& counters() const { return counters_; }

  // From now on every request is held `ns` before it goes on the wire, by a
  // thread of this connection's own (common/delay_line.h): an emulated
  // round trip for the lab, whose kernel has no netem (Samba cannot hold
  // its responses, so the whole round trip is on this side). A request's
  // latency counts the hold. At most kDelayedBytesBound bytes wait at once;
  // a request beyond them waits for room. 0 sends at once again. Only with
  // nothing in flight (Internal otherwise; smb/load.h sets it
  // after the set-up, so a long round trip does not stretch it). A request
  // the line cannot write shuts the connection down, and the next Receive
  // returns that error.
  common::Status HoldRequests(uint64_t ns);

  // Tests only: called with the next request's bytes as they go on the
  // wire (after signing or sealing), once, to spoil them.
  void TamperWithNextRequest(std::function<void(common::Bytes*)> f) { tamper_ = std::move(f); }

 private:
  explicit SmbClient(common::Fd fd, const SmbClientConfig& c) : fd_(std::move(fd)), config_(c) {}
  common::Status Negotiate();
  // A new session, or with `bind_to` a channel of that one.
  common::Status SessionSetup(const SmbClient* bind_to = nullptr);
  common::Status TreeConnect();
  // The signer (by dialect and mode) and, when the mode encrypts, the
  // encryptor and decryptor, from keys_.
  common::Status MakeProtection();
  HeaderFields NextHeader(Command command, uint16_t charge = 1);
  // The largest READ/WRITE a file operation sends now: the server's
  // maximum, or what the credits granted so far allow if less.
  size_t ChunkLimit(uint32_t server_max) const;
  // Sends `message` (+ `data`, the WRITE payload) protected per the session
  // state, then returns the response to it (decrypted, verified), valid
  // until the next Receive. Only with nothing else in flight.
  common::Result<common::ByteView> Exchange(const HeaderFields& h, common::Bytes* message,
                                            common::ByteView data = {});
  // The response to the one request in flight (a file operation's).
  common::Result<Completion> Await();
  common::Status Send(const HeaderFields& h, common::Bytes* message, common::ByteView data);
  common::Status SendFrame(common::ByteView a, common::ByteView b);
  // Writes the three parts of one frame (taken up as they go), waiting at
  // most timeout_ms for room.
  common::Status WriteFrameParts(common::ByteView (&parts)[3]);
  // The next frame into rx_frame_.
  common::Status ReceiveFrame(common::Deadline deadline);

  common::Fd fd_;
  SmbClientConfig config_;
  SmbMode mode_;
  uint16_t dialect_ = 0;
  uint32_t max_read_ = 0, max_write_ = 0;
  uint64_t next_message_id_ = 0;
  uint32_t credits_ = 1;
  uint64_t session_id_ = 0;
  uint32_t tree_id_ = 0;
  uint8_t client_guid_[16] = {};  // random per session; a bound channel copies it
  bool multichannel_ = false;     // the server offered CAP_MULTI_CHANNEL
  uint32_t channel_ = 0;          // 0: the session's first connection
  bool protect_ = false;          // SESSION_SETUP done: sign / encrypt from now on
  common::Bytes preauth_;         // 3.1.1 preauth-integrity hash
  common::SecretBytes gss_key_;   // wiped when the client goes, as are keys_
  SessionKeys keys_;
  std::unique_ptr<Signer> signer_;
  std::unique_ptr<Encryptor> encryptor_;
  std::unique_ptr<Decryptor> decryptor_;
  Counters counters_;
  common::Bytes wire_, scratch_;       // a request sealed; a request built
  common::Bytes rx_frame_, rx_plain_;  // a response as read; decrypted
  std::function<void(common::Bytes*)> tamper_;
  // With HoldRequests: the hold, the frame being queued, the line's first failure
  // (set on its thread), and the line, declared after fd_ so that it stops
  // before the socket closes.
  uint64_t send_delay_ns_ = 0;
  common::Bytes delayed_;
  std::mutex delay_mu_;
  common::Status delay_failure_;
  std::unique_ptr<common::DelayLine> delay_;
  struct InFlight {
    uint64_t message_id;
    Command command;
    uint64_t sent_ns;
  };
  std::vector<InFlight> in_flight_;
};

}  // namespace secmode::smb

#endif  // SECMODE_SMB_CLIENT_H_
