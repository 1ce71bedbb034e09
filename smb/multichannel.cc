#include "smb/multichannel.h"

#include <atomic>
#include <thread>

#include "common/clock.h"
#include "smb/message.h"

namespace secmode::smb {

using common::Bytes;
using common::Result;
using common::Status;

Result<std::vector<std::unique_ptr<Encryptor>>> MakeChannelEncryptors(CipherId cipher,
                                                                      common::ByteView key,
                                                                      uint64_t session_id,
                                                                      int channels) {
  if (channels < 1) {
    return Status::InvalidArgument("need at least one channel, got " + std::to_string(channels));
  }
  std::vector<std::unique_ptr<Encryptor>> out;
  for (int i = 0; i < channels; ++i) {
    // Each channel draws its own counter block from the nonce ledger
    // (transform.h), on top of its own channel id.
    SECMODE_ASSIGN_OR_RETURN(auto e,
                             Encryptor::Create(cipher, key, session_id, static_cast<uint32_t>(i)));
    out.push_back(std::move(e));
  }
  return out;
}

Result<MultichannelResult> RunMultichannelSeal(CipherId cipher, common::ByteView key,
                                               uint64_t session_id, int channels,
                                               size_t payload_size, double seconds) {
  SECMODE_ASSIGN_OR_RETURN(auto encryptors,
                           MakeChannelEncryptors(cipher, key, session_id, channels));
  SECMODE_ASSIGN_OR_RETURN(auto check, Decryptor::Create(cipher, key, session_id));
  const Bytes payload = common::PatternBytes(payload_size, 17);
  std::vector<Bytes> wires(static_cast<size_t>(channels));
  for (int i = 0; i < channels; ++i) {
    uint8_t prefix[kWriteDataOffset];
    HeaderFields h;
    h.session_id = session_id;
    WriteWriteRequestPrefix(h, kSampleFileId, static_cast<uint32_t>(payload.size()), 0, prefix);
    SECMODE_RETURN_IF_ERROR(
        encryptors[i]->Seal({common::ByteView(prefix, sizeof prefix), payload}, &wires[i]));
    Bytes opened;
    SECMODE_RETURN_IF_ERROR(
        check->Open(wires[i], &opened).Annotate("channel " + std::to_string(i) + " check"));
  }

  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false};
  std::vector<uint64_t> counts(static_cast<size_t>(channels), 0);
  std::vector<Status> errors(static_cast<size_t>(channels));
  std::vector<std::thread> threads;
  for (int i = 0; i < channels; ++i) {
    threads.emplace_back([&, i] {
      Encryptor& e = *encryptors[i];
      Bytes& wire = wires[i];
      uint8_t prefix[kWriteDataOffset];
      HeaderFields h;
      h.session_id = session_id;
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        h.message_id = n + 2;
        WriteWriteRequestPrefix(h, kSampleFileId, static_cast<uint32_t>(payload.size()), 0, prefix);
        Status s = e.Seal({common::ByteView(prefix, sizeof prefix), payload}, &wire);
        if (!s.ok()) {
          errors[i] = s;
          break;
        }
        ++n;
      }
      counts[i] = n;
    });
  }
  while (ready.load() < channels) std::this_thread::yield();
  const uint64_t t0 = common::NowNs();
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& t : threads) t.join();
  const uint64_t t1 = common::NowNs();
  MultichannelResult r;
  r.channels = channels;
  for (int i = 0; i < channels; ++i) {
    if (!errors[i].ok()) return errors[i].Annotate("channel " + std::to_string(i));
    r.messages += counts[i];
  }
  r.seconds = static_cast<double>(t1 - t0) / 1e9;
  r.bytes_per_second =
      static_cast<double>(r.messages) * static_cast<double>(payload_size) / r.seconds;
  return r;
}

}  // namespace secmode::smb
