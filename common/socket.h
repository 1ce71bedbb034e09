// Small POSIX TCP helpers: listen, connect (IPv4/IPv6 by name, with a
// deadline), wait for a socket with a deadline, write all, with errors naming
// the call, the address, errno and, for a deadline, what was waited for.
#ifndef SECMODE_COMMON_SOCKET_H_
#define SECMODE_COMMON_SOCKET_H_

#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::common {

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& o) noexcept : fd_(o.Release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = o.Release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int Release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void Reset();

 private:
  int fd_ = -1;
};

// A time by which a blocking step must be done, on the common::NowNs()
// clock. The default is no deadline. A step's own timeout and the deadline
// of the run it belongs to combine with Earlier().
struct Deadline {
  uint64_t at_ns = 0;  // 0 = none

  // `ms` from now; ms <= 0 means no deadline.
  static Deadline AfterMs(int64_t ms);
  static Deadline Earlier(Deadline a, Deadline b);
  bool none() const { return at_ns == 0; }
  bool Passed() const;
  // For poll(2): -1 without a deadline, else the milliseconds left (rounded
  // up, 0 once passed).
  int PollMs() const;
};

// Listens on address:port (port 0 = any free one); returns the socket.
common::Result<Fd> Listen(const std::string& address, uint16_t port, int backlog = 128);
uint16_t LocalPort(int fd);
// Connects with TCP_NODELAY; the returned socket is blocking. With a
// deadline, a TCP handshake that has not completed by then (a dead host, a
// server whose listen queue is full) is an error naming the address and the
// time waited.
common::Result<Fd> Connect(const std::string& host, uint16_t port, Deadline deadline = {});
// Waits until `fd` is readable (POLLIN; also at end of stream or on an
// error) or, with `write`, writable, or the deadline passes: then an error
// "no <what> within N ms" (N the time waited). EINTR is retried.
common::Status WaitFor(int fd, bool write, Deadline deadline, const std::string& what);
void SetNoDelay(int fd);
// Writes every byte (retrying on EINTR / short writes).
common::Status WriteAll(int fd, common::ByteView data);
// Writes a then b with as few system calls as possible (mark + record).
common::Status WriteAll2(int fd, common::ByteView a, common::ByteView b);

// Sets SO_RCVTIMEO and SO_SNDTIMEO (0 = none): a blocking recv or send that
// waits that long fails with EAGAIN.
void SetTimeouts(int fd, uint64_t recv_ns, uint64_t send_ns);
// Writes as much of a then b as the socket takes now, without blocking
// (one sendmsg with MSG_DONTWAIT); returns the bytes written (0 when the
// socket's buffer is full), or an error naming errno (the peer is gone).
common::Result<size_t> SendNow2(int fd, common::ByteView a, common::ByteView b);
// Makes close() reset the connection (SO_LINGER 0): unsent data is dropped
// at once instead of waiting, perhaps for ever, for a peer that does not read.
void ResetOnClose(int fd);
// "address:port" of the peer ("?" when unknown), for log lines.
std::string PeerName(int fd);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_SOCKET_H_
