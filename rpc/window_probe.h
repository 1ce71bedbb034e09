// ProbeWindow: what an RPCSEC_GSS server does with sequence numbers, measured
// from the outside with NULL procedure calls (RFC 2203 5.3.3.1), so the
// nconnect question can be answered for the server at hand: its window size
// exactly, and its reaction to a call below the window.
//
// Each test runs on a context of its own (RFC 2203 5.2, created over the
// TCP connection that then carries the test's DATA calls: MIT gssrpc keeps a
// context with its connection), so no test sees what an earlier one left in a
// window (a server whose window keeps old bits across a jump would otherwise
// answer "seen before" where the test asks "below?"). A fresh window's first
// number is always accepted and becomes its top, so "lag k" is two calls:
// seq k+1 (the top; it must be answered) and then seq 1. The window is the
// smallest lag refused, found by bisection between 1 and max_window and then
// confirmed by testing W-1 and W once more on new contexts.
//
// The tests:
//   in order    seq 1, 2, 3 and a jump ahead of 2^20: all must be answered
//               (otherwise the server does not answer NULL calls of this
//               program and version, and nothing else is tried);
//   lag k       as above, for the bisection (the evidence of each is kept);
//   duplicate   the top sent twice;
//   MAXSEQ      0x7fffffff and then 0x80000000 (RFC 2203's MAXSEQ).
// A call's outcome is: replied (accepted SUCCESS with a verifier over its
// number that verifies), denied (any other reply, named: e.g. AUTH_ERROR
// RPCSEC_GSS_CTXPROBLEM, MIT gssrpc's answer to a refused number), closed
// (the server ended the connection) or silent (no reply within silence_ms,
// while the connection stayed open). After a call that was not replied, one
// more call with a fresh number above the top (on a new connection if the
// old one was closed) tells whether the context survived: replied, it did;
// denied, the server forgot it. The reaction below the window is named as
// `secmode nconnect --reaction` names them where it is one of those: drop
// (silent, connection and context kept), drop-disconnect (connection closed,
// context kept), discard-context (context gone); a server that answers with
// an error and keeps both is "error-reply", which the simulator has no
// reaction for.
//
// Every context a test created is ended with RPCSEC_GSS_DESTROY (RFC 2203
// 5.4) unless the server already forgot it, best effort within
// destroy_timeout_ms. Nothing waits without a limit: connects, INIT round
// trips and each reply wait have deadlines, and a wait ends at its deadline
// however many other replies keep coming. What a server sends is bounded
// (rpc/probe_replies.h): a reply record beyond 64 KiB breaks the connection,
// a reply to an earlier call is kept (one per call, the last few calls of a
// connection), and a reply to no call is dropped and counted
// (stray_replies).
//
// Thread safety: ProbeWindow is reentrant; it blocks while it runs (a silent
// server costs silence_ms per refused call, about half of the bisection).
#ifndef SECMODE_RPC_WINDOW_PROBE_H_
#define SECMODE_RPC_WINDOW_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "gss/protector.h"
#include "rpc/client_auth.h"

namespace secmode::rpc {

struct ProbeOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  Security security = Security::kKrb5i;  // an RPCSEC_GSS one
  gss::Engine engine = gss::Engine::kMit;
  int32_t enctype = 0;  // 0 = whatever the KDC picks
  std::string ccache;   // "" = default ccache
  std::string target = "nfs@localhost";
  uint32_t program = 100003, version = 4;  // NFSv4; the NULL procedure is called
  // How long no reply counts as "silent" (the server may answer an accepted
  // call late: keep it well above the server's round trip).
  int silence_ms = 1000;
  // The bisection's upper bound: a server that accepts a lag this large is
  // reported as having a window above it.
  uint32_t max_window = 65536;
  int connect_timeout_ms = 5000;
  int init_timeout_ms = 10000;
  int destroy_timeout_ms = 5000;
};

enum class ProbeOutcome { kReplied, kDenied, kClosed, kSilent };
const char* ProbeOutcomeName(ProbeOutcome o);  // "replied", "denied", "closed", "silent"

struct ProbeCall {
  uint32_t seq = 0;
  ProbeOutcome outcome = ProbeOutcome::kSilent;
  std::string reply;  // DescribeReply of what came back, or why nothing did
  double ms = 0;      // from the send to the outcome
};

struct ProbeTest {
  std::string name;  // "in order", "lag 64", "duplicate", "MAXSEQ"
  uint32_t lag = 0;  // lag tests: how far below the top the probed number is
  std::vector<ProbeCall> calls;
  // After a call that was not replied: whether the connection and the
  // context were still there (both true when every call was replied).
  bool connection_kept = true, context_kept = true;
  // The verdict on the test's last numbered call: "accepted", or the
  // reaction ("drop", "drop-disconnect", "discard-context", "error-reply").
  std::string verdict;
};

struct ProbeReport {
  std::string host, mode, engine;
  uint16_t port = 0;
  uint32_t program = 0, version = 0;
  uint32_t advertised_window = 0;  // seq_window of the INIT reply (RFC 2203 5.2.3.1)
  // The smallest lag refused; 0 when even max_window was accepted
  // (window_above = max_window then).
  uint32_t window = 0, window_above = 0;
  // W-1 accepted and W refused again, each on a new context.
  bool window_confirmed = false;
  std::string below_window;                  // reaction to the lag test at max_window ("far below")
  std::string below_window_edge;             // reaction to the lag test at the window itself
  std::string below_window_reply;            // what a refused call got back, if anything
  std::string duplicate;                     // verdict on a number sent twice
  std::string at_maxseq_minus_1, at_maxseq;  // outcomes with their replies
  std::vector<ProbeTest> tests;
  uint64_t contexts_created = 0, contexts_destroyed = 0;
  // Replies to no call outstanding (rpc/probe_replies.h), dropped: their
  // number and bytes.
  uint64_t stray_replies = 0, stray_reply_bytes = 0;
  double seconds = 0;
};

common::Result<ProbeReport> ProbeWindow(const ProbeOptions& options);

// The reactions `secmode nconnect --reaction` knows: the report's reaction
// where it is one of them, else "".
std::string ModelReaction(const ProbeReport& report);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_WINDOW_PROBE_H_
