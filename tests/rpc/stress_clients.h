// Test helpers: the clients of the stress and soak tests against a `secmode
// serve` process. The well-behaved load (rpc::RunLoad, krb5i, two
// connections of 8 slots, GETATTR, with the shared realm's tickets) and the
// hostile clients all at once (`Attackers`): reply amplification (16 calls
// of 62 READs of 1 MiB, read slowly or not at all), a client that never
// reads, descriptor exhaustion (idle connections to the server's descriptor
// limit, held 3 s), an INIT flood (one captured INIT replayed, and more
// fresh contexts than the table holds), slowloris (1 MiB marks, a byte now
// and then), connections idle after a 1 MiB READ, resets in the middle of a
// record, and garbage (random records, 100,000 empty fragments). What each
// attacker saw is counted in `Seen`, to be checked after they left.
//
// Thread safety: an Attackers object is started and stopped from one
// thread; its attackers run on threads of their own until Stop (or its
// destruction), which joins them.
#ifndef SECMODE_TESTS_RPC_STRESS_CLIENTS_H_
#define SECMODE_TESTS_RPC_STRESS_CLIENTS_H_

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/xdr.h"
#include "tests/rpc/hostile.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc::stress {

using common::Bytes;
using common::ByteView;
using common::WriteAll;

// Whether the peer has closed (or reset) the connection, without reading.
inline bool PeerClosed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// Sleeps up to `ms` in small steps, returning early when `stop` is set.
inline void Nap(const std::atomic<bool>& stop, int ms) {
  for (int i = 0; i < ms && !stop; i += 10) usleep(10000);
}

// The well-behaved load: krb5i GETATTRs on two connections of 8 slots for
// `seconds` after 0.2 s of warm-up, with one shared context (destroyed at
// the end).
inline LoadOptions WellBehaved(uint16_t port, double seconds) {
  LoadOptions o;
  o.port = port;
  o.security = Security::kKrb5i;
  o.ccache = secmode::testing::SharedRealm()->ccache();
  o.connections = 2;
  o.slots = 8;
  o.op = NfsOp::kGetattr;
  o.seconds = seconds;
  o.warmup_seconds = 0.2;
  return o;
}

// The well-behaved load's rate (ops/s) over `seconds`; 0 with *error set
// when the run failed, *error set when a reply failed a check.
inline double Rate(uint16_t port, double seconds, std::string* error) {
  auto r = RunLoad(WellBehaved(port, seconds));
  if (!r.ok()) {
    *error = r.status().ToString();
    return 0;
  }
  if (r->errors > 0) *error = r->first_error;
  return r->ops_per_second;
}

// The median (the upper one of an even count); `v` is not empty.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What the attackers saw; checked after they left.
struct Seen {
  std::atomic<int> amplified_replies{0}, amplified_wrong{0}, amplified_closed{0};
  std::atomic<int> nonreader_closed{0};
  std::atomic<int> flood_held{0}, flood_refused{0};
  std::atomic<int> replays{0}, replays_accepted{0}, contexts_made{0}, contexts_failed{0};
  std::atomic<int> slow{0}, slow_closed{0};
  std::atomic<int> idle_big{0}, resets{0};
  std::atomic<int> garbage_answered{0};
  std::string init_error;
};

class Attackers {
 public:
  // `fd_limit`: the server's descriptor limit (the flood asks for 100
  // connections more); `max_contexts`: its context table's size (the INIT
  // flood makes twice as many and 100 more).
  Attackers(uint16_t port, Seen* seen, int fd_limit, int max_contexts)
      : port_(port), seen_(seen), fd_limit_(fd_limit), max_contexts_(max_contexts) {}
  ~Attackers() { Stop(); }

  void Start() {
    Run([this] { Amplifier(true); });
    Run([this] { Amplifier(true); });
    Run([this] { Amplifier(false); });
    Run([this] { Amplifier(false); });
    Run([this] { NonReader(); });
    Run([this] { InitFlood(); });
    Run([this] { Slowloris(200); });
    Run([this] { IdleAfterBig(30); });
    Run([this] { Resets(); });
    Run([this] { Garbage(); });
    Run([this] { FdFlood(); });  // last: the others have their connections
  }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Run(std::function<void()> f) { threads_.emplace_back(std::move(f)); }
  // An attacker has its connections (the descriptor flood waits for all).
  void Ready() { ready_++; }

  // 16 calls of 62 READs of 1 MiB each (about 35 KB that ask for 1 GiB),
  // again whenever their replies are in; read slowly or never.
  void Amplifier(bool reads) {
    int fd = hostile::ConnectSmall(port_, reads ? 0 : 4096);
    Ready();
    if (fd < 0) return;
    Bytes batch;
    for (uint32_t i = 0; i < 16; ++i) {
      Bytes c = hostile::ManyReadsCall(i + 1, 62, 1u << 20);
      batch.insert(batch.end(), c.begin(), c.end());
    }
    RecordReader reader(kDefaultMaxRecord);
    int pending = 0;
    while (!stop_) {
      if (pending == 0) {
        if (!WriteAll(fd, batch).ok()) break;
        pending = 16;
      }
      if (!reads) {
        if (PeerClosed(fd)) {
          seen_->amplified_closed++;
          break;
        }
        Nap(stop_, 50);
        continue;
      }
      auto space = reader.WriteSpace(64 << 10);
      ssize_t n = recv(fd, space.data(), std::min<size_t>(space.size(), 64 << 10), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
      if (n > 0) {
        reader.Commit(static_cast<size_t>(n));
        ByteView rec;
        while (true) {
          auto got = reader.Next(&rec);
          if (!got.ok() || !*got) break;
          --pending;
          seen_->amplified_replies++;
          ReplyHeader h;
          uint32_t status = 0;
          if (!DecodeReplyHeader(rec, &h).ok() || rec.size() > kDefaultMaxReply + 256 ||
              !XdrDecoder(rec.subspan(h.body_offset)).GetU32(&status, "status").ok() ||
              status != kNfs4ErrRepTooBig) {
            seen_->amplified_wrong++;
          }
        }
      }
      usleep(10000);  // about 6 MB/s
    }
    close(fd);
  }

  // READs of 1 MiB as fast as the socket takes them; never a reply read.
  void NonReader() {
    int fd = hostile::ConnectSmall(port_, 4096);
    Ready();
    if (fd < 0) return;
    const Bytes call = hostile::SysCall(1, NfsOp::kRead, 1u << 20);
    while (!stop_) {
      if (PeerClosed(fd)) {
        seen_->nonreader_closed++;
        break;
      }
      if (!hostile::SendSome(fd, call)) Nap(stop_, 20);
    }
    close(fd);
  }

  // Idle connections until the server's descriptors run out, held a while.
  void FdFlood() {
    for (int i = 0; i < 500 && ready_ < kAttackers - 1 && !stop_; ++i) usleep(10000);
    Nap(stop_, 300);
    std::vector<int> held;
    for (int i = 0; i < fd_limit_ + 100 && !stop_; ++i) {
      int fd = hostile::ConnectWithin(port_, 300);
      if (fd >= 0) held.push_back(fd);
    }
    Nap(stop_, 300);
    for (int fd : held) {
      if (PeerClosed(fd)) {
        seen_->flood_refused++;
      } else {
        seen_->flood_held++;
      }
    }
    Nap(stop_, 3000);
    for (int fd : held) close(fd);
  }

  // One captured INIT replayed, then more fresh contexts than the table
  // holds, all over one connection made before the descriptors ran out.
  void InitFlood() {
    int fd = hostile::ConnectWithin(port_, 2000);
    Ready();
    if (fd < 0) return;
    const std::string ccache = secmode::testing::SharedRealm()->ccache();
    Bytes init;
    auto first = hostile::EstablishOver(fd, ccache, &init);
    if (!first.ok()) {
      seen_->init_error = first.status().ToString();
      close(fd);
      return;
    }
    for (int i = 0; i < 1000 && !stop_; ++i) {
      int64_t major = hostile::ReplayInit(fd, init);
      seen_->replays++;
      if (major == 0) seen_->replays_accepted++;
    }
    for (int i = 0; i < 2 * max_contexts_ + 100 && !stop_; ++i) {
      auto ctx = hostile::EstablishOver(fd, ccache);
      (ctx.ok() ? seen_->contexts_made : seen_->contexts_failed)++;
      if (!ctx.ok() && seen_->init_error.empty()) seen_->init_error = ctx.status().ToString();
    }
    close(fd);
  }

  // A mark announcing 1 MiB, 100 bytes, then a byte now and then.
  void Slowloris(int n) {
    Bytes head;
    AppendRecordMark(1u << 20, &head);
    head.resize(head.size() + 100, 0x41);
    std::vector<int> fds;
    for (int i = 0; i < n && !stop_; ++i) {
      int fd = hostile::ConnectWithin(port_, 3000);
      if (fd < 0) continue;
      if (WriteAll(fd, head).ok()) fds.push_back(fd);
    }
    seen_->slow = static_cast<int>(fds.size());
    Ready();
    std::vector<bool> closed(fds.size(), false);
    int open = static_cast<int>(fds.size());
    while (!stop_ && open > 0) {
      Nap(stop_, 300);
      for (size_t i = 0; i < fds.size(); ++i) {
        if (closed[i]) continue;
        uint8_t b = 0x41;
        if (PeerClosed(fds[i]) || send(fds[i], &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
          closed[i] = true;
          --open;
          seen_->slow_closed++;
        }
      }
    }
    for (int fd : fds) close(fd);
  }

  // One 1 MiB READ each, then idle until the attack ends.
  void IdleAfterBig(int n) {
    const Bytes call = hostile::SysCall(1, NfsOp::kRead, 1u << 20);
    std::vector<int> fds;
    for (int i = 0; i < n && !stop_; ++i) {
      int fd = hostile::ConnectWithin(port_, 1000);
      if (fd < 0) continue;
      fds.push_back(fd);
      if (WriteAll(fd, call).ok() && hostile::RecordStream(fd).Next().size() > (1u << 20)) {
        seen_->idle_big++;
      }
    }
    Ready();
    while (!stop_) Nap(stop_, 100);
    for (int fd : fds) close(fd);
  }

  // A whole WRITE call and half of the next, then a reset.
  void Resets() {
    const Bytes call = hostile::SysCall(1, NfsOp::kWrite, 65536);
    Ready();
    while (!stop_) {
      int fd = hostile::ConnectWithin(port_, 300);
      if (fd >= 0) {
        (void)WriteAll(fd, call);
        (void)WriteAll(fd, ByteView(call).subspan(0, call.size() / 2));
        hostile::ResetAndClose(fd);
        seen_->resets++;
      }
      Nap(stop_, 20);
    }
  }

  // What held before must keep holding: 2,000 random records (dropped), one
  // record of 100,000 empty fragments and a GETATTR, which is answered.
  void Garbage() {
    int fd = hostile::ConnectWithin(port_, 2000);
    Ready();
    if (fd < 0) return;
    std::mt19937 rng(11);
    Bytes stream;
    for (int i = 0; i < 2000; ++i) {
      Bytes body(8 + rng() % 400);
      for (auto& b : body) b = static_cast<uint8_t>(rng());
      Bytes framed;
      FrameRecord(body, &framed);
      stream.insert(stream.end(), framed.begin(), framed.end());
    }
    // Fragments of nothing, not the last: as many as a record may have
    // with the call's own (more would be a broken stream).
    const Bytes empty = {0, 0, 0, 0};
    for (size_t i = 0; i + 1 < kMaxFragments; ++i) {
      stream.insert(stream.end(), empty.begin(), empty.end());
    }
    const Bytes getattr = hostile::SysCall(4242);
    stream.insert(stream.end(), getattr.begin(), getattr.end());
    if (WriteAll(fd, stream).ok()) {
      Bytes reply = hostile::RecordStream(fd).Next();
      ReplyHeader h;
      if (!reply.empty() && DecodeReplyHeader(reply, &h).ok() && h.xid == 4242) {
        seen_->garbage_answered++;
      }
    }
    close(fd);
  }

  static constexpr int kAttackers = 11;  // threads Start runs
  uint16_t port_;
  Seen* seen_;
  int fd_limit_, max_contexts_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ready_{0};
  std::vector<std::thread> threads_;
};

}  // namespace secmode::rpc::stress

#endif  // SECMODE_TESTS_RPC_STRESS_CLIENTS_H_
