#include "smb/load.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/latency.h"
#include "common/machine.h"
#include "smb/message.h"

namespace secmode::smb {

using common::Bytes;
using common::Result;
using common::Status;

namespace {

// One channel of one session (channel 0: the session's own connection).
struct Connection {
  int session = 0, channel = 0;
  std::unique_ptr<SmbClient> client;
  FileId file;
  common::LatencySamples latency;
  uint64_t ops = 0, bytes = 0, errors = 0;
  std::string first_error;
  Status failure = Status::Ok();
};

// The file region a channel's requests cycle over: twice what is in flight,
// at least 1 MiB, at most 64 MiB (memory: the read region is written from
// one buffer first), never less than one request.
uint64_t Region(const SmbLoadOptions& o) {
  const uint64_t twice = uint64_t{o.size} * static_cast<uint64_t>(o.outstanding) * 2;
  return std::max<uint64_t>(std::clamp<uint64_t>(twice, 1 << 20, 64 << 20), o.size);
}

// Connects channel c->channel of session c->session (binding it to
// `session` unless it is channel 0) and opens its file.
Status SetUp(const SmbLoadOptions& o, const SmbClientConfig& config, const SmbConnector& connect,
             const SmbClient* session, int index, Connection* c) {
  SECMODE_ASSIGN_OR_RETURN(common::Fd fd, connect());
  if (session == nullptr) {
    SECMODE_ASSIGN_OR_RETURN(c->client, SmbClient::Connect(std::move(fd), config));
  } else {
    SECMODE_ASSIGN_OR_RETURN(
        c->client, SmbClient::Bind(std::move(fd), *session, static_cast<uint32_t>(c->channel)));
  }
  SmbClient& s = *c->client;
  if (o.op != SmbOp::kMetadata && (o.size > s.max_read_size() || o.size > s.max_write_size())) {
    return Status::InvalidArgument("--size " + N(o.size) + " is above the server's MaxReadSize " +
                                   N(s.max_read_size()) + " / MaxWriteSize " +
                                   N(s.max_write_size()));
  }
  const std::string name =
      "secmode-smb-load-" + std::to_string(getpid()) + "-" + std::to_string(index) + ".dat";
  SECMODE_ASSIGN_OR_RETURN(c->file, s.Open(name, /*delete_on_close=*/true));
  if (o.op == SmbOp::kRead) {
    // The region the reads cycle over, written once.
    const Bytes data = common::PatternBytes(Region(o), static_cast<uint8_t>(index));
    SECMODE_RETURN_IF_ERROR(s.Write(c->file, 0, data).Annotate("writing the file to read"));
  }
  return Status::Ok();
}

// The measured time: from the moment RunSmbLoad's first readings start to
// the moment its last end (kNotYet until then), and whether the channels
// are to stop sending (once the last readings are taken). Every reading
// (the server's threads, this process's CPU, the machine's) lies within it,
// and so does every counted request: one window for all of them, however
// late the reader wakes on a busy machine.
struct Window {
  static constexpr uint64_t kNotYet = UINT64_MAX;
  std::atomic<uint64_t> from{kNotYet}, to{kNotYet};
  std::atomic<bool> stop{false};
};

void Drive(const SmbLoadOptions& o, int timeout_ms, const Window& w, Connection* c) {
  SmbClient& s = *c->client;
  const Bytes data = o.op == SmbOp::kWrite ? common::PatternBytes(o.size, 0x5a) : Bytes();
  const uint16_t charge = o.op == SmbOp::kMetadata ? 1 : SmbClient::ChargeFor(o.size);
  const uint64_t slots = Region(o) / std::max<uint32_t>(o.size, 1);
  uint64_t next_slot = 0;
  for (;;) {
    while (!w.stop.load() && s.in_flight() < static_cast<size_t>(o.outstanding) &&
           s.credits() >= charge) {
      const uint64_t offset = (next_slot++ % slots) * o.size;
      Result<uint64_t> id = o.op == SmbOp::kRead    ? s.StartRead(c->file, offset, o.size)
                            : o.op == SmbOp::kWrite ? s.StartWrite(c->file, offset, data)
                                                    : s.StartQueryInfo(c->file);
      if (!id.ok()) {
        c->failure = id.status();
        return;
      }
    }
    if (s.in_flight() == 0) {
      if (!w.stop.load()) {
        c->failure = Status::Exhausted("credit starvation: the server granted " + N(s.credits()) +
                                       " credits, a request needs " + N(charge));
      }
      return;
    }
    auto done = s.Receive(common::Deadline::AfterMs(timeout_ms));
    if (!done.ok()) {
      c->failure = done.status();
      return;
    }
    const uint64_t t = common::NowNs();
    const uint64_t started = done->sent_ns;
    const uint64_t from = w.from.load(), to = w.to.load();
    const Status ok = SmbClient::Check(*done, o.op == SmbOp::kMetadata ? 0 : o.size);
    if (!ok.ok()) {
      if (c->errors++ == 0) c->first_error = ok.ToString();
    } else if (t >= from && t <= to) {
      // Throughput counts what completed in the measured time; latency
      // only requests that were also sent in it (none carries warm-up
      // queueing).
      ++c->ops;
      if (o.op != SmbOp::kMetadata) c->bytes += o.size;
      if (started >= from) c->latency.Add(t - started);
    }
  }
}

}  // namespace

Result<SmbOp> ParseSmbOp(const std::string& name) {
  if (name == "read") return SmbOp::kRead;
  if (name == "write") return SmbOp::kWrite;
  if (name == "metadata" || name == "getattr") return SmbOp::kMetadata;
  return Status::InvalidArgument("unknown SMB operation '" + name +
                                 "' (known: read, write, metadata)");
}

const char* SmbOpName(SmbOp op) {
  switch (op) {
    case SmbOp::kRead: return "read";
    case SmbOp::kWrite: return "write";
    case SmbOp::kMetadata: return "metadata";
  }
  return "?";
}

Result<SmbLoadReport> RunSmbLoad(const SmbLoadOptions& o, const SmbClientConfig& config,
                                 const SmbConnector& connect,
                                 std::optional<SmbLoadReport>* partial) {
  if (o.connections < 1 || o.connections > 256) {
    return Status::InvalidArgument("connections must be 1 to 256, not " +
                                   std::to_string(o.connections));
  }
  if (o.channels < 1 || o.channels > 32) {
    return Status::InvalidArgument("channels must be 1 to 32, not " + std::to_string(o.channels));
  }
  if (o.connections * o.channels > 256) {
    return Status::InvalidArgument(
        "connections x channels must be at most 256 (a thread and a "
        "file region each), not " +
        std::to_string(o.connections * o.channels));
  }
  if (o.outstanding < 1 || o.outstanding > 1024) {
    return Status::InvalidArgument("outstanding requests must be 1 to 1024, not " +
                                   std::to_string(o.outstanding));
  }
  if (!(o.seconds > 0) || !std::isfinite(o.seconds) || o.seconds > 86400) {
    return Status::InvalidArgument("seconds must be above 0 and at most a day");
  }
  if (!(o.warmup_seconds >= 0) || o.warmup_seconds > 3600) {
    return Status::InvalidArgument("the warm-up must be 0 to 3600 seconds");
  }
  if (o.op != SmbOp::kMetadata && (o.size < 1 || o.size > (8u << 20))) {
    return Status::InvalidArgument("size must be 1 byte to 8 MiB, not " + N(o.size));
  }
  if (o.round_trip_us > 10000000) {
    return Status::InvalidArgument("the emulated round trip must be at most 10 s, not " +
                                   N(o.round_trip_us) + " us");
  }
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(config.mode));

  std::vector<Connection> conns(static_cast<size_t>(o.connections * o.channels));
  for (size_t i = 0; i < conns.size(); ++i) {
    Connection& c = conns[i];
    c.session = static_cast<int>(i) / o.channels;
    c.channel = static_cast<int>(i) % o.channels;
    const SmbClient* session = c.channel == 0 ? nullptr : conns[i - c.channel].client.get();
    SECMODE_RETURN_IF_ERROR(SetUp(o, config, connect, session, static_cast<int>(i), &c)
                                .Annotate("session " + std::to_string(c.session + 1) + " of " +
                                          std::to_string(o.connections) + ", channel " +
                                          std::to_string(c.channel + 1) + " of " +
                                          std::to_string(o.channels)));
  }
  // The emulated round trip from here on: the set-up went at once.
  for (Connection& c : conns) {
    SECMODE_RETURN_IF_ERROR(c.client->HoldRequests(uint64_t{o.round_trip_us} * 1000));
  }

  const uint64_t start = common::NowNs() + 1000000;
  const uint64_t warm_end = start + static_cast<uint64_t>(o.warmup_seconds * 1e9);
  const uint64_t end = warm_end + static_cast<uint64_t>(o.seconds * 1e9);
  Window window;
  std::vector<std::thread> threads;
  for (Connection& c : conns) {
    threads.emplace_back([&o, &config, &window, start, &c] {
      std::this_thread::sleep_until(common::SteadyAt(start));
      // A response comes no sooner than the emulated round trip.
      Drive(o, config.timeout_ms + static_cast<int>(o.round_trip_us / 1000), window, &c);
    });
  }
  std::this_thread::sleep_until(common::SteadyAt(warm_end));
  // The server's threads are read outside this process's and the machine's
  // readings, so that reading /proc is not counted as the client's CPU.
  window.from.store(common::NowNs());
  std::vector<common::TaskCpu> server0;
  if (o.server_threads) server0 = o.server_threads();
  const uint64_t cpu0 = common::ProcessCpuNs();
  const common::CpuTimes machine0 = common::ReadCpuTimes();
  std::this_thread::sleep_until(common::SteadyAt(end));
  const uint64_t cpu1 = common::ProcessCpuNs();
  const common::CpuTimes machine1 = common::ReadCpuTimes();
  std::vector<common::TaskCpu> server1;
  if (o.server_threads) server1 = o.server_threads();
  window.to.store(common::NowNs());
  window.stop.store(true);
  for (std::thread& t : threads) t.join();

  SmbLoadReport r;
  r.mode = SmbModeName(config.mode);
  r.options = o;
  r.seconds = static_cast<double>(window.to.load() - window.from.load()) / 1e9;
  r.client_cpu_seconds = static_cast<double>(cpu1 - cpu0) / 1e9;
  r.idle_fraction = common::IdleFraction(machine0, machine1);
  r.steal_fraction = common::StealFraction(machine0, machine1);
  if (!server0.empty() && !server1.empty()) {
    // The session's thread: a process's main thread (its worker threads
    // read and write the files) of the name given.
    const common::TaskCpuSpent spent =
        common::SpentBetween(server0, server1, [&o](const common::TaskCpu& t) {
          return t.tid == t.pid && t.name.rfind(o.server_session_thread, 0) == 0;
        });
    r.server_cpu_seconds = spent.seconds;
    if (!spent.busiest.empty()) {
      r.server_session_thread_cpu_seconds = spent.busiest_seconds;
      r.server_session_thread_system_seconds = spent.busiest_system_seconds;
      r.server_session_thread = spent.busiest;
    }
  }
  common::LatencySamples all;
  Status failure = Status::Ok();
  for (size_t i = 0; i < conns.size(); ++i) {
    Connection& c = conns[i];
    r.dialect = c.client->dialect();
    r.ops += c.ops;
    r.ops_per_connection.push_back(c.ops);
    r.bytes += c.bytes;
    r.errors += c.errors;
    if (r.first_error.empty()) r.first_error = c.first_error;
    all.Merge(c.latency);
    const std::string which =
        "session " + std::to_string(c.session + 1) + " channel " + std::to_string(c.channel + 1);
    if (failure.ok() && !c.failure.ok()) failure = c.failure.Annotate(which);
    // Close the file (the server deletes it); a broken connection has
    // nothing to close.
    if (c.failure.ok()) {
      const Status closed = c.client->Close(c.file);
      if (!closed.ok() && failure.ok()) failure = closed.Annotate("closing the file of " + which);
    }
    const SmbClient::Counters& k = c.client->counters();
    r.counters.requests += k.requests;
    r.counters.signed_requests += k.signed_requests;
    r.counters.encrypted_requests += k.encrypted_requests;
    r.counters.responses_verified += k.responses_verified;
    r.counters.responses_decrypted += k.responses_decrypted;
    r.counters.interim_responses += k.interim_responses;
  }
  // Then each session ends on its own connection (LOGOFF ends its
  // channels too).
  for (Connection& c : conns) {
    if (c.channel != 0 || !c.failure.ok()) continue;
    const Status ended = c.client->Logoff();
    if (!ended.ok() && failure.ok()) {
      failure = ended.Annotate("ending session " + std::to_string(c.session + 1));
    }
  }
  r.ops_per_s = static_cast<double>(r.ops) / r.seconds;
  r.mb_per_s = static_cast<double>(r.bytes) / r.seconds / 1e6;
  if (all.count() > 0) {
    r.p50_us = all.Percentile(0.50) / 1000;
    r.p90_us = all.Percentile(0.90) / 1000;
    r.p99_us = all.Percentile(0.99) / 1000;
    r.mean_us = all.Mean() / 1000;
  }
  if (!failure.ok()) {
    if (partial) *partial = r;
    return failure;
  }
  return r;
}

}  // namespace secmode::smb
