// What the workload model takes from a saved run: which baseline a list of
// modes is predicted against, and the protocol's own CPU per operation from
// the NFS e2e sys rows or the smb-e2e section's smb-plain rows.
#include "harness/workload_inputs.h"

#include <gtest/gtest.h>

#include <optional>

namespace secmode::harness {
namespace {

TEST(WorkloadInputsTest, TheModesNameTheirBaselineAndOneProtocolAtATime) {
  EXPECT_EQ(*BaselineOfModes({"krb5", "krb5p"}), "sys");
  EXPECT_EQ(*BaselineOfModes({}), "sys");
  EXPECT_EQ(*BaselineOfModes({"smb-sign-aes-gmac", "smb-enc-aes-256-ccm"}), "smb-plain");
  EXPECT_EQ(*BaselineOfModes({"smb-plain"}), "smb-plain");
  auto mixed = BaselineOfModes({"krb5p", "smb-enc-aes-128-gcm"});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(mixed.status().message().find("'krb5p' and 'smb-enc-aes-128-gcm'"), std::string::npos);
  // Names outside the mode registry (harness/modes.h), and a family with
  // its enctype (chosen by --enctype instead).
  for (const char* bad : {"nfs", "smb-enc-aes-512-gcm", "smb-", "krb5x"}) {
    auto r = BaselineOfModes({bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("unknown mode '") + bad + "'"),
              std::string::npos)
        << r.status().message();
  }
  auto with_enctype = BaselineOfModes({"krb5p:aes128-cts-hmac-sha1-96"});
  ASSERT_FALSE(with_enctype.ok());
  EXPECT_NE(with_enctype.status().message().find("give the family alone (krb5p)"),
            std::string::npos);
}

// An SMB family's legs carry SMB2's bytes on the wire, the transform header
// in front when it encrypts; NFS families keep ONC RPC's.
TEST(WorkloadInputsTest, SmbLegsCarrySmb2sBytesOnTheWire) {
  std::vector<MicroRow> micro;
  for (const char* mode : {"sys", "smb-plain", "smb-sign-aes-gmac", "smb-enc-aes-128-gcm"}) {
    MicroRow m;
    m.mode = mode;
    m.engine = std::string(mode) == "sys" ? "none" : "openssl";
    m.leg = "client-seal";
    m.size = 4096;
    m.threads = 1;
    m.m.ns_per_op = 100;
    micro.push_back(m);
  }
  auto sys = LegCostsFromMicro(micro, "sys");
  auto plain = LegCostsFromMicro(micro, "smb-plain");
  auto sign = LegCostsFromMicro(micro, "smb-sign-aes-gmac");
  auto enc = LegCostsFromMicro(micro, "smb-enc-aes-128-gcm");
  ASSERT_TRUE(sys.ok() && plain.ok() && sign.ok() && enc.ok());
  EXPECT_EQ(sys->wire.call, sim::kRequestOverhead);
  EXPECT_EQ(sys->wire.reply, sim::kReplyOverhead);
  // Direct TCP 4 + SMB2 header 64 + a request's 48 fixed bytes / a
  // response's 16 (MS-SMB2 2.1, 2.2.1, 2.2.19-2.2.22).
  EXPECT_EQ(plain->wire.call, 4 + 64 + 48);
  EXPECT_EQ(plain->wire.reply, 4 + 64 + 16);
  EXPECT_EQ(sign->wire.call, plain->wire.call);
  EXPECT_EQ(enc->wire.call - plain->wire.call, 52);  // TRANSFORM_HEADER (2.2.41)
  EXPECT_EQ(enc->wire.reply - plain->wire.reply, 52);
  EXPECT_EQ(SmbModesOfRun(RunResults{}).size(), 0u);
  RunResults run;
  run.micro = micro;
  EXPECT_EQ(SmbModesOfRun(run),
            (std::vector<std::string>{"smb-enc-aes-128-gcm", "smb-sign-aes-gmac"}));
}

// A row reports its fastest repetition; the model, which predicts a load
// that runs through the machine's disturbed minutes too, takes each leg's
// median repetition, and a row of a run without repetitions its figure.
TEST(WorkloadInputsTest, TheModelTakesEachLegsMedianRepetitionNotItsFastest) {
  std::vector<MicroRow> micro;
  for (const char* leg : {"client-seal", "server-open"}) {
    MicroRow m;
    m.mode = "krb5p";
    m.engine = "native";
    m.enctype = "aes256-cts-hmac-sha1-96";
    m.leg = leg;
    m.size = 4096;
    m.threads = 1;
    m.m.ns_per_op = 100;
    if (std::string(leg) == "client-seal") m.m.repetitions_ns = {130, 100, 190, 160, 120};
    micro.push_back(m);
  }
  auto legs = LegCostsFromMicro(micro, "krb5p");
  ASSERT_TRUE(legs.ok()) << legs.status().ToString();
  EXPECT_DOUBLE_EQ(legs->legs.at("client-seal").at(4096), 130);
  EXPECT_DOUBLE_EQ(legs->legs.at("server-open").at(4096), 100);
  EXPECT_DOUBLE_EQ(TypicalNsPerOp(micro[0].m), 130);
  EXPECT_DOUBLE_EQ(TypicalNsPerOp(micro[1].m), 100);
}

// One smb-e2e row's run: `busy` of 2 CPUs for one second over `ops`, of
// which the client's process took `client_s` seconds.
nlohmann::json SmbRun(double busy_fraction, double ops, double client_s) {
  return {{"seconds", 1.0},
          {"ops", ops},
          {"idle_fraction", 1.0 - busy_fraction},
          {"steal_fraction", 0.0},
          {"client_cpu_seconds", client_s}};
}

// The client's own CPU per operation to the client, the rest of the busy
// CPU to the server.
TEST(WorkloadInputsTest, NfsProtocolCostsTakeTheMedianOfASysRowsRuns) {
  RunResults run;
  run.machine.logical_cpus = 2;
  // GETATTR under load: 2 CPUs x 1 s / 100000 calls = 20 us busy per call;
  // its repeats at 40 us (50000 calls) and 25 us (80000 calls, 0 idle) put
  // the median at 25 us. A repeat without an idle figure is not counted.
  auto sys = [](double ops) {
    return nlohmann::json{
        {"mode", "sys"},        {"server", "secmode"},  {"op", "getattr"}, {"size", 0},
        {"connections", 4},     {"slots", 64},          {"seconds", 1.0},  {"ops", ops},
        {"idle_fraction", 0.0}, {"steal_fraction", 0.0}};
  };
  nlohmann::json row = sys(100000);
  nlohmann::json unknown = sys(1000);
  unknown.erase("idle_fraction");
  row["repeats"] = nlohmann::json::array({sys(50000), unknown, sys(80000)});
  const std::optional<CpuOverRuns> cpu = MedianCpuNsPerCall(row, 2);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->runs, 3u);
  EXPECT_NEAR(cpu->median_ns, 25e3, 1e-6);
  EXPECT_NEAR(cpu->min_ns, 20e3, 1e-6);
  EXPECT_NEAR(cpu->max_ns, 40e3, 1e-6);
  run.e2e.push_back(row);
  std::string source;
  auto costs = ProtocolCostsFromRun(run, "sys", &source);
  ASSERT_TRUE(costs.ok()) << costs.status().ToString();
  EXPECT_NEAR(costs->client.metadata.at(0), 12.5e3, 1e-6);
  EXPECT_NEAR(costs->server.metadata.at(0), 12.5e3, 1e-6);
  EXPECT_NE(source.find("median"), std::string::npos) << source;
  // Without its own run's figure the row has no baseline, whatever its repeats.
  row.erase("idle_fraction");
  EXPECT_FALSE(MedianCpuNsPerCall(row, 2).has_value());
}

// The middle run's fields go to the row's top level and the row's own run
// takes its place among the repeats; the row's other fields stay.
TEST(WorkloadInputsTest, PutMedianRunFirstMakesTheMiddleRunTheRowsFigures) {
  auto run = [](double ops, int round) {
    return nlohmann::json{{"seconds", 1.0},        {"ops", ops},     {"idle_fraction", 0.0},
                          {"ops_per_second", ops}, {"round", round}, {"window", 128}};
  };
  // Busy CPU per call: the row's 20 us, repeats 40 us and 25 us: the middle is 25 us.
  nlohmann::json row = run(100000, 0);
  row["mode"] = "krb5";
  row["wide_window"] = {{"ops", 1}};
  row["repeats"] = nlohmann::json::array({run(50000, 1), run(80000, 2)});
  PutMedianRunFirst(row, 2);
  EXPECT_EQ(row["ops"], 80000.0);
  EXPECT_EQ(row["ops_per_second"], 80000.0);
  EXPECT_EQ(row["round"], 2);
  EXPECT_EQ(row["mode"], "krb5");
  EXPECT_EQ(row["wide_window"]["ops"], 1);
  ASSERT_EQ(row["repeats"].size(), 2u);
  EXPECT_EQ(row["repeats"][0], run(50000, 1));
  EXPECT_EQ(row["repeats"][1], run(100000, 0));
  // Its median is now its own figure, and putting it first again changes nothing.
  const nlohmann::json before = row;
  PutMedianRunFirst(row, 2);
  EXPECT_EQ(row, before);
  auto median = MedianCpuNsPerCall(row, 2);
  ASSERT_TRUE(median.has_value());
  EXPECT_NEAR(median->median_ns, *BusyCpuNsPerCall(row, 2), 1e-6);
  // Of two runs the lower middle (the cheaper) leads; a run without the
  // figure is not ranked.
  nlohmann::json two = run(50000, 0);  // 40 us
  nlohmann::json unknown = run(90000, 1);
  unknown.erase("idle_fraction");
  two["repeats"] = nlohmann::json::array({unknown, run(100000, 2)});  // ?, 20 us
  PutMedianRunFirst(two, 2);
  EXPECT_EQ(two["round"], 2);
  EXPECT_EQ(two["repeats"][0], unknown);
  EXPECT_EQ(two["repeats"][1], run(50000, 0));
  // Only runs without the figure besides the row's own: nothing to rank against.
  nlohmann::json alone = run(50000, 0);
  alone["repeats"] = nlohmann::json::array({unknown, unknown});
  PutMedianRunFirst(alone, 2);
  EXPECT_EQ(alone["round"], 0);
  // Equal figures: the row stays, however often it is asked.
  nlohmann::json tied = run(50000, 0);
  tied["repeats"] = nlohmann::json::array({run(50000, 1), run(50000, 2)});
  PutMedianRunFirst(tied, 2);
  EXPECT_EQ(tied["round"], 0);
  // A first run with failed replies stays in sight, whatever its repeats.
  nlohmann::json failed = run(200000, 0);  // 10 us
  failed["errors"] = 3;
  failed["repeats"] = nlohmann::json::array({run(50000, 1), run(80000, 2)});
  PutMedianRunFirst(failed, 2);
  EXPECT_EQ(failed["round"], 0);
  EXPECT_EQ(failed["errors"], 3);
  // No repeats: nothing changes.
  nlohmann::json single = run(1000, 0);
  PutMedianRunFirst(single, 2);
  EXPECT_EQ(single, run(1000, 0));
}

TEST(WorkloadInputsTest, SmbProtocolCostsSplitTheSmbPlainRowsBusyCpuByTheClientsOwn) {
  RunResults run;
  run.machine.logical_cpus = 2;
  std::string source;
  auto none = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no smb-e2e smb-plain rows"), std::string::npos);
  // 4 KiB READ on one channel (medians of three runs: 2 x 0.8 s / 20000 =
  // 80 us busy, 0.4 s / 20000 = 20 us the client's), the same on four
  // channels at 90 us (the less busy row is taken), 1 MiB WRITE at 700 us
  // (client 100 us); a signing row, a row without runs and a run without
  // the client's CPU are not used.
  nlohmann::json rows = nlohmann::json::array();
  rows.push_back(
      {{"mode", "smb-plain"},
       {"op", "read"},
       {"size", 4096},
       {"channels", 1},
       {"runs", {SmbRun(0.8, 20000, 0.4), SmbRun(0.9, 20000, 0.5), SmbRun(0.7, 20000, 0.3)}}});
  rows.push_back({{"mode", "smb-plain"},
                  {"op", "read"},
                  {"size", 4096},
                  {"channels", 4},
                  {"runs", {SmbRun(0.9, 20000, 0.2)}}});
  rows.push_back({{"mode", "smb-plain"},
                  {"op", "write"},
                  {"size", 1 << 20},
                  {"channels", 1},
                  {"runs", {SmbRun(0.7, 2000, 0.2)}}});
  rows.push_back({{"mode", "smb-sign-aes-gmac"},
                  {"op", "read"},
                  {"size", 4096},
                  {"runs", {SmbRun(1.0, 100, 0.5)}}});
  rows.push_back(
      {{"mode", "smb-plain"}, {"op", "metadata"}, {"size", 0}, {"runs", nlohmann::json::array()}});
  nlohmann::json no_client = SmbRun(0.5, 1000, 0);
  no_client.erase("client_cpu_seconds");
  rows.push_back({{"mode", "smb-plain"}, {"op", "metadata"}, {"size", 0}, {"runs", {no_client}}});
  run.sections["smb-e2e"] = {{"rows", rows}, {"server", "Samba 4.17"}};
  auto costs = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_TRUE(costs.ok()) << costs.status().ToString();
  ASSERT_EQ(costs->client.read.size(), 1u);
  EXPECT_NEAR(costs->client.read.at(4096), 20e3, 1e-6);
  EXPECT_NEAR(costs->server.read.at(4096), 60e3, 1e-6);
  EXPECT_NEAR(costs->client.write.at(1 << 20), 100e3, 1e-6);
  EXPECT_NEAR(costs->server.write.at(1 << 20), 600e3, 1e-6);
  EXPECT_TRUE(costs->client.metadata.empty());
  EXPECT_TRUE(costs->server.metadata.empty());
  EXPECT_NE(source.find("Samba 4.17"), std::string::npos);
  EXPECT_NE(source.find("upper bound"), std::string::npos) << source;
  // A field of the wrong type is an error naming the section.
  RunResults bad = run;
  bad.sections["smb-e2e"]["rows"][0]["runs"][0]["ops"] = "many";
  auto corrupt = ProtocolCostsFromRun(bad, "smb-plain", &source);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), common::Code::kCorrupt);
  EXPECT_NE(corrupt.status().message().find("sections.smb-e2e"), std::string::npos);
  bad.sections["smb-e2e"] = "not an object";
  EXPECT_EQ(ProtocolCostsFromRun(bad, "smb-plain", &source).status().code(),
            common::Code::kCorrupt);
  // The NFS baseline reads other rows: this run has none.
  EXPECT_FALSE(ProtocolCostsFromRun(run, "sys", &source).ok());
}

// Where every run measured Samba's busiest thread (the session's), the
// server's one thread gets that thread's CPU per operation, not the rest of
// the busy CPU; never more than that rest.
TEST(WorkloadInputsTest, SmbServerCostIsTheSessionThreadsCpuWhereTheRunMeasuredIt) {
  RunResults run;
  run.machine.logical_cpus = 2;
  nlohmann::json a = SmbRun(0.8, 20000, 0.4);    // busy 80 us/op, client 20
  a["server_session_thread_cpu_seconds"] = 0.5;  // 25 us/op on the thread
  nlohmann::json b = SmbRun(0.8, 20000, 0.4);
  b["server_session_thread_cpu_seconds"] = 1.6;  // 80 us/op: more than the rest (60)
  nlohmann::json rows = nlohmann::json::array();
  rows.push_back({{"mode", "smb-plain"}, {"op", "read"}, {"size", 4096}, {"runs", {a}}});
  rows.push_back({{"mode", "smb-plain"}, {"op", "write"}, {"size", 4096}, {"runs", {b}}});
  run.sections["smb-e2e"] = {{"rows", rows}, {"server", "Samba 4.17"}};
  std::string source;
  auto costs = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_TRUE(costs.ok()) << costs.status().ToString();
  EXPECT_NEAR(costs->client.read.at(4096), 20e3, 1e-6);
  EXPECT_NEAR(costs->server.read.at(4096), 25e3, 1e-6);
  EXPECT_NEAR(costs->server.write.at(4096), 60e3, 1e-6);
  EXPECT_NE(source.find("thread serving the session"), std::string::npos) << source;
  EXPECT_EQ(source.find("upper bound"), std::string::npos) << source;
  // One run without it (a merge of older and newer runs): every row takes
  // the rest of the busy CPU, and the source says it is an upper bound.
  nlohmann::json old = SmbRun(0.8, 20000, 0.4);
  run.sections["smb-e2e"]["rows"][1]["runs"].push_back(old);
  auto mixed = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_NEAR(mixed->server.read.at(4096), 60e3, 1e-6);
  EXPECT_NEAR(mixed->server.write.at(4096), 60e3, 1e-6);
  EXPECT_NE(source.find("upper bound"), std::string::npos) << source;
  EXPECT_FALSE(ProtocolCostsFromRun(run, "krb5p", &source).ok());
}

}  // namespace
}  // namespace secmode::harness
