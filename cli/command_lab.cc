// `secmode lab [--smb]`: the workload model against the two-host lab, NFS or SMB
// (suite/lab_validation.h): costs from a saved run (--results, default the
// newest), the grid measured in network namespaces made here, the table on
// stdout (or the JSON with --json), the document to --out atomically.
// SIGINT or SIGTERM stop it after the point it is measuring (what was
// measured is still printed and written, the lab and the realm removed, exit
// status 130 / 143); a second signal ends it at once, and the lab's and the
// realm's reapers remove them (cli/interrupt.h).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/saved_run.h"
#include "common/files.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "lab/net_lab.h"
#include "render/report_lab.h"
#include "suite/lab_validation.h"

namespace secmode::cli {

namespace {

constexpr const char* kLabCommand = "lab";

struct LabArgs {
  std::string results, out;
  bool quick = false, full = false, json = false, smb = false;
  std::vector<std::string> modes;
};

}  // namespace

CLI::App* AddLabCommand(CLI::App& app) {
  auto a = std::make_shared<LabArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lab",
      "Check the workload model (secmode predict) on a two-host lab made here: network "
      "namespaces joined by a veth pair, bandwidth shaped by tc tbf, round trips emulated by "
      "serve/load --delay-ms; needs root");
  AddResultsOption(cmd, &a->results);
  cmd->add_flag("--quick", a->quick,
                "The quick grid (3 links; planning figure: about a minute with two modes)");
  cmd->add_flag("--full", a->full,
                "The whole grid: RTT 0/1/20/200 ms x unshaped/1 Gbit/100 Mbit x 4 KiB/1 MiB x "
                "read/write x iodepth 1/64 x numjobs 1/4 (768 points; planning figure: about "
                "45 minutes); with "
                "--smb x 1/4/16 channels x 1/16 in flight each instead of the depths (864 points "
                "with three modes)");
  cmd->add_flag("--smb", a->smb,
                "SMB instead of NFS: secmode's SMB load against a throwaway Samba AD DC in the "
                "lab (Debian's samba, samba-ad-dc, samba-ad-provision), one session over 1, 4 "
                "or 16 channels, the round trip held on the client");
  cmd->add_option("--modes", a->modes,
                  "Families to check besides the baseline: krb5 krb5i krb5p (default: every one "
                  "the run measured with the native engine); with --smb smb-sign-aes-cmac, "
                  "smb-sign-aes-gmac and smb-enc-* (default smb-sign-aes-cmac "
                  "smb-enc-aes-128-gcm, those the run measured)");
  cmd->add_flag("--json", a->json, "Print the JSON document instead of the tables");
  cmd->add_option("--out", a->out, "Also write the JSON to this file (atomically)");
  cmd->callback([a] {
    if (a->quick && a->full) FailUsage(kLabCommand, "--quick and --full exclude each other");
    const suite::LabProtocol protocol =
        a->smb ? suite::LabProtocol::kSmb : suite::LabProtocol::kNfs;
    const std::string baseline = suite::LabBaseline(protocol);
    std::vector<std::string> families;
    if (!a->modes.empty()) {
      families.push_back(baseline);
      for (const std::string& m : a->modes) {
        if (m == baseline) continue;
        const bool known = a->smb ? (m.rfind("smb-sign-", 0) == 0 || m.rfind("smb-enc-", 0) == 0)
                                  : (m == "krb5" || m == "krb5i" || m == "krb5p");
        if (!known) {
          FailUsage(kLabCommand, "unknown --modes family '" + m + "' (known: " +
                                     (a->smb ? "smb-sign-* and smb-enc-*, e.g. smb-sign-aes-cmac"
                                             : "krb5, krb5i, krb5p") +
                                     ")");
        }
        if (m == "smb-sign-hmac-sha256") {
          FailUsage(kLabCommand,
                    "--modes smb-sign-hmac-sha256 is SMB 2.1, which has no multichannel; "
                    "the lab's SMB grid runs 4 and 16 channels");
        }
        families.push_back(m);
      }
    }
    const std::string why = suite::LabValidationUnavailableReason(protocol);
    if (!why.empty()) Fail(kLabCommand, common::Status::Unavailable("no lab: " + why));
    std::string path = a->results;
    const harness::RunResults run = ReadSavedRunOrFail(kLabCommand, &path);
    // SIGINT and SIGTERM (cli/interrupt.h), before the realm and the lab
    // start their threads; the realm (env) is removed before it ends.
    Interrupt interrupt(kLabCommand,
                        "stopping after the current point and writing what was measured");
    harness::ModeEnvironment env;
    gss::Realm* realm = nullptr;  // NFS's; SMB's Kerberos is the Samba DC's own
    if (!a->smb) {
      auto r = env.GetRealm();
      if (!r.ok()) Fail(kLabCommand, r.status());
      realm = *r;
    }
    suite::LabValidationOptions o;
    o.protocol = protocol;
    o.grid = a->quick  ? suite::LabGrid::kQuick
             : a->full ? suite::LabGrid::kFull
                       : suite::LabGrid::kDefault;
    o.families = families;
    o.cost_source = path;
    o.log = &std::cerr;
    o.interrupt = interrupt.interrupt();
    auto doc = suite::RunLabValidation(run, realm, o);
    if (!doc.ok()) Fail(kLabCommand, doc.status());
    (*doc)["source"] = path;
    if (!a->out.empty()) {
      if (auto s = common::WriteFileAtomically(a->out, doc->dump(1) + "\n"); !s.ok()) {
        Fail(kLabCommand, s.Annotate("--out"));
      }
    }
    std::cout << (a->json ? doc->dump(1) + "\n" : render::LabMarkdown(*doc));
    interrupt.ExitIfInterrupted("what was measured before is printed" +
                                (a->out.empty() ? std::string() : " and in " + a->out));
  });
  return cmd;
}

}  // namespace secmode::cli
