// Workload and fio job files: fio's vocabulary parsed as fio reads it, and
// every bad input an error naming the key.
#include "sim/workload.h"

#include <gtest/gtest.h>

#include <string>

namespace secmode::sim {
namespace {

TEST(WorkloadTest, SizesTakeFiosSuffixesInBase1024) {
  EXPECT_EQ(*ParseFioSize("4096"), 4096);
  EXPECT_EQ(*ParseFioSize("4k"), 4096);
  EXPECT_EQ(*ParseFioSize("4K"), 4096);
  EXPECT_EQ(*ParseFioSize("64KiB"), 65536);
  EXPECT_EQ(*ParseFioSize("1m"), 1 << 20);
  EXPECT_EQ(*ParseFioSize("2g"), int64_t{2} << 30);
  EXPECT_FALSE(ParseFioSize("k").ok());
  EXPECT_FALSE(ParseFioSize("4x").ok());
  EXPECT_FALSE(ParseFioSize("99999999999999t").ok());
}

TEST(WorkloadTest, LinkRatesAreBitsPerSecondAsTcWritesThem) {
  EXPECT_DOUBLE_EQ(*ParseLinkRate("1gbit"), 125e6);
  EXPECT_DOUBLE_EQ(*ParseLinkRate("100mbit"), 12.5e6);
  EXPECT_DOUBLE_EQ(*ParseLinkRate("1.5Gbit"), 187.5e6);
  EXPECT_FALSE(ParseLinkRate("1gb").ok());
  EXPECT_FALSE(ParseLinkRate("0mbit").ok());
  EXPECT_FALSE(ParseLinkRate("fast").ok());
}

TEST(WorkloadTest, OutstandingFollowsTheEngineClass) {
  Workload w;
  w.iodepth = 64;
  w.numjobs = 4;
  w.engine = EngineClass::kSync;
  EXPECT_EQ(w.Outstanding(), 4);  // a sync engine keeps one I/O per job
  w.engine = EngineClass::kAsync;
  EXPECT_EQ(w.Outstanding(), 256);
  w.rw = Rw::kRandRw;
  w.rwmixread = 70;
  EXPECT_DOUBLE_EQ(w.ReadShare(), 0.7);
  w.rw = Rw::kMetadata;
  EXPECT_DOUBLE_EQ(w.ReadShare(), 0.0);
}

TEST(WorkloadTest, ValidateNamesTheBadField) {
  Workload w;
  w.bs = 0;
  EXPECT_NE(w.Validate().message().find("bs"), std::string::npos);
  w = Workload();
  w.iodepth = 0;
  EXPECT_NE(w.Validate().message().find("iodepth"), std::string::npos);
  w = Workload();
  w.numjobs = 0;
  EXPECT_NE(w.Validate().message().find("numjobs"), std::string::npos);
  w = Workload();
  w.rwmixread = 101;
  EXPECT_NE(w.Validate().message().find("rwmixread"), std::string::npos);
  EXPECT_FALSE(ParseRw("trim").ok());
  EXPECT_FALSE(ParseIoEngine("spdk").ok());
}

TEST(WorkloadTest, FioFileGlobalDefaultsJobsAndIgnoredKeys) {
  const char* file = R"(; a comment
[global]
ioengine=libaio
bs=4k
direct=1
iodepth=32

[reads]
rw=randread
numjobs=4
filename=/mnt/nfs/x   # not the model's
[mixed]
readwrite=randrw
rwmixwrite=30
bs=64k
[sync]
ioengine=psync
rw=write
)";
  auto jobs = ParseFioJobFile(file);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->jobs.size(), 3u);
  const Workload& r = jobs->jobs[0];
  EXPECT_EQ(r.name, "reads");
  EXPECT_EQ(r.rw, Rw::kRandRead);
  EXPECT_EQ(r.bs, 4096);
  EXPECT_EQ(r.iodepth, 32);
  EXPECT_EQ(r.numjobs, 4);
  EXPECT_EQ(r.engine, EngineClass::kAsync);
  const Workload& m = jobs->jobs[1];
  EXPECT_EQ(m.rw, Rw::kRandRw);
  EXPECT_EQ(m.rwmixread, 70);
  EXPECT_EQ(m.bs, 65536);
  EXPECT_EQ(m.numjobs, 1);  // from [global], not from [reads]
  const Workload& s = jobs->jobs[2];
  EXPECT_EQ(s.engine, EngineClass::kSync);
  EXPECT_EQ(s.Outstanding(), 1);
  // direct and filename named; the sync job's iodepth noted.
  std::string all;
  for (const auto& w : jobs->warnings) all += w + "\n";
  EXPECT_NE(all.find("'direct'"), std::string::npos) << all;
  EXPECT_NE(all.find("'filename'"), std::string::npos) << all;
  EXPECT_NE(all.find("[sync]: iodepth=32"), std::string::npos) << all;
}

TEST(WorkloadTest, FioFileErrorsNameLineAndKey) {
  auto e = ParseFioJobFile("[a]\nbs=0\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("bs"), std::string::npos) << e.status().ToString();
  e = ParseFioJobFile("[a]\niodepth=0\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("iodepth"), std::string::npos);
  e = ParseFioJobFile("[a]\nbs=4k,64k\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 2"), std::string::npos) << e.status().ToString();
  e = ParseFioJobFile("[a]\nrw=trim\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("rw"), std::string::npos);
  e = ParseFioJobFile("bs=4k\n[a]\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("before any [section]"), std::string::npos);
  e = ParseFioJobFile("[global]\nbs=4k\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("no job"), std::string::npos);
  e = ParseFioJobFile("[a\n");
  ASSERT_FALSE(e.ok());
}

}  // namespace
}  // namespace secmode::sim
