// gss_handles: Out() gives a call the owner's current handle and takes back
// whatever the call leaves (a new handle, the same one updated, or none),
// without running the deleter on the way; and a real GSS call fills a
// NamePtr and a BufferHandle through it. No realm needed.
#include "gss/gss_handles.h"

#include <gssapi/gssapi.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace secmode::gss {
namespace {

int g_deleted = 0;
struct CountingDelete {
  void operator()(int* p) const {
    ++g_deleted;
    delete p;
  }
};
using IntPtr = std::unique_ptr<int, CountingDelete>;

// Stand-ins for the three shapes of GSS out-parameters.
void Fill(int** out) { *out = new int(7); }
void Step(int** in_out) {
  int next = **in_out + 1;
  delete *in_out;
  *in_out = new int(next);
}
void Consume(int** in_out) {
  delete *in_out;
  *in_out = nullptr;
}
void LookOnly(int** in_out) { EXPECT_EQ(**in_out, 3); }

TEST(OutTest, FillsAnEmptyOwner) {
  g_deleted = 0;
  IntPtr p;
  Fill(Out(p));
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 7);
  EXPECT_EQ(g_deleted, 0);
}

TEST(OutTest, PassesTheCurrentHandleInAndTakesTheUpdatedOneBack) {
  g_deleted = 0;
  IntPtr p(new int(1));
  Step(Out(p));
  Step(Out(p));
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 3);
  EXPECT_EQ(g_deleted, 0);  // the callee freed the old ones, not the owner
  LookOnly(Out(p));
  EXPECT_EQ(*p, 3);
  p.reset();
  EXPECT_EQ(g_deleted, 1);
}

TEST(OutTest, AConsumedHandleLeavesTheOwnerEmpty) {
  g_deleted = 0;
  IntPtr p(new int(5));
  Consume(Out(p));
  EXPECT_FALSE(p);
  EXPECT_EQ(g_deleted, 0);
}

TEST(GssHandlesTest, ImportNameFillsANamePtrAndDisplayNameABufferHandle) {
  std::string text = "nfs@localhost";
  gss_buffer_desc buf{text.size(), text.data()};
  OM_uint32 minor = 0;
  NamePtr name;
  ASSERT_FALSE(GSS_ERROR(gss_import_name(&minor, &buf, GSS_C_NT_HOSTBASED_SERVICE, Out(name))));
  ASSERT_TRUE(name);
  BufferHandle shown;
  ASSERT_FALSE(GSS_ERROR(gss_display_name(&minor, name.get(), &shown.h, nullptr)));
  common::ByteView v = shown.view();
  EXPECT_EQ(std::string(v.begin(), v.end()), text);
  shown.reset();
  EXPECT_EQ(shown.h.length, 0u);
  EXPECT_EQ(shown.h.value, nullptr);
}

}  // namespace
}  // namespace secmode::gss
