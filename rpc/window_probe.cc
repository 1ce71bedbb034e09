#include "rpc/window_probe.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "common/clock.h"
#include "common/socket.h"
#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/probe_replies.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/sequence_window.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Connect;
using common::Deadline;
using common::Fd;
using common::Result;
using common::Status;
using common::WriteAll2;

const char* ProbeOutcomeName(ProbeOutcome o) {
  switch (o) {
    case ProbeOutcome::kReplied: return "replied";
    case ProbeOutcome::kDenied: return "denied";
    case ProbeOutcome::kClosed: return "closed";
    case ProbeOutcome::kSilent: return "silent";
  }
  return "?";
}

std::string ModelReaction(const ProbeReport& r) {
  const std::string& v = r.below_window;
  if (v == "drop" || v == "drop-disconnect" || v == "discard-context") return v;
  return "";
}

namespace {

constexpr uint32_t kJump = 1u << 20;

// One TCP connection carrying a test's calls; its replies are matched by
// xid (rpc/probe_replies.h: one that comes for an earlier call is kept for
// it, one for no call is dropped and counted; both bounded).
class ProbeConn {
 public:
  enum class Got { kRecord, kClosed, kTimeout };

  Status Open(const ProbeOptions& o) {
    replies_.Reset();
    SECMODE_ASSIGN_OR_RETURN(fd_, Connect(o.host, o.port, Deadline::AfterMs(o.connect_timeout_ms)));
    closed_ = false;
    return Status::Ok();
  }
  bool open() const { return fd_.get() >= 0 && !closed_; }
  const ProbeReplies& replies() const { return replies_; }

  // A reply to `xid` that came while another was waited for.
  bool TakeLate(uint32_t xid, Bytes* record) { return replies_.Take(xid, record); }

  // False when the connection is gone (the peer closed or reset it).
  bool Send(ByteView call) {
    uint32_t xid = 0;
    if (MessageXid(call, &xid)) replies_.Sent(xid);
    Bytes mark;
    AppendRecordMark(static_cast<uint32_t>(call.size()), &mark);
    if (!WriteAll2(fd_.get(), mark, call).ok()) closed_ = true;
    return !closed_;
  }

  // The reply to `xid` into *record, the end of the connection, or nothing
  // within `ms` (checked after every read, so a server that keeps sending
  // other replies cannot stretch the wait). *why says what ended the wait
  // when no record came.
  Got Wait(uint32_t xid, int ms, Bytes* record, std::string* why) {
    const Deadline deadline = Deadline::AfterMs(ms);
    const uint64_t stray_before = replies_.stray();
    while (!closed_) {
      auto got = replies_.Next(xid, record);
      if (!got.ok()) {
        *why = "the reply stream broke: " + got.status().message();
        closed_ = true;
        return Got::kClosed;
      }
      if (*got) return Got::kRecord;
      if (deadline.Passed()) {
        *why = "no reply within " + std::to_string(ms) + " ms";
        const uint64_t stray = replies_.stray() - stray_before;
        if (stray > 0) {
          *why += " (" + std::to_string(stray) +
                  " replies to no call outstanding came meanwhile, dropped)";
        }
        return Got::kTimeout;
      }
      pollfd p{fd_.get(), POLLIN, 0};
      const int n = poll(&p, 1, deadline.PollMs());
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) continue;  // the deadline, said above
      auto space = replies_.WriteSpace(4096);
      const ssize_t r = recv(fd_.get(), space.data(), space.size(), 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        *why = r == 0 ? "the server closed the connection"
                      : std::string("the connection was reset: ") + std::strerror(errno);
        closed_ = true;
        return Got::kClosed;
      }
      replies_.Commit(static_cast<size_t>(r));
    }
    *why = "the connection is closed";
    return Got::kClosed;
  }

 private:
  Fd fd_;
  ProbeReplies replies_;
  bool closed_ = true;
};

// A test's context and connection.
struct Session {
  std::shared_ptr<GssClientContext> ctx;
  ProbeConn conn;
  uint32_t top = 0;  // the highest number sent below MAXSEQ
  bool context_gone = false;
};

class Prober {
 public:
  Prober(const ProbeOptions& o, uint32_t service, ProbeReport* r)
      : o_(o), service_(service), r_(r), xid_(static_cast<uint32_t>(common::NowNs())) {}

  Result<ProbeTest> InOrder() {
    ProbeTest t;
    t.name = "in order";
    SECMODE_ASSIGN_OR_RETURN(auto s, NewSession());
    for (uint32_t seq : {1u, 2u, 3u, 3u + kJump}) {
      SECMODE_RETURN_IF_ERROR(MustReply(*s, seq, &t));
    }
    t.verdict = "accepted";
    End(*s);
    return t;
  }

  // Seq k+1 (the top of a new window), then seq 1.
  Result<ProbeTest> Lag(uint32_t k) { return TopThen("lag " + std::to_string(k), k + 1, 1, k); }
  // The top sent twice.
  Result<ProbeTest> Duplicate() { return TopThen("duplicate", 5, 5, 0); }

  // 0x7fffffff, then MAXSEQ; neither must be answered.
  Result<ProbeTest> MaxSeq() {
    ProbeTest t;
    t.name = "MAXSEQ";
    SECMODE_ASSIGN_OR_RETURN(auto s, NewSession());
    t.calls.push_back(Call(*s, kMaxGssSeq - 1, o_.silence_ms));
    if (s->conn.open()) t.calls.push_back(Call(*s, kMaxGssSeq, o_.silence_ms));
    End(*s);
    return t;
  }

 private:
  // On a new context: `top` (it must be answered), then `probed`, judged.
  Result<ProbeTest> TopThen(std::string name, uint32_t top, uint32_t probed, uint32_t lag) {
    ProbeTest t;
    t.name = std::move(name);
    t.lag = lag;
    SECMODE_ASSIGN_OR_RETURN(auto s, NewSession());
    SECMODE_RETURN_IF_ERROR(MustReply(*s, top, &t));
    Judge(*s, probed, &t);
    End(*s);
    return t;
  }

  Result<std::unique_ptr<Session>> NewSession() {
    GssClientConfig cfg;
    cfg.ccache = o_.ccache;
    cfg.target = o_.target;
    cfg.enctype = o_.enctype;
    cfg.engine = o_.engine;
    cfg.prog = o_.program;
    cfg.vers = o_.version;
    cfg.service = service_;
    auto s = std::make_unique<Session>();
    // On the connection that carries the test's calls: MIT gssrpc keeps a
    // context with the connection it was made on.
    SECMODE_RETURN_IF_ERROR(s->conn.Open(o_).Annotate("the probe's connection"));
    auto ctx = GssClientContext::Establish(cfg, [&](ByteView call) -> Result<Bytes> {
      uint32_t xid = 0;
      if (!MessageXid(call, &xid)) return Status::Internal("an INIT call without an xid");
      if (!s->conn.Send(call)) return Status::IoError("the server closed the connection");
      Bytes rec;
      std::string why;
      if (s->conn.Wait(xid, o_.init_timeout_ms, &rec, &why) != ProbeConn::Got::kRecord) {
        return Status::Unavailable(why);
      }
      return rec;
    });
    if (!ctx.ok()) {
      return ctx.status().Annotate(
          "creating an RPCSEC_GSS context with " + o_.host + ":" + std::to_string(o_.port) +
          " for program " + std::to_string(o_.program) + " version " + std::to_string(o_.version));
    }
    s->ctx = std::move(ctx).value();
    ++r_->contexts_created;
    if (r_->advertised_window == 0) r_->advertised_window = s->ctx->window();
    return s;
  }

  // One NULL call with number `seq`, waiting up to `wait_ms` for its reply.
  ProbeCall Call(Session& s, uint32_t seq, int wait_ms) {
    ProbeCall c;
    c.seq = seq;
    if (seq > s.top && seq < kMaxGssSeq) s.top = seq;  // MAXSEQ and above move nothing
    const uint32_t xid = ++xid_;
    Bytes call;
    Status enc = s.ctx->EncodeCall(xid, 0, service_, seq, {}, &call);
    if (!enc.ok()) {
      c.outcome = ProbeOutcome::kDenied;
      c.reply = "not sent: " + enc.message();
      return c;
    }
    const uint64_t t0 = common::NowNs();
    if (!s.conn.Send(call)) {
      c.outcome = ProbeOutcome::kClosed;
      c.reply = "the connection was closed before the call could be sent";
      return c;
    }
    Bytes rec;
    std::string why;
    const ProbeConn::Got got = s.conn.Wait(xid, wait_ms, &rec, &why);
    c.ms = static_cast<double>(common::NowNs() - t0) / 1e6;
    if (got == ProbeConn::Got::kClosed) {
      c.outcome = ProbeOutcome::kClosed;
      c.reply = why;
    } else if (got == ProbeConn::Got::kTimeout) {
      c.outcome = ProbeOutcome::kSilent;
      c.reply = why;
    } else {
      Classify(s, rec, seq, &c);
    }
    return c;
  }

  void Classify(Session& s, ByteView rec, uint32_t seq, ProbeCall* c) {
    ReplyHeader h;
    Bytes scratch;
    ByteView results;
    Status st = s.ctx->DecodeReply(rec, service_, seq, &scratch, &h, &results);
    if (st.ok()) {
      c->outcome = ProbeOutcome::kReplied;
      c->reply = "accepted SUCCESS";
    } else {
      c->outcome = ProbeOutcome::kDenied;
      c->reply = h.reply_stat == kMsgAccepted && h.accept_stat == kSuccess ? st.message()
                                                                           : DescribeReply(h);
    }
  }

  // A call that must be answered (the first numbers of a window).
  Status MustReply(Session& s, uint32_t seq, ProbeTest* t) {
    t->calls.push_back(Call(s, seq, o_.init_timeout_ms));
    const ProbeCall& c = t->calls.back();
    if (c.outcome == ProbeOutcome::kReplied) return Status::Ok();
    return Status::Unavailable(
        "the server did not answer a NULL call of program " + std::to_string(o_.program) +
        " version " + std::to_string(o_.version) + " with sequence number " + std::to_string(seq) +
        " (" + t->name + ", above every number the context used): " + c.reply +
        "; it is not an RPCSEC_GSS server of this program, or refuses this service");
  }

  // The call under test, then whether connection and context survived it.
  void Judge(Session& s, uint32_t seq, ProbeTest* t) {
    t->calls.push_back(Call(s, seq, o_.silence_ms));
    const size_t probed = t->calls.size() - 1;
    const uint32_t probed_xid = xid_;
    if (t->calls[probed].outcome == ProbeOutcome::kReplied) {
      t->verdict = "accepted";
      return;
    }
    t->connection_kept = s.conn.open();
    if (!t->connection_kept) {
      Status reopened = s.conn.Open(o_);
      if (!reopened.ok()) {
        t->context_kept = false;
        t->verdict = "drop-disconnect";
        s.context_gone = true;  // cannot tell; nothing to destroy it with
        t->calls.push_back(
            {s.top + 1, ProbeOutcome::kClosed, "reconnecting: " + reopened.message(), 0});
        return;
      }
    }
    t->calls.push_back(Call(s, s.top + 1, o_.init_timeout_ms));
    t->context_kept = t->calls.back().outcome == ProbeOutcome::kReplied;
    s.context_gone = !t->context_kept;
    // An answer to the probed call that came while the next one was waited
    // for: it was accepted, late.
    ProbeCall& p = t->calls[probed];
    Bytes late;
    if (p.outcome == ProbeOutcome::kSilent && s.conn.TakeLate(probed_xid, &late)) {
      Classify(s, late, p.seq, &p);
      p.reply += " (late: after " + std::to_string(o_.silence_ms) + " ms)";
    }
    if (p.outcome == ProbeOutcome::kReplied) {
      t->verdict = "accepted";
    } else if (!t->context_kept) {
      t->verdict = "discard-context";
    } else if (p.outcome == ProbeOutcome::kDenied) {
      t->verdict = "error-reply";
    } else if (p.outcome == ProbeOutcome::kClosed) {
      t->verdict = "drop-disconnect";
    } else {
      t->verdict = "drop";
    }
  }

  // RPCSEC_GSS_DESTROY with a number the window still takes (above the
  // top, or just below it when the top is the last number there is).
  void End(Session& s) {
    r_->stray_replies += s.conn.replies().stray();
    r_->stray_reply_bytes += s.conn.replies().stray_bytes();
    if (s.context_gone) return;
    const uint32_t seq = s.top + 1 < kMaxGssSeq ? s.top + 1 : s.top - 1;
    // A window of 1 refuses the number below the top: nothing is left.
    if (seq < s.top && r_->window == 1) return;
    if (!s.conn.open() && !s.conn.Open(o_).ok()) return;
    Status st = s.ctx->Destroy(++xid_, service_, seq, [&](ByteView call) -> Result<Bytes> {
      if (!s.conn.Send(call)) return Status::IoError("the connection closed");
      Bytes rec;
      std::string why;
      if (s.conn.Wait(xid_, o_.destroy_timeout_ms, &rec, &why) != ProbeConn::Got::kRecord) {
        return Status::Unavailable(why);
      }
      return rec;
    });
    if (st.ok()) ++r_->contexts_destroyed;
  }

  const ProbeOptions& o_;
  const uint32_t service_;
  ProbeReport* r_;
  uint32_t xid_;
};

std::string Outcome(const ProbeCall& c) {
  return std::string(ProbeOutcomeName(c.outcome)) + " (" + c.reply + ")";
}

}  // namespace

Result<ProbeReport> ProbeWindow(const ProbeOptions& o) {
  const uint32_t service = GssServiceOf(o.security);
  if (service == 0) {
    return Status::InvalidArgument("mode sys has no sequence window; probe krb5, krb5i or krb5p");
  }
  if (o.port == 0) return Status::InvalidArgument("no port given");
  if (o.silence_ms < 1) return Status::InvalidArgument("silence_ms must be at least 1");
  if (o.max_window < 2 || o.max_window >= kMaxGssSeq / 2) {
    return Status::InvalidArgument("max_window must be between 2 and 2^30");
  }
  const uint64_t t0 = common::NowNs();
  ProbeReport r;
  r.host = o.host;
  r.port = o.port;
  r.mode = SecurityName(o.security);
  r.engine = gss::EngineName(o.engine);
  r.program = o.program;
  r.version = o.version;
  Prober p(o, service, &r);
  auto add = [&](Result<ProbeTest> t) -> Result<bool> {
    if (!t.ok()) return t.status();
    r.tests.push_back(std::move(t).value());
    return r.tests.back().verdict == "accepted";
  };
  SECMODE_RETURN_IF_ERROR(add(p.InOrder()).status());
  SECMODE_ASSIGN_OR_RETURN(bool far_ok, add(p.Lag(o.max_window)));
  r.below_window = r.tests.back().verdict;
  if (far_ok) {
    r.window_above = o.max_window;
    r.below_window = "none up to lag " + std::to_string(o.max_window);
  } else {
    const ProbeTest& far = r.tests.back();
    r.below_window_reply = Outcome(far.calls[1]);
    // Bisection: accepted(lo), refused(hi).
    uint32_t lo = 1, hi = o.max_window;
    SECMODE_ASSIGN_OR_RETURN(bool one_ok, add(p.Lag(1)));
    if (!one_ok) {
      hi = 1;
      lo = 0;
    }
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      SECMODE_ASSIGN_OR_RETURN(bool ok, add(p.Lag(mid)));
      (ok ? lo : hi) = mid;
    }
    r.window = hi;
    bool below_ok = true;
    if (lo >= 1) {
      SECMODE_ASSIGN_OR_RETURN(below_ok, add(p.Lag(lo)));
    }
    SECMODE_ASSIGN_OR_RETURN(bool edge_ok, add(p.Lag(hi)));
    r.window_confirmed = below_ok && !edge_ok;
    r.below_window_edge = r.tests.back().verdict;
  }
  SECMODE_RETURN_IF_ERROR(add(p.Duplicate()).status());
  r.duplicate = r.tests.back().verdict;
  SECMODE_RETURN_IF_ERROR(add(p.MaxSeq()).status());
  const ProbeTest& m = r.tests.back();
  r.at_maxseq_minus_1 = Outcome(m.calls[0]);
  r.at_maxseq = m.calls.size() > 1 ? Outcome(m.calls[1]) : "not sent (the connection closed)";
  r.seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  return r;
}

}  // namespace secmode::rpc
