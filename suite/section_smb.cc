// Section "smb": SMB3 bounds (each SMB operation against the raw OpenSSL
// primitive over the same bytes, same run) and the multichannel scaling
// sweep. Rates go to RunResults::bounds; which rows pair up, the method and
// the multichannel message counts to RunResults::sections["smb"].
#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "common/machine.h"
#include "harness/smb_ops.h"
#include "smb/multichannel.h"
#include "smb/profiles.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

constexpr size_t kBoundSize = 1u << 20;
constexpr double kTarget = 0.9;
// Each SMB operation of the bounds (every row of smb/profiles.h), paired
// with its raw primitive: the ciphers GCM first (the targeted ones), the
// signing algorithms newest first.
std::vector<const smb::CipherProfile*> Ciphers() {
  std::vector<const smb::CipherProfile*> out;
  for (smb::Aead aead : {smb::Aead::kGcm, smb::Aead::kCcm}) {
    for (const smb::CipherProfile& c : smb::CipherProfiles()) {
      if (c.aead == aead) out.push_back(&c);
    }
  }
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// The raw primitive's row name: "evp-mac-hmac-sha256", or for GMAC the AEAD
// with the message as AAD.
std::string RawMacName(const smb::SigningProfile& s) {
  if (s.evp_mac == nullptr) return "evp-" + Lower(s.evp_param) + " ghash-only (message as AAD)";
  return std::string("evp-mac-") + s.name;
}

// Rounds of each comparison, each side's seconds per round, and the seconds
// of each multichannel point.
struct Budget {
  int rounds;
  double seconds, multichannel_seconds;
};
Budget BudgetOf(const SectionContext& ctx) {
  return ctx.options.quick ? Budget{3, 0.03, 0.05} : Budget{7, 0.15, 0.5};
}

std::set<int> ChannelCounts() { return {1, 2, 4, common::LogicalCpus()}; }

}  // namespace

double PlannedSmbSeconds(const SectionContext& ctx) {
  const Budget b = BudgetOf(ctx);
  const double pairs =
      static_cast<double>(smb::CipherProfiles().size() + smb::SigningProfiles().size());
  return pairs * b.rounds * 2 * b.seconds +
         static_cast<double>(ChannelCounts().size()) * b.multichannel_seconds;
}

Status RunSmbSection(SectionContext& ctx) {
  const Budget budget = BudgetOf(ctx);
  const int rounds = budget.rounds;
  const double seconds = budget.seconds;
  struct Pair {
    std::string smb_name, raw_name;
    common::Result<std::unique_ptr<harness::Op>> smb, raw;
    bool targeted;
  };
  std::vector<Pair> pairs;
  for (const smb::CipherProfile* c : Ciphers()) {
    const std::string name = c->name;
    pairs.push_back({std::string(c->mode) + " seal+open", "evp-" + name + " encrypt+decrypt",
                     harness::MakeSmbSealOpenOp(c->id, kBoundSize),
                     harness::MakeRawAeadOp(c->id, kBoundSize), c->aead == smb::Aead::kGcm});
  }
  const auto signings = smb::SigningProfiles();
  for (auto g = signings.rbegin(); g != signings.rend(); ++g) {
    pairs.push_back({std::string(g->mode) + " sign", RawMacName(*g),
                     harness::MakeSmbSignOp(g->id, kBoundSize),
                     harness::MakeRawMacOp(g->id, kBoundSize), true});
  }
  nlohmann::json pair_rows = nlohmann::json::array();
  for (auto& p : pairs) {
    if (!p.smb.ok()) return p.smb.status().Annotate(p.smb_name);
    if (!p.raw.ok()) return p.raw.status().Annotate(p.raw_name);
    SECMODE_ASSIGN_OR_RETURN(harness::Comparison c,
                             harness::CompareOps(**p.smb, **p.raw, rounds, seconds));
    ctx.results.bounds.push_back({p.smb_name, kBoundSize, c.a_bytes_per_second});
    ctx.results.bounds.push_back({p.raw_name, kBoundSize, c.b_bytes_per_second});
    pair_rows.push_back({{"smb", p.smb_name}, {"raw", p.raw_name}, {"targeted", p.targeted}});
  }

  // Multichannel: channels share the session's client-to-server key, each
  // with its own nonce space; aggregate client-seal throughput.
  const int cores = common::LogicalCpus();
  const std::set<int> counts = ChannelCounts();
  nlohmann::json multichannel = nlohmann::json::array();
  const common::Bytes key = common::PatternBytes(16, 9);
  for (int n : counts) {
    SECMODE_ASSIGN_OR_RETURN(
        smb::MultichannelResult m,
        smb::RunMultichannelSeal(smb::CipherId::kAes128Gcm, key, 0x0000100000000025ull, n,
                                 kBoundSize, budget.multichannel_seconds));
    const std::string primitive =
        "smb-multichannel-aes-128-gcm client-seal channels=" + std::to_string(n);
    ctx.results.bounds.push_back({primitive, kBoundSize, m.bytes_per_second});
    multichannel.push_back({{"channels", n}, {"messages", m.messages}, {"primitive", primitive}});
  }
  ctx.results.sections["smb"] = {{"size", kBoundSize},
                                 {"rounds", rounds},
                                 {"seconds_per_round", seconds},
                                 {"target", kTarget},
                                 {"pairs", std::move(pair_rows)},
                                 {"cores", cores},
                                 {"multichannel", std::move(multichannel)}};
  return Status::Ok();
}

}  // namespace secmode::suite
