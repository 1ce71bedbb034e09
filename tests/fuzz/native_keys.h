// The fixed keys of native_token_fuzz, shared with the corpus generator so
// its seed tokens verify under the target's keys.
#ifndef SECMODE_TESTS_FUZZ_NATIVE_KEYS_H_
#define SECMODE_TESTS_FUZZ_NATIVE_KEYS_H_

#include <cstdint>
#include <utility>

#include "gss/native_protector.h"

namespace secmode::fuzz {

inline constexpr int32_t kNativeEnctypes[4] = {17, 18, 19, 20};

// Keys of the sending side (the initiator) for `enctype`; the receiver
// swaps `initiate` and the sequence numbers.
inline gss::NativeKeys NativeSenderKeys(int32_t enctype) {
  gss::NativeKeys k;
  k.enctype = enctype;
  k.key = common::SecretBytes(common::PatternBytes(enctype == 17 || enctype == 19 ? 16 : 32, 99));
  k.have_acceptor_subkey = true;
  k.send_seq = 1000;
  k.recv_seq = 2000;
  k.initiate = true;
  return k;
}

// The generator's sender: the same keys, sequence numbers 2^40 ahead of
// the target's own sender, whose genuine tokens must keep opening (the
// target aborts if one does not): a seed then moves the receiver's window
// far ahead, and the live tokens are accepted as late (unseq), never as
// repeats of a seed's number.
inline gss::NativeKeys NativeSeedSenderKeys(int32_t enctype) {
  gss::NativeKeys k = NativeSenderKeys(enctype);
  k.send_seq += uint64_t{1} << 40;
  return k;
}

inline gss::NativeKeys NativeReceiverKeys(int32_t enctype) {
  gss::NativeKeys k = NativeSenderKeys(enctype);
  k.initiate = false;
  std::swap(k.send_seq, k.recv_seq);
  return k;
}

}  // namespace secmode::fuzz

#endif  // SECMODE_TESTS_FUZZ_NATIVE_KEYS_H_
