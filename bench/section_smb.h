// Suite section "smb" (bench/sections.h): SMB3 bounds against raw OpenSSL
// primitives and the multichannel sweep.
#ifndef SECMODE_BENCH_SECTION_SMB_H_
#define SECMODE_BENCH_SECTION_SMB_H_

#include "bench/sections.h"

namespace secmode::bench {

common::Status RunSmbSection(SectionContext& context);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_SECTION_SMB_H_
