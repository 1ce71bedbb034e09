#include "smb/client.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/delay_line.h"
#include "common/files.h"
#include "gss/context_pair.h"
#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "gss/private_ccache.h"
#include "smb/message.h"

namespace secmode::smb {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

// SPNEGO, RFC 4178: 1.3.6.1.5.5.2.
gss_OID_desc kSpnegoOid = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};

std::string Hex16(uint16_t v) {
  char buf[8];
  snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

}  // namespace

Result<std::unique_ptr<SmbClient>> SmbClient::Connect(common::Fd fd,
                                                      const SmbClientConfig& config) {
  if (fd.get() < 0) return Status::InvalidArgument("SmbClient::Connect: no socket");
  if (config.ccache.empty() || config.service_principal.empty() || config.unc.empty()) {
    return Status::InvalidArgument(
        "an SMB client needs a ccache, the server's service principal and a share (UNC)");
  }
  if (config.timeout_ms <= 0) return Status::InvalidArgument("the SMB request timeout must be > 0");
  std::unique_ptr<SmbClient> c(new SmbClient(std::move(fd), config));
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(config.mode));
  c->mode_ = config.mode;
  if (RAND_bytes(c->client_guid_, 16) != 1) return Status::Internal("RAND_bytes failed");
  SECMODE_RETURN_IF_ERROR(c->Negotiate().Annotate("NEGOTIATE"));
  SECMODE_RETURN_IF_ERROR(c->SessionSetup().Annotate("SESSION_SETUP"));
  SECMODE_RETURN_IF_ERROR(c->TreeConnect().Annotate("TREE_CONNECT " + config.unc));
  return c;
}

Result<std::unique_ptr<SmbClient>> SmbClient::Bind(common::Fd fd, const SmbClient& session,
                                                   uint32_t channel) {
  if (fd.get() < 0) return Status::InvalidArgument("SmbClient::Bind: no socket");
  if (session.dialect_ != kDialect311) {
    return Status::InvalidArgument(std::string("multichannel needs SMB 3.x; ") +
                                   SmbModeName(session.mode_) + " runs on SMB " +
                                   DialectName(session.dialect_));
  }
  if (!session.multichannel_) {
    return Status::Unavailable("the server did not offer multichannel (CAP_MULTI_CHANNEL)");
  }
  if (!session.protect_ || session.tree_id_ == 0) {
    return Status::InvalidArgument("SmbClient::Bind: the session is not set up");
  }
  if (channel == 0) return Status::InvalidArgument("channel 0 is the session's own connection");
  std::unique_ptr<SmbClient> c(new SmbClient(std::move(fd), session.config_));
  c->mode_ = session.mode_;
  c->channel_ = channel;
  memcpy(c->client_guid_, session.client_guid_, 16);
  const std::string which = "channel " + N(channel);
  SECMODE_RETURN_IF_ERROR(c->Negotiate().Annotate(which + ": NEGOTIATE"));
  SECMODE_RETURN_IF_ERROR(c->SessionSetup(&session).Annotate(which + ": SESSION_SETUP binding"));
  c->tree_id_ = session.tree_id_;
  return c;
}

HeaderFields SmbClient::NextHeader(Command command, uint16_t charge) {
  HeaderFields h;
  h.command = command;
  h.message_id = next_message_id_;
  h.credits = config_.credits_wanted;
  h.credit_charge = charge;
  h.session_id = session_id_;
  h.tree_id = tree_id_;
  return h;
}

Status SmbClient::SendFrame(ByteView a, ByteView b) {
  const size_t size = a.size() + b.size();
  if (size > kMaxFrame) {
    return Status::InvalidArgument("an SMB message of " + N(size) +
                                   " bytes does not fit the NetBIOS frame");
  }
  const std::array<uint8_t, kFrameHeaderSize> header = FrameHeader(size);
  const uint8_t* mark = header.data();
  if (config_.wire_observer) {
    Bytes frame(mark, mark + 4);
    frame.insert(frame.end(), a.begin(), a.end());
    frame.insert(frame.end(), b.begin(), b.end());
    config_.wire_observer(true, frame);
  }
  if (send_delay_ns_ > 0) {
    // Held for the emulated round trip, then written by the line's thread
    // (the frame joined: the line keeps its buffers, nothing allocated per
    // request once it runs).
    if (!delay_) {
      delay_ = std::make_unique<common::DelayLine>(
          send_delay_ns_, kDelayedBytesBound, [this](Bytes& frame) {
            ByteView one[3] = {ByteView(frame), {}, {}};
            const Status sent = WriteFrameParts(one);
            if (!sent.ok()) {
              {
                std::lock_guard<std::mutex> lock(delay_mu_);
                delay_failure_ = sent;
              }
              // The owner, waiting for a response, learns of it at once.
              shutdown(fd_.get(), SHUT_RDWR);
            }
            return sent.ok();
          });
    }
    delayed_.assign(mark, mark + kFrameHeaderSize);
    delayed_.insert(delayed_.end(), a.begin(), a.end());
    delayed_.insert(delayed_.end(), b.begin(), b.end());
    if (!delay_->Push(delayed_)) {
      std::lock_guard<std::mutex> lock(delay_mu_);
      return delay_failure_.ok() ? Status::Unavailable("the delayed send has stopped")
                                 : Status(delay_failure_).Annotate("a delayed SMB request");
    }
    return Status::Ok();
  }
  ByteView parts[3] = {ByteView(mark, kFrameHeaderSize), a, b};
  return WriteFrameParts(parts);
}

Status SmbClient::HoldRequests(uint64_t ns) {
  if (!in_flight_.empty()) {
    return Status::Internal("the emulated round trip changes only with nothing in flight (" +
                            N(in_flight_.size()) + " requests are)");
  }
  delay_.reset();  // nothing in flight: it holds nothing
  delay_failure_ = Status::Ok();
  send_delay_ns_ = ns;
  return Status::Ok();
}

Status SmbClient::WriteFrameParts(ByteView (&parts)[3]) {
  // One sendmsg for the whole frame (no 4-byte segment of its own), never
  // blocking: a server that stops reading ends the wait at the deadline.
  const common::Deadline deadline = common::Deadline::AfterMs(config_.timeout_ms);
  size_t first = 0;
  while (first < 3) {
    iovec iov[3];
    int n = 0;
    for (size_t i = first; i < 3; ++i) {
      if (parts[i].empty()) continue;
      iov[n].iov_base = const_cast<uint8_t*>(parts[i].data());
      iov[n].iov_len = parts[i].size();
      ++n;
    }
    if (n == 0) break;
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    const ssize_t sent = sendmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        SECMODE_RETURN_IF_ERROR(
            common::WaitFor(fd_.get(), true, deadline, "room to send an SMB request"));
        continue;
      }
      return Status::IoError("sendmsg: " + common::ErrnoText(errno));
    }
    size_t left = static_cast<size_t>(sent);
    while (first < 3 && left >= parts[first].size()) {
      left -= parts[first].size();
      ++first;
    }
    if (first < 3) parts[first] = parts[first].subspan(left);
  }
  return Status::Ok();
}

Status SmbClient::ReceiveFrame(common::Deadline deadline) {
  // recv first, poll only when nothing is there yet: the response is
  // usually waiting by the time it is asked for.
  auto read_exactly = [&](uint8_t* p, size_t n, const char* what) -> Status {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = recv(fd_.get(), p + got, n - got, MSG_DONTWAIT);
      if (r == 0) {
        return Status::Unavailable(std::string("the server closed the connection (") + what + ", " +
                                   N(got) + " of " + N(n) + " bytes read)");
      }
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          SECMODE_RETURN_IF_ERROR(common::WaitFor(fd_.get(), false, deadline, what));
          continue;
        }
        return Status::IoError(std::string("recv (") + what + "): " + common::ErrnoText(errno));
      }
      got += static_cast<size_t>(r);
    }
    return Status::Ok();
  };
  uint8_t mark[4];
  SECMODE_RETURN_IF_ERROR(read_exactly(mark, 4, "an SMB response"));
  if (mark[0] != 0) {
    return Status::Corrupt("NetBIOS frame type " + std::to_string(mark[0]) +
                           ", a session message (0) expected");
  }
  const size_t size = size_t{mark[1]} << 16 | size_t{mark[2]} << 8 | mark[3];
  if (size < 4) return Status::Corrupt("a NetBIOS frame of " + N(size) + " bytes");
  rx_frame_.resize(size);
  SECMODE_RETURN_IF_ERROR(read_exactly(rx_frame_.data(), size, "the rest of an SMB response"));
  if (config_.wire_observer) {
    Bytes framed(mark, mark + 4);
    framed.insert(framed.end(), rx_frame_.begin(), rx_frame_.end());
    config_.wire_observer(false, framed);
  }
  return Status::Ok();
}

Status SmbClient::Send(const HeaderFields& h, Bytes* message, ByteView data) {
  const uint16_t charge = std::max<uint16_t>(h.credit_charge, 1);
  if (credits_ < charge) {
    return Status::Exhausted("credit starvation: the server has granted " + N(credits_) +
                             " credits, the request needs " + N(charge));
  }
  // A request's latency starts before it is signed or sealed: the client's
  // own crypto is part of what a user waits for.
  const uint64_t started = common::NowNs();
  credits_ -= charge;
  next_message_id_ += charge;
  ++counters_.requests;
  ByteView first(*message), second = data;
  if (protect_ && encryptor_) {
    SECMODE_RETURN_IF_ERROR(encryptor_->Seal({ByteView(*message), data}, &wire_));
    ++counters_.encrypted_requests;
    first = wire_;
    second = {};
  } else if (protect_ &&
             (signs() || (h.command == Command::kTreeConnect && dialect_ == kDialect311))) {
    // MS-SMB2 3.2.4.1.1 / 3.3.5.7: on SMB 3.1.1 a TREE_CONNECT of a user's
    // session is signed even when the session does not sign (Samba
    // disconnects an unsigned one), so smb-plain signs that one request.
    // The WRITE data is signed where it lies, not copied behind the header.
    SECMODE_RETURN_IF_ERROR(signer_->Sign(common::MutableByteView(*message), data));
    ++counters_.signed_requests;
  }
  in_flight_.push_back({h.message_id, h.command, started});
  if (tamper_) {
    Bytes spoiled(first.begin(), first.end());
    spoiled.insert(spoiled.end(), second.begin(), second.end());
    auto f = std::move(tamper_);
    tamper_ = nullptr;
    f(&spoiled);
    return SendFrame(spoiled, {});
  }
  return SendFrame(first, second);
}

Result<SmbClient::Completion> SmbClient::Receive(common::Deadline deadline) {
  if (in_flight_.empty()) return Status::Internal("SmbClient::Receive with nothing in flight");
  for (;;) {
    if (Status got = ReceiveFrame(deadline); !got.ok()) {
      // A delayed request that could not be written is the cause.
      std::lock_guard<std::mutex> lock(delay_mu_);
      return delay_failure_.ok() ? got : Status(delay_failure_).Annotate("a delayed SMB request");
    }
    const bool sealed = rx_frame_.size() >= 4 && rx_frame_[0] == 0xFD && rx_frame_[1] == 'S' &&
                        rx_frame_[2] == 'M' && rx_frame_[3] == 'B';
    ByteView message = rx_frame_;
    if (sealed) {
      if (!decryptor_) {
        return Status::Corrupt("an encrypted response on a session that negotiated no cipher");
      }
      SECMODE_RETURN_IF_ERROR(
          decryptor_->Open(rx_frame_, &rx_plain_).Annotate("the server's transform"));
      ++counters_.responses_decrypted;
      message = rx_plain_;
    }
    SECMODE_ASSIGN_OR_RETURN(HeaderFields r, ParseHeader(message));
    if (!(r.flags & kFlagServerToRedir)) {
      return Status::Corrupt("a message from the server without the response flag");
    }
    if (r.next_command != 0) return Status::Corrupt("a compound response to a single request");
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [&](const InFlight& f) { return f.message_id == r.message_id; });
    if (it == in_flight_.end()) {
      return Status::Corrupt("a response to MessageId " + N(r.message_id) +
                             ", which is not in flight");
    }
    if (r.command != it->command) {
      return Status::Corrupt("the response to MessageId " + N(r.message_id) + " is command " +
                             N(static_cast<unsigned>(r.command)) + ", the request was " +
                             N(static_cast<unsigned>(it->command)));
    }
    credits_ += r.credits;
    if (protect_ && encryptor_ && !sealed) {
      return Status::AuthFailed("the server answered in clear on an encrypted session: " +
                                DescribeError(message));
    }
    if (r.status == kStatusPending && (r.flags & kFlagAsync)) {
      ++counters_.interim_responses;
      continue;
    }
    if (protect_ && !sealed) {
      if (signs() && !(r.flags & kFlagSigned)) {
        return Status::AuthFailed("an unsigned response on a signed session: " +
                                  DescribeError(message));
      }
      if (r.flags & kFlagSigned) {
        SECMODE_RETURN_IF_ERROR(signer_->Verify(message).Annotate("the server's signature"));
        ++counters_.responses_verified;
      }
    }
    Completion c{r.message_id, r.command, r.status, it->sent_ns, message};
    in_flight_.erase(it);
    return c;
  }
}

Result<SmbClient::Completion> SmbClient::Await() {
  if (in_flight_.size() != 1) {
    return Status::Internal("a single request while " + N(in_flight_.size()) + " are in flight");
  }
  return Receive(common::Deadline::AfterMs(config_.timeout_ms));
}

Result<ByteView> SmbClient::Exchange(const HeaderFields& h, Bytes* message, ByteView data) {
  if (!in_flight_.empty()) {
    return Status::Internal("a single request while " + N(in_flight_.size()) +
                            " pipelined ones are in flight");
  }
  SECMODE_RETURN_IF_ERROR(Send(h, message, data));
  SECMODE_ASSIGN_OR_RETURN(Completion c, Await());
  return c.message;
}

size_t SmbClient::ChunkLimit(uint32_t server_max) const {
  // The credits granted so far bound one request's charge: a connection
  // fresh from SESSION_SETUP may hold fewer than the server's maximum I/O
  // size needs (a bound channel had 127 for Samba's 8 MiB, 128 credits).
  return std::min<size_t>(server_max, size_t{std::max<uint32_t>(credits_, 1)} * 65536);
}

uint16_t SmbClient::ChargeFor(size_t bytes) {
  return static_cast<uint16_t>(bytes == 0 ? 1 : (bytes - 1) / 65536 + 1);
}

Result<uint64_t> SmbClient::StartRead(const FileId& f, uint64_t offset, uint32_t length) {
  if (length > max_read_) {
    return Status::InvalidArgument("a READ of " + N(length) + " bytes; the server's maximum is " +
                                   N(max_read_));
  }
  const HeaderFields h = NextHeader(Command::kRead, ChargeFor(length));
  BuildReadRequest(h, f, length, offset, &scratch_);
  SECMODE_RETURN_IF_ERROR(Send(h, &scratch_, {}));
  return h.message_id;
}

Result<uint64_t> SmbClient::StartWrite(const FileId& f, uint64_t offset, ByteView data) {
  if (data.size() > max_write_) {
    return Status::InvalidArgument("a WRITE of " + N(data.size()) +
                                   " bytes; the server's maximum is " + N(max_write_));
  }
  const HeaderFields h = NextHeader(Command::kWrite, ChargeFor(data.size()));
  scratch_.resize(kWriteDataOffset);
  WriteWriteRequestPrefix(h, f, static_cast<uint32_t>(data.size()), offset, scratch_.data());
  SECMODE_RETURN_IF_ERROR(Send(h, &scratch_, data));
  return h.message_id;
}

Result<uint64_t> SmbClient::StartQueryInfo(const FileId& f) {
  const HeaderFields h = NextHeader(Command::kQueryInfo);
  BuildQueryInfoRequest(h, f, &scratch_);
  SECMODE_RETURN_IF_ERROR(Send(h, &scratch_, {}));
  return h.message_id;
}

Result<ByteView> SmbClient::ReadData(const Completion& c) {
  if (c.command != Command::kRead) return Status::Internal("ReadData of a non-READ response");
  if (c.status != kStatusSuccess) {
    return Status::Unavailable("READ refused: " + NtStatusName(c.status));
  }
  SECMODE_ASSIGN_OR_RETURN(DataSpan span, ParseReadResponse(c.message));
  return c.message.subspan(span.offset, span.length);
}

Status SmbClient::Check(const Completion& c, uint32_t bytes) {
  switch (c.command) {
    case Command::kRead: {
      SECMODE_ASSIGN_OR_RETURN(ByteView got, ReadData(c));
      if (got.size() != bytes) {
        return Status::IoError("READ of " + N(bytes) + " bytes returned " + N(got.size()));
      }
      return Status::Ok();
    }
    case Command::kWrite: {
      SECMODE_ASSIGN_OR_RETURN(uint32_t count, ParseWriteResponse(c.message));
      if (count != bytes) {
        return Status::IoError("WRITE of " + N(bytes) + " bytes: the server wrote " + N(count));
      }
      return Status::Ok();
    }
    case Command::kQueryInfo: return ParseQueryInfoResponse(c.message).status();
    default: return CheckBody(c.message, 4, "response");
  }
}

Status SmbClient::Negotiate() {
  NegotiateRequest r;
  memcpy(r.client_guid, client_guid_, 16);
  if (RAND_bytes(r.salt, 32) != 1) return Status::Internal("RAND_bytes failed");
  const bool hmac = SmbModeDialect(mode_) == kDialect210;
  r.dialects = {SmbModeDialect(mode_)};
  r.security_mode =
      kSigningEnabled | (mode_.protection == Protection::kSign ? kSigningRequired : 0);
  if (mode_.protection == Protection::kEncrypt) {
    // Samba (smb2_negprot.c) looks at the encryption context only from a
    // client that also sets CAP_ENCRYPTION, as Windows does on 3.1.1.
    r.capabilities |= kCapEncryption;
    r.ciphers = {mode_.cipher->id};
  }
  if (mode_.protection == Protection::kSign && !hmac) {
    r.signing_algorithms = {static_cast<uint16_t>(mode_.signing->id)};
  }
  Bytes request;
  const HeaderFields h = NextHeader(Command::kNegotiate, /*charge=*/0);
  BuildNegotiateRequest(r, h, &request);
  preauth_.assign(64, 0);
  if (!hmac) SECMODE_RETURN_IF_ERROR(UpdatePreauthHash(&preauth_, request));
  SECMODE_ASSIGN_OR_RETURN(ByteView response, Exchange(h, &request));
  SECMODE_ASSIGN_OR_RETURN(NegotiateResponse n, ParseNegotiateResponse(response));
  if (n.dialect != r.dialects[0]) {
    return Status::Unavailable("the server chose dialect " + Hex16(n.dialect) + ", " +
                               SmbModeName(mode_) + " needs " + Hex16(r.dialects[0]));
  }
  dialect_ = n.dialect;
  multichannel_ = (n.capabilities & kCapMultiChannel) != 0;
  max_read_ = n.max_read_size;
  max_write_ = n.max_write_size;
  if (max_read_ < 4096 || max_write_ < 4096) {
    return Status::Corrupt("the server's MaxReadSize " + N(max_read_) + " / MaxWriteSize " +
                           N(max_write_) + " are below 4 KiB");
  }
  if (hmac) return Status::Ok();
  SECMODE_RETURN_IF_ERROR(UpdatePreauthHash(&preauth_, response));
  if (mode_.protection == Protection::kEncrypt &&
      n.cipher != static_cast<uint16_t>(mode_.cipher->id)) {
    return Status::Unavailable(std::string("the server chose cipher ") +
                               (n.cipher == 0 ? "none" : Hex16(n.cipher)) + ", " +
                               SmbModeName(mode_) + " offered only " + mode_.cipher->name +
                               " (server smb3 encryption algorithms?)");
  }
  if (mode_.protection == Protection::kSign) {
    const uint16_t want = static_cast<uint16_t>(mode_.signing->id);
    // Without a signing context 3.1.1 signs with AES-CMAC.
    const uint16_t got = n.has_signing_context ? n.signing_algorithm
                                               : static_cast<uint16_t>(SigningAlgorithm::kAesCmac);
    if (got != want) {
      return Status::Unavailable("the server chose signing algorithm " + Hex16(got) + ", " +
                                 SmbModeName(mode_) + " offered only " + Hex16(want) +
                                 " (server smb3 signing algorithms?)");
    }
  }
  return Status::Ok();
}

Status SmbClient::SessionSetup(const SmbClient* bind_to) {
  gss::PrivateCcache ccache;
  SECMODE_RETURN_IF_ERROR(ccache.Make(config_.ccache));
  OM_uint32 major, minor = 0;
  gss::NamePtr target;
  gss_buffer_desc tbuf{config_.service_principal.size(),
                       const_cast<char*>(config_.service_principal.data())};
  major = gss_import_name(&minor, &tbuf, const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME),
                          gss::Out(target));
  if (GSS_ERROR(major)) {
    return gss::GssError("gss_import_name(" + config_.service_principal + ")", major, minor);
  }
  gss_OID_set_desc spnego{1, &kSpnegoOid};
  gss_key_value_element_desc elems[] = {{"ccache", ccache.name().c_str()}};
  gss_key_value_set_desc store{1, elems};
  gss::CredPtr cred;
  major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &spnego, GSS_C_INITIATE,
                                &store, gss::Out(cred), nullptr, nullptr);
  if (GSS_ERROR(major)) {
    return gss::GssError("gss_acquire_cred_from(SPNEGO initiator, ccache " + ccache.source() + ")",
                         major, minor);
  }
  // SPNEGO offers Kerberos only (no NTLM, no IAKERB).
  gss_OID_set_desc krb5_only{1, const_cast<gss_OID>(gss_mech_krb5)};
  major = gss_set_neg_mechs(&minor, cred.get(), &krb5_only);
  if (GSS_ERROR(major)) return gss::GssError("gss_set_neg_mechs(krb5)", major, minor);

  const bool v311 = dialect_ == kDialect311;
  const uint8_t security_mode = static_cast<uint8_t>(
      kSigningEnabled | (mode_.protection == Protection::kSign ? kSigningRequired : 0));
  gss::ContextPtr ctx;
  Bytes in_token, request, final_response;
  OM_uint32 init_major = GSS_S_CONTINUE_NEEDED;
  uint16_t session_flags = 0;
  // A binding request names the session and is signed with its signing
  // key (MS-SMB2 3.2.4.2.3, 3.2.4.1.1).
  std::unique_ptr<Signer> session_signer;
  if (bind_to) {
    session_id_ = bind_to->session_id_;
    SECMODE_ASSIGN_OR_RETURN(session_signer,
                             Signer::Create(bind_to->signer_->algorithm(), bind_to->keys_.signing));
  }
  // One gss_init_sec_context step on the server's last token (none at
  // first); its output token in *output.
  auto step = [&](bool first, gss::BufferHandle* output) -> Status {
    gss_buffer_desc input{in_token.size(), in_token.data()};
    init_major = gss_init_sec_context(&minor, cred.get(), gss::Out(ctx), target.get(), &kSpnegoOid,
                                      GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG, 0,
                                      GSS_C_NO_CHANNEL_BINDINGS, first ? GSS_C_NO_BUFFER : &input,
                                      nullptr, &output->h, nullptr, nullptr);
    if (GSS_ERROR(init_major)) {
      return gss::GssError("gss_init_sec_context(SPNEGO/krb5, " + config_.service_principal + ", " +
                               ccache.principal() + ")",
                           init_major, minor);
    }
    return Status::Ok();
  };
  for (int round = 0; round < 4 && final_response.empty(); ++round) {
    gss::BufferHandle output;
    SECMODE_RETURN_IF_ERROR(step(round == 0, &output));
    const HeaderFields h = NextHeader(Command::kSessionSetup);
    BuildSessionSetupRequest(h, bind_to ? kSessionSetupBinding : 0, security_mode, output.view(),
                             &request);
    if (session_signer) {
      SECMODE_RETURN_IF_ERROR(session_signer->Sign(common::MutableByteView(request)));
    }
    if (v311) SECMODE_RETURN_IF_ERROR(UpdatePreauthHash(&preauth_, request));
    SECMODE_ASSIGN_OR_RETURN(ByteView got, Exchange(h, &request));
    Bytes response(got.begin(), got.end());  // kept past the next exchange
    SECMODE_ASSIGN_OR_RETURN(HeaderFields r, ParseHeader(response));
    SECMODE_ASSIGN_OR_RETURN(SessionSetupResponse s, ParseSessionSetupResponse(response));
    if (session_id_ == 0) session_id_ = r.session_id;
    if (r.session_id != session_id_ || session_id_ == 0) {
      return Status::Corrupt("SESSION_SETUP response SessionId " + N(r.session_id) +
                             ", the session's is " + N(session_id_));
    }
    in_token.assign(s.token.begin(), s.token.end());
    session_flags = s.session_flags;
    if (r.status == kStatusMoreProcessingRequired) {
      if (v311) SECMODE_RETURN_IF_ERROR(UpdatePreauthHash(&preauth_, response));
      continue;
    }
    final_response = std::move(response);
  }
  if (final_response.empty()) {
    return Status::AuthFailed("the server still wanted more after 4 SESSION_SETUP rounds");
  }
  // The server's last token (the AP-REP, mutual authentication).
  if (init_major == GSS_S_CONTINUE_NEEDED) {
    gss::BufferHandle output;
    SECMODE_RETURN_IF_ERROR(step(false, &output).Annotate("the server's final token"));
  }
  if (init_major != GSS_S_COMPLETE) {
    return Status::AuthFailed("the server accepted the session before mutual authentication ended");
  }
  SECMODE_ASSIGN_OR_RETURN(gss::SessionKey key, gss::InquireSessionKey(ctx.get()));
  gss_key_ = std::move(key.key);

  if (!v311) {
    SECMODE_ASSIGN_OR_RETURN(keys_, DeriveSmb2Keys(gss_key_));
  } else {
    const CipherId cipher =
        mode_.protection == Protection::kEncrypt ? mode_.cipher->id : CipherId::kAes128Gcm;
    SECMODE_ASSIGN_OR_RETURN(keys_, DeriveSmb311Keys(gss_key_, preauth_, cipher));
    if (bind_to) {
      // MS-SMB2 3.2.5.3.3: the channel signs with the key of this
      // authentication and this binding's preauth hash; it encrypts and
      // decrypts with the session's keys.
      keys_.client_to_server = bind_to->keys_.client_to_server;
      keys_.server_to_client = bind_to->keys_.server_to_client;
      keys_.application = bind_to->keys_.application;
    }
  }
  SECMODE_RETURN_IF_ERROR(MakeProtection());
  // MS-SMB2 3.3.5.5.3: a 3.1.1 server signs the final SESSION_SETUP response
  // (so the preauth hash, and with it the negotiated algorithms, is proven).
  SECMODE_ASSIGN_OR_RETURN(HeaderFields fin, ParseHeader(final_response));
  if (fin.flags & kFlagSigned) {
    SECMODE_RETURN_IF_ERROR(
        signer_->Verify(final_response).Annotate("the final SESSION_SETUP response's signature"));
    ++counters_.responses_verified;
  } else if (v311 || mode_.protection == Protection::kSign) {
    return Status::AuthFailed("the final SESSION_SETUP response is not signed");
  }
  if (mode_.protection != Protection::kEncrypt && (session_flags & kSessionFlagEncryptData) &&
      !bind_to) {
    return Status::Unavailable(std::string("the server requires encryption for this session; ") +
                               SmbModeName(mode_) + " does not encrypt");
  }
  protect_ = true;
  return Status::Ok();
}

Status SmbClient::MakeProtection() {
  // SMB 2.1 signs with HMAC-SHA256; 3.1.1 with AES-CMAC unless the mode
  // signs with another algorithm (MS-SMB2 3.2.5.3.1).
  SigningAlgorithm signing = SigningAlgorithm::kAesCmac;
  if (dialect_ != kDialect311) {
    signing = SigningAlgorithm::kHmacSha256;
  } else if (mode_.protection == Protection::kSign) {
    signing = mode_.signing->id;
  }
  SECMODE_ASSIGN_OR_RETURN(signer_, Signer::Create(signing, keys_.signing));
  if (mode_.protection == Protection::kEncrypt) {
    SECMODE_ASSIGN_OR_RETURN(encryptor_, Encryptor::Create(mode_.cipher->id, keys_.client_to_server,
                                                           session_id_, channel_));
    SECMODE_ASSIGN_OR_RETURN(
        decryptor_, Decryptor::Create(mode_.cipher->id, keys_.server_to_client, session_id_));
  }
  return Status::Ok();
}

Result<std::unique_ptr<SmbClient>> SmbClient::ReceiveOnly(common::Fd fd,
                                                          const SmbClientConfig& config,
                                                          uint16_t dialect, uint64_t session_id,
                                                          const SessionKeys& keys,
                                                          const std::vector<Sent>& sent) {
  if (fd.get() < 0) return Status::InvalidArgument("SmbClient::ReceiveOnly: no socket");
  std::unique_ptr<SmbClient> c(new SmbClient(std::move(fd), config));
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(config.mode));
  c->mode_ = config.mode;
  c->dialect_ = dialect;
  c->session_id_ = session_id;
  c->keys_ = keys;
  SECMODE_RETURN_IF_ERROR(c->MakeProtection());
  c->protect_ = true;
  for (const Sent& s : sent) c->in_flight_.push_back({s.message_id, s.command, common::NowNs()});
  return c;
}

Status SmbClient::TreeConnect() {
  const HeaderFields h = NextHeader(Command::kTreeConnect);
  Bytes request;
  BuildTreeConnectRequest(h, config_.unc, &request);
  SECMODE_ASSIGN_OR_RETURN(ByteView response, Exchange(h, &request));
  SECMODE_ASSIGN_OR_RETURN(TreeConnectResponse t, ParseTreeConnectResponse(response));
  SECMODE_ASSIGN_OR_RETURN(HeaderFields r, ParseHeader(response));
  tree_id_ = r.tree_id;
  if ((t.share_flags & kShareFlagEncryptData) && !encryptor_) {
    return Status::Unavailable(std::string("the share requires encryption; ") + SmbModeName(mode_) +
                               " does not encrypt");
  }
  return Status::Ok();
}

Result<FileId> SmbClient::Open(const std::string& name, bool delete_on_close) {
  const HeaderFields h = NextHeader(Command::kCreate);
  Bytes request;
  BuildCreateRequest(h, name, delete_on_close, &request);
  SECMODE_ASSIGN_OR_RETURN(ByteView response, Exchange(h, &request));
  auto c = ParseCreateResponse(response);
  if (!c.ok()) return c.status().Annotate("CREATE " + name);
  return c->file;
}

Status SmbClient::Write(const FileId& f, uint64_t offset, ByteView data) {
  size_t done = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - done, ChunkLimit(max_write_));
    SECMODE_RETURN_IF_ERROR(StartWrite(f, offset + done, data.subspan(done, n)).status());
    SECMODE_ASSIGN_OR_RETURN(Completion c, Await());
    SECMODE_RETURN_IF_ERROR(
        Check(c, static_cast<uint32_t>(n)).Annotate("at offset " + N(offset + done)));
    done += n;
  } while (done < data.size());
  return Status::Ok();
}

Status SmbClient::Read(const FileId& f, uint64_t offset, uint32_t length, Bytes* data) {
  data->clear();
  while (data->size() < length) {
    const uint32_t n = std::min<uint32_t>(length - static_cast<uint32_t>(data->size()),
                                          static_cast<uint32_t>(ChunkLimit(max_read_)));
    SECMODE_RETURN_IF_ERROR(StartRead(f, offset + data->size(), n).status());
    SECMODE_ASSIGN_OR_RETURN(Completion c, Await());
    if (c.status == kStatusEndOfFile) break;
    SECMODE_ASSIGN_OR_RETURN(ByteView got, ReadData(c));
    if (got.size() > n) {
      return Status::Corrupt("READ of " + N(n) + " bytes answered with " + N(got.size()));
    }
    data->insert(data->end(), got.begin(), got.end());
    if (got.size() < n) break;  // the end of the file
  }
  return Status::Ok();
}

Result<uint64_t> SmbClient::QueryEndOfFile(const FileId& f) {
  SECMODE_RETURN_IF_ERROR(StartQueryInfo(f).status());
  SECMODE_ASSIGN_OR_RETURN(Completion c, Await());
  SECMODE_ASSIGN_OR_RETURN(ByteView info, ParseQueryInfoResponse(c.message));
  if (info.size() < 16) {
    return Status::Corrupt("FileStandardInformation of " + N(info.size()) + " bytes, need 16");
  }
  return Le64(info.data() + 8);  // EndOfFile
}

Status SmbClient::Close(const FileId& f) {
  const HeaderFields h = NextHeader(Command::kClose);
  Bytes request;
  BuildCloseRequest(h, f, &request);
  SECMODE_ASSIGN_OR_RETURN(ByteView response, Exchange(h, &request));
  return CheckBody(response, 60, "CLOSE");
}

Status SmbClient::Logoff() {
  Bytes request;
  HeaderFields h = NextHeader(Command::kTreeDisconnect);
  BuildEmptyRequest(h, &request);
  SECMODE_ASSIGN_OR_RETURN(ByteView response, Exchange(h, &request));
  SECMODE_RETURN_IF_ERROR(CheckBody(response, 4, "TREE_DISCONNECT"));
  tree_id_ = 0;
  h = NextHeader(Command::kLogoff);
  BuildEmptyRequest(h, &request);
  SECMODE_ASSIGN_OR_RETURN(response, Exchange(h, &request));
  return CheckBody(response, 4, "LOGOFF");
}

}  // namespace secmode::smb
