// Test helpers for hostile and careless clients of the RPC server: calls
// that ask for far more than they send, raw sockets with small buffers,
// hard resets, and what /proc says about a server process (descriptors,
// resident memory). The tcp, serve-limits and stress tests share them.
#ifndef SECMODE_TESTS_RPC_HOSTILE_H_
#define SECMODE_TESTS_RPC_HOSTILE_H_

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/socket.h"
#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/xdr.h"

namespace secmode::rpc::hostile {

using common::Connect;
using common::Deadline;

// A loopback connection that gives up after `ms` (the server's backlog may
// be full): its descriptor, owned by the caller, or -1.
inline int ConnectWithin(uint16_t port, int ms) {
  auto fd = Connect("127.0.0.1", port, Deadline::AfterMs(ms));
  return fd.ok() ? fd->Release() : -1;
}

// An AUTH_SYS COMPOUND {SEQUENCE, PUTFH, READ x `reads`} of `count` bytes
// each, framed (record mark + call): about 2 KiB that ask for reads x count.
inline common::Bytes ManyReadsCall(uint32_t xid, int reads, uint32_t count) {
  common::Bytes one, args;
  NfsRequest r;
  r.op = NfsOp::kRead;
  r.count = count;
  EncodeCompoundArgs(r, &one);
  // EncodeCompoundArgs writes tag, minorversion, argarray length 3, then the
  // three ops; the READ op is the last 32 bytes (op, stateid 16, offset 8,
  // count 4 = 4 + 16 + 8 + 4). Repeat it.
  constexpr size_t kReadOp = 32;
  const size_t head = one.size() - kReadOp;
  args.assign(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(head));
  // argarray length sits after the empty tag (4) and minorversion (4).
  const uint32_t n = 2 + static_cast<uint32_t>(reads);
  args[8] = static_cast<uint8_t>(n >> 24);
  args[9] = static_cast<uint8_t>(n >> 16);
  args[10] = static_cast<uint8_t>(n >> 8);
  args[11] = static_cast<uint8_t>(n);
  for (int i = 0; i < reads; ++i) {
    args.insert(args.end(), one.end() - kReadOp, one.end());
  }
  auto auth = NewSysAuth(kNfsProgram, kNfsVersion);
  common::Bytes call, framed;
  uint32_t seq;
  (void)auth->EncodeCall(xid, kNfsProcCompound, args, &call, &seq);
  FrameRecord(call, &framed);
  return framed;
}

// A framed AUTH_SYS call of one operation (GETATTR, or READ/WRITE of `size`).
inline common::Bytes SysCall(uint32_t xid, NfsOp op = NfsOp::kGetattr, uint32_t size = 0) {
  common::Bytes args, call, framed;
  NfsRequest r;
  r.op = op;
  r.count = size;
  EncodeCompoundArgs(r, &args);
  auto auth = NewSysAuth(kNfsProgram, kNfsVersion);
  uint32_t seq;
  (void)auth->EncodeCall(xid, kNfsProcCompound, args, &call, &seq);
  FrameRecord(call, &framed);
  return framed;
}

// A blocking connection from `source` (an address of 127.0.0.0/8, bound
// before connect; nullptr: the kernel's choice) to the loopback server,
// with a small receive buffer if `rcvbuf` > 0; -1 on error.
inline int ConnectFrom(const char* source, uint16_t port, int rcvbuf = 0) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (source != nullptr) {
    // The port is picked at connect, by the whole four-tuple: thousands of
    // connections from one source address do not exhaust the ports.
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (inet_pton(AF_INET, source, &a.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd);
      return -1;
    }
  }
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A blocking loopback connection whose receive buffer is small (so a
// client that does not read pushes back on the server quickly); -1 on error.
inline int ConnectSmall(uint16_t port, int rcvbuf = 4096) {
  return ConnectFrom(nullptr, port, rcvbuf);
}

// Closes with a TCP reset (SO_LINGER 0) instead of a FIN.
inline void ResetAndClose(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

// Writes without blocking; false when the socket's buffer is full.
inline bool SendSome(int fd, common::ByteView data) {
  ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return n == static_cast<ssize_t>(data.size());
}

// Waits up to `ms` for the peer to close (recv returns 0 or an error),
// discarding whatever it sends; true if it closed.
inline bool WaitForClose(int fd, int ms) {
  timeval tv{0, 20000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  static thread_local uint8_t sink[1 << 16];
  for (int waited = 0; waited < ms;) {
    ssize_t n = recv(fd, sink, sizeof sink, 0);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
    if (n < 0) waited += 20;
  }
  return false;
}

// Reads reply records one after the other from a blocking socket.
class RecordStream {
 public:
  explicit RecordStream(int fd) : fd_(fd) {}
  // The next record, or empty at the end of the stream or on an error.
  common::Bytes Next() {
    while (true) {
      common::ByteView rec;
      auto n = reader_.Next(&rec);
      if (!n.ok()) return {};
      if (*n) return common::Bytes(rec.begin(), rec.end());
      auto space = reader_.WriteSpace(kReadChunk);
      ssize_t got = recv(fd_, space.data(), space.size(), 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return {};
      reader_.Commit(static_cast<size_t>(got));
    }
  }

 private:
  int fd_;
  RecordReader reader_;
};

// Establishes an RPCSEC_GSS context with INIT calls over connected socket
// `fd`; keeps the first INIT call (record without mark) in *init if given.
inline common::Result<std::shared_ptr<GssClientContext>> EstablishOver(
    int fd, const std::string& ccache, common::Bytes* init = nullptr) {
  GssClientConfig cfg;
  cfg.ccache = ccache;
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  return GssClientContext::Establish(cfg, [&](common::ByteView call) {
    if (init != nullptr && init->empty()) init->assign(call.begin(), call.end());
    return BlockingCall(fd, call);
  });
}

// Sends an INIT call again and returns the GSS major status of its reply
// (0 = a new context was made); -1 when there was no rpc_gss_init_res.
inline int64_t ReplayInit(int fd, common::ByteView init) {
  auto reply = BlockingCall(fd, init);
  if (!reply.ok()) return -1;
  ReplyHeader h;
  if (!DecodeReplyHeader(*reply, &h).ok() || h.accept_stat != kSuccess) return -1;
  XdrDecoder d(common::ByteView(*reply).subspan(h.body_offset));
  common::ByteView handle;
  uint32_t major;
  if (!d.GetOpaque(&handle, 64, "handle").ok() || !d.GetU32(&major, "major").ok()) return -1;
  return major;
}

// Open descriptors of process `pid` ("self" works too), anonymous pipes
// left out: no server under test holds one, and in the asan+ubsan build
// any thread's first virtual call on a type makes UBSan's vptr check probe
// memory through a pipe it opens and closes at once (sanitizer_common's
// IsAccessibleMemoryRange), so a count taken as a server thread starts
// could include it.
inline int OpenFds(const std::string& pid = "self") {
  const std::string dir = "/proc/" + pid + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  const std::string own = pid == "self" ? std::to_string(dirfd(d)) : "";
  int n = 0;
  char target[64];
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || e->d_name == own) continue;
    const std::string link = dir + "/" + e->d_name;
    const ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
    if (len < 0 && errno == ENOENT) continue;  // closed since readdir saw it
    if (len <= 0) {
      closedir(d);
      return -1;  // cannot tell (no right to read another process's links)
    }
    if (std::string_view(target, static_cast<size_t>(len)).substr(0, 5) == "pipe:") continue;
    ++n;
  }
  closedir(d);
  return n;
}

// A "VmRSS:" style field of /proc/PID/status in KiB (-1 when absent).
inline long StatusKb(const std::string& pid, const std::string& field) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Threads of process `pid`.
inline long Threads(const std::string& pid) { return StatusKb(pid, "Threads"); }

}  // namespace secmode::rpc::hostile

#endif  // SECMODE_TESTS_RPC_HOSTILE_H_
