#include "harness/results.h"

#include <gtest/gtest.h>

namespace secmode::harness {
namespace {

using nlohmann::json;

RunResults Sample() {
  RunResults r;
  r.machine = common::ReadMachineInfo();
  r.command = "secmode run --quick";
  r.started_at = "2026-11-29T18:00:00Z";
  r.finished_at = "2026-11-29T18:01:00Z";
  LegMeasurement m;
  m.ns_per_op = 1234.5;
  m.bytes_per_second = 1e9;
  m.cycles_per_byte = 2.5;
  m.p50_ns = 1200;
  m.p99_ns = 1500;
  m.p999_ns = 2000;
  m.samples = 1000;
  m.repetitions_ns = {1234.5, 1100, 1300};
  m.cv = 0.083;
  r.micro.push_back({"krb5p", "mit", "aes256-cts-hmac-sha1-96", "client-seal", 4096, 1, m});
  r.bounds.push_back({"aes-256-cbc-encrypt", 4096, 3e9});
  return r;
}

TEST(ResultsTest, WrittenDocumentValidatesAndReadsBack) {
  json doc = ToJson(Sample());
  ASSERT_TRUE(ValidateResultsJson(doc).ok()) << ValidateResultsJson(doc).ToString();
  EXPECT_EQ(doc["schema"], "secmode-results/1");
  EXPECT_FALSE(doc["machine"]["cpu_model"].get<std::string>().empty());
  auto back = ReadResultsJson(doc.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->micro.size(), 1u);
  EXPECT_EQ(back->micro[0].leg, "client-seal");
  EXPECT_DOUBLE_EQ(back->micro[0].m.ns_per_op, 1234.5);
  EXPECT_EQ(back->micro[0].m.repetitions_ns, (std::vector<double>{1234.5, 1100, 1300}));
  EXPECT_DOUBLE_EQ(back->micro[0].m.cv, 0.083);
  EXPECT_TRUE(doc["micro"][0]["noisy"].get<bool>());  // cv over kNoisyCv
  EXPECT_EQ(back->bounds[0].primitive, "aes-256-cbc-encrypt");
  // The fingerprint carries secmode's source and the libraries' versions.
  EXPECT_EQ(back->machine.secmode_commit, doc["machine"]["secmode_commit"].get<std::string>());
  EXPECT_EQ(back->machine.libraries.size(), doc["machine"]["libraries"].size());
  EXPECT_FALSE(back->machine.libraries.empty());
  // A file written before repetitions and the longer fingerprint still reads.
  json old = doc;
  old["micro"][0].erase("repetitions_ns");
  old["micro"][0].erase("cv");
  old["machine"].erase("secmode_commit");
  old["machine"].erase("libraries");
  auto old_back = FromJson(old);
  ASSERT_TRUE(old_back.ok()) << old_back.status().ToString();
  EXPECT_TRUE(old_back->micro[0].m.repetitions_ns.empty());
  EXPECT_EQ(old_back->machine.secmode_commit, "unknown");
  // Sections not produced are empty, not invented.
  EXPECT_TRUE(doc["e2e"].is_array() && doc["e2e"].empty());
}

TEST(ResultsTest, ValidatorNamesTheOffendingField) {
  json doc = ToJson(Sample());
  json missing = doc;
  missing["micro"][0].erase("ns_per_op");
  auto s = ValidateResultsJson(missing);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("micro[0].ns_per_op: missing"), std::string::npos) << s.ToString();

  json wrong_type = doc;
  wrong_type["micro"][0]["size"] = "big";
  s = ValidateResultsJson(wrong_type);
  EXPECT_NE(s.message().find("micro[0].size"), std::string::npos) << s.ToString();

  json bad_leg = doc;
  bad_leg["micro"][0]["leg"] = "sideways";
  s = ValidateResultsJson(bad_leg);
  EXPECT_NE(s.message().find("sideways"), std::string::npos) << s.ToString();

  json zero = doc;
  zero["micro"][0]["samples"] = 0;
  EXPECT_FALSE(ValidateResultsJson(zero).ok());

  json bad_commit = doc;
  bad_commit["machine"]["secmode_commit"] = 5;
  s = ValidateResultsJson(bad_commit);
  EXPECT_NE(s.message().find("machine.secmode_commit"), std::string::npos) << s.ToString();
  json bad_lib = doc;
  bad_lib["machine"]["libraries"] = json::array();
  EXPECT_NE(ValidateResultsJson(bad_lib).message().find("machine.libraries"), std::string::npos);

  json bad_rep = doc;
  bad_rep["micro"][0]["repetitions_ns"][1] = -3;
  s = ValidateResultsJson(bad_rep);
  EXPECT_NE(s.message().find("micro[0].repetitions_ns[1]"), std::string::npos) << s.ToString();

  json no_machine = doc;
  no_machine.erase("machine");
  EXPECT_FALSE(ValidateResultsJson(no_machine).ok());
}

TEST(ResultsTest, ReaderRefusesOtherSchemasWithReason) {
  json doc = ToJson(Sample());
  doc["schema"] = "secmode-results/2";
  auto r = ReadResultsJson(doc.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("secmode-results/2"), std::string::npos);
  doc["schema"] = "something-else";
  EXPECT_NE(ReadResultsJson(doc.dump()).status().message().find("not a secmode results file"),
            std::string::npos);
  EXPECT_FALSE(ReadResultsJson("{not json").ok());
}

}  // namespace
}  // namespace secmode::harness
