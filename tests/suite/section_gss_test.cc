// The gss section of `secmode run` on a one-mode, one-size grid: it writes
// the bounds for the run's enctype and the engine comparison into the
// results, and the report drawn from them has the comparison table with the
// targets stated (met or not; never asserted here).
#include <gtest/gtest.h>

#include <sstream>

#include "common/files.h"
#include "harness/results.h"
#include "suite/suite.h"
#include "tests/suite/saved_quick_run.h"

namespace secmode::suite {
namespace {

TEST(SectionGssTest, WritesBoundsAndTheEngineComparison) {
  auto saved =
      RunQuickAndSave({"krb5p:aes128-cts-hmac-sha256-128:native"}, {128}, "section_gss_test");
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  const harness::RunResults* results = &saved->results;
  bool seal_bound = false, open_bound = false;
  for (const auto& b : results->bounds) {
    EXPECT_EQ(b.size, 128u) << b.primitive;
    EXPECT_GT(b.bytes_per_second, 0) << b.primitive;
    seal_bound |= b.primitive == "aes128-cbc-encrypt+hmac-sha256-128";
    open_bound |= b.primitive == "aes128-cbc-decrypt+hmac-sha256-128";
    // Only the run's enctype: no SHA-1 or SHA-384 bounds.
    EXPECT_EQ(b.primitive.find("sha1"), std::string::npos) << b.primitive;
  }
  EXPECT_TRUE(seal_bound && open_bound);
  // A restricted run adds no micro rows of its own: 1 mode x 1 size x 4 legs.
  EXPECT_EQ(results->micro.size(), 4u);
  // The comparison: one row, the run's enctype and size, all three engines.
  const auto& comparison = results->sections["gss"]["comparison"];
  ASSERT_EQ(comparison.size(), 1u);
  EXPECT_EQ(comparison[0]["enctype"], "aes128-cts-hmac-sha256-128");
  EXPECT_EQ(comparison[0]["size"], 128);
  EXPECT_GT(comparison[0]["bound_ns"].get<double>(), 0);
  for (const char* engine : {"mit", "mit-iov", "native"}) {
    EXPECT_GT(comparison[0]["engines_ns"][engine].get<double>(), 0) << engine;
  }
  const std::string* report = &saved->report_md;
  EXPECT_NE(report->find("## krb5p engines vs the OpenSSL bound"), std::string::npos);
  EXPECT_NE(report->find("### aes128-cts-hmac-sha256-128"), std::string::npos);
  EXPECT_NE(report->find("| 128 B |"), std::string::npos);
  EXPECT_NE(report->find("native 128 B aes128-cts-hmac-sha256-128 seal+open <= 0.5 x mit"),
            std::string::npos)
      << *report;
}

}  // namespace
}  // namespace secmode::suite
