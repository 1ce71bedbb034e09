// SMB3 multichannel: several connections (channels) bound to one session
// share its encryption keys (MS-SMB2 3.2.5.3.2: a bound channel copies the
// session's EncryptionKey/DecryptionKey). Each channel has its own sender
// state, so each must draw nonces from its own space: each channel's
// Encryptor draws its own block of counters from the nonce ledger
// (transform.h), so no two channels ever start at the same counter, and its
// channel id sits in the nonce bytes above the 64-bit counter as well. No
// counter or lock is shared while sealing; calling this again with the same
// key (a repeated benchmark run) draws new blocks, never reusing a nonce.
//
// Thread safety: each returned Encryptor belongs to one channel (thread).
#ifndef SECMODE_SMB_MULTICHANNEL_H_
#define SECMODE_SMB_MULTICHANNEL_H_

#include <memory>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "smb/transform.h"

namespace secmode::smb {

// One Encryptor per channel, channel ids 0..channels-1, all keyed with `key`.
common::Result<std::vector<std::unique_ptr<Encryptor>>> MakeChannelEncryptors(CipherId cipher,
                                                                              common::ByteView key,
                                                                              uint64_t session_id,
                                                                              int channels);

struct MultichannelResult {
  int channels = 0;
  uint64_t messages = 0;        // sealed by all channels together
  double seconds = 0;           // wall time of the timed region
  double bytes_per_second = 0;  // payload bytes of all channels / seconds
};

// Runs `channels` threads, each sealing WRITE requests of `payload_size`
// data bytes on its own channel for about `seconds`, all started together.
// Before timing, each channel's first message is opened by a Decryptor to
// check the channel works.
common::Result<MultichannelResult> RunMultichannelSeal(CipherId cipher, common::ByteView key,
                                                       uint64_t session_id, int channels,
                                                       size_t payload_size, double seconds);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_MULTICHANNEL_H_
