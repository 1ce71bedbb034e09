#include "common/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/clock.h"

namespace secmode::common {

using common::Result;
using common::Status;

Deadline Deadline::AfterMs(int64_t ms) {
  if (ms <= 0) return {};
  return {common::NowNs() + static_cast<uint64_t>(ms) * 1000000ull};
}

Deadline Deadline::Earlier(Deadline a, Deadline b) {
  if (a.none()) return b;
  if (b.none()) return a;
  return a.at_ns < b.at_ns ? a : b;
}

bool Deadline::Passed() const { return !none() && common::NowNs() >= at_ns; }

int Deadline::PollMs() const {
  if (none()) return -1;
  const uint64_t now = common::NowNs();
  if (now >= at_ns) return 0;
  const uint64_t ms = (at_ns - now + 999999) / 1000000;
  return ms > 1u << 30 ? 1 << 30 : static_cast<int>(ms);
}

void Fd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

namespace {

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

Result<addrinfo*> Resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string p = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), p.c_str(), &hints, &res);
  if (rc != 0) {
    return Status::InvalidArgument("cannot resolve '" + host + "': " + gai_strerror(rc));
  }
  return res;
}

}  // namespace

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Result<Fd> Listen(const std::string& address, uint16_t port, int backlog) {
  SECMODE_ASSIGN_OR_RETURN(addrinfo * res, Resolve(address, port, true));
  Status last = Status::Unavailable("no address for " + address);
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (fd.get() < 0) {
      last = Errno("socket");
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = Errno("bind " + address + ":" + std::to_string(port));
      continue;
    }
    if (listen(fd.get(), backlog) != 0) {
      last = Errno("listen " + address + ":" + std::to_string(port));
      continue;
    }
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return last;
}

uint16_t LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

Status WaitFor(int fd, bool write, Deadline deadline, const std::string& what) {
  const uint64_t t0 = common::NowNs();
  while (true) {
    pollfd p{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    int rc = poll(&p, 1, deadline.PollMs());
    if (rc > 0) return Status::Ok();
    if (rc < 0 && errno != EINTR) return Errno("poll (waiting for " + what + ")");
    if (rc == 0 || deadline.Passed()) {
      return Status::Unavailable("no " + what + " within " +
                                 std::to_string((common::NowNs() - t0) / 1000000) + " ms");
    }
  }
}

Result<Fd> Connect(const std::string& host, uint16_t port, Deadline deadline) {
  SECMODE_ASSIGN_OR_RETURN(addrinfo * res, Resolve(host, port, false));
  const std::string where = host + ":" + std::to_string(port);
  Status last = Status::Unavailable("no address for " + host);
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    // Non-blocking while the handshake runs, so the deadline holds; the
    // socket is handed over blocking.
    Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (fd.get() < 0) {
      last = Errno("socket");
      continue;
    }
    if (connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS && errno != EINTR) {
        last = Errno("connect " + where);
        continue;
      }
      Status ready =
          WaitFor(fd.get(), true, deadline, "answer from " + where + " to connect (TCP handshake)");
      if (!ready.ok()) {
        last = ready;
        if (deadline.Passed()) break;  // no time left for another address
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last = Status::IoError("connect " + where + ": " + std::strerror(err));
        continue;
      }
    }
    int flags = fcntl(fd.get(), F_GETFL);
    if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      last = Errno("fcntl(" + where + ")");
      continue;
    }
    SetNoDelay(fd.get());
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return last;
}

Status WriteAll(int fd, common::ByteView data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("send");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status WriteAll2(int fd, common::ByteView a, common::ByteView b) {
  size_t done = 0, total = a.size() + b.size();
  while (done < total) {
    iovec iov[2];
    int n = 0;
    if (done < a.size()) {
      iov[n++] = {const_cast<uint8_t*>(a.data()) + done, a.size() - done};
      iov[n++] = {const_cast<uint8_t*>(b.data()), b.size()};
    } else {
      iov[n++] = {const_cast<uint8_t*>(b.data()) + (done - a.size()), total - done};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("sendmsg");
    }
    done += static_cast<size_t>(w);
  }
  return Status::Ok();
}

void SetTimeouts(int fd, uint64_t recv_ns, uint64_t send_ns) {
  auto set = [fd](int opt, uint64_t ns) {
    timeval tv{static_cast<time_t>(ns / 1000000000ull),
               static_cast<suseconds_t>((ns % 1000000000ull) / 1000)};
    if (ns > 0 && tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
    setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
  };
  set(SO_RCVTIMEO, recv_ns);
  set(SO_SNDTIMEO, send_ns);
}

Result<size_t> SendNow2(int fd, common::ByteView a, common::ByteView b) {
  iovec iov[2];
  int n = 0;
  if (!a.empty()) iov[n++] = {const_cast<uint8_t*>(a.data()), a.size()};
  if (!b.empty()) iov[n++] = {const_cast<uint8_t*>(b.data()), b.size()};
  if (n == 0) return size_t{0};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(n);
  while (true) {
    ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w >= 0) return static_cast<size_t>(w);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return Errno("sendmsg");
  }
}

void ResetOnClose(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

std::string PeerName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  char out[INET6_ADDRSTRLEN + 16];
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    snprintf(out, sizeof out, "%s:%u", host, unsigned{ntohs(in->sin_port)});
    return out;
  }
  if (ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    snprintf(out, sizeof out, "[%s]:%u", host, unsigned{ntohs(in6->sin6_port)});
    return out;
  }
  return "?";
}

}  // namespace secmode::common
