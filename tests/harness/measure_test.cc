// MeasureLeg's repetitions: the figure is the fastest of the repetitions'
// means, every repetition does at least its minimum of operations, the open
// legs' messages are each opened once across repetitions (krb5p's
// server-open leg checks every call's RPCSEC_GSS sequence number against its
// window and refuses a call it has seen), and an open leg opens the message
// sealed just before it (a recording pair of legs, below).
#include "harness/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "common/stats.h"
#include "harness/modes.h"

namespace secmode::harness {
namespace {

TEST(MeasureTest, TheFigureIsTheFastestOfItsRepetitions) {
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
    EXPECT_DOUBLE_EQ(m->ns_per_op,
                     *std::min_element(m->repetitions_ns.begin(), m->repetitions_ns.end()));
    EXPECT_DOUBLE_EQ(m->cv, common::Summarize(m->repetitions_ns).cv);
    EXPECT_EQ(m->noisy(), m->cv > kNoisyCv);
    for (double ns : m->repetitions_ns) EXPECT_GT(ns, 0);
  }
}

// A sealer that numbers its messages and an opener that records how many
// messages were sealed and not yet opened when it opens one; both record
// where in a page their input lay.
struct SealLog {
  uint64_t sealed = 0, opened = 0;
  uint64_t most_waiting = 0;  // sealed - opened, at the most, when an open began
  bool out_of_order = false;
  std::set<uintptr_t> payload_places, message_places;  // address modulo 4 KiB
};

class NumberingSealer : public common::Sealer {
 public:
  explicit NumberingSealer(SealLog* log) : log_(log) {}
  common::Status Seal(common::ByteView payload, common::Bytes* wire) override {
    const uint64_t n = ++log_->sealed;
    log_->payload_places.insert(reinterpret_cast<uintptr_t>(payload.data()) % 4096);
    wire->assign(payload.begin(), payload.end());
    wire->resize(payload.size() + sizeof n);
    std::memcpy(wire->data() + payload.size(), &n, sizeof n);
    return common::Status::Ok();
  }

 private:
  SealLog* log_;
};

class RecordingOpener : public common::Opener {
 public:
  explicit RecordingOpener(SealLog* log) : log_(log) {}
  common::Status Open(common::ByteView wire, common::Bytes* payload) override {
    log_->message_places.insert(reinterpret_cast<uintptr_t>(wire.data()) % 4096);
    uint64_t n = 0;
    std::memcpy(&n, wire.data() + wire.size() - sizeof n, sizeof n);
    log_->most_waiting = std::max(log_->most_waiting, log_->sealed - log_->opened);
    if (n != ++log_->opened) log_->out_of_order = true;
    payload->assign(wire.begin(), wire.end() - sizeof n);
    return common::Status::Ok();
  }

 private:
  SealLog* log_;
};

// Each leg at each size: 3 repetitions of at least 100 operations, 300 in
// all, more than kSourcePlaces, so every place is visited.
TEST(MeasureTest, AnOpenLegOpensTheMessageSealedJustBeforeItAndSourcesLieAtEveryPlaceOfAPage) {
  for (size_t size : {size_t{128}, size_t{4096}, size_t{1} << 20}) {
    SealLog request, reply;
    common::Association a;
    a.mode = "recording";
    a.client_seal = std::make_unique<NumberingSealer>(&request);
    a.server_open = std::make_unique<RecordingOpener>(&request);
    a.server_seal = std::make_unique<NumberingSealer>(&reply);
    a.client_open = std::make_unique<RecordingOpener>(&reply);
    MeasureOptions o;
    o.min_seconds = 0.001;
    o.min_ops = 100;
    o.repetitions = 3;
    for (common::Leg leg : common::kAllLegs) {
      auto m = MeasureLeg(a, leg, size, o);
      ASSERT_TRUE(m.ok()) << common::LegName(leg) << ": " << m.status().ToString();
    }
    for (const SealLog* log : {&request, &reply}) {
      EXPECT_EQ(log->most_waiting, 1u) << size << " B: an open began with " << log->most_waiting
                                       << " messages sealed and not opened";
      EXPECT_FALSE(log->out_of_order) << size << " B";
      EXPECT_EQ(log->sealed, log->opened) << size << " B: every sealed message is opened";
      // The seal and open legs' sources, at every place, and the one
      // payload or message the other leg's untimed half used.
      EXPECT_GE(log->payload_places.size(), kSourcePlaces) << size << " B";
      EXPECT_GE(log->message_places.size(), kSourcePlaces) << size << " B";
    }
  }
}

// An opener that gives back a wrong payload from its `from`-th open on.
class CorruptingOpener : public common::Opener {
 public:
  explicit CorruptingOpener(uint64_t from) : from_(from) {}
  common::Status Open(common::ByteView wire, common::Bytes* payload) override {
    payload->assign(wire.begin(), wire.end());
    if (++opened_ >= from_ && !payload->empty()) (*payload)[0] ^= 1;
    return common::Status::Ok();
  }

 private:
  uint64_t from_, opened_ = 0;
};

class CopyingSealer : public common::Sealer {
 public:
  common::Status Seal(common::ByteView payload, common::Bytes* wire) override {
    wire->assign(payload.begin(), payload.end());
    return common::Status::Ok();
  }
};

// Every repetition checks its first opened payload, so a leg whose output
// goes wrong after the first repetition is not measured as if it worked:
// with no time budget a repetition is its warm-up and minimum operations,
// and the opens go wrong from the second repetition's first.
TEST(MeasureTest, EveryRepetitionChecksWhatItOpened) {
  MeasureOptions o;
  o.min_seconds = 0;
  o.min_ops = 5;
  o.warmup_ops = 3;
  o.repetitions = 3;
  for (common::Leg leg : {common::Leg::kClientSeal, common::Leg::kServerOpen}) {
    common::Association a;
    a.mode = "corrupting";
    a.client_seal = std::make_unique<CopyingSealer>();
    a.server_open = std::make_unique<CorruptingOpener>(o.warmup_ops + o.min_ops + 1);
    a.server_seal = std::make_unique<CopyingSealer>();
    a.client_open = std::make_unique<CorruptingOpener>(o.warmup_ops + o.min_ops + 1);
    auto m = MeasureLeg(a, leg, 4096, o);
    ASSERT_FALSE(m.ok()) << common::LegName(leg);
    EXPECT_NE(m.status().message().find("differs"), std::string::npos) << m.status().ToString();
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
