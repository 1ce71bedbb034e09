// common::SecretBytes wipes every buffer it lets go of: its buffer is placed
// in an arena the test owns (BasicSecretBytes's allocator parameter), so
// the bytes can be read after they are freed without reading freed memory.
#include "common/secret_bytes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/bytes.h"

namespace secmode::common {
namespace {

// Hands out consecutive pieces of its own bytes and never reuses them.
struct Arena {
  uint8_t bytes[1024] = {};
  size_t used = 0;
  int live = 0;  // buffers handed out and not yet given back
  bool Zero(const uint8_t* p, size_t n) const {
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
  }
};

template <typename T>
struct ArenaAllocator {
  using value_type = T;
  explicit ArenaAllocator(Arena* a) : arena(a) {}
  T* allocate(size_t n) {
    EXPECT_LE(arena->used + n * sizeof(T), sizeof arena->bytes);
    T* p = reinterpret_cast<T*>(arena->bytes + arena->used);
    arena->used += n * sizeof(T);
    arena->live++;
    return p;
  }
  void deallocate(T*, size_t) { arena->live--; }
  bool operator==(const ArenaAllocator& o) const { return arena == o.arena; }
  Arena* arena;
};

using TestSecret = BasicSecretBytes<ArenaAllocator<uint8_t>>;

const Bytes kKey = PatternBytes(32, 7);
const Bytes kOther = PatternBytes(32, 8);

bool Holds(const uint8_t* p, const Bytes& want) {
  return std::memcmp(p, want.data(), want.size()) == 0;
}

TEST(SecretBytesTest, DestructionWipesTheBuffer) {
  Arena arena;
  const uint8_t* p = nullptr;
  {
    TestSecret s(kKey, ArenaAllocator<uint8_t>(&arena));
    p = s.data();
    ASSERT_EQ(p, arena.bytes);
    EXPECT_TRUE(Holds(p, kKey));
  }
  EXPECT_TRUE(arena.Zero(p, kKey.size()));
  EXPECT_EQ(arena.live, 0);
}

TEST(SecretBytesTest, AMoveHandsTheBufferOverAndMoveAssignmentWipesTheTarget) {
  Arena arena;
  ArenaAllocator<uint8_t> alloc(&arena);
  TestSecret a(kKey, alloc);
  const uint8_t* pa = a.data();
  TestSecret b(std::move(a));  // no copy: the same buffer
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.data(), pa);
  EXPECT_EQ(arena.used, kKey.size());

  TestSecret c(kOther, alloc);
  const uint8_t* pc = c.data();
  c = std::move(b);  // what c held is wiped
  EXPECT_TRUE(arena.Zero(pc, kOther.size()));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(c.data(), pa);
  EXPECT_TRUE(Holds(pa, kKey));
  c.Clear();
  EXPECT_TRUE(arena.Zero(pa, kKey.size()));
  EXPECT_EQ(arena.live, 0);
}

TEST(SecretBytesTest, ResizeWipesWhatItDropsAndTheBufferItLeaves) {
  Arena arena;
  TestSecret s(kKey, ArenaAllocator<uint8_t>(&arena));
  const uint8_t* p = s.data();
  s.Resize(16);  // shrinking: the tail is wiped at once
  EXPECT_TRUE(Holds(p, Bytes(kKey.begin(), kKey.begin() + 16)));
  EXPECT_TRUE(arena.Zero(p + 16, 16));
  s.Resize(48);  // growing: a new buffer; the old one is wiped
  EXPECT_NE(s.data(), p);
  EXPECT_TRUE(arena.Zero(p, 32));
  EXPECT_TRUE(Holds(s.data(), Bytes(kKey.begin(), kKey.begin() + 16)));
  EXPECT_TRUE(arena.Zero(s.data() + 16, 32));  // new bytes are zero
  EXPECT_EQ(arena.live, 1);
  const uint8_t* q = s.data();
  s.Resize(0);
  EXPECT_TRUE(arena.Zero(q, 48));
  EXPECT_EQ(arena.live, 0);
}

TEST(SecretBytesTest, ReassignmentWipesTheOldBytes) {
  Arena arena;
  ArenaAllocator<uint8_t> alloc(&arena);
  TestSecret s(kKey, alloc);
  const uint8_t* p = s.data();
  s.Assign(kOther);  // same size: overwritten in place
  EXPECT_EQ(s.data(), p);
  EXPECT_TRUE(Holds(p, kOther));
  s.Assign(PatternBytes(16, 9));  // another size: the old buffer is wiped
  EXPECT_TRUE(arena.Zero(p, 32));
  TestSecret t(kKey, alloc);
  const uint8_t* pt = t.data();
  t = s;  // copy assignment of another size
  EXPECT_TRUE(arena.Zero(pt, 32));
  EXPECT_TRUE(t == s);
  EXPECT_EQ(arena.live, 2);
  const uint8_t* ps = s.data();
  s.Assign(ByteView(s).subspan(4, 8));  // part of itself
  EXPECT_TRUE(Holds(s.data(), Bytes(t.begin() + 4, t.begin() + 12)));
  EXPECT_TRUE(arena.Zero(ps, 16));
  EXPECT_EQ(arena.live, 2);
}

TEST(SecretBytesTest, ComparesAndViewsLikeBytes) {
  SecretBytes a(kKey), b(kKey), c(kOther), empty;
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a == SecretBytes(ByteView(kKey).subspan(0, 31)));
  EXPECT_TRUE(empty == SecretBytes());
  ByteView v = a;
  EXPECT_EQ(Bytes(v.begin(), v.end()), kKey);
  EXPECT_EQ(SecretBytes(size_t{4}).view().size(), 4u);
  EXPECT_EQ(SecretBytes(size_t{4})[3], 0);
}

}  // namespace
}  // namespace secmode::common
