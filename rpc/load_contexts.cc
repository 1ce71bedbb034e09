// The load generator's RPCSEC_GSS contexts, from creation to DESTROY
// (rpc/load_runner.h), and the blocking calls their set-up uses.
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rpc/gss_client.h"
#include "rpc/load_runner.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Connect;
using common::Deadline;
using common::Fd;
using common::Result;
using common::Status;
using common::WaitFor;
using common::WriteAll2;
using load_internal::DestroyContexts;
using load_internal::NewLoadAuth;

Result<Bytes> BlockingRoundTrip(const std::string& host, uint16_t port, ByteView call,
                                Deadline connect, Deadline reply) {
  SECMODE_ASSIGN_OR_RETURN(Fd fd, Connect(host, port, Deadline::Earlier(connect, reply)));
  return BlockingCall(fd.get(), call, reply, "reply from " + host + ":" + std::to_string(port));
}

Result<Bytes> BlockingCall(int fd, ByteView call, Deadline deadline, const std::string& what) {
  const uint64_t t0 = common::NowNs();
  if (!deadline.none()) {
    // A send that blocks (the peer reads nothing) gives up at the deadline.
    const int ms = std::max(1, deadline.PollMs());
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  Bytes mark;
  AppendRecordMark(static_cast<uint32_t>(call.size()), &mark);
  Status sent = WriteAll2(fd, mark, call);
  if (!sent.ok()) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return Status::Unavailable("sending the call (" + std::to_string(call.size()) +
                                 " bytes): the peer took nothing for " +
                                 std::to_string((common::NowNs() - t0) / 1000000) +
                                 " ms, waiting for a " + what);
    }
    return sent;
  }
  RecordReader reader;
  while (true) {
    ByteView rec;
    SECMODE_ASSIGN_OR_RETURN(bool got, reader.Next(&rec));
    if (got) return Bytes(rec.begin(), rec.end());
    if (!deadline.none()) SECMODE_RETURN_IF_ERROR(WaitFor(fd, false, deadline, what));
    auto space = reader.WriteSpace(4096);
    ssize_t n = recv(fd, space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError("waiting for a " + what + ": recv: " + std::strerror(errno));
    if (n == 0) return Status::IoError("the connection was closed before the " + what);
    reader.Commit(static_cast<size_t>(n));
  }
}

Result<ContextCreationTime> TimeContextCreation(const LoadOptions& options, int rounds) {
  const uint32_t service = GssServiceOf(options.security);
  if (service == 0) return Status::InvalidArgument("AUTH_SYS has no context to create");
  if (rounds < 1) return Status::InvalidArgument("at least one round is needed");
  common::LatencySamples wall, cpu;
  for (int i = 0; i < rounds; ++i) {
    const uint64_t c0 = common::ProcessCpuNs();
    const uint64_t t0 = common::NowNs();
    SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<ClientAuth> auth, NewLoadAuth(options, service));
    wall.Add(common::NowNs() - t0);
    cpu.Add(common::ProcessCpuNs() - c0);
    // Untimed: the server forgets the context again (best effort).
    if (options.destroy_timeout_ms > 0) {
      uint64_t gone = 0;
      std::string ignored;
      DestroyContexts(options, {auth}, Deadline::AfterMs(options.destroy_timeout_ms), &gone,
                      &ignored);
    }
  }
  return ContextCreationTime{static_cast<int64_t>(wall.Percentile(0.5)),
                             static_cast<int64_t>(cpu.Percentile(0.5))};
}

namespace load_internal {

Result<std::shared_ptr<ClientAuth>> NewLoadAuth(const LoadOptions& o, uint32_t service,
                                                Deadline run) {
  if (service == 0) return std::shared_ptr<ClientAuth>(NewSysAuth(kNfsProgram, kNfsVersion));
  GssClientConfig cfg;
  cfg.ccache = o.ccache;
  cfg.target = o.target;
  cfg.enctype = o.enctype;
  cfg.engine = o.engine;
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  cfg.service = service;
  SECMODE_ASSIGN_OR_RETURN(auto ctx, GssClientContext::Establish(cfg, [&](ByteView call) {
                             return BlockingRoundTrip(
                                 o.host, o.port, call,
                                 Deadline::Earlier(Deadline::AfterMs(o.connect_timeout_ms), run),
                                 Deadline::Earlier(Deadline::AfterMs(o.init_timeout_ms), run));
                           }));
  return std::shared_ptr<ClientAuth>(NewGssAuth(kNfsProgram, kNfsVersion, std::move(ctx), service));
}

uint64_t DestroyContexts(const LoadOptions& o,
                         const std::vector<std::shared_ptr<ClientAuth>>& auths, Deadline deadline,
                         uint64_t* gone, std::string* first_error) {
  std::vector<ClientAuth*> todo;
  for (const auto& a : auths) {
    if (a && a->has_context()) todo.push_back(a.get());
  }
  if (todo.empty()) return 0;
  const std::string where = o.host + ":" + std::to_string(o.port);
  auto note = [&](const Status& s) {
    if (first_error->empty()) *first_error = s.ToString();
  };
  auto fd =
      Connect(o.host, o.port, Deadline::Earlier(Deadline::AfterMs(o.connect_timeout_ms), deadline));
  if (!fd.ok()) {
    note(fd.status().Annotate("RPCSEC_GSS_DESTROY"));
    return 0;
  }
  uint64_t destroyed = 0;
  uint32_t xid = 0x5d000000u;
  for (ClientAuth* a : todo) {
    bool transport_failed = false;
    Bytes reply;
    Status s = a->Destroy(++xid, [&](ByteView call) -> Result<Bytes> {
      auto r = BlockingCall(fd->get(), call, deadline, "RPCSEC_GSS_DESTROY reply from " + where);
      transport_failed = !r.ok();
      if (r.ok()) reply = *r;
      return r;
    });
    if (s.ok()) {
      ++destroyed;
      continue;
    }
    ReplyHeader h;
    if (!transport_failed && DecodeReplyHeader(reply, &h).ok() && ContextGone(h)) {
      ++*gone;
      continue;
    }
    note(s.Annotate("RPCSEC_GSS_DESTROY"));
    if (transport_failed) break;  // the connection or the time is gone
  }
  return destroyed;
}

Status Runner::MakeAuth(AuthBox* box) {
  SECMODE_ASSIGN_OR_RETURN(box->auth, NewLoadAuth(o_, service_, run_deadline_));
  box->max_sent_seq = 0;
  return Status::Ok();
}

void Runner::Recreate(AuthBox* box, uint64_t gen, uint32_t auth_stat) {
  std::lock_guard<std::mutex> lock(box->mu);
  if (box->gen != gen || box->dropped) return;  // someone already did, or tried and failed
  if (failed_ || stopping_) return;
  const uint32_t traced_conn = tl_thread_index;
  if (o_.trace) {
    o_.trace->Record(
        SetupEvent{SetupEventKind::kClientRecreateBegan, traced_conn, common::NowNs()});
  }
  Status s = MakeAuth(box);
  if (o_.trace) {
    o_.trace->Record(SetupEvent{SetupEventKind::kClientRecreateDone, traced_conn, common::NowNs()});
  }
  if (!s.ok()) {
    // The server has dropped the context and no new one can be made: no
    // call of this context can complete any more.
    NoteError("re-creating the RPCSEC_GSS context: " + s.ToString());
    box->dropped = true;
    const std::string conn =
        traced_conn < conns_.size() ? ConnName(conns_[traced_conn].get()) + ": " : "";
    Fail(s.Annotate(conn + "re-creating the RPCSEC_GSS context the server dropped (" +
                    AuthStatName(auth_stat) + ")"));
    return;
  }
  box->gen++;
  recreations_++;
}

Status Runner::CreateContexts(const std::string& where) {
  const int nbox = ContextCount();
  for (int i = 0; i < nbox; ++i) {
    boxes_.push_back(std::make_unique<AuthBox>());
    Status made = MakeAuth(boxes_.back().get());
    if (!made.ok()) {
      boxes_.back()->auth.reset();
      LoadReport unused;
      DestroyAll(&unused);
      return StepFailed(made, nbox == 1 ? "creating the security context with " + where
                                        : "creating security context " + std::to_string(i + 1) +
                                              " of " + std::to_string(nbox) + " with " + where);
    }
  }
  return Status::Ok();
}

void Runner::DestroyAll(LoadReport* r) {
  std::vector<std::shared_ptr<ClientAuth>> auths;
  for (auto& b : boxes_) {
    std::lock_guard<std::mutex> lock(b->mu);
    if (b->auth && b->auth->has_context() && !b->dropped) auths.push_back(b->auth);
  }
  if (auths.empty()) return;
  if (o_.destroy_timeout_ms <= 0) {
    r->contexts_left = auths.size();
    r->destroy_error = "not destroyed (destroy timeout 0)";
    return;
  }
  r->contexts_destroyed = DestroyContexts(
      o_, auths, Deadline::Earlier(Deadline::AfterMs(o_.destroy_timeout_ms), run_deadline_),
      &r->contexts_gone, &r->destroy_error);
  r->contexts_left = auths.size() - r->contexts_destroyed - r->contexts_gone;
}

}  // namespace load_internal
}  // namespace secmode::rpc
