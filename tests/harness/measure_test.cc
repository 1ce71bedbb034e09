// MeasureLeg's repetitions: the figure is the median of the repetitions'
// means, every repetition does at least its minimum of operations, and the
// open legs' tokens are each opened once across repetitions (krb5p's
// server-open leg checks every call's RPCSEC_GSS sequence number against its
// window and refuses a call it has seen).
#include "harness/measure.h"

#include <gtest/gtest.h>

#include "common/stats.h"
#include "harness/modes.h"

namespace secmode::harness {
namespace {

TEST(MeasureTest, TheFigureIsTheMedianOfItsRepetitions) {
  ModeEnvironment env;
  auto a = MakeAssociation(*ParseModeName("krb5p"), env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  MeasureOptions o;
  o.min_seconds = 0.002;
  o.min_ops = 50;
  o.repetitions = 4;
  for (common::Leg leg : common::kAllLegs) {
    auto m = MeasureLeg(*a, leg, 4096, o);
    ASSERT_TRUE(m.ok()) << common::LegName(leg) << ": " << m.status().ToString();
    ASSERT_EQ(m->repetitions_ns.size(), 4u) << common::LegName(leg);
    EXPECT_GE(m->samples, 4u * o.min_ops);
    EXPECT_DOUBLE_EQ(m->ns_per_op, common::Median(m->repetitions_ns));
    EXPECT_DOUBLE_EQ(m->cv, common::Summarize(m->repetitions_ns).cv);
    EXPECT_EQ(m->noisy(), m->cv > kNoisyCv);
    for (double ns : m->repetitions_ns) EXPECT_GT(ns, 0);
  }
}

TEST(MeasureTest, ZeroRepetitionsIsRefused) {
  ModeEnvironment env;
  auto a = MakeAssociation(*ParseModeName("sys"), env);
  ASSERT_TRUE(a.ok());
  MeasureOptions o;
  o.repetitions = 0;
  auto m = MeasureLeg(*a, common::Leg::kClientSeal, 128, o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("0 repetitions"), std::string::npos);
}

}  // namespace
}  // namespace secmode::harness
