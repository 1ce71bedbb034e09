// The native engine against MIT on real contexts: byte compatibility both
// ways for every enctype, rejection of bad input, and sequence verdicts equal
// to MIT's for the same arrival order. One TEST per concern and enctype, each
// rich, because every test process pays for a realm start.
#include <gssapi/gssapi.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gss/context_pair.h"
#include "gss/gss_handles.h"
#include "gss/protector.h"
#include "tests/support/shared_realm.h"

namespace secmode::gss {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;
using common::Status;

std::string Name(const ::testing::TestParamInfo<Enctype>& info) {
  std::string n = EnctypeName(info.param);
  for (char& c : n) c = c == '-' ? '_' : c;
  return n;
}

std::unique_ptr<ContextPair> Establish(Enctype e) {
  Realm* realm = testing::SharedRealm();
  if (realm == nullptr) return nullptr;
  auto pair = ContextPair::Establish(*realm, e);
  EXPECT_TRUE(pair.ok()) << pair.status().ToString();
  if (!pair.ok()) return nullptr;
  return std::move(pair).value();
}

std::unique_ptr<Protector> Make(Engine engine, ContextPtr ctx, const NativeOptions& o = {}) {
  auto p = engine == Engine::kNative ? NewNativeProtector(std::move(ctx), o)
                                     : NewProtector(engine, std::move(ctx));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : nullptr;
}

// Two identical copies of one established context (export + import twice),
// so an MIT and a native receiver can judge the very same tokens.
void Clone(ContextPtr ctx, ContextPtr* a, ContextPtr* b) {
  OM_uint32 minor = 0;
  BufferHandle token;
  ASSERT_FALSE(GSS_ERROR(gss_export_sec_context(&minor, Out(ctx), &token.h)));
  ASSERT_FALSE(GSS_ERROR(gss_import_sec_context(&minor, &token.h, Out(*a))));
  ASSERT_FALSE(GSS_ERROR(gss_import_sec_context(&minor, &token.h, Out(*b))));
}

enum class Kind { kWrapConf, kWrapInteg, kMic };
const char* KindName(Kind k) {
  return k == Kind::kWrapConf ? "wrap-conf" : k == Kind::kWrapInteg ? "wrap-integ" : "mic";
}

Status Seal(Protector& p, Kind k, ByteView msg, Bytes* token) {
  if (k == Kind::kMic) return p.GetMic(msg, token);
  return p.Wrap(msg, k == Kind::kWrapConf, token);
}

// Opens `token` and checks the payload; returns the status of the open.
Status Open(Protector& p, Kind k, ByteView msg, ByteView token) {
  if (k == Kind::kMic) return p.VerifyMic(msg, token);
  Bytes out;
  bool conf = false;
  Status s = p.Unwrap(token, &out, &conf);
  if (!s.ok()) return s;
  if (out.size() != msg.size() || !std::equal(out.begin(), out.end(), msg.begin())) {
    return Status::Internal("unwrapped payload differs");
  }
  if (conf != (k == Kind::kWrapConf)) return Status::Internal("conf flag wrong");
  return Status::Ok();
}

std::vector<size_t> Sizes() {
  std::vector<size_t> s;
  for (size_t i = 0; i <= 300; ++i) s.push_back(i);
  for (size_t v : {511u, 512u, 1000u, 1023u, 1024u, 4095u, 4096u, 4097u, 8191u, 16383u, 16384u,
                   16385u, 32768u, 65535u, 65536u, 70000u, 1u << 20})
    s.push_back(v);
  return s;
}

class NativeEngineTest : public ::testing::TestWithParam<Enctype> {};

TEST_P(NativeEngineTest, ByteCompatibleWithMitBothWays) {
  // pair A: native initiator, mit acceptor; pair B: mit initiator, native
  // acceptor; pair C: mit-iov initiator, native acceptor sending RRC != 0
  // and EC != 0 (what MIT never sends but must accept, and vice versa).
  auto a = Establish(GetParam());
  auto b = Establish(GetParam());
  auto c = Establish(GetParam());
  auto d = Establish(GetParam());
  ASSERT_TRUE(a && b && c && d);
  auto a_init = Make(Engine::kNative, a->ReleaseInitiator());
  auto a_acc = Make(Engine::kMit, a->ReleaseAcceptor());
  auto b_init = Make(Engine::kMit, b->ReleaseInitiator());
  auto b_acc = Make(Engine::kNative, b->ReleaseAcceptor());
  auto c_init = Make(Engine::kMitIov, c->ReleaseInitiator());
  auto c_acc =
      Make(Engine::kNative, c->ReleaseAcceptor(), NativeOptions{.send_rrc = 28, .send_ec = 13});
  // pair D: native both ends, each sending RRC and EC != 0 (native receive).
  auto d_init =
      Make(Engine::kNative, d->ReleaseInitiator(), NativeOptions{.send_rrc = 5, .send_ec = 3});
  auto d_acc =
      Make(Engine::kNative, d->ReleaseAcceptor(), NativeOptions{.send_rrc = 1000, .send_ec = 0});
  ASSERT_TRUE(a_init && a_acc && b_init && b_acc && c_init && c_acc && d_init && d_acc);
  struct Way {
    const char* name;
    Protector* seal;
    Protector* open;
  };
  const Way ways[] = {
      {"native initiator -> mit acceptor", a_init.get(), a_acc.get()},
      {"mit acceptor -> native initiator", a_acc.get(), a_init.get()},
      {"mit initiator -> native acceptor", b_init.get(), b_acc.get()},
      {"native acceptor -> mit initiator", b_acc.get(), b_init.get()},
      {"mit-iov initiator -> native acceptor", c_init.get(), c_acc.get()},
      {"native acceptor (RRC 28, EC 13) -> mit-iov initiator", c_acc.get(), c_init.get()},
      {"native initiator (RRC 5, EC 3) -> native acceptor", d_init.get(), d_acc.get()},
      {"native acceptor (RRC 1000) -> native initiator", d_acc.get(), d_init.get()},
  };
  Bytes token;
  int failures = 0;
  for (size_t size : Sizes()) {
    Bytes msg = common::PatternBytes(size, static_cast<uint32_t>(size) * 3 + 1);
    for (const Way& w : ways) {
      // The iov pair is exercised on a subset; it shares the code path.
      if (w.seal == c_init.get() || w.open == c_init.get()) {
        if (size > 64 && size % 97 != 0 && size < 1000) continue;
      }
      for (Kind k : {Kind::kWrapConf, Kind::kWrapInteg, Kind::kMic}) {
        Status s = Seal(*w.seal, k, msg, &token);
        ASSERT_TRUE(s.ok()) << w.name << " " << KindName(k) << " size " << size << ": "
                            << s.ToString();
        s = Open(*w.open, k, msg, token);
        if (!s.ok() && ++failures < 10) {
          ADD_FAILURE() << w.name << " " << KindName(k) << " size " << size << ": " << s.ToString();
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  // Everything arrived in order.
  for (Protector* p : {a_init.get(), b_acc.get(), c_acc.get()}) {
    SequenceCounts n = p->sequence_counts();
    EXPECT_EQ(n.gap + n.unseq + n.duplicate + n.old, 0u);
    EXPECT_GT(n.in_order, 200u);
  }
}

TEST_P(NativeEngineTest, RejectsBadInputNamingTheCause) {
  auto pair = Establish(GetParam());
  ASSERT_TRUE(pair);
  auto init = Make(Engine::kNative, pair->ReleaseInitiator());
  auto acc = Make(Engine::kNative, pair->ReleaseAcceptor());
  ASSERT_TRUE(init && acc);
  Bytes msg = common::PatternBytes(37, 9), token, out;

  struct Sample {
    Kind kind;
    size_t size;
  };
  for (Sample sample :
       {Sample{Kind::kWrapConf, 0}, Sample{Kind::kWrapConf, 37}, Sample{Kind::kWrapInteg, 0},
        Sample{Kind::kWrapInteg, 37}, Sample{Kind::kMic, 37}}) {
    ByteView m(msg.data(), sample.size);
    ASSERT_TRUE(Seal(*init, sample.kind, m, &token).ok());
    const std::string what =
        std::string(KindName(sample.kind)) + " of " + std::to_string(sample.size) + " bytes";
    // Every single-bit flip. One exception by design: RRC (wrap bytes 6-7)
    // is outside every checksum (RFC 4121 4.2.5), and a rotation by a
    // multiple of the body length is the very same token; MIT accepts it
    // too, so such a flip is skipped.
    for (size_t bit = 0; bit < token.size() * 8; ++bit) {
      Bytes bad = token;
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      if (sample.kind != Kind::kMic && (bit / 8 == 6 || bit / 8 == 7)) {
        size_t rrc = size_t{bad[6]} << 8 | bad[7];
        if (rrc % (token.size() - 16) == 0) continue;
      }
      Status s = Open(*acc, sample.kind, m, bad);
      ASSERT_FALSE(s.ok()) << what << ": flip of bit " << bit << " accepted";
      ASSERT_TRUE(s.code() == Code::kAuthFailed || s.code() == Code::kCorrupt) << s.ToString();
      ASSERT_FALSE(s.message().empty());
    }
    // Truncation at every length.
    for (size_t len = 0; len < token.size(); ++len) {
      Status s = Open(*acc, sample.kind, m, ByteView(token.data(), len));
      ASSERT_FALSE(s.ok()) << what << ": truncated to " << len << " accepted";
      if (len < 16) {
        EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.ToString();
      }
    }
    // Wrong token ID: a wrap token given as a MIC and the other way round.
    Bytes swapped = token;
    swapped[0] = sample.kind == Kind::kMic ? 0x05 : 0x04;
    Status s = Open(*acc, sample.kind, m, swapped);
    EXPECT_EQ(s.code(), Code::kCorrupt) << s.ToString();
    EXPECT_NE(s.message().find("wrong token ID"), std::string::npos) << s.ToString();
    // Reflected to its own sender: SentByAcceptor does not match.
    s = Open(*init, sample.kind, m, token);
    EXPECT_EQ(s.code(), Code::kAuthFailed) << s.ToString();
    EXPECT_NE(s.message().find("wrong direction"), std::string::npos) << s.ToString();
    // The untouched token still opens (nothing above consumed its number).
    s = Open(*acc, sample.kind, m, token);
    EXPECT_TRUE(s.ok()) << what << ": " << s.ToString();
  }

  // Wrong key: tokens from another context of the same enctype, and of
  // every other enctype, do not verify.
  for (Enctype other : kNativeEnctypes) {
    auto p2 = Establish(other);
    ASSERT_TRUE(p2);
    auto other_init = Make(Engine::kNative, p2->ReleaseInitiator());
    ASSERT_TRUE(other_init);
    for (Kind k : {Kind::kWrapConf, Kind::kWrapInteg, Kind::kMic}) {
      ASSERT_TRUE(Seal(*other_init, k, msg, &token).ok());
      Status s = Open(*acc, k, msg, token);
      EXPECT_FALSE(s.ok()) << EnctypeName(other) << " " << KindName(k);
      EXPECT_TRUE(s.code() == Code::kAuthFailed || s.code() == Code::kCorrupt) << s.ToString();
      if (other == GetParam()) {
        EXPECT_EQ(s.code(), Code::kAuthFailed) << s.ToString();
        EXPECT_NE(s.message().find("checksum"), std::string::npos) << s.ToString();
      }
    }
  }

  // A failed unwrap leaves no partial plaintext behind.
  ASSERT_TRUE(init->Wrap(msg, true, &token).ok());
  token.back() ^= 1;
  out.assign(5, 0xAA);
  EXPECT_FALSE(acc->Unwrap(token, &out, nullptr).ok());
  EXPECT_TRUE(out.empty());
}

// Feeds the same arrival order to an MIT receiver and a native receiver that
// hold copies of one context and expects the same verdict for every token.
TEST_P(NativeEngineTest, SequenceVerdictsMatchMit) {
  for (Engine sender_engine : {Engine::kMit, Engine::kNative}) {
    auto pair = Establish(GetParam());
    ASSERT_TRUE(pair);
    ContextPtr acc_a, acc_b;
    Clone(pair->ReleaseAcceptor(), &acc_a, &acc_b);
    auto mit = Make(Engine::kMit, std::move(acc_a));
    auto native = Make(Engine::kNative, std::move(acc_b));
    auto sender = Make(sender_engine, pair->ReleaseInitiator());
    ASSERT_TRUE(mit && native && sender);
    for (Kind k : {Kind::kWrapConf, Kind::kMic}) {
      Bytes msg = common::PatternBytes(64, 5);
      std::vector<Bytes> tokens(200);
      for (auto& t : tokens) ASSERT_TRUE(Seal(*sender, k, msg, &t).ok());
      // in order, duplicate, gap, late, duplicate of late, far gap, old
      // (more than 64 behind), its duplicate, a late one inside the window.
      const int order[] = {0,  1,  1,  3,   2,  2,   4,   0,   100, 5,   5,
                           99, 99, 40, 101, 37, 150, 149, 120, 199, 198, 137};
      for (int i : order) {
        Status sm = Open(*mit, k, msg, tokens[static_cast<size_t>(i)]);
        Status sn = Open(*native, k, msg, tokens[static_cast<size_t>(i)]);
        EXPECT_EQ(sm.code(), sn.code()) << KindName(k) << " token " << i << ": mit "
                                        << sm.ToString() << " vs native " << sn.ToString();
        if (sm.code() == Code::kReplay) {
          bool dup = sm.message().find("duplicate") != std::string::npos;
          EXPECT_NE(sn.message().find(dup ? "duplicate" : "old"), std::string::npos)
              << sn.ToString();
        }
      }
      SequenceCounts cm = mit->sequence_counts(), cn = native->sequence_counts();
      EXPECT_EQ(cm.in_order, cn.in_order);
      EXPECT_EQ(cm.gap, cn.gap);
      EXPECT_EQ(cm.unseq, cn.unseq);
      EXPECT_EQ(cm.duplicate, cn.duplicate);
      EXPECT_EQ(cm.old, cn.old);
      EXPECT_GT(cn.duplicate, 0u);
      EXPECT_GT(cn.gap, 0u);
      EXPECT_GT(cn.unseq, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllEnctypes, NativeEngineTest, ::testing::ValuesIn(kNativeEnctypes), Name);

}  // namespace
}  // namespace secmode::gss
