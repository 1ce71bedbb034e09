// `secmode smb-load`: the SMB load generator (smb/load.h) against a real
// SMB3 server over Kerberos: with --local a throwaway Samba AD DC
// (smb/samba_dc.h), or any server given by --host, --principal, --share and
// a ccache holding a ticket for it. Prints the run as JSON on stdout and
// one summary line on stderr; a run that fails part way still prints what
// it measured, with "failure" set, and exits 1.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli.h"
#include "common/format.h"
#include "harness/results.h"
#include "smb/load.h"
#include "smb/samba_dc.h"

namespace secmode::cli {

namespace {

struct SmbLoadArgs {
  smb::SmbLoadOptions o;
  std::string mode = "smb-enc-aes-128-gcm", op = "read";
  bool local = false;
  std::string host, principal, share, ccache;
  int port = 445;
  int timeout_ms = 10000;
  double round_trip_ms = 0;
};

}  // namespace

CLI::App* AddSmbLoadCommand(CLI::App& app) {
  auto a = std::make_shared<SmbLoadArgs>();
  CLI::App* cmd = app.add_subcommand(
      "smb-load",
      "Drive an SMB3 server over Kerberos in one smb-* mode (signed or encrypted per request as "
      "the mode says) and report ops/s, MB/s and latency percentiles");
  cmd->add_option("--mode", a->mode, smb::SmbModeNames() + " (default smb-enc-aes-128-gcm)");
  cmd->add_option("--op", a->op,
                  "read, write or metadata (QUERY_INFO, the SMB GETATTR) (default read)");
  cmd->add_option("--size", a->o.size, "READ/WRITE size in bytes, at most 8 MiB (default 4096)")
      ->check(CLI::Range(1u, 8u << 20));
  cmd->add_option("--outstanding", a->o.outstanding,
                  "Requests in flight on each channel (default 1)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--connections", a->o.connections,
                  "Sessions, each a Kerberos session on a TCP connection of its own (default 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--channels", a->o.channels,
                  "TCP connections per session: SMB3 multichannel, the extra ones bound to the "
                  "session (SMB 3.x modes; not smb-sign-hmac-sha256) (default 1)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--seconds", a->o.seconds, "Measured duration (default 2)")
      ->check(CLI::Range(0.001, 86400.0));
  cmd->add_option("--warmup", a->o.warmup_seconds,
                  "Time before the measured duration, in seconds (default 0.2)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--round-trip-ms", a->round_trip_ms,
                  "Hold every request this long before it is written: a round trip emulated on "
                  "the client (for a lab link where the kernel has no netem; TCP does not see "
                  "it); the latencies include it (default 0)")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--timeout-ms", a->timeout_ms,
                  "Give up on a request (and the run) after this long (default 10000)")
      ->check(CLI::Range(1, 3600000));
  cmd->add_flag("--local", a->local,
                "Start a throwaway Samba AD DC in a network namespace and measure against it "
                "(root, Debian's samba, samba-ad-dc and samba-ad-provision)");
  cmd->add_option("--host", a->host, "The server (name or address) when not --local");
  cmd->add_option("--port", a->port, "Its SMB port (default 445)")->check(CLI::Range(1, 65535));
  cmd->add_option("--principal", a->principal,
                  "The server's Kerberos principal, e.g. cifs/fs1.example.com@EXAMPLE.COM");
  cmd->add_option("--share", a->share, "The share, e.g. \\\\fs1.example.com\\data");
  cmd->add_option("--ccache", a->ccache,
                  "A ccache holding your ticket for the server's principal (kinit; kvno "
                  "<principal>) (default KRB5CCNAME)");
  cmd->callback([a] {
    auto mode = smb::ParseSmbModeName(a->mode);
    if (!mode.ok()) Fail("smb-load", mode.status());
    auto op = smb::ParseSmbOp(a->op);
    if (!op.ok()) Fail("smb-load", op.status());
    smb::SmbLoadOptions o = a->o;
    o.op = *op;
    if (!std::isfinite(a->round_trip_ms)) {
      FailUsage("smb-load", "--round-trip-ms must be a number of ms");
    }
    o.round_trip_us = static_cast<uint32_t>(std::llround(a->round_trip_ms * 1000));
    smb::SmbClientConfig config;
    config.mode = *mode;
    config.timeout_ms = a->timeout_ms;
    std::unique_ptr<smb::SambaDc> dc;
    smb::SmbConnector connect;
    if (a->local) {
      if (!a->host.empty() || !a->principal.empty() || !a->share.empty()) {
        FailUsage("smb-load", "--local starts its own server: no --host, --principal or --share");
      }
      std::cerr << "starting a throwaway Samba AD DC ...\n";
      auto started = smb::SambaDc::Start();
      if (!started.ok()) Fail("smb-load", started.status().Annotate("--local"));
      dc = std::move(*started);
      config = dc->ClientConfig(*mode);
      config.timeout_ms = a->timeout_ms;
      connect = dc->Connector();
      dc->WatchThreads(&o);
    } else {
      if (a->host.empty() || a->principal.empty() || a->share.empty()) {
        FailUsage("smb-load", "give --local, or --host, --principal and --share");
      }
      const char* env = getenv("KRB5CCNAME");
      config.ccache = !a->ccache.empty() ? a->ccache : env ? env : "";
      if (config.ccache.empty()) {
        FailUsage("smb-load", "no ccache: give --ccache or set KRB5CCNAME (after kinit)");
      }
      config.service_principal = a->principal;
      config.unc = a->share;
      const std::string host = a->host;
      const uint16_t port = static_cast<uint16_t>(a->port);
      connect = [host, port] {
        return common::Connect(host, port, common::Deadline::AfterMs(5000));
      };
    }
    std::optional<smb::SmbLoadReport> partial;
    auto result = smb::RunSmbLoad(o, config, connect, &partial);
    if (dc) (void)dc->Stop();
    if (!result.ok() && !partial) Fail("smb-load", result.status());
    const smb::SmbLoadReport& r = result.ok() ? *result : *partial;
    nlohmann::json j = harness::SmbLoadReportJson(r);
    if (dc) j["server"] = "Samba " + dc->version() + " AD DC (throwaway, lab namespace)";
    if (!result.ok()) j["failure"] = result.status().ToString();
    std::cout << j.dump(2) << "\n";
    std::cerr << r.mode << " " << smb::SmbOpName(o.op)
              << (o.op == smb::SmbOp::kMetadata ? "" : " " + common::SizeLabel(o.size)) << ": "
              << common::Fmt("%.0f", r.ops_per_s) << " ops/s, " << common::Fmt("%.1f", r.mb_per_s)
              << " MB/s, p50 " << r.p50_us << " us, p99 " << r.p99_us << " us, " << r.errors
              << " errors\n";
    if (!result.ok()) Fail("smb-load", result.status());
  });
  return cmd;
}

}  // namespace secmode::cli
