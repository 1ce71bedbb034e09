// RpcServerCore: turns one RPC call record into a reply record (or a
// decision to drop), independent of any transport. It implements the
// server half of RFC 5531 (accept/reject statuses), AUTH_NONE, AUTH_SYS and
// RPCSEC_GSS v1 (RFC 2203): context creation with gss_accept_sec_context
// against a keytab, DATA with service none / integrity / privacy, DESTROY,
// and the per-context sequence window (RFC 2203 5.3.3.1) with a policy for
// what happens beyond the RFC's "silently discard".
//
// Errors the RFCs prescribe (section numbers at the code): undecodable
// header -> dropped (no xid to answer); rpcvers != 2 -> MSG_DENIED
// RPC_MISMATCH; bad credential / version / service -> AUTH_BADCRED; unknown
// handle or bad header MIC -> RPCSEC_GSS_CREDPROBLEM; seq_num >= MAXSEQ ->
// RPCSEC_GSS_CTXPROBLEM; unknown program -> PROG_UNAVAIL; version ->
// PROG_MISMATCH; procedure -> PROC_UNAVAIL; args that do not decode or
// verify -> GARBAGE_ARGS; duplicate or below-window seq -> dropped per policy.
//
// Contexts are bounded: a context unused for context_idle_seconds is
// forgotten (its client gets RPCSEC_GSS_CREDPROBLEM and makes a new one, as
// RFC 2203 5.3.3.3 lets a server do), and when a new context would make the
// table hold more than max_contexts, a batch of 1/16 of the table (so an
// INIT does not scan the table each time) is evicted to make room, with a
// rate-limited log line. The batch is taken from the principals holding the
// most contexts, each one's least recently used first, until they hold no
// more than the next (a context still being created counts for one
// "principal" of its own): one principal that churns contexts evicts its
// own, never another principal's while it holds more than that one. An INIT
// the GSS acceptor refuses (a replayed token, garbage) never takes a place
// or evicts anyone. The acceptor's replay cache is MIT's default file cache
// ("dfl:": krb5_<euid>.rcache2 in KRB5RCACHEDIR, else /var/tmp; gss/realm.h
// keeps it in the realm's directory), named in the acceptor's credential, so
// no KRB5RCACHENAME, KRB5RCACHETYPE or default_rcache_name turns it off:
// only ServerOptions::replay_cache = false does.
//
// Thread safety: HandleCall may be called from many threads at once; each
// GSS context serialises its window (and, with MIT's engine, its one
// Protector); the native engine's Protectors run in parallel.
#ifndef SECMODE_RPC_SERVER_CORE_H_
#define SECMODE_RPC_SERVER_CORE_H_

#include <gssapi/gssapi.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "gss/gss_handles.h"
#include "gss/protector.h"
#include "gss/protector_pool.h"
#include "rpc/call_trace.h"
#include "rpc/rpc_msg.h"
#include "rpc/sequence_window.h"
#include "rpc/server_log.h"
#include "rpc/window_policy.h"

namespace secmode::rpc {

// Executes one procedure; returns an accept_stat (kSuccess with *results
// filled, kProcUnavail, kGarbageArgs ...).
using ProcHandler = std::function<uint32_t(uint32_t vers, uint32_t proc, common::ByteView args,
                                           common::Bytes* results)>;
struct ProgramSpec {
  uint32_t prog = 0, vers_low = 0, vers_high = 0;
  ProcHandler handler;
};

struct ServerOptions {
  std::string keytab;     // acceptor keytab; "" = no RPCSEC_GSS
  std::string principal;  // "" = any principal in the keytab
  // MIT's replay cache ("dfl:") for the acceptor; false = "none:", so a
  // captured INIT can be replayed (tests only).
  bool replay_cache = true;
  gss::Engine engine = gss::Engine::kMit;
  uint32_t window = 128;  // RFC 2203 seq_window announced and enforced
  WindowPolicy policy = WindowPolicy::kDrop;
  // Contexts held at once (established or being created); a new one beyond
  // it evicts the least recently used of the principals holding the most
  // (never refuses the newcomer).
  size_t max_contexts = 16384;
  // A context unused this long is forgotten; 0 = never.
  double context_idle_seconds = 600;
  // Where eviction is reported (empty: standard error).
  LogSink log;
};

struct ServerCounters {
  uint64_t calls = 0, replies = 0;
  uint64_t undecodable = 0;   // dropped: no header to answer
  uint64_t duplicates = 0;    // window: seen before
  uint64_t below_window = 0;  // window: too old
  uint64_t disconnects = 0;   // connections closed by policy
  uint64_t contexts_created = 0, contexts_destroyed = 0, contexts_discarded = 0;
  uint64_t contexts_evicted = 0;  // to make room (the largest holders' least recently used)
  uint64_t contexts_expired = 0;  // unused for context_idle_seconds
  uint64_t auth_errors = 0, garbage_args = 0, prog_unavail = 0, proc_unavail = 0;
};

enum class Disposition { kReply, kDrop, kDropDisconnect };

// One RPCSEC_GSS context as the server holds it. Its crypto runs outside
// `mu` on the calling thread's own Protector from the pool (in parallel with
// the native engine); `mu` serialises only the window and the set-up, and a
// call takes it once (the window check): the pool is read without it.
struct ServerGssContext {
  ServerGssContext(common::Bytes h, uint32_t window) : handle(std::move(h)), seq_window(window) {}
  const common::Bytes handle;
  std::mutex mu;            // guards everything below but the atomics
  gss::ContextPtr pending;  // during CONTINUE_INIT
  SequenceWindow seq_window;
  // When a call last passed the window (coarse monotonic ns): idle expiry
  // and least-recently-used eviction.
  std::atomic<uint64_t> last_used_ns{0};

  // With `mu` held: the context's pool, set once, when established; never
  // reset while the context lives.
  void SetProtectors(std::unique_ptr<gss::ProtectorPool> pool) {
    protectors_ = std::move(pool);
    ready_.store(protectors_.get(), std::memory_order_release);
  }
  // The pool, or null while the context is still being created. Without
  // `mu`: a lock taken on each call only to read a pointer set once moved
  // the lock between the CPUs and made calls wait on it.
  gss::ProtectorPool* pool() const { return ready_.load(std::memory_order_acquire); }

 private:
  std::unique_ptr<gss::ProtectorPool> protectors_;   // guarded by mu
  std::atomic<gss::ProtectorPool*> ready_{nullptr};  // protectors_.get() once set
};

// Where a reply goes and how it is protected.
struct ReplyTarget {
  uint32_t xid = 0;
  uint32_t flavor = kAuthNone;
  std::shared_ptr<ServerGssContext> context;  // RPCSEC_GSS only
  uint32_t service = kGssSvcNone;
  uint32_t seq = 0;
};

// A call that passed authentication and the window and is ready to run.
struct OpenedCall {
  CallHeader header;
  ReplyTarget target;
  common::ByteView args;  // into the record or into the caller's scratch
};

class RpcServerCore {
 public:
  static common::Result<std::unique_ptr<RpcServerCore>> Create(const ServerOptions& options,
                                                               std::vector<ProgramSpec> programs);

  // Whole call -> reply record (no record mark) in *reply, or a drop.
  // With `check`, says what the sequence window made of the call (tracing).
  Disposition HandleCall(common::ByteView record, common::Bytes* reply, CallCheck* check = nullptr);

  // The two halves of HandleCall, used by the server legs. OpenCall returns
  // kReply with *ready=false when it already wrote an error reply (or an
  // INIT/DESTROY reply) to *reply; with *ready=true the call is in *call.
  Disposition OpenCall(common::ByteView record, OpenedCall* call, common::Bytes* reply,
                       common::Bytes* scratch, bool* ready, CallCheck* check = nullptr);
  // Appends nothing on its own: replaces *reply with a full accepted reply.
  common::Status SealReply(const ReplyTarget& target, uint32_t accept_stat,
                           common::ByteView results, common::Bytes* reply);
  // Runs the program for an opened call.
  uint32_t Execute(const OpenedCall& call, common::Bytes* results);

  std::shared_ptr<ServerGssContext> FindContext(common::ByteView handle);
  size_t context_count();
  // Forgets contexts unused for context_idle_seconds; returns how many.
  // HandleCall does it too when the table is full; a server calls it now
  // and then so idle contexts do not hold memory until then.
  size_t ExpireIdleContexts();
  // Gives back the calling thread's scratch buffers beyond a small size
  // (after a large message; a server thread calls it when idle); true if
  // any was large.
  static bool ReleaseThreadBuffers();
  ServerCounters counters() const;
  const ServerOptions& options() const { return options_; }

 private:
  RpcServerCore() = default;
  Disposition HandleGssControl(const CallHeader& h, const GssCred& cred, common::ByteView record,
                               common::Bytes* reply);
  void Deny(uint32_t xid, uint32_t auth_stat, common::Bytes* reply);
  void RemoveContext(common::ByteView handle);
  // Makes room for one more context; table_mu_ held exclusively.
  void MakeRoomLocked(uint64_t now_ns);
  size_t ExpireLocked(uint64_t now_ns);
  Disposition WindowReaction(const std::shared_ptr<ServerGssContext>& ctx);

  ServerOptions options_;
  std::vector<ProgramSpec> programs_;
  gss::CredPtr acceptor_;
  // A context in the table and whose it is: the initiator's name
  // (gss_display_name) once established, "" while being created.
  struct TableEntry {
    std::shared_ptr<ServerGssContext> ctx;
    std::string principal;
  };
  std::shared_mutex table_mu_;
  std::unordered_map<std::string, TableEntry> contexts_;  // by handle
  std::atomic<uint64_t> next_handle_{1};
  uint64_t idle_ns_ = 0;  // 0 = no expiry
  std::unique_ptr<RateLimitedLog> log_;
  uint64_t handle_salt_ = 0;
  struct AtomicCounters {
    std::atomic<uint64_t> calls{0}, replies{0}, undecodable{0}, duplicates{0}, below_window{0},
        disconnects{0}, contexts_created{0}, contexts_destroyed{0}, contexts_discarded{0},
        contexts_evicted{0}, contexts_expired{0}, auth_errors{0}, garbage_args{0}, prog_unavail{0},
        proc_unavail{0};
  } c_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_SERVER_CORE_H_
