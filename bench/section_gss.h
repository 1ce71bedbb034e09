// The `gss` section of `secmode run` (bench/section_gss.cc): OpenSSL bounds
// for every enctype and the krb5p mit / mit-iov / native comparison.
#ifndef SECMODE_BENCH_SECTION_GSS_H_
#define SECMODE_BENCH_SECTION_GSS_H_

#include "bench/sections.h"

namespace secmode::bench {

common::Status RunGssSection(SectionContext& context);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_SECTION_GSS_H_
