// The throwaway nfs-ganesha: it starts with the realm's keytab, answers
// RPCSEC_GSS on NFSv4, and leaves nothing behind; then secmode probe says
// what its sequence window is and what it does below it.
#include "rpc/ganesha.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "common/files.h"
#include "common/pcap.h"
#include "common/socket.h"
#include "common/subprocess.h"
#include "rpc/gss_client.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/window_probe.h"
#include "tests/support/processes.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
using common::Connect;
using common::Deadline;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class GaneshaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::Status why = Ganesha::Available();
    if (!why.ok()) GTEST_SKIP() << why.message();
  }
  std::unique_ptr<Ganesha> StartWithRealm() {
    gss::Realm* realm = testing::SharedRealm();
    GaneshaOptions o;
    o.keytab = realm->service_keytab();
    o.env = realm->Environment();
    o.principals = {realm->user_principal()};
    auto g = Ganesha::Start(o);
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return g.ok() ? std::move(g).value() : nullptr;
  }
};

TEST_F(GaneshaTest, StartsServesAndLeavesNothingBehind) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  EXPECT_GT(g->port(), 0);
  EXPECT_FALSE(g->version().empty());
  const std::string dir = g->dir();
  const pid_t pid = g->pid();
  EXPECT_TRUE(Exists(g->export_dir()));
  EXPECT_EQ(kill(pid, 0), 0);
  ASSERT_TRUE(g->Stop().ok());
  EXPECT_FALSE(Exists(dir));
  EXPECT_NE(kill(pid, 0), 0);  // gone (and reaped)
}

// Its owner killed any way: the reaper ends ganesha.nfsd and removes the
// directory.
class GaneshaOwnerDeathTest : public GaneshaTest, public ::testing::WithParamInterface<int> {};

TEST_P(GaneshaOwnerDeathTest, LeavesNothingBehind) {
  testing::ExpectOwnerDeathCleansUp(
      [] {
        auto g = Ganesha::Start({});  // sec=sys: no realm in the child
        if (!g.ok()) return "error " + g.status().ToString();
        const std::string msg = (*g)->dir() + " " + std::to_string((*g)->pid());
        g->release();  // the owner dies holding it
        return msg;
      },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Signals, GaneshaOwnerDeathTest, ::testing::Values(SIGINT, SIGKILL));

// What Ganesha does with sequence numbers: reported from the probe's
// evidence; the assertions are what any RFC 2203 server must do (answer
// in-order numbers, have some window, refuse a number far below it).
TEST_F(GaneshaTest, ProbeStatesItsWindowAndReaction) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  ProbeOptions o;
  o.port = g->port();
  o.ccache = testing::SharedRealm()->ccache();
  o.silence_ms = 500;
  o.max_window = 4096;
  auto r = ProbeWindow(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << g->Describe();
  EXPECT_GT(r->advertised_window, 0u);
  EXPECT_GT(r->window, 0u) << "accepted a number 4096 below the highest";
  EXPECT_NE(r->below_window, "accepted");
  std::cout << "nfs-ganesha " << g->version() << ": advertised window " << r->advertised_window
            << ", measured " << r->window << (r->window_confirmed ? " (confirmed)" : "")
            << ", far below: " << r->below_window << " [" << r->below_window_reply
            << "], just below: " << r->below_window_edge << ", duplicate: " << r->duplicate
            << ", 0x7fffffff: " << r->at_maxseq_minus_1 << ", MAXSEQ: " << r->at_maxseq << "\n";
}

// The export holds the files the load reads and writes: "read" with nfs.h's
// pattern (so READ data is checked byte for byte), "write" empty; both open
// to the user the server maps a Kerberos principal to.
void PutFiles(const Ganesha& g) {
  ASSERT_TRUE(common::WriteFileAtomically(g.export_dir() + "/read",
                                          std::string_view(reinterpret_cast<const char*>(
                                                               ReadPattern(0, kNfsFileSize).data()),
                                                           kNfsFileSize))
                  .ok());
  ASSERT_TRUE(common::WriteFileAtomically(g.export_dir() + "/write", "").ok());
  ASSERT_EQ(chmod((g.export_dir() + "/read").c_str(), 0644), 0);
  ASSERT_EQ(chmod((g.export_dir() + "/write").c_str(), 0666), 0);
}

LoadOptions GaneshaLoad(const Ganesha& g, Security mode, NfsOp op) {
  LoadOptions o;
  o.port = g.port();
  o.security = mode;
  o.ccache = testing::SharedRealm()->ccache();
  o.nfs41 = true;
  o.nfs41_options.read_file_has_pattern = true;
  o.op = op;
  o.size = 4096;
  o.connections = 2;
  o.slots = 8;
  o.seconds = 0.3;
  o.warmup_seconds = 0.1;
  return o;
}

// secmode's client drives a real NFSv4.1 server: a session over each mode,
// READ data checked against the file, WRITE counts checked, and the session
// and client ID destroyed at the end.
TEST_F(GaneshaTest, LoadDrivesARealSessionInEveryMode) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  PutFiles(*g);
  const std::pair<Security, gss::Engine> modes[] = {
      {Security::kSys, gss::Engine::kMit},     {Security::kKrb5, gss::Engine::kMit},
      {Security::kKrb5i, gss::Engine::kMit},   {Security::kKrb5p, gss::Engine::kMit},
      {Security::kKrb5, gss::Engine::kNative}, {Security::kKrb5i, gss::Engine::kNative},
      {Security::kKrb5p, gss::Engine::kNative}};
  for (const auto& [security, engine] : modes) {
    for (NfsOp op : {NfsOp::kGetattr, NfsOp::kRead, NfsOp::kWrite}) {
      const std::string mode = std::string(SecurityName(security)) + ":" + gss::EngineName(engine);
      LoadOptions o = GaneshaLoad(*g, security, op);
      o.engine = engine;
      auto r = RunLoad(o);
      ASSERT_TRUE(r.ok()) << mode << " " << NfsOpName(op) << ": " << r.status().ToString() << "\n"
                          << g->Describe();
      EXPECT_GT(r->ops, 0u) << mode;
      EXPECT_EQ(r->errors, 0u) << mode << ": " << r->first_error;
      EXPECT_EQ(r->session_close_error, "") << mode;
      EXPECT_GE(r->session_slots, 8u);
    }
  }
}

// AUTH_SYS lets a client say it is root (secmode's sys client says uid 0,
// as a Linux client's root does); any local user can send that to the
// port. Ganesha treats it as the anonymous user: a file it creates is the
// anonymous user's, and a root-owned 0644 file cannot be written.
TEST_F(GaneshaTest, RootOverAuthSysIsSquashedToTheAnonymousUser) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  const std::string drop = g->export_dir() + "/drop", root_only = g->export_dir() + "/root-only";
  ASSERT_EQ(mkdir(drop.c_str(), 0777), 0);
  ASSERT_EQ(chmod(drop.c_str(), 0777), 0);
  ASSERT_TRUE(common::WriteFileAtomically(root_only, "root's\n").ok());
  ASSERT_EQ(chmod(root_only.c_str(), 0644), 0);
  PutFiles(*g);

  LoadOptions o = GaneshaLoad(*g, Security::kSys, NfsOp::kWrite);
  o.connections = 1;
  o.nfs41_options.write_path = {"export", "drop", "made-by-root"};
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << g->Describe();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  struct stat st;
  ASSERT_EQ(stat((drop + "/made-by-root").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, g->anonymous_uid()) << "the file a root AUTH_SYS caller made";
  EXPECT_EQ(st.st_gid, g->anonymous_gid());

  o.nfs41_options.write_path = {"export", "root-only"};
  r = RunLoad(o);
  ASSERT_FALSE(r.ok()) << "a root AUTH_SYS caller opened a root-owned 0644 file for writing";
  EXPECT_NE(r.status().message().find("NFS4ERR_ACCESS"), std::string::npos)
      << r.status().ToString();
  auto text = common::ReadFile(root_only);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "root's\n");
}

TEST_F(GaneshaTest, AMissingFileIsNamedWithTheServersError) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  LoadOptions o = GaneshaLoad(*g, Security::kSys, NfsOp::kRead);
  o.nfs41_options.read_path = {"export", "no-such-file"};
  auto r = RunLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("OPEN of 'no-such-file' failed: NFS4ERR_NOENT"),
            std::string::npos)
      << r.status().ToString();
}

// tshark as an independent judge of the client: a krb5p session with
// Ganesha (the INIT exchange, the NFSv4.1 set-up, a READ, the session's
// end), written to a pcap as it went over the wire, decrypted by tshark
// with the realm's service keytab, shows the COMPOUND operations inside the
// privacy bodies.
TEST_F(GaneshaTest, TsharkDecryptsAKrb5pSession) {
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  PutFiles(*g);
  gss::Realm* realm = testing::SharedRealm();
  auto fd = Connect("127.0.0.1", g->port(), Deadline::AfterMs(5000));
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  common::PcapTcpWriter pcap(876, 2049);  // 2049: tshark dissects it as ONC RPC
  pcap.Begin();
  auto exchange = [&](ByteView call) -> common::Result<Bytes> {
    Bytes framed;
    FrameRecord(call, &framed);
    pcap.Add(true, framed);
    SECMODE_ASSIGN_OR_RETURN(Bytes reply, BlockingCall(fd->get(), call, Deadline::AfterMs(10000)));
    FrameRecord(reply, &framed);
    pcap.Add(false, framed);
    return reply;
  };
  GssClientConfig cfg;
  cfg.ccache = realm->ccache();
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  cfg.service = kGssSvcPrivacy;
  auto ctx = GssClientContext::Establish(cfg, exchange);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  uint32_t xid = 500;
  Nfs41Call call = [&](ByteView args) -> common::Result<Bytes> {
    const uint32_t seq = (*ctx)->NextSeq();
    Bytes rec, scratch;
    SECMODE_RETURN_IF_ERROR(
        (*ctx)->EncodeCall(++xid, kNfsProcCompound, kGssSvcPrivacy, seq, args, &rec));
    SECMODE_ASSIGN_OR_RETURN(Bytes reply, exchange(rec));
    ReplyHeader h;
    ByteView results;
    SECMODE_RETURN_IF_ERROR(
        (*ctx)->DecodeReply(reply, kGssSvcPrivacy, seq, &scratch, &h, &results));
    return Bytes(results.begin(), results.end());
  };
  Nfs41Options so;
  so.slots = 4;
  so.read_file_has_pattern = true;
  auto session = Nfs41Open(so, call);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  NfsRequest read;
  read.target = &session->target;
  read.op = NfsOp::kRead;
  read.count = 4096;
  read.slot = 0;
  read.sequence = 1;  // slot 0's first call (the set-up has a slot of its own)
  Bytes args;
  EncodeCompoundArgs(read, &args);
  auto results = call(args);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_TRUE(CheckCompoundResults(read, *results).ok());
  ASSERT_TRUE(Nfs41Close(*session, call).ok());

  const std::string file = g->dir() + "/krb5p.pcap", out = g->dir() + "/tshark.txt";
  ASSERT_TRUE(pcap.Save(file).ok());
  common::Command cmd;
  cmd.argv = {"tshark", "-n",
              "-r",     file,
              "-o",     "kerberos.decrypt:TRUE",
              "-o",     "kerberos.file:" + realm->service_keytab(),
              "-Y",     "rpc.msgtyp == 0",
              "-T",     "fields",
              "-e",     "rpc.authgss.service",
              "-e",     "nfs.opcode"};
  cmd.log_path = out;
  auto rc = common::RunAndWait(cmd, 60000);
  ASSERT_TRUE(rc.ok() && *rc == 0) << cmd.ToString() << "\n" << common::TailOfFile(out);
  std::ifstream in(out);
  std::set<std::string> ops;
  int private_calls = 0;
  for (std::string line; std::getline(in, line);) {
    std::stringstream row(line);
    std::string service, opcodes;
    std::getline(row, service, '\t');
    std::getline(row, opcodes, '\t');
    if (service == "3") ++private_calls;
    std::stringstream each(opcodes);
    for (std::string op; std::getline(each, op, ',');) ops.insert(op);
  }
  EXPECT_GE(private_calls, 6) << common::TailOfFile(out, 40);
  // EXCHANGE_ID, CREATE_SESSION, SEQUENCE, LOOKUP, OPEN, GETFH, READ, CLOSE,
  // DESTROY_SESSION.
  for (const char* op : {"42", "43", "53", "15", "18", "10", "25", "4", "44"}) {
    EXPECT_TRUE(ops.count(op)) << "tshark did not see operation " << op << " inside the privacy "
                               << "bodies:\n"
                               << common::TailOfFile(out, 40);
  }
}

}  // namespace
}  // namespace secmode::rpc
