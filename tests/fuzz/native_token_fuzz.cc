// libFuzzer target: the native engine's receive path (RFC 4121 wrap and MIC
// token parsing, RRC/EC handling, CTS decryption, checksum and sequence
// checks) on arbitrary bytes, for every enctype. Input: byte 0 picks the
// enctype and the call, bytes 1.. are the token (for MIC: the first half is
// the message). A valid token sealed by the peer is opened first so the
// sequence window is in a realistic state. Must never crash or read out of
// bounds; any rejection must carry a message.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "gss/native_protector.h"
#include "tests/fuzz/native_keys.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
using secmode::gss::Protector;

struct Pair {
  std::unique_ptr<Protector> sender, receiver;
};

Pair Make(int32_t enctype) {
  auto sender = secmode::gss::NewNativeProtectorFromKeys(secmode::fuzz::NativeSenderKeys(enctype));
  auto receiver =
      secmode::gss::NewNativeProtectorFromKeys(secmode::fuzz::NativeReceiverKeys(enctype));
  if (!sender.ok() || !receiver.ok()) std::abort();
  return {std::move(sender).value(), std::move(receiver).value()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static Pair pairs[4] = {Make(17), Make(18), Make(19), Make(20)};
  Pair& p = pairs[data[0] % 4];
  const int op = (data[0] / 4) % 3;
  ByteView input(data + 1, size - 1);
  Bytes token, out;
  bool conf = false;
  // Keep the window moving with genuine traffic.
  if (!p.sender->Wrap(input, true, &token).ok()) std::abort();
  if (!p.receiver->Unwrap(token, &out, &conf).ok()) std::abort();
  secmode::common::Status s;
  if (op == 0) {
    s = p.receiver->Unwrap(input, &out, &conf);
  } else if (op == 1) {
    ByteView msg = input.subspan(0, input.size() / 2);
    s = p.receiver->VerifyMic(msg, input.subspan(input.size() / 2));
  } else {
    // A genuine token with the fuzz input xored over its start.
    if (!p.sender->Wrap(input, (data[0] & 1) != 0, &token).ok()) std::abort();
    for (size_t i = 0; i < input.size() && i < token.size(); ++i) token[i] ^= input[i];
    token.resize(token.size() - (input.empty() ? 0 : input[0] % (token.size() + 1)) / 2);
    s = p.receiver->Unwrap(token, &out, &conf);
  }
  if (!s.ok() && s.message().empty()) std::abort();
  return 0;
}
