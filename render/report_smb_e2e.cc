// Report part of section "smb-e2e": every smb-* mode end to end against a
// throwaway Samba AD DC, medians and ranges over the repetitions, each
// row's change against smb-plain (paired by repetition) beside the
// published Azure NetApp Files SMB figures, and how much of each mode's
// extra CPU per operation its crypto explains (suite/smb_e2e_summary.h).
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::Fmt;
using common::SizeLabel;

namespace {

// What Azure NetApp Files published for SMB (Windows clients against ANF SMB
// volumes, against the same volume unsigned and unencrypted), set beside the
// rows of the same kind of change. Source: the project's design notes
// (../shared/DESIGN.md, "Published numbers the project must be able to
// explain", vs sec=sys, single client, single volume), which name no
// document or URL. `secmode predict --explain` sets the same figures beside
// the legs (sim/explain.cc).
struct PublishedSmbChange {
  const char* mode_prefix;  // the modes it applies to
  const char* ops[2];       // the operations it applies to (nullptr: none more)
  uint64_t min_size;        // the smallest size it applies to
  int channels;             // the channels it applies to; 0: any
  const char* change;
};
constexpr PublishedSmbChange kAnfSmbChanges[] = {
    // Signing cut one connection's sequential read from 875 to about 250
    // MiB/s, client CPU bound.
    {"smb-sign-", {"read", nullptr}, 1u << 20, 1, "-71% (875 to about 250 MiB/s)"},
    // Encryption costs 10-15% on read and write, 5% on metadata-heavy work.
    {"smb-enc-", {"read", "write"}, 0, 0, "-10 to -15%"},
    {"smb-enc-", {"metadata", nullptr}, 0, 0, "about -5%"},
};

// The published change of the first kAnfSmbChanges entry that applies, or "-".
std::string Published(const std::string& mode, const std::string& op, uint64_t size, int channels) {
  for (const PublishedSmbChange& p : kAnfSmbChanges) {
    const bool op_applies = (p.ops[0] && op == p.ops[0]) || (p.ops[1] && op == p.ops[1]);
    if (mode.rfind(p.mode_prefix, 0) == 0 && op_applies && size >= p.min_size &&
        (p.channels == 0 || channels == p.channels)) {
      return p.change;
    }
  }
  return "-";
}

std::string Percent(double fraction) { return Fmt("%+.0f%%", 100.0 * fraction); }

std::string Size(const nlohmann::json& r) {
  return r.value("op", "") == "metadata" ? std::string("-")
                                         : SizeLabel(r.value("size", uint64_t{0}));
}

}  // namespace

void RenderSmbE2eSection(const harness::RunResults& results, const nlohmann::json& section,
                         Rendered& out) {
  std::ostringstream md;
  md << "\n## SMB3 end to end against Samba\n\n";
  if (section.contains("not_run")) {
    md << "Not run: " << MdText(section.value("not_run", "")) << ".\n";
    out.report_md.append(md.str());
    return;
  }
  const nlohmann::json rows = section.value("rows", nlohmann::json::array());
  // The repetitions asked for; a row cut short by a signal has fewer (its own
  // `repetitions`).
  const int reps = section.value("repetitions", 1);
  md << "secmode's SMB2/3 client (Kerberos through SPNEGO, every request signed or sealed as the "
        "mode says, every response checked) against "
     << MdText(section.value("server", std::string("Samba"))) << ", "
     << MdText(section.value("transport", std::string("TCP"))) << "; "
     << section.value("seconds", 0.0) << " s per run after " << section.value("warmup_seconds", 0.0)
     << " s of warm-up, one session; `channels` > 1: SMB3 multichannel (connections bound to "
        "the session). Client and server share this machine's cores, so both ends' crypto is in "
        "every figure. Each case ran "
     << reps << (reps == 1 ? " time" : " times")
     << " (`runs`: fewer where a signal cut the section short), every mode one after the other "
        "each time; figures are medians over the runs "
        "[lowest, highest]. The change is against smb-plain's run of the same operation, size, "
        "channels and repetition (MB/s; ops/s for metadata), median [lowest, highest] over the "
        "repetitions. Published: Azure NetApp Files with Windows clients, for the same kind of "
        "change.\n\n"
     << "| mode | op | size | channels | outstanding | dialect | runs | ops/s | MB/s | p50 us | "
        "p99 us | vs smb-plain | published |\n"
        "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  auto range = [](const nlohmann::json& r, const char* key, const char* fmt) {
    std::string s = Fmt(fmt, r.value(key, 0.0));
    const nlohmann::json span = r.value(std::string(key) + "_range", nlohmann::json::array());
    if (r.value("repetitions", 1) > 1 && span.size() == 2) {
      s += " [" + Fmt(fmt, span[0].get<double>()) + ", " + Fmt(fmt, span[1].get<double>()) + "]";
    }
    return s;
  };
  for (const auto& r : rows) {
    const std::string op = r.value("op", ""), mode = r.value("mode", "");
    std::string change = "-";
    if (r.contains("vs_plain")) {
      const nlohmann::json& c = r["vs_plain"];
      change = Percent(c.value("median", 0.0));
      if (c.value("pairs", 0) > 1) {
        change += " [" + Percent(c.value("min", 0.0)) + ", " + Percent(c.value("max", 0.0)) + "]";
      }
    }
    md << "| " << MdText(mode) << " | " << MdText(op) << " | " << Size(r) << " | "
       << r.value("channels", 1) << " | " << r.value("outstanding", 1) << " | "
       << MdText(r.value("dialect", "")) << " | " << r.value("repetitions", 1) << " | "
       << (op == "metadata" ? range(r, "ops_per_second", "%.0f")
                            : Fmt("%.0f", r.value("ops_per_second", 0.0)))
       << " | "
       << (op == "metadata" ? Fmt("%.1f", r.value("mb_per_second", 0.0))
                            : range(r, "mb_per_second", "%.1f"))
       << " | " << Fmt("%.0f", r.value("p50_us", 0.0)) << " | "
       << Fmt("%.0f", r.value("p99_us", 0.0)) << " | " << change << " | "
       << Published(mode, op, r.value("size", uint64_t{0}), r.value("channels", 1)) << " |\n";
  }

  size_t compared = 0, skipped = 0;
  std::string first_skip;
  for (const auto& r : rows) {
    if (r.value("mode", "") == "smb-plain") continue;
    if (r.contains("from_legs")) {
      ++compared;
    } else if (skipped++ == 0) {
      first_skip = r.value("from_legs_skipped", std::string("no reason recorded"));
    }
  }
  if (compared > 0) {
    md << "\n### How much of the change the crypto explains\n\n"
          "CPU per operation is the machine's busy CPU time (both ends and the kernel: logical "
          "CPUs x (1 - idle - steal)) over the operations. The extra is, run by run, the mode's "
          "CPU per operation minus that of the smb-plain run beside it: median [lowest, highest]. "
          "The crypto legs are the mode's four legs over smb-plain's (section micro, one thread, "
          "at the payload each message carries); the server's two are secmode's own OpenSSL "
          "code standing in for Samba's crypto, which is not measured apart. The crypto's share "
          "is legs over the median extra, given only where every pair shows extra CPU: near "
          "100%, secmode's crypto accounts for the cost; well below, something costs more than "
          "secmode's legs say, first of all Samba's own crypto (its library, not OpenSSL) and its "
          "per-message work in the mode; above, less extra CPU showed up than the legs cost. "
          "Predicted: each run's busy CPU time at its smb-plain partner's CPU per operation plus "
          "the legs' extra (median).\n\n"
          "| mode | op | size | channels | smb-plain CPU us/op | mode CPU us/op | extra us/op | "
          "crypto legs us/op | crypto's share | predicted ops/s | measured / predicted |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : rows) {
      if (r.value("mode", "") == "smb-plain" || !r.contains("from_legs")) continue;
      const nlohmann::json& f = r["from_legs"];
      const nlohmann::json share = f.value("crypto_share", nlohmann::json(nullptr));
      std::string extra = Fmt("%+.1f", f.value("extra_cpu_ns_per_op", 0.0) / 1e3);
      const nlohmann::json span = f.value("extra_cpu_ns_per_op_range", nlohmann::json::array());
      if (f.value("pairs", 1) > 1 && span.size() == 2) {
        extra += " [" + Fmt("%+.1f", span[0].get<double>() / 1e3) + ", " +
                 Fmt("%+.1f", span[1].get<double>() / 1e3) + "]";
      }
      md << "| " << MdText(r.value("mode", "")) << " | " << MdText(r.value("op", "")) << " | "
         << Size(r) << " | " << r.value("channels", 1) << " | "
         << Fmt("%.1f", f.value("plain_cpu_ns_per_op", 0.0) / 1e3) << " | "
         << Fmt("%.1f", f.value("measured_cpu_ns_per_op", 0.0) / 1e3) << " | " << extra << " | "
         << Fmt("%.1f", f.value("legs_extra_ns", 0.0) / 1e3) << " | "
         << (share.is_number() ? Fmt("%.0f%%", 100.0 * share.get<double>())
                               : std::string("- (within noise)"))
         << " | " << Fmt("%.0f", f.value("predicted_ops_per_second", 0.0)) << " | "
         << Fmt("%.2f", f.value("measured_over_predicted", 0.0)) << " |\n";
    }
  }
  if (skipped > 0) {
    md << "\n"
       << skipped << " rows without the crypto's share; the first because: " << MdText(first_skip)
       << ".\n";
  }
  bool threads_measured = false;
  for (const auto& r : rows) {
    threads_measured =
        threads_measured || r.value("server_thread_core_share", nlohmann::json()).is_number();
  }
  if (threads_measured) {
    md << "\n### Where the CPU goes\n\n"
          "CPU per operation over the measured time (median of the runs): secmode's client "
          "process; Samba's threads (smbd, winbindd, the KDC ...: CPU counted on those threads, "
          "system calls included, and softirq work the kernel ran on them, such as the peer's "
          "TCP receive over the veth pair; not the kernel's work on other threads); and the "
          "thread serving the session, the busiest smbd main thread (its kernel part in "
          "brackets, from the kernel's clock-tick counts: coarse over a short run), with its "
          "share of one core over the measured time. A share near 100% is a "
          "session bound by one smbd thread, whatever the cores.\n\n"
          "| mode | op | size | channels | client us/op | Samba us/op | session thread us/op "
          "(system) | session thread's share of a core |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|\n";
    const auto us = [](const nlohmann::json& v) {
      return v.is_number() ? Fmt("%.1f", v.get<double>()) : std::string("-");
    };
    for (const auto& r : rows) {
      const nlohmann::json share = r.value("server_thread_core_share", nlohmann::json());
      if (!share.is_number()) continue;
      md << "| " << MdText(r.value("mode", "")) << " | " << MdText(r.value("op", "")) << " | "
         << Size(r) << " | " << r.value("channels", 1) << " | "
         << us(r.value("client_us_per_op", nlohmann::json())) << " | "
         << us(r.value("server_us_per_op", nlohmann::json())) << " | "
         << us(r.value("server_thread_us_per_op", nlohmann::json())) << " ("
         << us(r.value("server_thread_system_us_per_op", nlohmann::json())) << ") | "
         << Fmt("%.0f%%", share.get<double>() * 100) << " |\n";
    }
  }
  md << "\nPublished (Azure NetApp Files SMB, a Windows client): signing cut single-connection "
        "sequential read from 875 MiB/s to about 250 MiB/s (-71%, client CPU bound); encryption "
        "costs 10-15% on read/write and 5% on metadata-heavy work; multichannel with 4 "
        "connections suffices for random I/O, sequential reads keep scaling to 8 and 16. There "
        "the client and the server each had their own cores; here they share this machine's "
     << results.machine.logical_cpus << " logical CPUs.\n";
  if (section.contains("interrupted")) {
    md << "\nInterrupted (" << MdText(section.value("interrupted", ""))
       << "): the rows after the last one were not run.\n";
  }
  out.report_md.append(md.str());
}

}  // namespace secmode::render
