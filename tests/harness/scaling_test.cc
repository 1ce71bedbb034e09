// MeasureScaling: threads on their own associations all run and are
// counted together, the associations stay usable, and bad input is refused
// by name.
#include "harness/scaling.h"

#include <gtest/gtest.h>

#include "harness/modes.h"

namespace secmode::harness {
namespace {

TEST(ScalingTest, ThreadCountsDoubleUpToTheCpusAndStepOneBeyond) {
  EXPECT_EQ(ScalingThreadCounts(1), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(ScalingThreadCounts(2), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(ScalingThreadCounts(6), (std::vector<size_t>{1, 2, 4, 6, 7}));
  EXPECT_EQ(ScalingThreadCounts(8), (std::vector<size_t>{1, 2, 4, 8, 9}));
}

TEST(ScalingTest, ThreadsOnTheirOwnAssociationsAllDoRoundTrips) {
  ModeEnvironment env;
  std::vector<common::Association> owned;
  for (int i = 0; i < 3; ++i) {
    auto a = MakeAssociation(*ParseModeName("krb5i::native"), env);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    owned.push_back(std::move(*a));
  }
  ScalingOptions o;
  o.seconds = 0.02;
  o.repetitions = 3;
  auto m = MeasureScaling({&owned[0], &owned[1], &owned[2]}, 4096, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->threads, 3u);
  ASSERT_EQ(m->round_trips_per_second.size(), 3u);
  for (double r : m->round_trips_per_second) EXPECT_GT(r, 0);
  EXPECT_GT(m->median, 0);
  // Each association still works after it: its own legs accept what it
  // seals now.
  for (auto& a : owned) {
    common::Bytes payload = common::PatternBytes(64), wire, out;
    ASSERT_TRUE(a.client_seal->Seal(payload, &wire).ok());
    ASSERT_TRUE(a.server_open->Open(wire, &out).ok());
    EXPECT_EQ(out, payload);
  }
}

TEST(ScalingTest, BadInputIsRefusedByName) {
  ScalingOptions o;
  EXPECT_NE(MeasureScaling({}, 64, o).status().message().find("no associations"),
            std::string::npos);
  EXPECT_NE(MeasureScaling({nullptr}, 64, o).status().message().find("lacks a leg"),
            std::string::npos);
  ModeEnvironment env;
  auto a = MakeAssociation(*ParseModeName("sys"), env);
  ASSERT_TRUE(a.ok());
  o.repetitions = 0;
  EXPECT_NE(MeasureScaling({&*a}, 64, o).status().message().find("0 repetitions"),
            std::string::npos);
  o.repetitions = 1;
  o.seconds = 0;
  EXPECT_NE(MeasureScaling({&*a}, 64, o).status().message().find("seconds"), std::string::npos);
}

}  // namespace
}  // namespace secmode::harness
