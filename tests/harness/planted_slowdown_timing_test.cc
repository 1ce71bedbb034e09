// A slowdown planted on purpose in real measurements is found by compare's
// test over 3 + 3 runs (tests/harness/planted_runs.h), and the rows left
// alone are flagged no more often than alpha allows.
//
// Side A measures a real engine (krb5p, the native engine, against a real
// MIT KDC) as the micro section of `secmode run --quick` does: every leg at
// the suite's default sizes with its measure options (harness::MeasureLeg,
// suite::MicroMeasureOptions). Side B measures the same engine with one leg
// made slower: a test-only Sealer that computes a real HMAC-SHA256 over the
// payload before the real client-seal, for 4 KiB payloads only, so exactly
// one row is slowed, by about a tenth (the HMAC covers as much of the
// payload as costs a tenth of the seal, timed first). The slower engine
// exists only in this test; nothing in the secmode binary can turn it on.
//
// Each run makes its own association (its own context, keys and buffers).
// The runs are made in one process, so they miss what varies between
// processes (`secmode noise` sees that); the comparison is the real one.
//
// It times real work, so a machine busy enough can make it fail: it is
// labelled "timing" (not "unit") and runs alone (SERIAL); its deterministic
// twin is planted_slowdown_test.cc. Where compare misses the planted row
// and the runs themselves say that a change of the planted size could not
// stand out of their spread (the row's confidence interval reaches further
// than the planted share either side of its ratio: a CPU hog beside it),
// the miss is the machine's, not compare's: the test skips, naming the
// spread (compare's arithmetic is the twin's to check). A miss with a
// narrower interval fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/format.h"
#include "common/hmac.h"
#include "harness/measure.h"
#include "harness/modes.h"
#include "suite/suite.h"
#include "tests/harness/planted_runs.h"

namespace secmode::harness::planted {
namespace {

constexpr const char* kMode = "krb5p:aes256-cts-hmac-sha1-96:native";
constexpr double kPlantedShare = 0.10;  // the HMAC's cost as a share of the seal's
constexpr uint8_t kKey[32] = {7};

// The test-only engine: before the real Seal of a payload of `size` bytes,
// a real HMAC-SHA256 over its first `hmac_bytes` bytes. Other sizes pass
// through untouched.
class ExtraHmacSealer : public common::Sealer {
 public:
  ExtraHmacSealer(std::unique_ptr<common::Sealer> inner, size_t size, size_t hmac_bytes)
      : inner_(std::move(inner)), size_(size), hmac_bytes_(hmac_bytes) {}
  common::Status Init() { return hmac_.Init(common::HashKind::kSha256, kKey); }
  common::Status Seal(common::ByteView payload, common::Bytes* wire) override {
    if (payload.size() == size_) {
      hmac_.Start();
      hmac_.Update(payload.data(), std::min(hmac_bytes_, payload.size()));
      hmac_.Finish(digest_);
    }
    return inner_->Seal(payload, wire);
  }

 private:
  std::unique_ptr<common::Sealer> inner_;
  size_t size_, hmac_bytes_;
  common::Hmac hmac_;
  uint8_t digest_[32] = {};
};

// How many payload bytes of HMAC-SHA256 cost kPlantedShare of one
// client-seal at the planted size: the seal timed on `association` as the
// runs time it, the HMAC of the whole payload in a loop of 20 ms.
common::Result<size_t> CalibrateHmacBytes(common::Association& association,
                                          const MeasureOptions& o) {
  SECMODE_ASSIGN_OR_RETURN(LegMeasurement seal, MeasureLeg(association, kLeg, kSize, o));
  common::Hmac hmac;
  SECMODE_RETURN_IF_ERROR(hmac.Init(common::HashKind::kSha256, kKey));
  const common::Bytes payload = common::PatternBytes(kSize, 1);
  uint8_t digest[32];
  size_t ops = 0;
  const uint64_t start = common::NowNs();
  uint64_t elapsed = 0;
  while (elapsed < 20'000'000 || ops < 100) {
    hmac.Start();
    hmac.Update(payload.data(), payload.size());
    hmac.Finish(digest);
    ++ops;
    elapsed = common::NowNs() - start;
  }
  const double hmac_ns = static_cast<double>(elapsed) / static_cast<double>(ops);
  const double share = std::min(1.0, kPlantedShare * seal.ns_per_op / hmac_ns);
  const size_t bytes = std::max<size_t>(64, static_cast<size_t>(share * kSize));
  std::printf(
      "client-seal 4 KiB: %.0f ns; HMAC-SHA256 of 4 KiB: %.0f ns; planted: HMAC over %zu "
      "bytes\n",
      seal.ns_per_op, hmac_ns, bytes);
  return bytes;
}

using PlantedSlowdownTimingTest = PlantedRunsTest;

TEST_F(PlantedSlowdownTimingTest, MeasuredRunsFindThePlantedSlowdown) {
  auto mode = ParseModeName(kMode);
  ASSERT_TRUE(mode.ok()) << mode.status().ToString();
  suite::SuiteOptions quick;
  quick.quick = true;
  const MeasureOptions o = suite::MicroMeasureOptions(quick);
  ModeEnvironment env;
  size_t hmac_bytes = 0;
  {
    auto a = MakeAssociation(*mode, env);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auto bytes = CalibrateHmacBytes(*a, o);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    hmac_bytes = *bytes;
  }
  // One run: a fresh association, every leg at every size, as the micro
  // section measures them (suite/section_micro.cc).
  const MakeRows measure = [&](bool planted) -> common::Result<std::vector<MicroRow>> {
    SECMODE_ASSIGN_OR_RETURN(common::Association a, MakeAssociation(*mode, env));
    if (planted) {
      auto slower = std::make_unique<ExtraHmacSealer>(std::move(a.client_seal), kSize, hmac_bytes);
      SECMODE_RETURN_IF_ERROR(slower->Init());
      a.client_seal = std::move(slower);
    }
    std::vector<MicroRow> rows;
    for (size_t size : suite::kDefaultSizes) {
      for (common::Leg leg : common::kAllLegs) {
        SECMODE_ASSIGN_OR_RETURN(LegMeasurement m, MeasureLeg(a, leg, size, o));
        rows.push_back({a.mode, a.engine, a.enctype, common::LegName(leg), size, 1, m});
      }
    }
    return rows;
  };
  auto c = PlantAndCompare(root(), measure);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const RowComparison& r : c->rows) {
    if (!IsPlanted(r) || r.verdict == Verdict::kSlower) continue;
    const double reach = IntervalReach(r);  // either side of the ratio, as a factor
    if (reach > 1 + kPlantedShare) {
      GTEST_SKIP() << "the runs' spread hides the planted change: the planted row's 95% interval "
                   << common::Sprintf("%.3f-%.3f", r.ratio_low, r.ratio_high) << " reaches "
                   << common::Fmt("%.0f%%", 100 * (reach - 1)) << " either side of its ratio "
                   << common::Fmt("%.3f", r.ratio) << ", more than the planted "
                   << common::Fmt("%.0f%%", 100 * kPlantedShare);
    }
  }
  ExpectPlantedRowFound(*c);
}

}  // namespace
}  // namespace secmode::harness::planted
