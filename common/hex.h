// Hex encoding for test vectors, logs and reports.
#ifndef SECMODE_COMMON_HEX_H_
#define SECMODE_COMMON_HEX_H_

#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::common {

std::string ToHex(ByteView bytes);
// Accepts upper or lower case; spaces are ignored so RFC vectors paste as is.
Result<Bytes> FromHex(std::string_view hex);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_HEX_H_
