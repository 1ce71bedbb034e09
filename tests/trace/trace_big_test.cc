// `secmode trace` on a capture of several GiB: its memory is bounded by the
// connections and the calls outstanding, not by the file's size. The
// capture (one RPCSEC_GSS context's calls and 256 KiB replies, written piece
// by piece by secmode's own pcap writer) is made by the test; the peak RSS of
// the `secmode trace` process is the kernel's (getrusage of the waited-for
// child). Label long: it writes and reads 3 GiB.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/files.h"
#include "common/pcap.h"
#include "common/subprocess.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"
#include "tests/support/temp_dir.h"

namespace secmode::trace {
namespace {

using common::Bytes;
using testing::TempDir;

constexpr uint64_t kFileBytes = 3ull << 30;
constexpr size_t kReplyBytes = 256 << 10;
constexpr long kMaxRssKb = 256 << 10;  // 256 MiB

Bytes Record(const Bytes& message) {
  Bytes wire;
  rpc::FrameRecord(message, &wire);
  return wire;
}

Bytes Call(uint32_t xid, uint32_t seq) {
  rpc::GssCred cred;
  cred.seq = seq;
  cred.service = rpc::kGssSvcIntegrity;
  const uint8_t handle[4] = {0xc0, 0, 0, 7};
  cred.handle = common::ByteView(handle, 4);
  Bytes body, record;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, rpc::kNfsProgram, rpc::kNfsVersion, rpc::kNfsProcCompound,
                        rpc::kRpcsecGss, body, &record);
  rpc::XdrEncoder e(&record);
  e.PutU32(rpc::kRpcsecGss);
  e.PutOpaque(Bytes(28, 5));  // the verifier
  e.PutU32(0);
  return record;
}

TEST(TraceBigCaptureTest, SeveralGibibytesAreReadWithinABoundedMemory) {
  TempDir dir("secmode-trace-big");
  std::error_code ec;
  const auto space = std::filesystem::space(dir.path, ec);
  if (ec || space.available < kFileBytes + (1ull << 30)) {
    GTEST_SKIP() << "no room for a capture of " << kFileBytes << " bytes in " << dir.path
                 << " (TMPDIR)";
  }
  const std::string pcap = dir.path + "/big.pcap";
  uint64_t written = 0, pairs = 0;
  {
    std::ofstream out(pcap, std::ios::binary);
    ASSERT_TRUE(out) << pcap;
    common::PcapTcpWriter w(900, 2049);
    w.Begin();
    Bytes reply_body(kReplyBytes, 0x3c);
    for (uint32_t xid = 1; written < kFileBytes; ++xid, ++pairs) {
      // Every third pair's numbers swapped: calls lag behind.
      const uint32_t seq = xid % 3 == 1 ? xid + 1 : xid % 3 == 2 ? xid - 1 : xid;
      w.Add(true, Record(Call(xid, seq)));
      Bytes reply;
      rpc::EncodeAcceptedReply(xid, rpc::kAuthNone, {}, rpc::kSuccess, &reply);
      reply.insert(reply.end(), reply_body.begin(), reply_body.end());
      w.Add(false, Record(reply));
      const Bytes piece = w.TakeBytes();
      out.write(reinterpret_cast<const char*>(piece.data()),
                static_cast<std::streamsize>(piece.size()));
      ASSERT_TRUE(out) << "writing " << pcap;
      written += piece.size();
    }
  }
  common::Command trace;
  trace.argv = {SECMODE_BIN, "trace", pcap, "--json"};
  trace.log_path = dir.path + "/trace.json";
  const uint64_t t0 = common::NowNs();
  auto rc = common::RunAndWait(trace, 600000);
  const double seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  ASSERT_TRUE(rc.ok() && *rc == 0) << common::TailOfFile(trace.log_path);
  rusage children{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &children), 0);
  auto text = common::ReadFile(trace.log_path);
  ASSERT_TRUE(text.ok());
  const nlohmann::json t = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_TRUE(t.is_object()) << common::TailOfFile(trace.log_path);
  ASSERT_EQ(t["contexts"].size(), 1u);
  EXPECT_EQ(t["contexts"][0]["calls"].get<uint64_t>(), pairs);
  EXPECT_EQ(t["contexts"][0]["lag"]["max"].get<uint64_t>(), 1u);
  ASSERT_EQ(t["connections"].size(), 1u);
  EXPECT_EQ(t["connections"][0]["replies"].get<uint64_t>(), pairs);
  EXPECT_LT(children.ru_maxrss, kMaxRssKb) << "secmode trace held " << children.ru_maxrss
                                           << " KiB at most for a file of " << written << " bytes";
  RecordProperty("file_bytes", std::to_string(written));
  RecordProperty("peak_rss_kib", std::to_string(children.ru_maxrss));
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("secmode trace read %llu bytes (%llu calls) in %.1f s, peak RSS %ld KiB\n",
              static_cast<unsigned long long>(written), static_cast<unsigned long long>(pairs),
              seconds, children.ru_maxrss);
}

}  // namespace
}  // namespace secmode::trace
