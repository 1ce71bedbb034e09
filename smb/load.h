// RunSmbLoad: the SMB counterpart of rpc/load.h's nconnect load generator.
// `connections` Kerberos sessions (smb/client.h) in the chosen smb-* mode,
// each over `channels` TCP connections (SMB3 multichannel: the first
// connection sets the session up, the others are bound to it), each
// channel keeping `outstanding` requests in flight (pipelined, within the
// credits the server grants) on a file of its own, for a warm-up and then
// `seconds`.
//
// Operations: read (READ of `size` bytes from a region written first),
// write (WRITE of `size` bytes over a region), metadata (QUERY_INFO
// FileStandardInformation, the SMB counterpart of GETATTR). The region is
// size * outstanding * 2 per channel, within 1 to 64 MiB, so reads come from the
// server's page cache: the cost measured is the protocol's and the
// mode's, not the disk's. The files are opened delete-on-close: nothing is
// left on the server.
//
// Throughput counts the requests answered within the measured time (the
// span of the readings of CPU time: SmbLoadReport::seconds); every
// latency runs from the start of a request's signing or sealing to the
// check of its response (both ends' crypto included), for requests both
// sent and answered within it. A request the server refuses is counted as
// an error (the first one named); a broken connection ends the run with an
// error and what was measured.
//
// Thread safety: RunSmbLoad may be called from any thread; it runs one
// thread per connection.
#ifndef SECMODE_SMB_LOAD_H_
#define SECMODE_SMB_LOAD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/machine.h"
#include "common/socket.h"
#include "common/status.h"
#include "smb/client.h"

namespace secmode::smb {

enum class SmbOp { kRead, kWrite, kMetadata };
// "read", "write", "metadata" (or "getattr") -> SmbOp; the error lists them.
common::Result<SmbOp> ParseSmbOp(const std::string& name);
const char* SmbOpName(SmbOp op);

struct SmbLoadOptions {
  SmbOp op = SmbOp::kRead;
  uint32_t size = 4096;  // READ/WRITE bytes (not used by metadata)
  int connections = 1;   // sessions, each on a connection of its own
  int channels = 1;      // connections per session: 1 + channels bound to it (multichannel)
  int outstanding = 1;   // per channel
  double seconds = 2;
  double warmup_seconds = 0.2;
  // An emulated round trip (the lab: this kernel has no netem, Samba cannot
  // hold its responses): every request after the set-up (sessions, files,
  // the region to read) held this long before it goes on the wire
  // (SmbClient::HoldRequests), by a thread of each channel's own, whose CPU
  // counts as the client's. At most 10 s.
  uint32_t round_trip_us = 0;
  // When set, read at the measured time's start and end: the server's
  // threads (SambaDc::WatchThreads sets both), for the report's server_*
  // fields; the busiest main thread of a process whose name begins with
  // server_session_thread (e.g. "smbd") is taken for the thread that serves
  // the session.
  std::function<std::vector<common::TaskCpu>()> server_threads;
  std::string server_session_thread;
};

struct SmbLoadReport {
  std::string mode;
  SmbLoadOptions options;
  uint16_t dialect = 0;
  // The measured time: from the start of the first readings (the server's
  // threads, this process's CPU, the machine's) to the end of the last,
  // about options.seconds (a busy machine wakes the reader late at either
  // end); the requests counted completed within it.
  double seconds = 0;
  uint64_t ops = 0, bytes = 0, errors = 0;
  std::string first_error;
  double ops_per_s = 0, mb_per_s = 0;  // MB = 10^6 bytes
  // Answered requests of each connection (session by session, its channels
  // in order), so a channel that carried nothing shows.
  std::vector<uint64_t> ops_per_connection;
  uint64_t p50_us = 0, p90_us = 0, p99_us = 0;
  double mean_us = 0;
  // Summed over the connections (their whole life: set-up included).
  SmbClient::Counters counters;
  double client_cpu_seconds = 0;  // this process's CPU during the measured time
  // The machine's share of CPU time idle and taken by the hypervisor during
  // the measured time (common/machine.h); -1 where unknown. Client and
  // server on one machine: the busy rest is both ends and the kernel.
  double idle_fraction = -1, steal_fraction = -1;
  // With server_threads: the server's threads' CPU during the measured
  // time, in all and of the thread serving the session (the busiest of
  // server_session_thread's name: Samba serves a session on one smbd
  // thread), and how much of that thread's was in the kernel (its system
  // calls, and softirq work the kernel ran on it, e.g. the peer's TCP
  // receive over a veth pair; counted in clock ticks, so coarse over a
  // short run, where the CPU times are the scheduler's ns: TaskCpu); -1
  // without, or when no thread had the name.
  double server_cpu_seconds = -1;
  double server_session_thread_cpu_seconds = -1, server_session_thread_system_seconds = -1;
  std::string server_session_thread;  // "<comm> (tid N)"
};

// Opens one TCP connection to the server (the lab's client namespace, a
// host's port ...).
using SmbConnector = std::function<common::Result<common::Fd>()>;

// `client` gives the mode, the tickets, the server's principal and share.
// On failure after measuring started, *partial (when given) holds what was
// measured.
common::Result<SmbLoadReport> RunSmbLoad(const SmbLoadOptions& options,
                                         const SmbClientConfig& client, const SmbConnector& connect,
                                         std::optional<SmbLoadReport>* partial = nullptr);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_LOAD_H_
