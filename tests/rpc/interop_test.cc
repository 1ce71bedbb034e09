// Interop with MIT gssrpc over loopback TCP against the throwaway realm:
// a gssrpc client (authgss_create_default) calling the secmode server with
// krb5, krb5i and krb5p, and the secmode client calling a gssrpc server
// (svcauth_gss). The peer is tests/rpc/gssrpc_peer.cc.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "common/files.h"
#include "common/socket.h"
#include "common/subprocess.h"
#include "common/throwaway.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"
#include "rpc/window_probe.h"
#include "rpc/xdr.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Connect;
using common::Fd;
using common::WriteAll2;
using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

constexpr uint32_t kEchoProg = 0x2000ec01, kEchoVers = 1, kEcho = 1;

ProgramSpec EchoProgram() {
  ProgramSpec p;
  p.prog = kEchoProg;
  p.vers_low = p.vers_high = kEchoVers;
  p.handler = [](uint32_t, uint32_t proc, ByteView args, Bytes* results) -> uint32_t {
    if (proc == 0) return kSuccess;
    if (proc != kEcho) return kProcUnavail;
    XdrDecoder d(args);
    ByteView data;
    if (!d.GetOpaque(&data, 1 << 20, "echo data").ok() || !d.ExpectEnd("echo args").ok()) {
      return kGarbageArgs;
    }
    XdrEncoder(results).PutOpaque(data);
    return kSuccess;
  };
  return p;
}

// One blocking TCP connection carrying calls one at a time.
class SyncConnection {
 public:
  Status Open(uint16_t port) {
    SECMODE_ASSIGN_OR_RETURN(fd_, Connect("127.0.0.1", port));
    return Status::Ok();
  }
  Result<Bytes> RoundTrip(ByteView call) {
    Bytes mark;
    AppendRecordMark(static_cast<uint32_t>(call.size()), &mark);
    SECMODE_RETURN_IF_ERROR(WriteAll2(fd_.get(), mark, call));
    while (true) {
      ByteView rec;
      SECMODE_ASSIGN_OR_RETURN(bool got, reader_.Next(&rec));
      if (got) return Bytes(rec.begin(), rec.end());
      auto space = reader_.WriteSpace(4096);
      ssize_t n = recv(fd_.get(), space.data(), space.size(), 0);
      if (n <= 0) return Status::IoError("peer closed the connection");
      reader_.Commit(static_cast<size_t>(n));
    }
  }

 private:
  Fd fd_;
  RecordReader reader_;
};

TEST(GssrpcInteropTest, GssrpcClientCallsSecmodeServer) {
  gss::Realm* realm = testing::SharedRealm();
  ServerOptions so;
  so.keytab = realm->service_keytab();
  MemoryNfsServer nfs;
  auto core = RpcServerCore::Create(so, {nfs.Program(), EchoProgram()});
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  auto server = TcpServer::Start({}, core->get());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto dir = common::MakeTempDirectory("secmode-interop");
  ASSERT_TRUE(dir.ok());
  struct Cleanup {
    std::string path;
    ~Cleanup() { (void)common::RemoveTree(path); }
  } cleanup{*dir};
  int n = 0;
  for (const char* service : {"none", "integrity", "privacy"}) {
    common::Command cmd;
    cmd.argv = {GSSRPC_PEER, "client", "127.0.0.1", std::to_string((*server)->port()),
                service,     "25"};
    cmd.env = realm->Environment();
    cmd.log_path = *dir + "/client.log";
    auto rc = common::RunAndWait(cmd, 60000);
    ASSERT_TRUE(rc.ok()) << rc.status().ToString();
    std::ifstream log(cmd.log_path);
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_EQ(*rc, 0) << service << ": " << text;
    ++n;
    auto c = (*core)->counters();
    EXPECT_EQ(c.contexts_created, static_cast<uint64_t>(n));
    EXPECT_EQ(c.contexts_destroyed, static_cast<uint64_t>(n));  // authgss sent DESTROY
    EXPECT_EQ(c.garbage_args, 0u);
    EXPECT_EQ(c.auth_errors, 0u);
  }
}

// MIT gssrpc's ECHO server (the peer program), on a free port, killed and
// its directory removed when this goes out of scope, or by its reaper
// (common/throwaway.h) when the test process dies first.
class GssrpcServer {
 public:
  ~GssrpcServer() {
    if (pid_ > 0) common::Terminate(pid_, 500);
    if (!dir_.empty()) (void)common::RemoveTree(dir_);
    reaper_.Release();  // nothing left for it to do
  }
  Status Start(gss::Realm* realm) {
    SECMODE_ASSIGN_OR_RETURN(dir_, common::MakeTempDirectory("secmode-interop"));
    SECMODE_ASSIGN_OR_RETURN(reaper_,
                             common::Reaper::Start(dir_, "server.pid", "secmode-gssrpc-reaper"));
    const std::string port_file = dir_ + "/port";
    common::Command cmd;
    cmd.argv = {GSSRPC_PEER, "server", port_file};
    cmd.env = realm->Environment();
    cmd.log_path = dir_ + "/server.log";
    SECMODE_ASSIGN_OR_RETURN(pid_, common::Spawn(cmd));
    SECMODE_RETURN_IF_ERROR(
        common::WriteFileAtomically(dir_ + "/server.pid", std::to_string(pid_)));
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::ifstream f(port_file);
      int port = 0;
      if (f >> port) {
        port_ = static_cast<uint16_t>(port);
      } else {
        usleep(20000);
      }
    }
    if (port_ == 0) return Status::Unavailable("the gssrpc server did not start");
    return Status::Ok();
  }
  uint16_t port() const { return port_; }

 private:
  std::string dir_;
  common::Reaper reaper_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

TEST(GssrpcInteropTest, SecmodeClientCallsGssrpcServer) {
  gss::Realm* realm = testing::SharedRealm();
  GssrpcServer server;
  ASSERT_TRUE(server.Start(realm).ok());
  const int port = server.port();

  for (uint32_t service : {kGssSvcNone, kGssSvcIntegrity, kGssSvcPrivacy}) {
    // MIT's svcauth_gss keeps a context with the connection it was made on.
    SyncConnection conn;
    ASSERT_TRUE(conn.Open(static_cast<uint16_t>(port)).ok());
    GssClientConfig cfg;
    cfg.ccache = realm->ccache();
    cfg.prog = kEchoProg;
    cfg.vers = kEchoVers;
    cfg.service = service;
    auto ctx =
        GssClientContext::Establish(cfg, [&](ByteView call) { return conn.RoundTrip(call); });
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    for (int i = 0; i < 20; ++i) {
      Bytes data = common::PatternBytes(static_cast<size_t>(i * 301 + 1), i), args, rec;
      XdrEncoder(&args).PutOpaque(data);
      uint32_t seq = (*ctx)->NextSeq();
      ASSERT_TRUE((*ctx)->EncodeCall(1000 + i, kEcho, service, seq, args, &rec).ok());
      auto reply = conn.RoundTrip(rec);
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      Bytes scratch;
      ReplyHeader h;
      ByteView results;
      auto s = (*ctx)->DecodeReply(*reply, service, seq, &scratch, &h, &results);
      ASSERT_TRUE(s.ok()) << GssServiceName(service) << " call " << i << ": " << s.ToString();
      XdrDecoder d(results);
      ByteView echoed;
      ASSERT_TRUE(d.GetOpaque(&echoed, 1 << 20, "echo").ok());
      EXPECT_EQ(Bytes(echoed.begin(), echoed.end()), data);
    }
    // RPCSEC_GSS_DESTROY, answered by gssrpc with a verifier over seq_num.
    uint32_t seq = (*ctx)->NextSeq();
    Bytes rec;
    ASSERT_TRUE((*ctx)->EncodeCall(2000, 0, service, seq, {}, &rec, kGssDestroy).ok());
    auto reply = conn.RoundTrip(rec);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    ReplyHeader h;
    ASSERT_TRUE(DecodeReplyHeader(*reply, &h).ok());
    EXPECT_EQ(h.reply_stat, static_cast<uint32_t>(kMsgAccepted)) << DescribeReply(h);
  }
}

// The known answer, from MIT's svc_auth_gss.c: a 32-bit mask as the window
// (seq_window 32), and a number below it or seen before answered with
// AUTH_ERROR RPCSEC_GSS_CTXPROBLEM, the context and the connection kept.
TEST(GssrpcInteropTest, ProbeFindsGssrpcsWindowAndReaction) {
  gss::Realm* realm = testing::SharedRealm();
  GssrpcServer server;
  ASSERT_TRUE(server.Start(realm).ok());
  ProbeOptions o;
  o.port = server.port();
  o.ccache = realm->ccache();
  o.program = kEchoProg;
  o.version = kEchoVers;
  o.silence_ms = 300;
  o.max_window = 4096;
  auto r = ProbeWindow(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->advertised_window, 32u);
  EXPECT_EQ(r->window, 32u);
  EXPECT_TRUE(r->window_confirmed);
  EXPECT_EQ(r->below_window, "error-reply");
  EXPECT_EQ(r->below_window_edge, "error-reply");
  EXPECT_EQ(r->below_window_reply, "denied (denied AUTH_ERROR RPCSEC_GSS_CTXPROBLEM)");
  EXPECT_EQ(r->duplicate, "error-reply");
  EXPECT_EQ(ModelReaction(*r), "");
  EXPECT_EQ(r->contexts_destroyed, r->contexts_created);
}

}  // namespace
}  // namespace secmode::rpc
