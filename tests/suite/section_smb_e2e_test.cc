// The smb-e2e section of `secmode run` on two modes (a quick run: 1 MiB
// READ and metadata on one channel): its rows in results.json, every
// request answered, and the report's table with each row's change against
// smb-plain taken from the same run. Needs root and Debian's samba packages;
// without them the section says why it did not run, which is checked too.
#include <gtest/gtest.h>

#include <sstream>

#include "common/files.h"
#include "harness/results.h"
#include "smb/samba_dc.h"
#include "suite/suite.h"
#include "tests/suite/saved_quick_run.h"

namespace secmode::suite {
namespace {

TEST(SectionSmbE2eTest, RowsForEveryModeAndCaseAndTheirChangeInTheReport) {
  auto saved =
      RunQuickAndSave({"smb-plain", "smb-enc-aes-128-gcm"}, {4096}, "section_smb_e2e_test");
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  harness::RunResults* results = &saved->results;
  const std::string* report = &saved->report_md;
  const nlohmann::json& section = results->sections["smb-e2e"];
  ASSERT_TRUE(section.is_object()) << "no smb-e2e section";
  EXPECT_NE(report->find("## SMB3 end to end against Samba"), std::string::npos);
  const common::Status available = smb::SambaDc::Available();
  if (!available.ok()) {
    EXPECT_EQ(section.value("not_run", ""), std::string(available.message()));
    GTEST_SKIP() << available.message();
  }
  const auto& rows = section["rows"];
  ASSERT_EQ(rows.size(), 4u) << section.dump(1);  // 2 modes x (1 MiB read, metadata)
  for (const auto& r : rows) {
    EXPECT_GT(r.value("ops", 0), 0) << r.dump();
    EXPECT_EQ(r.value("errors", 1), 0) << r.dump();
    EXPECT_EQ(r.value("dialect", ""), "3.1.1");
    EXPECT_EQ(r.value("repetitions", 0), 1) << r.dump();
    ASSERT_TRUE(r.contains("runs")) << r.dump();
    EXPECT_EQ(r["runs"].size(), 1u) << r.dump();
    if (r.value("mode", "") == "smb-enc-aes-128-gcm") {
      EXPECT_GE(r.value("encrypted_requests", 0), r.value("ops", 0)) << r.dump();
      // Beside smb-plain of the same repetition, and what its crypto
      // explains (the quick run measured both modes' legs).
      ASSERT_TRUE(r.contains("vs_plain")) << r.dump();
      EXPECT_EQ(r["vs_plain"].value("pairs", 0), 1) << r.dump();
      ASSERT_TRUE(r.contains("from_legs")) << r.dump();
      EXPECT_GT(r["from_legs"].value("legs_extra_ns", 0.0), 0) << r.dump();
    }
  }
  // The encrypted rows' change against smb-plain, in the report.
  const size_t enc = report->find("| smb-enc-aes-128-gcm | read | 1 MiB | 1 |");
  ASSERT_NE(enc, std::string::npos) << *report;
  const std::string line = report->substr(enc, report->find('\n', enc) - enc);
  EXPECT_NE(line.find("%"), std::string::npos) << line;
  EXPECT_NE(report->find("### How much of the change the crypto explains"), std::string::npos);
}

}  // namespace
}  // namespace secmode::suite
