// Wireshark as an independent SMB3 implementation: a generated SMB 3.1.1
// exchange (WRITE and READ, request and response, each in an AES-128-GCM
// TRANSFORM_HEADER) is written as a pcap, and tshark, given only the
// session id and the two cipher keys (uat:smb2_seskey_list), must decrypt
// and dissect every message as the SMB2 command we sent, with the data we
// sent, and find nothing malformed.
//
// The UAT columns (Wireshark packet-smb2.c, "smb2_seskey_list", as its own
// decryption tests pass them): session id as the 8 bytes on the wire
// (little-endian) in bare hex, session key, server-to-client key,
// client-to-server key.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/hex.h"
#include "common/pcap.h"
#include "common/subprocess.h"
#include "smb/kdf.h"
#include "smb/message.h"
#include "smb/transform.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;

constexpr uint64_t kSessionId = 0x0000100000000025ull;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::string Strip(std::string s) {
  std::string out;
  for (char c : s) {
    if (c != ':' && c != '\r' && c != '\n') out.push_back(static_cast<char>(tolower(c)));
  }
  return out;
}

struct TsharkRun {
  int exit_code = -1;
  std::vector<std::string> lines;
};

TsharkRun RunTshark(const std::string& tshark, const std::string& dir,
                    std::vector<std::string> args, const std::string& name) {
  common::Command cmd;
  cmd.argv = {tshark};
  cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
  cmd.log_path = dir + "/" + name + ".out";
  cmd.env["HOME"] = dir;  // no user Wireshark profile leaks in
  TsharkRun run;
  auto rc = common::RunAndWait(cmd, 60000);
  EXPECT_TRUE(rc.ok()) << rc.status().ToString();
  if (rc.ok()) run.exit_code = *rc;
  auto text = common::ReadFile(cmd.log_path);
  if (text.ok()) {
    for (const auto& line : Split(*text, '\n')) {
      // tshark warns on stderr when run as root; keep only field rows.
      if (line.find('|') != std::string::npos) run.lines.push_back(line);
    }
  }
  return run;
}

TEST(Tshark, DecryptsAndDissectsAes128GcmReadWrite) {
  const std::string tshark = common::FindProgram("tshark");
  ASSERT_FALSE(tshark.empty())
      << "tshark not found: install the Debian package 'tshark' (listed in the Makefile "
         "PACKAGES; CI installs it). This test needs it to check SMB3 decryption "
         "independently.";

  // Keys: SMB 3.1.1 derivation from a fixed session key and preauth hash.
  const Bytes session_key = common::PatternBytes(16, 42);
  Bytes preauth(64, 0);
  ASSERT_TRUE(UpdatePreauthHash(&preauth, common::AsBytes("secmode tshark test")).ok());
  auto keys = DeriveSmb311Keys(session_key, preauth, CipherId::kAes128Gcm);
  ASSERT_TRUE(keys.ok());

  auto client = Encryptor::Create(CipherId::kAes128Gcm, keys->client_to_server, kSessionId);
  auto server = Encryptor::Create(CipherId::kAes128Gcm, keys->server_to_client, kSessionId);
  ASSERT_TRUE(client.ok() && server.ok());

  std::string text;
  while (text.size() < 4096) text += "secmode SMB3 AES-128-GCM pcap test data. ";
  text.resize(4096);
  const ByteView data = common::AsBytes(text);

  common::PcapTcpWriter pcap(49152, 445);
  pcap.Begin();
  // Each SMB message travels with its 4-byte NetBIOS session-service length
  // prefix (MS-SMB2 2.1).
  auto send = [&pcap](bool from_client, ByteView smb) {
    Bytes framed;
    smb::AppendFramed(smb, &framed);
    pcap.Add(from_client, framed);
  };
  Bytes message, wire;
  HeaderFields h;
  h.session_id = kSessionId;
  h.tree_id = 1;

  h.command = Command::kWrite;
  h.message_id = 1;
  h.flags = 0;
  BuildWriteRequest(h, data, &message);
  ASSERT_TRUE((*client)->Seal({message}, &wire).ok());
  send(true, wire);

  h.flags = kFlagServerToRedir;
  BuildWriteResponse(h, static_cast<uint32_t>(data.size()), &message);
  ASSERT_TRUE((*server)->Seal({message}, &wire).ok());
  send(false, wire);

  h.command = Command::kRead;
  h.message_id = 2;
  h.flags = 0;
  BuildReadRequest(h, kSampleFileId, static_cast<uint32_t>(data.size()), 0, &message);
  ASSERT_TRUE((*client)->Seal({message}, &wire).ok());
  send(true, wire);

  h.flags = kFlagServerToRedir;
  BuildReadResponse(h, data, &message);
  ASSERT_TRUE((*server)->Seal({message}, &wire).ok());
  send(false, wire);

  auto dir = common::MakeTempDirectory("secmode-tshark-");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string file = *dir + "/smb3-aes-128-gcm.pcap";
  ASSERT_TRUE(pcap.Save(file).ok());

  uint8_t sesid_wire[8];
  PutLe64(sesid_wire, kSessionId);
  // Byte-buffer UAT columns are bare hex (quotes are for string columns).
  const std::string uat = "uat:smb2_seskey_list:" + common::ToHex(ByteView(sesid_wire, 8)) + "," +
                          common::ToHex(session_key) + "," + common::ToHex(keys->server_to_client) +
                          "," + common::ToHex(keys->client_to_server);
  // Kept next to the pcap (the directory stays when the test fails) so a
  // failure can be looked at with tshark -V by hand.
  ASSERT_TRUE(common::WriteFileAtomically(*dir + "/uat.txt", uat + "\n").ok());
  TsharkRun fields = RunTshark(tshark, *dir,
                               {"-n",
                                "-r",
                                file,
                                "-o",
                                uat,
                                "-Y",
                                "smb2",
                                "-T",
                                "fields",
                                "-E",
                                "separator=|",
                                "-e",
                                "frame.number",
                                "-e",
                                "smb2.cmd",
                                "-e",
                                "smb2.flags.response",
                                "-e",
                                "smb2.msg_id",
                                "-e",
                                "smb2.sesid",
                                "-e",
                                "smb2.write_length",
                                "-e",
                                "smb2.read_length",
                                "-e",
                                "data.data"},
                               "fields");
  EXPECT_EQ(fields.exit_code, 0);
  ASSERT_EQ(fields.lines.size(), 4u) << "tshark dissected " << fields.lines.size()
                                     << " SMB2 frames, expected 4; output in " << *dir;
  const std::string want_data = Strip(common::ToHex(data));
  struct Want {
    const char* cmd;
    const char* response;
    const char* msg_id;
    bool write_data, read_data;
  } want[] = {{"9", "0", "1", true, false},
              {"9", "1", "1", false, false},
              {"8", "0", "2", false, false},
              {"8", "1", "2", false, true}};
  for (size_t i = 0; i < 4; ++i) {
    auto f = Split(fields.lines[i], '|');
    ASSERT_EQ(f.size(), 8u) << fields.lines[i];
    EXPECT_EQ(f[1], want[i].cmd) << "frame " << f[0] << ": " << fields.lines[i];
    EXPECT_TRUE(f[2] == want[i].response ||
                (std::string(want[i].response) == "1" ? f[2] == "True" : f[2] == "False"))
        << fields.lines[i];
    EXPECT_EQ(f[3], want[i].msg_id) << fields.lines[i];
    EXPECT_NE(f[4], "") << "no session id: not decrypted? " << fields.lines[i];
    if (i == 0) {
      EXPECT_EQ(f[5], "4096");
    }
    if (i == 2) {
      EXPECT_EQ(f[6], "4096");
    }
    // With no CREATE in the capture Wireshark does not know the file, so
    // it hands the READ/WRITE data to its generic data dissector.
    if (want[i].write_data || want[i].read_data) {
      EXPECT_TRUE(Strip(f[7]) == want_data)
          << (want[i].write_data ? "WRITE" : "READ") << " data differs: tshark shows "
          << Strip(f[7]).size() / 2 << " bytes";
    } else {
      EXPECT_EQ(f[7], "") << "frame " << f[0] << " should carry no data";
    }
  }

  // Nothing malformed, no expert errors.
  TsharkRun bad = RunTshark(
      tshark, *dir,
      {"-n", "-r", file, "-o", uat, "-Y", "_ws.malformed || _ws.expert.severity == error", "-T",
       "fields", "-E", "separator=|", "-e", "frame.number", "-e", "_ws.expert.message"},
      "malformed");
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_TRUE(bad.lines.empty()) << "malformed or erroneous frames: "
                                 << (bad.lines.empty() ? "" : bad.lines.front());

  // Without the keys tshark cannot see inside: the assertion above is about
  // decryption, not about plaintext leaking.
  TsharkRun keyless = RunTshark(tshark, *dir,
                                {"-n", "-r", file, "-Y", "smb2.cmd", "-T", "fields", "-E",
                                 "separator=|", "-e", "frame.number", "-e", "smb2.cmd"},
                                "keyless");
  EXPECT_TRUE(keyless.lines.empty()) << (keyless.lines.empty() ? "" : keyless.lines.front());

  if (!HasFailure()) common::RemoveTree(*dir);
}

}  // namespace
}  // namespace secmode::smb
