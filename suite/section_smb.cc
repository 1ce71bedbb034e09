// Suite section "smb": SMB3 bounds (each SMB operation against the raw
// OpenSSL primitive over the same bytes, same run) and the multichannel
// scaling sweep. Writes bounds rows to results.json and a report section
// stating whether each >= 0.9x target was met, with the numbers.
#include "bench/section_smb.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "bench/smb_ops.h"
#include "smb/multichannel.h"

namespace secmode::bench {

using common::Status;

namespace {

constexpr size_t kBoundSize = 1u << 20;
constexpr double kTarget = 0.9;

std::string Mbs(double bps) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.0f", bps / 1e6);
  return buf;
}

}  // namespace

Status RunSmbSection(SectionContext& ctx) {
  const int rounds = ctx.options.quick ? 3 : 7;
  const double seconds = ctx.options.quick ? 0.03 : 0.15;
  std::ostringstream md;
  md << "## SMB3 bounds (1 MiB WRITE, same bytes, same run)\n\n"
     << "Each SMB operation is run against the raw OpenSSL primitive over the same message "
        "(112-byte SMB2 header + WRITE body + 1 MiB data), in "
     << rounds << " alternating rounds of " << seconds
     << " s of thread CPU time; each side's best round counts (rates are bytes per CPU-second). "
        "Target: SMB >= "
     << kTarget << " x raw.\n\n"
     << "| operation | SMB MB/s | raw primitive | raw MB/s | ratio | target met |\n"
     << "|---|---:|---|---:|---:|---|\n";

  struct Pair {
    std::string smb_name, raw_name;
    common::Result<std::unique_ptr<Op>> smb, raw;
    bool targeted;
  };
  std::vector<Pair> pairs;
  for (smb::CipherId c : {smb::CipherId::kAes128Gcm, smb::CipherId::kAes256Gcm,
                          smb::CipherId::kAes128Ccm, smb::CipherId::kAes256Ccm}) {
    const std::string name = smb::CipherName(c);
    const bool gcm = c == smb::CipherId::kAes128Gcm || c == smb::CipherId::kAes256Gcm;
    pairs.push_back({"smb-enc-" + name + " seal+open", "evp-" + name + " encrypt+decrypt",
                     MakeSmbSealOpenOp(c, kBoundSize), MakeRawAeadOp(c, kBoundSize), gcm});
  }
  pairs.push_back({"smb-sign-aes-gmac sign", "evp-aes-128-gcm ghash-only (message as AAD)",
                   MakeSmbSignOp(smb::SigningAlgorithm::kAesGmac, kBoundSize),
                   MakeRawMacOp(smb::SigningAlgorithm::kAesGmac, kBoundSize), true});
  pairs.push_back({"smb-sign-aes-cmac sign", "evp-mac-aes-128-cmac",
                   MakeSmbSignOp(smb::SigningAlgorithm::kAesCmac, kBoundSize),
                   MakeRawMacOp(smb::SigningAlgorithm::kAesCmac, kBoundSize), true});
  pairs.push_back({"smb-sign-hmac-sha256 sign", "evp-mac-hmac-sha256",
                   MakeSmbSignOp(smb::SigningAlgorithm::kHmacSha256, kBoundSize),
                   MakeRawMacOp(smb::SigningAlgorithm::kHmacSha256, kBoundSize), true});
  for (auto& p : pairs) {
    if (!p.smb.ok()) return p.smb.status().Annotate(p.smb_name);
    if (!p.raw.ok()) return p.raw.status().Annotate(p.raw_name);
    SECMODE_ASSIGN_OR_RETURN(Comparison c, CompareOps(**p.smb, **p.raw, rounds, seconds));
    ctx.results.bounds.push_back({p.smb_name, kBoundSize, c.a_bytes_per_second});
    ctx.results.bounds.push_back({p.raw_name, kBoundSize, c.b_bytes_per_second});
    const double ratio = c.a_bytes_per_second / c.b_bytes_per_second;
    char r[16];
    snprintf(r, sizeof r, "%.3f", ratio);
    md << "| " << p.smb_name << " | " << Mbs(c.a_bytes_per_second) << " | " << p.raw_name << " | "
       << Mbs(c.b_bytes_per_second) << " | " << r << " | "
       << (p.targeted ? (ratio >= kTarget ? "met" : "NOT met") : "(no target)") << " |\n";
  }

  // Multichannel: channels share the session's client-to-server key, each
  // with its own nonce space; aggregate client-seal throughput.
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::set<int> counts = {1, 2, 4, cores};
  md << "\n## SMB3 multichannel (AES-128-GCM, client-seal of 1 MiB WRITEs)\n\n"
     << "Channels are threads sharing one session key, nonce = 64-bit counter || channel id. "
     << "Machine: " << cores << " logical CPUs (counts above that oversubscribe).\n\n"
     << "| channels | messages | aggregate MB/s | per channel MB/s |\n|---:|---:|---:|---:|\n";
  const common::Bytes key = common::PatternBytes(16, 9);
  for (int n : counts) {
    SECMODE_ASSIGN_OR_RETURN(
        smb::MultichannelResult m,
        smb::RunMultichannelSeal(smb::CipherId::kAes128Gcm, key, 0x0000100000000025ull, n,
                                 kBoundSize, ctx.options.quick ? 0.05 : 0.5));
    ctx.results.bounds.push_back(
        {"smb-multichannel-aes-128-gcm client-seal channels=" + std::to_string(n), kBoundSize,
         m.bytes_per_second});
    md << "| " << n << " | " << m.messages << " | " << Mbs(m.bytes_per_second) << " | "
       << Mbs(m.bytes_per_second / n) << " |\n";
  }
  ctx.results.report_sections.push_back(md.str());
  return Status::Ok();
}

}  // namespace secmode::bench
