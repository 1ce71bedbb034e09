#include <gtest/gtest.h>

#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

TEST(XdrTest, RoundTripsEveryType) {
  Bytes b;
  XdrEncoder e(&b);
  e.PutU32(0xdeadbeef);
  e.PutI32(-2);
  e.PutU64(0x0102030405060708ull);
  e.PutBool(true);
  e.PutOpaque(common::AsBytes("abcde"));
  e.PutString("xy");
  e.PutFixedOpaque(common::AsBytes("123"));
  // RFC 4506: 4+4+8+4 + (4+5+3) + (4+2+2) + (3+1)
  EXPECT_EQ(b.size(), 44u);
  XdrDecoder d(b);
  uint32_t u;
  int32_t i;
  uint64_t h;
  bool flag;
  ByteView o, f;
  std::string s;
  ASSERT_TRUE(d.GetU32(&u, "u").ok());
  ASSERT_TRUE(d.GetI32(&i, "i").ok());
  ASSERT_TRUE(d.GetU64(&h, "h").ok());
  ASSERT_TRUE(d.GetBool(&flag, "b").ok());
  ASSERT_TRUE(d.GetOpaque(&o, 100, "o").ok());
  ASSERT_TRUE(d.GetString(&s, 100, "s").ok());
  ASSERT_TRUE(d.GetFixedOpaque(3, &f, "f").ok());
  EXPECT_TRUE(d.ExpectEnd("all").ok());
  EXPECT_EQ(u, 0xdeadbeefu);
  EXPECT_EQ(i, -2);
  EXPECT_EQ(h, 0x0102030405060708ull);
  EXPECT_TRUE(flag);
  EXPECT_EQ(std::string(o.begin(), o.end()), "abcde");
  EXPECT_EQ(s, "xy");
  EXPECT_EQ(std::string(f.begin(), f.end()), "123");
}

TEST(XdrTest, ErrorsNameTheFieldAndOffset) {
  Bytes b = {0, 0, 0, 9, 'a', 'b'};
  XdrDecoder d(b);
  ByteView o;
  auto s = d.GetOpaque(&o, 100, "gss_token");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("truncated 'gss_token'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("offset 4"), std::string::npos) << s.message();
  XdrDecoder d2(b);
  s = d2.GetOpaque(&o, 4, "handle");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("exceeds its limit of 4"), std::string::npos);
  Bytes two = {0, 0, 0, 2};
  bool flag;
  XdrDecoder d3(two);
  EXPECT_FALSE(d3.GetBool(&flag, "eof").ok());
  Bytes huge = {0xff, 0xff, 0xff, 0xff};
  XdrDecoder d4(huge);
  EXPECT_FALSE(d4.GetOpaque(&o, ~size_t{0}, "big").ok());
}

Bytes Fragment(ByteView data, bool last) {
  Bytes out;
  XdrEncoder(&out).PutU32(static_cast<uint32_t>(data.size()) | (last ? kLastFragment : 0));
  XdrEncoder(&out).PutRaw(data);
  return out;
}

TEST(RecordTest, ReassemblesFragmentsFedByteByByte) {
  Bytes stream;
  for (auto& f :
       {Fragment(common::AsBytes("hello "), false), Fragment({}, false),
        Fragment(common::AsBytes("world"), true), Fragment(common::AsBytes("two"), true)}) {
    stream.insert(stream.end(), f.begin(), f.end());
  }
  RecordReader r(64);
  std::vector<std::string> got;
  for (uint8_t byte : stream) {
    r.Feed(ByteView(&byte, 1));
    ByteView rec;
    while (true) {
      auto n = r.Next(&rec);
      ASSERT_TRUE(n.ok()) << n.status().ToString();
      if (!*n) break;
      got.emplace_back(rec.begin(), rec.end());
    }
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "hello world");
  EXPECT_EQ(got[1], "two");
  EXPECT_EQ(r.buffered(), 0u);
}

TEST(RecordTest, RefusesOversizeMarkBeforeBuffering) {
  RecordReader r(1024);
  Bytes mark = {0xff, 0xff, 0xff, 0xff};  // last fragment of 2 GiB - 1
  r.Feed(mark);
  ByteView rec;
  auto n = r.Next(&rec);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("exceeds the maximum record size of 1024"), std::string::npos)
      << n.status().message();
  EXPECT_FALSE(r.Next(&rec).ok());  // the stream stays failed
}

TEST(RecordTest, RefusesFragmentsSummingBeyondMax) {
  RecordReader r(10);
  Bytes a = Fragment(common::AsBytes("123456"), false);
  Bytes b = Fragment(common::AsBytes("789012"), true);
  r.Feed(a);
  r.Feed(b);
  ByteView rec;
  auto n = r.Next(&rec);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("record of 12 bytes"), std::string::npos);
}

TEST(RecordTest, AnEmptyRecordIsABrokenStream) {
  // RFC 5531 section 11: a record carries one RPC message; a last fragment
  // of 0 bytes with no fragment before it (mark 0x80000000) carries none.
  RecordReader r;
  for (int i = 0; i < 3; ++i) r.Feed(Fragment({}, true));
  ByteView rec;
  auto n = r.Next(&rec);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), common::Code::kCorrupt);
  EXPECT_NE(n.status().message().find("empty record"), std::string::npos) << n.status().message();
  EXPECT_FALSE(r.Next(&rec).ok());  // the stream stays failed
  // Empty fragments that end in an empty last one make an empty record too.
  RecordReader r2;
  r2.Feed(Fragment({}, false));
  r2.Feed(Fragment({}, true));
  n = r2.Next(&rec);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("empty record"), std::string::npos) << n.status().message();
}

TEST(RecordTest, ARecordOfTooManyFragmentsIsABrokenStream) {
  // Empty non-last fragments are allowed (RFC 5531 section 11: 0 to 2^31-1
  // bytes each), but a record has at most kMaxFragments of them, so a
  // stream of 0x00000000 marks ends instead of being parsed forever.
  Bytes stream;
  for (size_t i = 0; i < kMaxFragments; ++i) {
    Bytes f = Fragment({}, false);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  RecordReader r;
  r.Feed(stream);
  ByteView rec;
  auto n = r.Next(&rec);
  ASSERT_TRUE(n.ok()) << n.status().ToString();  // kMaxFragments empty ones, no end yet
  EXPECT_FALSE(*n);
  r.Feed(Fragment({}, false));
  n = r.Next(&rec);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), common::Code::kCorrupt);
  EXPECT_NE(n.status().message().find("more than " + std::to_string(kMaxFragments) + " fragments"),
            std::string::npos)
      << n.status().message();
  // The largest number is fine when the record ends with its last fragment.
  RecordReader ok;
  ok.Feed(ByteView(stream).subspan(4));  // kMaxFragments - 1 empty fragments
  ok.Feed(Fragment(common::AsBytes("x"), true));
  n = ok.Next(&rec);
  ASSERT_TRUE(n.ok() && *n) << n.status().ToString();
  EXPECT_EQ(std::string(rec.begin(), rec.end()), "x");
}

TEST(RecordTest, TruncatedRecordWaitsForMore) {
  RecordReader r;
  Bytes f = Fragment(common::AsBytes("abcdef"), true);
  r.Feed(ByteView(f).subspan(0, 7));
  ByteView rec;
  auto n = r.Next(&rec);
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(*n);
  r.Feed(ByteView(f).subspan(7));
  n = r.Next(&rec);
  ASSERT_TRUE(n.ok() && *n);
  EXPECT_EQ(std::string(rec.begin(), rec.end()), "abcdef");
}

TEST(MessageTest, CallAndReplyRoundTrip) {
  AuthSysParms p;
  p.machine = "host";
  p.uid = 1000;
  p.gid = 100;
  p.gids = {1, 2};
  Bytes cred, call;
  EncodeAuthSys(p, &cred);
  size_t cred_end = EncodeCallPrefix(7, 100003, 4, 1, kAuthSys, cred, &call);
  XdrEncoder e(&call);
  e.PutU32(kAuthNone);
  e.PutU32(0);
  e.PutU32(42);
  CallHeader h;
  ASSERT_TRUE(DecodeCallHeader(call, &h).ok());
  EXPECT_EQ(h.xid, 7u);
  EXPECT_EQ(h.prog, 100003u);
  EXPECT_EQ(h.cred.flavor, static_cast<uint32_t>(kAuthSys));
  EXPECT_EQ(h.cred_end, cred_end);
  EXPECT_EQ(call.size() - h.body_offset, 4u);
  AuthSysParms q;
  ASSERT_TRUE(DecodeAuthSys(h.cred.body, &q).ok());
  EXPECT_EQ(q.machine, "host");
  EXPECT_EQ(q.gids.size(), 2u);

  Bytes reply;
  EncodeAuthErrorReply(7, kRpcsecGssCredProblem, &reply);
  ReplyHeader r;
  ASSERT_TRUE(DecodeReplyHeader(reply, &r).ok());
  EXPECT_EQ(DescribeReply(r), "denied AUTH_ERROR RPCSEC_GSS_CREDPROBLEM");
  reply.clear();
  EncodeProgMismatchReply(9, 4, 4, &reply);
  ASSERT_TRUE(DecodeReplyHeader(reply, &r).ok());
  EXPECT_EQ(r.accept_stat, static_cast<uint32_t>(kProgMismatch));
  EXPECT_EQ(r.mismatch_low, 4u);

  GssCred c;
  c.proc = kGssDestroy;
  c.seq = 99;
  c.service = kGssSvcPrivacy;
  Bytes handle = {1, 2, 3};
  c.handle = handle;
  Bytes gc;
  EncodeGssCred(c, &gc);
  GssCred d;
  ASSERT_TRUE(DecodeGssCred(gc, &d).ok());
  EXPECT_EQ(d.proc, static_cast<uint32_t>(kGssDestroy));
  EXPECT_EQ(d.seq, 99u);
  EXPECT_EQ(Bytes(d.handle.begin(), d.handle.end()), handle);
  gc.push_back(0);
  EXPECT_FALSE(DecodeGssCred(gc, &d).ok());  // trailing bytes
}

TEST(MessageTest, RejectsGarbageHeaders) {
  CallHeader h;
  Bytes reply_not_call = {0, 0, 0, 1, 0, 0, 0, 1};
  auto s = DecodeCallHeader(reply_not_call, &h);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("where a CALL (0) was expected"), std::string::npos);
  Bytes cred(500, 0);
  Bytes call;
  EncodeCallPrefix(1, 2, 3, 4, kAuthSys, cred, &call);
  s = DecodeCallHeader(call, &h);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("exceeds its limit of 400"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace secmode::rpc
