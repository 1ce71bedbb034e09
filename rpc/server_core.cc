#include "rpc/server_core.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "rpc/gss_body.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

std::string Key(ByteView handle) {
  return std::string(reinterpret_cast<const char*>(handle.data()), handle.size());
}

// The clock of context use: CLOCK_MONOTONIC_COARSE (a few ms of
// resolution, read from the vDSO without a system call), cheap enough to
// read on every call.
uint64_t CoarseNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The per-thread scratch of HandleCall and SealReply (reused from call to
// call: no allocation per call; ReleaseThreadBuffers gives large ones back).
thread_local Bytes tl_call_scratch, tl_call_results, tl_seal_mic, tl_seal_scratch;
constexpr size_t kKeepScratch = 64u << 10;

bool ReleaseIfLarge(Bytes& b) {
  if (b.capacity() <= kKeepScratch) return false;
  Bytes().swap(b);
  return true;
}

// The initiator's name as the table's eviction groups it ("user@REALM"); a
// name that cannot be shown is one group, "?".
std::string InitiatorName(gss_name_t name) {
  gss::BufferHandle shown;
  OM_uint32 minor = 0;
  if (name == GSS_C_NO_NAME || GSS_ERROR(gss_display_name(&minor, name, &shown.h, nullptr))) {
    return "?";
  }
  const ByteView v = shown.view();
  return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

void SeqXdr(uint32_t seq, uint8_t out[4]) {
  out[0] = static_cast<uint8_t>(seq >> 24);
  out[1] = static_cast<uint8_t>(seq >> 16);
  out[2] = static_cast<uint8_t>(seq >> 8);
  out[3] = static_cast<uint8_t>(seq);
}

}  // namespace

Result<std::unique_ptr<RpcServerCore>> RpcServerCore::Create(const ServerOptions& options,
                                                             std::vector<ProgramSpec> programs) {
  std::unique_ptr<RpcServerCore> core(new RpcServerCore());
  core->options_ = options;
  core->programs_ = std::move(programs);
  if (options.window == 0) return Status::InvalidArgument("sequence window must be at least 1");
  if (options.max_contexts == 0) return Status::InvalidArgument("max_contexts must be at least 1");
  if (options.context_idle_seconds < 0) {
    return Status::InvalidArgument("context_idle_seconds must not be negative");
  }
  core->idle_ns_ = static_cast<uint64_t>(options.context_idle_seconds * 1e9);
  core->log_ = std::make_unique<RateLimitedLog>(options.log);
  std::random_device rd;
  core->handle_salt_ = (uint64_t{rd()} << 32) | rd();
  if (!options.keytab.empty()) {
    OM_uint32 major, minor = 0;
    gss::NamePtr name;
    if (!options.principal.empty()) {
      gss_buffer_desc b{options.principal.size(), const_cast<char*>(options.principal.data())};
      major = gss_import_name(&minor, &b, const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME),
                              gss::Out(name));
      if (GSS_ERROR(major))
        return gss::GssError("gss_import_name(" + options.principal + ")", major, minor);
    }
    std::string kt =
        options.keytab.find(':') == std::string::npos ? "FILE:" + options.keytab : options.keytab;
    // The replay cache is named in the credential: the environment
    // (KRB5RCACHENAME, then KRB5RCACHETYPE) and krb5.conf's
    // default_rcache_name are consulted only for a credential without one.
    gss_key_value_element_desc elems[] = {{"keytab", kt.c_str()},
                                          {"rcache", options.replay_cache ? "dfl:" : "none:"}};
    gss_key_value_set_desc store{2, elems};
    gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
    major = gss_acquire_cred_from(&minor, name.get(), GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT,
                                  &store, gss::Out(core->acceptor_), nullptr, nullptr);
    if (GSS_ERROR(major))
      return gss::GssError("gss_acquire_cred_from(acceptor " + kt + ")", major, minor);
  }
  return core;
}

std::shared_ptr<ServerGssContext> RpcServerCore::FindContext(ByteView handle) {
  std::shared_lock<std::shared_mutex> lock(table_mu_);
  auto it = contexts_.find(Key(handle));
  return it == contexts_.end() ? nullptr : it->second.ctx;
}

void RpcServerCore::RemoveContext(ByteView handle) {
  std::unique_lock<std::shared_mutex> lock(table_mu_);
  contexts_.erase(Key(handle));
}

size_t RpcServerCore::context_count() {
  std::shared_lock<std::shared_mutex> lock(table_mu_);
  return contexts_.size();
}

size_t RpcServerCore::ExpireLocked(uint64_t now) {
  if (idle_ns_ == 0) return 0;
  size_t n = 0;
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    uint64_t last = it->second.ctx->last_used_ns.load(std::memory_order_relaxed);
    if (now > last && now - last > idle_ns_) {
      it = contexts_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  c_.contexts_expired += n;
  return n;
}

size_t RpcServerCore::ExpireIdleContexts() {
  if (idle_ns_ == 0) return 0;
  const uint64_t now = CoarseNowNs();
  {
    // Look under the shared lock first: calls go on while the table is
    // scanned, and the exclusive lock is taken only when there is work.
    std::shared_lock<std::shared_mutex> lock(table_mu_);
    bool any = false;
    for (const auto& [key, entry] : contexts_) {
      const uint64_t last = entry.ctx->last_used_ns.load(std::memory_order_relaxed);
      if (now > last && now - last > idle_ns_) {
        any = true;
        break;
      }
    }
    if (!any) return 0;
  }
  std::unique_lock<std::shared_mutex> lock(table_mu_);
  return ExpireLocked(now);
}

void RpcServerCore::MakeRoomLocked(uint64_t now) {
  if (contexts_.size() < options_.max_contexts) return;
  const size_t expired = ExpireLocked(now);
  if (contexts_.size() < options_.max_contexts) return;
  // Evict 1/16 of the table (at least one), so the next INITs find room
  // without scanning again.
  const size_t evict = std::min(contexts_.size(), std::max<size_t>(1, options_.max_contexts / 16) +
                                                      (contexts_.size() - options_.max_contexts));
  // Each principal's contexts, least recently used last (popped first).
  struct Holder {
    std::vector<std::pair<uint64_t, const std::string*>> by_use;
    size_t evicted = 0;
  };
  std::unordered_map<std::string_view, Holder> holders;
  for (const auto& [key, entry] : contexts_) {
    holders[entry.principal].by_use.emplace_back(
        entry.ctx->last_used_ns.load(std::memory_order_relaxed), &key);
  }
  std::vector<Holder*> order;  // the largest holder at the front (a heap)
  order.reserve(holders.size());
  for (auto& [principal, h] : holders) {
    std::sort(h.by_use.begin(), h.by_use.end(), std::greater<>());
    order.push_back(&h);
  }
  const auto smaller = [](const Holder* a, const Holder* b) {
    return a->by_use.size() < b->by_use.size();
  };
  std::make_heap(order.begin(), order.end(), smaller);
  std::vector<std::string> victims;
  victims.reserve(evict);
  uint64_t newest_evicted = 0;
  // One at a time from whoever holds the most: the largest holders come
  // down to the next one's level before anyone else loses a context.
  while (victims.size() < evict) {
    std::pop_heap(order.begin(), order.end(), smaller);
    Holder* h = order.back();
    victims.push_back(*h->by_use.back().second);
    newest_evicted = std::max(newest_evicted, h->by_use.back().first);
    h->by_use.pop_back();
    h->evicted++;
    std::push_heap(order.begin(), order.end(), smaller);
  }
  size_t principals = 0;
  for (const auto& [principal, h] : holders) principals += h.evicted > 0;
  for (const auto& k : victims) contexts_.erase(k);
  c_.contexts_evicted += evict;
  const size_t max = options_.max_contexts;
  log_->Say(LogKind::kContextTable, [=] {
    return "RPCSEC_GSS context table full (" + std::to_string(max) + " contexts" +
           (expired ? ", " + std::to_string(expired) + " expired" : std::string()) +
           "): evicted the " + std::to_string(evict) + " least recently used of the " +
           std::to_string(principals) + " principal(s) holding the most, idle for at least " +
           std::to_string((now > newest_evicted ? now - newest_evicted : 0) / 1000000) +
           " ms; their clients get RPCSEC_GSS_CREDPROBLEM and must create new contexts";
  });
}

bool RpcServerCore::ReleaseThreadBuffers() {
  bool released = ReleaseIfLarge(tl_call_scratch);
  released = ReleaseIfLarge(tl_call_results) || released;
  released = ReleaseIfLarge(tl_seal_mic) || released;
  released = ReleaseIfLarge(tl_seal_scratch) || released;
  return ReleaseGssBodyBuffers() || released;
}

ServerCounters RpcServerCore::counters() const {
  ServerCounters s;
  s.calls = c_.calls;
  s.replies = c_.replies;
  s.undecodable = c_.undecodable;
  s.duplicates = c_.duplicates;
  s.below_window = c_.below_window;
  s.disconnects = c_.disconnects;
  s.contexts_created = c_.contexts_created;
  s.contexts_destroyed = c_.contexts_destroyed;
  s.contexts_discarded = c_.contexts_discarded;
  s.contexts_evicted = c_.contexts_evicted;
  s.contexts_expired = c_.contexts_expired;
  s.auth_errors = c_.auth_errors;
  s.garbage_args = c_.garbage_args;
  s.prog_unavail = c_.prog_unavail;
  s.proc_unavail = c_.proc_unavail;
  return s;
}

void RpcServerCore::Deny(uint32_t xid, uint32_t auth_stat, Bytes* reply) {
  c_.auth_errors++;
  reply->clear();
  EncodeAuthErrorReply(xid, auth_stat, reply);
}

Disposition RpcServerCore::HandleCall(ByteView record, Bytes* reply, CallCheck* check) {
  Bytes& scratch = tl_call_scratch;
  Bytes& results = tl_call_results;
  OpenedCall call;
  bool ready = false;
  Disposition d = OpenCall(record, &call, reply, &scratch, &ready, check);
  if (d != Disposition::kReply || !ready) return d;
  results.clear();
  uint32_t stat = Execute(call, &results);
  Status s = SealReply(call.target, stat, results, reply);
  if (!s.ok()) {
    // Sealing only fails if the GSS library does; answer SYSTEM_ERR.
    reply->clear();
    EncodeAcceptedReply(call.header.xid, kAuthNone, {}, kSystemErr, reply);
  }
  return Disposition::kReply;
}

uint32_t RpcServerCore::Execute(const OpenedCall& call, Bytes* results) {
  const CallHeader& h = call.header;
  for (const auto& p : programs_) {
    if (p.prog != h.prog) continue;
    uint32_t stat = p.handler(h.vers, h.proc, call.args, results);
    if (stat == kProcUnavail) c_.proc_unavail++;
    if (stat == kGarbageArgs) c_.garbage_args++;
    return stat;
  }
  c_.prog_unavail++;  // checked in OpenCall already; kept for direct callers
  return kProgUnavail;
}

Status RpcServerCore::SealReply(const ReplyTarget& t, uint32_t accept_stat, ByteView results,
                                Bytes* reply) {
  reply->clear();
  c_.replies++;
  if (t.flavor != kRpcsecGss) {
    EncodeAcceptedReply(t.xid, kAuthNone, {}, accept_stat, reply);
    if (accept_stat == kSuccess) XdrEncoder(reply).PutRaw(results);
    return Status::Ok();
  }
  if (!t.context) return Status::InvalidArgument("RPCSEC_GSS reply without a context");
  Bytes& mic = tl_seal_mic;
  Bytes& scratch = tl_seal_scratch;
  uint8_t seq_xdr[4];
  SeqXdr(t.seq, seq_xdr);
  gss::ProtectorPool* pool = t.context->pool();
  if (pool == nullptr) return Status::InvalidArgument("context is not established");
  SECMODE_ASSIGN_OR_RETURN(gss::ProtectorPool::Lease p, pool->Acquire());
  // RFC 2203 5.3.3.2: reply verifier = MIC over the XDR seq_num.
  SECMODE_RETURN_IF_ERROR(p->GetMic(ByteView(seq_xdr, 4), &mic));
  EncodeAcceptedReply(t.xid, kRpcsecGss, mic, accept_stat, reply);
  if (accept_stat != kSuccess) return Status::Ok();
  // RFC 2203 5.3.3.4: results protected like the arguments were.
  return SealGssBody(*p, t.service, t.seq, results, reply, &scratch);
}

Disposition RpcServerCore::WindowReaction(const std::shared_ptr<ServerGssContext>& ctx) {
  switch (options_.policy) {
    case WindowPolicy::kDrop: return Disposition::kDrop;
    case WindowPolicy::kDropDisconnect: c_.disconnects++; return Disposition::kDropDisconnect;
    case WindowPolicy::kDiscardContext:
      // As Azure NetApp Files documents for ONTAP: the context is gone; the
      // client gets CREDPROBLEM on its next call and must create a new one.
      RemoveContext(ctx->handle);
      c_.contexts_discarded++;
      return Disposition::kDrop;
  }
  return Disposition::kDrop;
}

Disposition RpcServerCore::OpenCall(ByteView record, OpenedCall* call, Bytes* reply, Bytes* scratch,
                                    bool* ready, CallCheck* check) {
  *ready = false;
  c_.calls++;
  CallHeader& h = call->header;
  Status s = DecodeCallHeader(record, &h);
  if (!s.ok()) {
    // Without a decodable header there is no xid to answer to (RFC 5531
    // gives no reply for garbage); the transport decides about the stream.
    c_.undecodable++;
    return Disposition::kDrop;
  }
  ReplyTarget& t = call->target;
  t.xid = h.xid;
  reply->clear();
  // RFC 5531 section 9: only RPC version 2.
  if (h.rpcvers != kRpcVersion) {
    c_.auth_errors++;
    EncodeRpcMismatchReply(h.xid, reply);
    return Disposition::kReply;
  }
  ByteView body = record.subspan(h.body_offset);
  switch (h.cred.flavor) {
    case kAuthNone: break;
    case kAuthSys: {
      // Per thread, reused: its name and gids keep their capacity, so the
      // call path allocates nothing.
      thread_local AuthSysParms p;
      if (!DecodeAuthSys(h.cred.body, &p).ok()) {
        Deny(h.xid, kAuthBadCred, reply);
        return Disposition::kReply;
      }
      break;
    }
    case kRpcsecGss: {
      if (!acceptor_) {
        // RFC 2203 5.1 (errata 4067): no RPCSEC_GSS here -> AUTH_REJECTEDCRED.
        Deny(h.xid, kAuthRejectedCred, reply);
        return Disposition::kReply;
      }
      GssCred cred;
      if (!DecodeGssCred(h.cred.body, &cred).ok()) {
        Deny(h.xid, kAuthBadCred, reply);
        return Disposition::kReply;
      }
      // RFC 2203 5.3.3.3: a bad version or service -> AUTH_BADCRED.
      if (cred.version != kRpcsecGssVers1 || cred.service < kGssSvcNone ||
          cred.service > kGssSvcPrivacy) {
        Deny(h.xid, kAuthBadCred, reply);
        return Disposition::kReply;
      }
      if (cred.proc == kGssInit || cred.proc == kGssContinueInit) {
        return HandleGssControl(h, cred, record, reply);
      }
      if (cred.proc != kGssData && cred.proc != kGssDestroy) {
        Deny(h.xid, kAuthBadCred, reply);
        return Disposition::kReply;
      }
      // RFC 2203 5.3.3.3: an unknown handle -> RPCSEC_GSS_CREDPROBLEM.
      std::shared_ptr<ServerGssContext> ctx = FindContext(cred.handle);
      if (!ctx) {
        Deny(h.xid, kRpcsecGssCredProblem, reply);
        return Disposition::kReply;
      }
      const uint64_t now = CoarseNowNs();
      const uint64_t last_used = ctx->last_used_ns.load(std::memory_order_relaxed);
      if (idle_ns_ != 0 && now > last_used && now - last_used > idle_ns_) {
        // Unused for too long: gone, as if the sweep had already run.
        RemoveContext(ctx->handle);
        c_.contexts_expired++;
        Deny(h.xid, kRpcsecGssCredProblem, reply);
        return Disposition::kReply;
      }
      if (h.verf.flavor != kRpcsecGss) {
        Deny(h.xid, kAuthBadVerf, reply);
        return Disposition::kReply;
      }
      enum class Next { kRun, kWindow, kDestroy, kGarbage } next = Next::kRun;
      gss::ProtectorPool* pool = ctx->pool();
      if (pool == nullptr) {
        Deny(h.xid, kRpcsecGssCredProblem, reply);  // still being created
        return Disposition::kReply;
      }
      // This thread's Protector of the context: the MIC and the body are
      // checked outside the context's lock (in parallel where the engine
      // forks); only the window check below is serialised. The lease ends
      // before any reply is sealed (a serialised pool is not re-entrant).
      {
        auto lease = pool->Acquire();
        if (!lease.ok()) {
          Deny(h.xid, kRpcsecGssCredProblem, reply);
          return Disposition::kReply;
        }
        gss::Protector& protector = **lease;
        // RFC 2203 5.3.3.1 / 5.3.3.3: verify the header MIC first, so a
        // forged header never moves the window; a bad MIC ->
        // RPCSEC_GSS_CREDPROBLEM.
        if (!protector.VerifyMic(record.subspan(0, h.cred_end), h.verf.body).ok()) {
          Deny(h.xid, kRpcsecGssCredProblem, reply);
          return Disposition::kReply;
        }
        // RFC 2203 5.3.3.1: seq_num reaching MAXSEQ -> RPCSEC_GSS_CTXPROBLEM.
        if (cred.seq >= kMaxGssSeq) {
          Deny(h.xid, kRpcsecGssCtxProblem, reply);
          return Disposition::kReply;
        }
        SeqVerdict v;
        {
          std::lock_guard<std::mutex> lock(ctx->mu);
          const uint32_t highest = ctx->seq_window.highest();
          v = ctx->seq_window.Check(cred.seq);
          if (check != nullptr) {
            check->checked = true;
            check->context = TraceContextId(ctx->handle);
            check->seq = cred.seq;
            check->verdict = v;
            check->highest = highest;
            check->checked_ns = common::NowNs();
          }
        }
        if (v != SeqVerdict::kAccept) {
          (v == SeqVerdict::kDuplicate ? c_.duplicates : c_.below_window)++;
          next = Next::kWindow;
        } else {
          // Only a call that verified and passed the window keeps a
          // context alive (a forged one cannot).
          if (last_used != now) ctx->last_used_ns.store(now, std::memory_order_relaxed);
          t.flavor = kRpcsecGss;
          t.context = ctx;
          t.service = cred.service;
          t.seq = cred.seq;
          if (cred.proc == kGssDestroy) {
            next = Next::kDestroy;
          } else if (!OpenGssBody(protector, cred.service, cred.seq, body, scratch, &call->args)
                          .ok()) {
            // RFC 2203 5.3.3.4: arguments that do not verify -> GARBAGE_ARGS.
            next = Next::kGarbage;
          }
        }
      }
      switch (next) {
        case Next::kRun: break;
        case Next::kWindow:
          // RFC 2203 5.3.3.1: silently discarded; the policy says what else.
          return WindowReaction(ctx);
        case Next::kDestroy: {
          // RFC 2203 5.4: DESTROY is answered (verifier over seq_num), then
          // the context is gone.
          Status sr = SealReply(t, kSuccess, {}, reply);
          RemoveContext(ctx->handle);
          c_.contexts_destroyed++;
          return sr.ok() ? Disposition::kReply : Disposition::kDrop;
        }
        case Next::kGarbage:
          c_.garbage_args++;
          return SealReply(t, kGarbageArgs, {}, reply).ok() ? Disposition::kReply
                                                            : Disposition::kDrop;
      }
      break;
    }
    default: Deny(h.xid, kAuthBadCred, reply); return Disposition::kReply;
  }
  if (h.cred.flavor != kRpcsecGss) call->args = body;
  // RFC 5531 section 9: program, version, procedure availability.
  const ProgramSpec* prog = nullptr;
  for (const auto& p : programs_) {
    if (p.prog == h.prog) prog = &p;
  }
  if (prog == nullptr) {
    c_.prog_unavail++;
    if (!SealReply(t, kProgUnavail, {}, reply).ok()) return Disposition::kDrop;
    return Disposition::kReply;
  }
  if (h.vers < prog->vers_low || h.vers > prog->vers_high) {
    reply->clear();
    c_.replies++;
    EncodeProgMismatchReply(h.xid, prog->vers_low, prog->vers_high, reply);
    return Disposition::kReply;
  }
  *ready = true;
  return Disposition::kReply;
}

// RFC 2203 5.2: RPCSEC_GSS_INIT / CONTINUE_INIT.
Disposition RpcServerCore::HandleGssControl(const CallHeader& h, const GssCred& cred,
                                            ByteView record, Bytes* reply) {
  std::shared_ptr<ServerGssContext> ctx;
  if (cred.proc == kGssInit) {
    Bytes handle(8);
    uint64_t v = next_handle_.fetch_add(1) ^ handle_salt_;
    for (int i = 0; i < 8; ++i) handle[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
    ctx = std::make_shared<ServerGssContext>(std::move(handle), options_.window);
    ctx->last_used_ns.store(CoarseNowNs(), std::memory_order_relaxed);
  } else {
    ctx = FindContext(cred.handle);
    if (!ctx) {
      Deny(h.xid, kRpcsecGssCredProblem, reply);
      return Disposition::kReply;
    }
  }
  XdrDecoder d(record.subspan(h.body_offset), h.body_offset);
  ByteView token;
  if (!d.GetOpaque(&token, kMaxGssInitToken, "rpc_gss_init_arg gss_token").ok() ||
      !d.ExpectEnd("rpc_gss_init_arg").ok()) {
    c_.garbage_args++;
    c_.replies++;
    reply->clear();
    EncodeAcceptedReply(h.xid, kAuthNone, {}, kGarbageArgs, reply);
    return Disposition::kReply;
  }
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (ctx->pool() != nullptr) {
    Deny(h.xid, kRpcsecGssCredProblem, reply);  // already established
    return Disposition::kReply;
  }
  gss_buffer_desc in{token.size(), const_cast<uint8_t*>(token.data())};
  gss::BufferHandle out;
  gss::NamePtr initiator;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_accept_sec_context(&minor, gss::Out(ctx->pending), acceptor_.get(), &in,
                                           GSS_C_NO_CHANNEL_BINDINGS, gss::Out(initiator), nullptr,
                                           &out.h, nullptr, nullptr, nullptr);
  Bytes verf;
  uint32_t window = 0;
  ByteView handle_out;
  std::string principal;  // whose context it is, once established
  if (major == GSS_S_COMPLETE) {
    principal = InitiatorName(initiator.get());
    auto p = gss::NewProtector(options_.engine, std::move(ctx->pending));
    if (!p.ok()) {
      major = GSS_S_FAILURE;
    } else {
      window = options_.window;
      Bytes win;
      XdrEncoder(&win).PutU32(window);
      // RFC 2203 5.2.3.1: verifier of the final INIT reply = MIC over
      // seq_window.
      if (!(*p)->GetMic(win, &verf).ok()) major = GSS_S_FAILURE;
      ctx->SetProtectors(std::make_unique<gss::ProtectorPool>(std::move(p).value()));
    }
  }
  if (major == GSS_S_COMPLETE || major == GSS_S_CONTINUE_NEEDED) {
    handle_out = ctx->handle;
    const uint64_t now = CoarseNowNs();
    ctx->last_used_ns.store(now, std::memory_order_relaxed);
    std::unique_lock<std::shared_mutex> tl(table_mu_);
    // Only an accepted token takes a place (a refused one, e.g. a replay
    // the acceptor's replay cache caught, never evicts anyone).
    std::string key = Key(ctx->handle);
    if (contexts_.find(key) == contexts_.end()) MakeRoomLocked(now);
    contexts_[key] = TableEntry{ctx, std::move(principal)};
  } else {
    RemoveContext(ctx->handle);
  }
  if (major == GSS_S_COMPLETE) c_.contexts_created++;
  reply->clear();
  c_.replies++;
  EncodeAcceptedReply(h.xid, verf.empty() ? kAuthNone : kRpcsecGss, verf, kSuccess, reply);
  // RFC 2203 5.2.3.1: rpc_gss_init_res.
  XdrEncoder e(reply);
  e.PutOpaque(handle_out);
  e.PutU32(major);
  e.PutU32(minor);
  e.PutU32(window);
  e.PutOpaque(out.view());
  return Disposition::kReply;
}

}  // namespace secmode::rpc
