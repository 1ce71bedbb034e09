#include "common/status.h"

#include <gtest/gtest.h>

namespace secmode::common {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status UsesMacros(int x, int* out) {
  SECMODE_ASSIGN_OR_RETURN(int h, Half(x));
  SECMODE_RETURN_IF_ERROR(h > 10 ? Status::Exhausted("too big") : Status::Ok());
  *out = h;
  return Status::Ok();
}

TEST(StatusTest, OkAndErrorsCarryCodeAndMessage) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = Status::AuthFailed("bad checksum");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kAuthFailed);
  EXPECT_EQ(s.ToString(), "auth-failed: bad checksum");
  EXPECT_EQ(s.Annotate("gss_unwrap").message(), "gss_unwrap: bad checksum");
}

TEST(StatusTest, MacrosPropagate) {
  int out = 0;
  EXPECT_TRUE(UsesMacros(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status odd = UsesMacros(7, &out);
  EXPECT_EQ(odd.code(), Code::kInvalidArgument);
  EXPECT_EQ(odd.message(), "odd: 7");
  EXPECT_EQ(UsesMacros(40, &out).code(), Code::kExhausted);
}

}  // namespace
}  // namespace secmode::common
