// The SMB2/3 client against a real Samba AD DC (smb/samba_dc.h), over
// Kerberos: every smb-* mode negotiates what it asked for, writes and reads
// back a file through the share, and the bytes land on the server's disk;
// a spoiled signature or ciphertext gets the server's refusal, never a hang;
// nothing is left behind. Needs root and Debian's samba packages: skipped
// with the reason otherwise.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/hex.h"
#include "common/pcap.h"
#include "common/subprocess.h"
#include "smb/client.h"
#include "smb/load.h"
#include "smb/samba_dc.h"
#include "tests/support/processes.h"
#include "tests/support/tcpdump.h"
#include "tests/support/tshark.h"
#include "trace/rpc_trace.h"

namespace secmode::smb {
namespace {

using common::Bytes;

SmbClientConfig ConfigFor(const SambaDc& dc, const std::string& mode) {
  auto parsed = ParseSmbModeName(mode);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  SmbClientConfig c = dc.ClientConfig(parsed.ok() ? *parsed : SmbMode{});
  c.timeout_ms = 10000;
  return c;
}

class SambaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const common::Status why = SambaDc::Available();
    if (!why.ok()) {
      skip_ = why.message();
      return;
    }
    auto dc = SambaDc::Start();
    ASSERT_TRUE(dc.ok()) << dc.status().ToString();
    dc_ = std::move(dc).value().release();
  }
  static void TearDownTestSuite() {
    delete dc_;
    dc_ = nullptr;
  }
  void SetUp() override {
    // "no fixture here: " marks the suite's ctest test skipped (tests/CMakeLists.txt).
    if (!skip_.empty()) GTEST_SKIP() << "no fixture here: " << skip_;
    ASSERT_NE(dc_, nullptr);
  }
  static SmbClientConfig Config(const std::string& mode) { return ConfigFor(*dc_, mode); }
  // smb-load against the fixture's DC.
  static common::Result<SmbLoadReport> Load(const SmbLoadOptions& o, const std::string& mode) {
    return RunSmbLoad(o, Config(mode),
                      [] { return dc_->Connect(common::Deadline::AfterMs(5000)); });
  }
  static common::Result<std::unique_ptr<SmbClient>> Connect(const std::string& mode) {
    SECMODE_ASSIGN_OR_RETURN(common::Fd fd, dc_->Connect(common::Deadline::AfterMs(5000)));
    return SmbClient::Connect(std::move(fd), Config(mode));
  }
  static inline SambaDc* dc_ = nullptr;
  static inline std::string skip_;
};

Bytes Pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
  return b;
}

TEST_F(SambaTest, EveryModeWritesAndReadsBackThroughTheShare) {
  const char* modes[] = {"smb-plain",           "smb-sign-hmac-sha256", "smb-sign-aes-cmac",
                         "smb-sign-aes-gmac",   "smb-enc-aes-128-ccm",  "smb-enc-aes-128-gcm",
                         "smb-enc-aes-256-ccm", "smb-enc-aes-256-gcm"};
  uint8_t seed = 1;
  for (const char* mode : modes) {
    SCOPED_TRACE(mode);
    auto client = Connect(mode);
    ASSERT_TRUE(client.ok()) << client.status().ToString() << "\n" << dc_->Describe();
    SmbClient& c = **client;
    const std::string name = std::string("file-") + mode + ".dat";
    auto f = c.Open(name);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    // 4 KiB and 1 MiB plus a tail: more than one credit, and for 1 MiB
    // more than one 64 KiB charge unit.
    const Bytes small = Pattern(4096, seed), big = Pattern((1 << 20) + 123, seed + 1);
    ASSERT_TRUE(c.Write(*f, 0, small).ok());
    auto w = c.Write(*f, 4096, big);
    ASSERT_TRUE(w.ok()) << w.ToString();
    Bytes back;
    ASSERT_TRUE(c.Read(*f, 4096, static_cast<uint32_t>(big.size()), &back).ok());
    EXPECT_EQ(back, big);
    auto eof = c.QueryEndOfFile(*f);
    ASSERT_TRUE(eof.ok()) << eof.status().ToString();
    EXPECT_EQ(*eof, 4096 + big.size());
    ASSERT_TRUE(c.Close(*f).ok());
    // What the server wrote to its disk is what was sent.
    auto on_disk = common::ReadFile(dc_->share_dir() + "/" + name);
    ASSERT_TRUE(on_disk.ok()) << on_disk.status().ToString();
    ASSERT_EQ(on_disk->size(), 4096 + big.size());
    EXPECT_EQ(0, memcmp(on_disk->data(), small.data(), small.size()));
    EXPECT_EQ(0, memcmp(on_disk->data() + 4096, big.data(), big.size()));

    const SmbMode m = c.mode();
    const auto& k = c.counters();
    if (m.protection == Protection::kEncrypt) {
      EXPECT_EQ(c.dialect(), kDialect311);
      EXPECT_TRUE(c.encrypts());
      EXPECT_EQ(k.encrypted_requests, k.requests - 2);  // all but NEGOTIATE and SESSION_SETUP
      // Each sealed request's answer, and the STATUS_PENDING interim
      // answers Samba sends first for some writes, came back sealed.
      EXPECT_EQ(k.responses_decrypted, k.encrypted_requests + k.interim_responses);
    } else if (m.protection == Protection::kSign) {
      EXPECT_EQ(c.dialect(),
                m.signing->id == SigningAlgorithm::kHmacSha256 ? kDialect210 : kDialect311);
      EXPECT_FALSE(c.encrypts());
      EXPECT_EQ(k.signed_requests, k.requests - 2);
      EXPECT_EQ(k.responses_verified, k.signed_requests + 1);  // + the final SESSION_SETUP
    } else {
      // Only TREE_CONNECT is signed (SMB 3.1.1 signs it in every session).
      EXPECT_EQ(k.signed_requests, 1u);
      EXPECT_EQ(k.encrypted_requests, 0u);
    }
    EXPECT_TRUE(c.Logoff().ok());
    ++seed;
  }
}

// SMB3 multichannel: channels bound to one session carry its files; a
// file opened on the first is written on the second and read back on the
// third, in a signing and in an encrypting mode. smb-sign-hmac-sha256 (SMB
// 2.1) cannot bind and says so.
TEST_F(SambaTest, ChannelsBoundToOneSessionShareItsFiles) {
  for (const char* mode : {"smb-sign-aes-gmac", "smb-enc-aes-128-ccm"}) {
    SCOPED_TRACE(mode);
    auto first = Connect(mode);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    std::vector<std::unique_ptr<SmbClient>> channels;
    for (uint32_t ch = 1; ch <= 2; ++ch) {
      auto fd = dc_->Connect(common::Deadline::AfterMs(5000));
      ASSERT_TRUE(fd.ok()) << fd.status().ToString();
      auto bound = SmbClient::Bind(std::move(*fd), **first, ch);
      ASSERT_TRUE(bound.ok()) << bound.status().ToString() << "\n" << dc_->Describe();
      EXPECT_EQ((*bound)->session_id(), (*first)->session_id());
      // Each channel signs with a key of its own.
      EXPECT_NE((*bound)->keys().signing, (*first)->keys().signing);
      channels.push_back(std::move(*bound));
    }
    auto f = (*first)->Open(std::string("mc-") + mode + ".dat", /*delete_on_close=*/true);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    // 9 MiB: more than the server's maximum WRITE (8 MiB) and more than a
    // fresh channel's credits allow in one request.
    const Bytes data = Pattern((9u << 20) + 17, 3);
    auto w = channels[0]->Write(*f, 0, data);
    ASSERT_TRUE(w.ok()) << w.ToString();
    Bytes back;
    auto r = channels[1]->Read(*f, 0, static_cast<uint32_t>(data.size()), &back);
    ASSERT_TRUE(r.ok()) << r.ToString();
    EXPECT_EQ(back, data);
    for (const auto& ch : channels) {
      const auto& k = ch->counters();
      EXPECT_EQ(k.signed_requests + k.encrypted_requests, k.requests - 2) << "all but NEGOTIATE "
                                                                             "and the binding";
    }
    EXPECT_TRUE((*first)->Close(*f).ok());
    EXPECT_TRUE((*first)->Logoff().ok());
  }
  auto hmac = Connect("smb-sign-hmac-sha256");
  ASSERT_TRUE(hmac.ok()) << hmac.status().ToString();
  auto fd = dc_->Connect(common::Deadline::AfterMs(5000));
  ASSERT_TRUE(fd.ok());
  auto refused = SmbClient::Bind(std::move(*fd), **hmac, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("SMB 3.x"), std::string::npos);
}

// The load generator: pipelined requests on two sessions of two channels
// each, every one sealed, none refused, and its files gone from the share
// afterwards.
TEST_F(SambaTest, LoadPipelinesSealedRequestsAndLeavesNoFile) {
  for (SmbOp op : {SmbOp::kRead, SmbOp::kWrite, SmbOp::kMetadata}) {
    SCOPED_TRACE(SmbOpName(op));
    SmbLoadOptions o;
    o.op = op;
    o.size = 65536 + 100;  // two credits each
    o.connections = 2;
    o.channels = 2;  // each session over two connections (multichannel)
    o.outstanding = 4;
    o.seconds = 0.3;
    o.warmup_seconds = 0.05;
    dc_->WatchThreads(&o);
    auto r = Load(o, "smb-enc-aes-256-gcm");
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << dc_->Describe();
    EXPECT_GT(r->ops, 0u);
    EXPECT_EQ(r->errors, 0u) << r->first_error;
    // The server's threads over the measured time: smbd serves the
    // sessions; no thread runs longer than the measured time (about
    // o.seconds: the span of the readings, however late their reader woke).
    const std::string seen =
        std::to_string(r->ops) + " ops, server " + std::to_string(r->server_cpu_seconds) +
        " s over " + std::to_string(r->seconds) + " s, client " +
        std::to_string(r->client_cpu_seconds) + " s, idle " + std::to_string(r->idle_fraction) +
        ", steal " + std::to_string(r->steal_fraction);
    EXPECT_GT(r->server_cpu_seconds, 0) << seen;
    EXPECT_NE(r->server_session_thread.find("smbd"), std::string::npos)
        << r->server_session_thread << "; " << seen;
    EXPECT_GT(r->server_session_thread_cpu_seconds, 0) << seen;
    EXPECT_GT(r->seconds, 0) << seen;
    EXPECT_LE(r->server_session_thread_cpu_seconds, r->seconds) << seen;
    EXPECT_EQ(r->dialect, kDialect311);
    EXPECT_GE(r->counters.encrypted_requests, r->ops);
    EXPECT_EQ(r->counters.signed_requests, 0u);
    if (op != SmbOp::kMetadata) {
      EXPECT_EQ(r->bytes, r->ops * o.size);
    }
  }
  // Delete-on-close: the share holds only what the other tests wrote.
  for (const auto& e : std::filesystem::directory_iterator(dc_->share_dir())) {
    EXPECT_EQ(e.path().filename().string().find("secmode-smb-load"), std::string::npos) << e.path();
  }
  // A bad option is refused before anything is sent.
  SmbLoadOptions bad;
  bad.outstanding = 0;
  EXPECT_EQ(RunSmbLoad(bad, Config("smb-plain"), [] { return dc_->Connect(); }).status().code(),
            common::Code::kInvalidArgument);
}

// One window for the requests counted and the readings of CPU time: on a
// busy machine a reading of the server's threads (a walk of /proc) ends
// well after it began, here held 0.4 s before each. The channels keep the
// server busy until the last reading ends, so it is seen serving, every
// reading lies within the measured time, and no thread runs longer.
TEST_F(SambaTest, SlowReadingsOfTheServerStayWithinTheMeasuredTime) {
  SmbLoadOptions o;
  o.op = SmbOp::kMetadata;
  o.outstanding = 2;
  o.seconds = 0.2;
  o.warmup_seconds = 0.05;
  dc_->WatchThreads(&o);
  o.server_threads = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return dc_->ThreadCpu();
  };
  auto r = Load(o, "smb-sign-aes-cmac");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_GE(r->seconds, 0.8);  // both readings
  EXPECT_GT(r->ops, 0u);
  EXPECT_NE(r->server_session_thread.find("smbd"), std::string::npos) << r->server_session_thread;
  EXPECT_GT(r->server_session_thread_cpu_seconds, 0);
  EXPECT_LE(r->server_session_thread_cpu_seconds, r->seconds);
}

// Sixteen channels of one session (the most the lab's SMB grid uses), in a signing
// and an encrypting mode (binding derives a channel's signing key; sealing
// shares the session's keys): every channel carries answered requests.
TEST_F(SambaTest, LoadOverSixteenChannelsOfOneSession) {
  for (const char* mode : {"smb-sign-aes-gmac", "smb-enc-aes-128-ccm"}) {
    SCOPED_TRACE(mode);
    SmbLoadOptions o;
    o.op = SmbOp::kWrite;
    o.size = 4096;
    o.channels = 16;
    o.outstanding = 2;
    o.seconds = 0.3;
    o.warmup_seconds = 0.05;
    auto r = Load(o, mode);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << dc_->Describe();
    EXPECT_EQ(r->errors, 0u) << r->first_error;
    EXPECT_EQ(r->server_cpu_seconds, -1);  // not asked for
    ASSERT_EQ(r->ops_per_connection.size(), 16u);
    for (size_t i = 0; i < 16; ++i) EXPECT_GT(r->ops_per_connection[i], 0u) << "channel " << i + 1;
  }
}

// The lab's round trip held on the client (SmbLoadOptions::round_trip_us,
// SmbClient::HoldRequests), on a signed session over two channels: every
// request waits the hold, pipelined requests overlap their holds, each
// channel holds its own. Lower bounds, and a loose upper one: how precisely
// a shared 2-core VM wakes a sleeping thread is the lab's to report.
TEST_F(SambaTest, ARoundTripHeldOnTheClientAddsToEveryRequest) {
  SmbLoadOptions o;
  o.op = SmbOp::kWrite;
  o.size = 4096;
  o.channels = 2;
  o.outstanding = 8;
  o.seconds = 0.5;
  o.warmup_seconds = 0.1;
  o.round_trip_us = 20000;
  auto r = Load(o, "smb-sign-aes-cmac");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_GE(r->p50_us, 20000u);
  EXPECT_LT(r->p50_us, 20000u + 50000u);
  // One request at a time would make at most 50 a second; 16 in flight
  // over a 20 ms round trip up to 800.
  EXPECT_GT(r->ops_per_s, 200);
  ASSERT_EQ(r->ops_per_connection.size(), 2u);
  for (uint64_t ops : r->ops_per_connection) EXPECT_GT(ops, 0u);
  EXPECT_GE(r->counters.signed_requests, r->ops);
  // One client: the hold changes only with nothing in flight; a held
  // request's answer comes no sooner than the hold.
  auto c = Connect("smb-enc-aes-128-gcm");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  SmbClient& client = **c;
  auto file = client.Open("secmode-hold-test.dat", /*delete_on_close=*/true);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(client.HoldRequests(30000000).ok());
  const uint64_t t0 = common::NowNs();
  ASSERT_TRUE(client.StartQueryInfo(*file).ok());
  const common::Status busy = client.HoldRequests(0);
  EXPECT_EQ(busy.code(), common::Code::kInternal) << busy.ToString();
  auto done = client.Receive(common::Deadline::AfterMs(10000));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_GE(common::NowNs() - t0, 30000000u);
  ASSERT_TRUE(client.HoldRequests(0).ok());
  EXPECT_TRUE(client.Close(*file).ok());
  SmbLoadOptions too_long = o;
  too_long.round_trip_us = 10000001;
  auto refused = Load(too_long, "smb-plain");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("round trip"), std::string::npos)
      << refused.status().ToString();
}

// tshark as an independent judge of a live encrypted session with Samba:
// captured as it went over the wire, decrypted by Wireshark given only the
// session id and keys, every request and response an SMB2 message of the
// command sent, the written and read data as sent, nothing malformed.
TEST_F(SambaTest, TsharkDecryptsALiveEncryptedSession) {
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  common::PcapTcpWriter pcap(49152, 445);
  pcap.Begin();
  SmbClientConfig config = Config("smb-enc-aes-128-gcm");
  config.wire_observer = [&pcap](bool from_client, common::ByteView frame) {
    pcap.Add(from_client, frame);
  };
  auto fd = dc_->Connect(common::Deadline::AfterMs(5000));
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  auto client = SmbClient::Connect(std::move(*fd), config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  SmbClient& c = **client;
  auto f = c.Open("tshark.dat", /*delete_on_close=*/true);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string text;
  while (text.size() < 4096) text += "secmode SMB3 live session for tshark. ";
  text.resize(4096);
  ASSERT_TRUE(c.Write(*f, 0, common::AsBytes(text)).ok());
  Bytes back;
  ASSERT_TRUE(c.Read(*f, 0, 4096, &back).ok());
  ASSERT_TRUE(c.Close(*f).ok());
  ASSERT_TRUE(c.Logoff().ok());

  const std::string pcap_path = dc_->dir() + "/live-aes-128-gcm.pcap";
  ASSERT_TRUE(pcap.Save(pcap_path).ok());
  uint8_t sesid[8];
  PutLe64(sesid, c.session_id());
  const std::string uat = "uat:smb2_seskey_list:" + common::ToHex(common::ByteView(sesid, 8)) +
                          "," + common::ToHex(SmbSessionKey(c.gss_session_key())) + "," +
                          common::ToHex(c.keys().server_to_client) + "," +
                          common::ToHex(c.keys().client_to_server);
  auto rows = secmode::testing::RunTshark(pcap_path, {"-o", uat,
                                                      "-Y", "smb2",
                                                      "-T", "fields",
                                                      "-e", "frame.number",
                                                      "-e", "smb2.cmd",
                                                      "-e", "smb2.flags.response",
                                                      "-e", "smb2.nt_status",
                                                      "-e", "smb2.write_length",
                                                      "-e", "smb2.read_length",
                                                      "-e", "data.data",
                                                      "-e", "smb2.read.blob"},
                                          dc_->dir() + "/tshark.txt");
  // Columns: frame, command, response flag, status, write length, read
  // length, data, read blob. NEGOTIATE and SESSION_SETUP in clear, then TREE_CONNECT, CREATE,
  // WRITE, READ, CLOSE, TREE_DISCONNECT, LOGOFF sealed: a request and a response each (more when
  // Samba sends an interim response first).
  std::map<std::string, int> requests, responses;
  std::string write_data, read_data;
  for (const auto& r : rows) {
    ASSERT_GE(r.size(), 3u);
    const bool response = r[2] == "1" || r[2] == "True";
    (response ? responses : requests)[r[1]]++;
    // The WRITE data (handed to the generic data dissector) and the READ
    // response's blob.
    if (r[1] == "9" && !response && r.size() > 6) write_data = r[6];
    if (r[1] == "8" && response && r.size() > 7) read_data = r[7];
  }
  for (const char* cmd : {"0", "1", "3", "5", "9", "8", "6", "4", "2"}) {
    EXPECT_GE(requests[cmd], 1) << "no request of command " << cmd << " dissected";
    EXPECT_GE(responses[cmd], 1) << "no response of command " << cmd << " dissected";
  }
  const std::string want = common::ToHex(common::AsBytes(text));
  auto strip = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ':'), s.end());
    return s;
  };
  std::string shown;
  for (const auto& r : rows) {
    for (const auto& col : r) shown += col.substr(0, 40) + "|";
    shown += "\n";
  }
  EXPECT_TRUE(strip(write_data) == want)
      << "the WRITE data tshark decrypted differs (" << strip(write_data).size() / 2 << " bytes):\n"
      << shown;
  EXPECT_TRUE(strip(read_data) == want)
      << "the READ data tshark decrypted differs (" << strip(read_data).size() / 2 << " bytes):\n"
      << shown;
  auto bad =
      secmode::testing::RunTshark(pcap_path,
                                  {"-o", uat, "-Y", "_ws.malformed || _ws.expert.severity == error",
                                   "-T", "fields", "-e", "frame.number"},
                                  dc_->dir() + "/tshark-bad.txt");
  EXPECT_TRUE(bad.empty()) << bad.size() << " malformed frames; pcap in " << pcap_path;
}

// `secmode trace` on tcpdump's capture (in the client's namespace) of two
// SMB3 multichannel loads against Samba, a signing and an encrypting
// session over four channels each: its sessions, their channels, messages
// in clear, signed and encrypted, bindings, credits, each channel's highest
// MessageId, the nonces, and the commands are what tshark dissects in the
// same file.
TEST_F(SambaTest, ATraceOfMultichannelSessionsIsWhatTsharkDissects) {
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  const std::string pcap = dc_->dir() + "/trace-smb.pcap";
  secmode::testing::Tcpdump capture("tcp port 445", pcap, "any", dc_->lab().InClient({}));
  ASSERT_EQ(capture.error(), "");
  for (const char* mode : {"smb-sign-aes-gmac", "smb-enc-aes-128-gcm"}) {
    SCOPED_TRACE(mode);
    SmbLoadOptions o;
    o.op = SmbOp::kRead;
    o.size = 4096;
    o.channels = 4;
    o.outstanding = 4;
    o.seconds = 0.3;
    o.warmup_seconds = 0.05;
    auto r = Load(o, mode);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << dc_->Describe();
    EXPECT_EQ(r->errors, 0u) << r->first_error;
  }
  secmode::testing::ExpectNoDrop(capture.Stop());
  auto traced = trace::TraceCapture(pcap, trace::TraceOptions{});
  ASSERT_TRUE(traced.ok()) << traced.status().ToString();
  const trace::SmbTrace& smb = traced->smb;

  // tshark's fields, one row per frame; a field a frame has several of
  // (several SMB2 headers in it) is a comma-separated list in their order.
  const auto rows = secmode::testing::RunTshark(pcap, {"-Y", "smb2",
                                                       "-T", "fields",
                                                       "-e", "frame.number",
                                                       "-e", "tcp.srcport",
                                                       "-e", "tcp.dstport",
                                                       "-e", "smb2.sesid",
                                                       "-e", "smb2.msg_id",
                                                       "-e", "smb2.cmd",
                                                       "-e", "smb2.flags.response",
                                                       "-e", "smb2.flags.signature",
                                                       "-e", "smb2.credits.requested",
                                                       "-e", "smb2.credits.granted",
                                                       "-e", "smb2.header.transform.nonce",
                                                       "-e", "smb2.ses_req_flags.session_binding"},
                                                dc_->dir() + "/tshark-trace.txt");
  ASSERT_FALSE(rows.empty());
  auto list = [](const std::vector<std::string>& row, size_t i) {
    std::vector<std::string> out;
    if (i >= row.size() || row[i].empty()) return out;
    std::stringstream ss(row[i]);
    for (std::string v; std::getline(ss, v, ',');) out.push_back(v);
    return out;
  };
  auto yes = [](const std::string& v) { return v == "1" || v == "True"; };
  struct Session {
    uint64_t plain = 0, signed_messages = 0, bindings = 0;
    uint64_t requested = 0, granted = 0;
    std::map<uint16_t, uint64_t> highest;  // by the channel's client port
  };
  // The transforms (all the encrypting session's), their nonces by sender,
  // and the session ids tshark shows in their frames.
  uint64_t transforms = 0, reused = 0;
  std::set<std::pair<bool, std::string>> sealed_nonces;
  std::set<std::string> transform_sessions;
  std::map<uint64_t, Session> sessions;
  std::map<std::pair<std::string, std::string>, uint64_t> requests;  // (command, protection)
  std::map<std::string, uint64_t> responses;                         // by command
  std::map<uint16_t, std::pair<uint64_t, uint64_t>> per_channel;     // requests, responses
  uint64_t notifications = 0;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 3u);
    const bool from_client = row[2] == "445";
    const uint16_t port = static_cast<uint16_t>(std::stoul(from_client ? row[1] : row[2]));
    const auto sesids = list(row, 3), ids = list(row, 4), cmds = list(row, 5),
               response = list(row, 6), signature = list(row, 7), asked = list(row, 8),
               given = list(row, 9), nonces = list(row, 10), binding = list(row, 11);
    // Our client seals nothing while a message in clear is in flight on
    // its connection, so a frame holds headers in clear or transforms.
    // Without the keys, tshark now and then dissects a ciphertext as a
    // header of garbage (a second session id and a command no SMB2 has, in
    // a frame of one transform): a frame's header fields count only where
    // it holds no transform, and its transforms by their nonces.
    if (!nonces.empty()) {
      for (const std::string& nonce : nonces) {
        ++transforms;
        if (!sealed_nonces.insert({from_client, nonce}).second) ++reused;
      }
      transform_sessions.insert(sesids.begin(), sesids.end());
      continue;
    }
    ASSERT_EQ(ids.size(), response.size()) << "frame " << row[0];
    ASSERT_EQ(cmds.size(), response.size()) << "frame " << row[0];
    ASSERT_EQ(signature.size(), response.size()) << "frame " << row[0];
    ASSERT_EQ(sesids.size(), response.size()) << "frame " << row[0];
    size_t next_asked = 0, next_given = 0, next_binding = 0;
    for (size_t i = 0; i < response.size(); ++i) {
      const bool is_response = yes(response[i]);
      const uint64_t id = std::stoull(sesids[i], nullptr, 0);
      const uint16_t number = static_cast<uint16_t>(std::stoul(cmds[i]));
      const char* name = smb::CommandName(number);
      ASSERT_NE(name, nullptr) << "frame " << row[0] << " command " << number;
      uint64_t credits = 0;
      bool binds = false;
      if (is_response) {
        ++per_channel[port].second;
        // The server's own notifications (MessageId all ones) answer no
        // request: counted apart.
        if (ids[i] == std::to_string(UINT64_MAX)) {
          ++notifications;
        } else {
          ++responses[name];
        }
        ASSERT_LT(next_given, given.size()) << "frame " << row[0];
        credits = std::stoull(given[next_given++]);
      } else {
        ++per_channel[port].first;
        ++requests[{name, yes(signature[i]) ? "signed" : "plain"}];
        ASSERT_LT(next_asked, asked.size()) << "frame " << row[0];
        credits = std::stoull(asked[next_asked++]);
        if (number == 1) {
          ASSERT_LT(next_binding, binding.size()) << "frame " << row[0];
          binds = yes(binding[next_binding++]);
        }
      }
      if (id == 0) continue;
      Session& x = sessions[id];
      ++(yes(signature[i]) ? x.signed_messages : x.plain);
      if (is_response) {
        x.granted += credits;
      } else {
        x.requested += credits;
        x.bindings += binds;
        uint64_t& highest = x.highest[port];
        highest = std::max<uint64_t>(highest, std::stoull(ids[i]));
      }
    }
  }

  // Two sessions, each over its four channels; eight connections, each
  // read whole.
  ASSERT_EQ(sessions.size(), 2u);
  ASSERT_EQ(smb.sessions.size(), 2u);
  ASSERT_EQ(smb.connections.size(), 8u);
  uint64_t our_notifications = 0;
  for (const trace::SmbConnectionTrace& c : smb.connections) {
    SCOPED_TRACE("client port " + std::to_string(c.client.port));
    our_notifications += c.notifications;
    EXPECT_EQ(c.unreadable, 0u);
    EXPECT_EQ(c.not_smb2, 0u);
    EXPECT_EQ(c.unmatched_responses, 0u);
    EXPECT_EQ(c.from_client.lost + c.from_server.lost, 0u);
    EXPECT_EQ(c.requests, per_channel[c.client.port].first);
    EXPECT_EQ(c.responses, per_channel[c.client.port].second);
  }
  for (const trace::SmbSessionTrace& s : smb.sessions) {
    SCOPED_TRACE("session " + std::to_string(s.id));
    ASSERT_EQ(sessions.count(s.id), 1u);
    const Session& x = sessions[s.id];
    EXPECT_EQ(s.connections.size(), 4u);
    EXPECT_GE(s.bindings, s.connections.size() - 1);  // each channel after the first
    EXPECT_EQ(s.bindings, x.bindings);
    EXPECT_EQ(s.plain, x.plain);
    EXPECT_EQ(s.signed_messages, x.signed_messages);
    EXPECT_EQ(s.credits_requested, x.requested);
    EXPECT_EQ(s.credits_granted, x.granted);
    EXPECT_EQ(s.nonces_reused, 0u);
    std::map<uint16_t, uint64_t> highest;
    for (const auto& [connection, id] : s.highest_message_id) {
      highest[smb.connections[connection].client.port] = id;
    }
    EXPECT_EQ(highest, x.highest);
  }
  // One session signs, the other seals its messages after SESSION_SETUP:
  // every transform tshark shows is the sealing session's, none sent twice.
  const trace::SmbSessionTrace* sealing = nullptr;
  for (const trace::SmbSessionTrace& s : smb.sessions) {
    if (s.encrypted == 0) continue;
    EXPECT_EQ(sealing, nullptr) << "two sessions sealed";
    sealing = &s;
  }
  ASSERT_NE(sealing, nullptr);
  EXPECT_EQ(sealing->encrypted, transforms);
  EXPECT_EQ(sealing->nonces_reused, reused);
  char id[24];
  snprintf(id, sizeof id, "0x%016llx", static_cast<unsigned long long>(sealing->id));
  EXPECT_EQ(transform_sessions.count(id), 1u) << id;
  std::map<std::pair<std::string, std::string>, uint64_t> our_requests;
  std::map<std::string, uint64_t> our_responses;
  for (const auto& [key, x] : smb.commands) {
    our_requests[key] += x.requests;
    our_responses[key.first] += x.responses + x.interim;
  }
  EXPECT_EQ(our_requests, requests);
  EXPECT_EQ(our_responses, responses);
  EXPECT_EQ(our_notifications, notifications);
}

TEST_F(SambaTest, ASpoiledSignatureOrCiphertextIsRefusedWithoutAHang) {
  for (const char* mode : {"smb-sign-aes-cmac", "smb-enc-aes-128-gcm"}) {
    SCOPED_TRACE(mode);
    auto client = Connect(mode);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    SmbClient& c = **client;
    auto f = c.Open("spoiled.dat");
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    // Flip one bit of the signature (signed) or of the ciphertext (sealed).
    const bool sealed = std::string(mode).find("enc") != std::string::npos;
    c.TamperWithNextRequest([sealed](Bytes* wire) { (*wire)[sealed ? 60 : 50] ^= 0x01; });
    const auto started = std::chrono::steady_clock::now();
    const common::Status w = c.Write(*f, 0, Pattern(4096, 9));
    EXPECT_FALSE(w.ok());
    // The server refuses or drops the connection; the client says so well
    // before its own 10 s deadline would end the wait.
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(9)) << w.ToString();
    RecordProperty(std::string("refusal_") + mode, w.ToString());
  }
}

// A DC stopped and removed.
void ExpectStoppedLeavingNothing(SambaDc* dc) {
  const std::string dir = dc->dir();
  const std::string ns = dc->lab().server_namespace();
  const pid_t pid = dc->pid();
  ASSERT_TRUE(dc->Stop().ok());
  struct stat st;
  EXPECT_NE(stat(dir.c_str(), &st), 0) << dir;
  EXPECT_NE(stat(("/var/run/netns/" + ns).c_str(), &st), 0) << ns;
  EXPECT_FALSE(secmode::testing::ProcessRunning(pid));
}

// No password of the DC is ever on a command line (any local user reads
// /proc/PID/cmdline) or in a file others can read: the commands the set-up
// ran name none (provision makes the Administrator's, written only to
// provision.log; the user's is random and never shown), and the user's
// keytab is root's alone, in a 0700 directory.
TEST_F(SambaTest, NoPasswordOnACommandLineAndTheKeysArePrivate) {
  std::string admin;
  {
    std::ifstream log(dc_->dir() + "/provision.log");
    const std::string label = "Admin password:";
    for (std::string line; std::getline(log, line);) {
      const size_t at = line.find(label);
      if (at == std::string::npos) continue;
      std::istringstream(line.substr(at + label.size())) >> admin;
    }
  }
  EXPECT_FALSE(admin.empty()) << "provision did not make the Administrator's password";
  ASSERT_FALSE(dc_->commands().empty());
  for (const auto& argv : dc_->commands()) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    for (size_t i = 0; i < argv.size(); ++i) {
      for (const char* option : {"--adminpass", "--password", "--newpassword"}) {
        EXPECT_NE(argv[i].rfind(option, 0), 0u) << line;
      }
      if (!admin.empty()) {
        EXPECT_EQ(argv[i].find(admin), std::string::npos) << line;
      }
      // samba-tool user create NAME [PASSWORD]: no password after the name.
      if (i >= 2 && argv[i - 2] == "user" && argv[i - 1] == "create" && i + 1 < argv.size()) {
        EXPECT_EQ(argv[i + 1].rfind("-", 0), 0u) << "a password after the user name: " << line;
      }
    }
  }
  struct stat st;
  ASSERT_EQ(stat(dc_->keys_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
  ASSERT_EQ(stat(dc_->user_keytab().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
  EXPECT_EQ(st.st_uid, 0u);
  ASSERT_EQ(stat((dc_->dir() + "/provision.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
}

// Two DCs at once, as ctest -j2 runs two of these tests: the second one
// ends first, and the first still sets sessions up (its smbd asks its own
// winbindd to map the user's SIDs; when both shared /run/samba, it asked the
// second's, gone, and SESSION_SETUP failed with STATUS_INTERNAL_ERROR).
// Each leaves nothing behind.
TEST(SambaDcTest, TwoAtOnceServeTheirOwnSessionsAndLeaveNothingBehind) {
  const common::Status why = SambaDc::Available();
  if (!why.ok()) GTEST_SKIP() << why.message();
  std::unique_ptr<SambaDc> dcs[2];
  for (auto& dc : dcs) {
    auto started = SambaDc::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    dc = std::move(*started);
    EXPECT_FALSE(dc->version().empty());
  }
  const auto session = [](const SambaDc& dc) -> common::Status {
    SECMODE_ASSIGN_OR_RETURN(common::Fd fd, dc.Connect(common::Deadline::AfterMs(5000)));
    SECMODE_ASSIGN_OR_RETURN(auto client,
                             SmbClient::Connect(std::move(fd), ConfigFor(dc, "smb-sign-aes-cmac")));
    return client->Logoff();
  };
  const common::Status second = session(*dcs[1]);
  EXPECT_TRUE(second.ok()) << second.ToString();
  ExpectStoppedLeavingNothing(dcs[1].get());
  const common::Status first = session(*dcs[0]);
  EXPECT_TRUE(first.ok()) << first.ToString();
  ExpectStoppedLeavingNothing(dcs[0].get());
}

// Processes whose command line names `needle` (samba's children carry the
// configuration file's path).
std::vector<pid_t> ProcessesNaming(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* d = opendir("/proc");
  if (!d) return found;
  while (dirent* e = readdir(d)) {
    const pid_t pid = static_cast<pid_t>(atoi(e->d_name));
    if (pid <= 0 || pid == getpid()) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().find(needle) != std::string::npos) found.push_back(pid);
  }
  closedir(d);
  return found;
}

// Its owner killed: the lab's reaper ends samba (and with it every child)
// and removes the namespaces and the directory. Only this DC's processes
// count: tests run in parallel, and another test's DC names its own
// smb.conf (a decoy stands in for one here).
TEST(SambaDcTest, OwnerKilledLeavesNothingBehind) {
  const common::Status why = SambaDc::Available();
  if (!why.ok()) GTEST_SKIP() << why.message();
  common::Command decoy;
  // sleep, not exec'd by the shell (a shell that execs a lone command
  // would drop the name), for longer than a DC takes to start and end.
  decoy.argv = {"/bin/sh", "-c", "sleep 120; :", "/another-lab/samba/etc/smb.conf"};
  decoy.log_path = "/dev/null";
  auto decoy_pid = common::Spawn(decoy);
  ASSERT_TRUE(decoy_pid.ok()) << decoy_pid.status().ToString();
  const std::string dir = secmode::testing::ExpectOwnerDeathCleansUp(
      [] {
        auto dc = SambaDc::Start();
        if (!dc.ok()) return "error " + dc.status().ToString();
        const std::string msg = (*dc)->dir() + " " + std::to_string((*dc)->pid());
        dc->release();  // the owner dies holding it
        return msg;
      },
      SIGKILL);
  // The decoy still names another DC's smb.conf: the check below could see it.
  EXPECT_EQ(ProcessesNaming("/another-lab/samba/etc/smb.conf").size(), 1u);
  if (dir.empty()) {  // the child failed: ExpectOwnerDeathCleansUp said why
    common::Terminate(*decoy_pid, 2000);
    return;
  }
  const std::string own = dir + "/etc/smb.conf";
  // No samba child (smbd, winbindd, the KDC and LDAP workers) is left.
  EXPECT_TRUE(secmode::testing::WaitUntil([&] { return ProcessesNaming(own).empty(); }, 10000))
      << ProcessesNaming(own).size() << " processes naming " << own << " remain";
  common::Terminate(*decoy_pid, 2000);
}

}  // namespace
}  // namespace secmode::smb
