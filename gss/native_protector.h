// The native engine's key material, for building it without a GSS context
// (fuzz targets, tests of the token code alone). Production code goes
// through NewProtector / NewNativeProtector (gss/protector.h), which fill
// NativeKeys from gss_krb5_export_lucid_sec_context.
#ifndef SECMODE_GSS_NATIVE_PROTECTOR_H_
#define SECMODE_GSS_NATIVE_PROTECTOR_H_

#include <cstdint>
#include <memory>

#include "common/bytes.h"
#include "common/secret_bytes.h"
#include "common/status.h"
#include "gss/protector.h"

namespace secmode::gss {

struct NativeKeys {
  bool initiate = false;              // this side initiated the context
  bool have_acceptor_subkey = false;  // RFC 4121 2: then `key` is that subkey
  uint64_t send_seq = 0, recv_seq = 0;
  int32_t enctype = 0;      // 17..20
  common::SecretBytes key;  // the key both directions use (wiped when let go of)
  bool replay_detection = true, sequence_detection = true;
};

common::Result<std::unique_ptr<Protector>> NewNativeProtectorFromKeys(
    const NativeKeys& keys, const NativeOptions& options = {});

}  // namespace secmode::gss

#endif  // SECMODE_GSS_NATIVE_PROTECTOR_H_
