// Section "e2e": short end-to-end runs of every RPC mode (sys, krb5, krb5i,
// krb5p) over real loopback TCP against the in-process server
// (harness/local_rpc.h) with the run's realm: NFSv4.1-shaped GETATTR and
// 4 KiB / 1 MiB READ and WRITE, connections sharing one GSS context (controls:
// a wide window, a context per connection; see below). Every row under
// load against secmode's server runs in rounds (Budget::rounds): in each
// round every mode of the case once, one after the other, so drift over
// the section spreads over the modes; a row's figures are its median run's
// (harness::PutMedianRunFirst), the other runs in `repeats`; each run of a
// GSS row in rounds has a sys run of its load just before it
// (SysJustBefore, `sys_just_before`). Rows go to RunResults::e2e; the load
// shape and the servers' totals (every run's calls, those sys runs' too) to
// RunResults::sections["e2e"]. Interrupted (suite/suite.h), it makes no
// further run (of a row, a control or a later round) and says so there
// ("interrupted") and in "errors".
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/files.h"
#include "gss/enctype.h"
#include "harness/local_rpc.h"
#include "harness/workload_inputs.h"
#include "rpc/ganesha.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "suite/e2e_from_legs.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

struct Case {
  rpc::NfsOp op;
  uint32_t size;
  bool one_at_a_time = false;  // one connection, one call outstanding: latency alone
};
constexpr Case kCases[] = {{rpc::NfsOp::kGetattr, 0},      {rpc::NfsOp::kRead, 4096},
                           {rpc::NfsOp::kWrite, 4096},     {rpc::NfsOp::kRead, 1u << 20},
                           {rpc::NfsOp::kWrite, 1u << 20}, {rpc::NfsOp::kRead, 4096, true}};
const char* const kRpcFamilies[] = {"sys", "krb5", "krb5i", "krb5p"};
// Load shape of every row (recorded in the section, so the report states
// what ran).
constexpr int kConnections = 4;
constexpr int kSlots = 64;
constexpr int kSlotsLargeIo = 16;  // 1 MiB rows: bounds memory
constexpr uint64_t kMinOps = 20;
// A GSS row whose load keeps more calls outstanding than the server's
// sequence window (the default 128, Linux nfsd's) holds also runs, in each
// of its rounds, against a server whose window no call of these loads falls
// out of: the call path's own rate beside what the drops (and the resends
// after them) cost on top.
constexpr uint32_t kWideWindow = 1u << 16;
constexpr double kGaneshaSeconds = 1.0, kGaneshaMaxSeconds = 4.0;
// The default rows: every RPC family with MIT's library, and the krb5
// families again with the native engine (keys from the same kind of context,
// RFC 4121 in OpenSSL: what the Linux kernel's data path does).
const char* const kDefaultRows[] = {"sys",          "krb5",          "krb5i",        "krb5p",
                                    "krb5::native", "krb5i::native", "krb5p::native"};

// The rows of an engine that serialises a context's calls (MIT's) also run,
// in each of their rounds, with a context per connection where its crypto is a large share of
// the call (GETATTR and 4 KiB, under load), not where the data's crypto
// dwarfs the waits (1 MiB) or nothing waits (one call at a time).
bool PerConnectionControl(const Case& c) { return !c.one_at_a_time && c.size < (1u << 20); }

// The files the rows read and write in Ganesha's export: "read" holds
// nfs.h's pattern (READ data is checked byte for byte), "write" is empty;
// both open to the user the realm's principal maps to (nobody).
Status PutGaneshaFiles(const rpc::Ganesha& g) {
  const std::string read = g.export_dir() + "/read", write = g.export_dir() + "/write";
  common::ByteView pattern = rpc::ReadPattern(0, rpc::kNfsFileSize);
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(
      read, std::string_view(reinterpret_cast<const char*>(pattern.data()), pattern.size())));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(write, ""));
  if (chmod(read.c_str(), 0644) != 0 || chmod(write.c_str(), 0666) != 0) {
    return Status::IoError("chmod in " + g.export_dir() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// --modes restricts this section too (and picks enctype and engine); by
// default kDefaultRows.
common::Result<std::vector<harness::ModeName>> E2eModes(const SectionContext& ctx) {
  std::vector<harness::ModeName> modes;
  if (!ctx.restricted) {
    for (const char* m : kDefaultRows) {
      SECMODE_ASSIGN_OR_RETURN(harness::ModeName n, harness::ParseModeName(m));
      modes.push_back(n);
    }
  } else {
    for (const auto& n : ctx.modes) {
      for (const char* family : kRpcFamilies) {
        if (n.family == family) modes.push_back(n);
      }
    }
  }
  return modes;
}

// Each run's measured and warm-up seconds, and how many rounds the rows
// under load against secmode's server run. On a shared machine the CPU a
// loopback call costs can change for stretches of seconds, for every
// process alike (suite/README.md, "A machine's stretches"): more, shorter
// runs sample that, and a GSS run's sys run just before it
// (SysJustBefore) was made in the same stretch.
struct Budget {
  double seconds, warmup, max_seconds;
  int rounds;
};
Budget BudgetOf(const SectionContext& ctx) {
  return ctx.options.quick ? Budget{0.4, 0.1, 2.5, 2} : Budget{1.0, 0.3, 10, 5};
}

// Whether a row runs again in each later round: those under load against
// secmode's server do. Rows one call at a time (latency bounds them) and
// nfs-ganesha's rows are not predicted from the legs and run once.
bool RunsInRounds(const Case& c, int peer) { return peer == 0 && !c.one_at_a_time; }

// Whether each run of a row of `family` (every round) has a sys run of the
// same load, against the same server, just before it: the rows in rounds of
// a GSS family. suite/e2e_from_legs.h predicts each such run from its own
// sys run, so a mode and its baseline are measured in the same stretch.
bool SysJustBefore(const std::string& family, const Case& c, int peer) {
  return family != "sys" && RunsInRounds(c, peer);
}

int SlotsOf(const Case& c) {
  return c.one_at_a_time ? 1 : c.size >= (1u << 20) ? kSlotsLargeIo : kSlots;
}

// Whether a row of `family` gets the wide-window control: a GSS row whose
// load keeps more calls outstanding than `window` holds (decided by the
// load, not by one run's drops, so every round of the row has it).
bool WideWindowControl(const std::string& family, const Case& c, uint32_t window) {
  return family != "sys" && static_cast<uint32_t>(c.one_at_a_time ? 1 : kConnections * SlotsOf(c)) >
                                window;
}

// The runs of a row's load beside the row (suite/e2e_from_legs.h): the key
// of its object in the row and whether it has a context per connection.
// Both run against the wide-window server. The first round decides whether
// a row has one; later rounds run the ones it has again.
struct Control {
  const char* key;
  bool context_per_connection;
};
constexpr Control kWideWindowControl = {"wide_window", false};
constexpr Control kPerConnectionControl = {"context_per_connection", true};
constexpr Control kControls[] = {kWideWindowControl, kPerConnectionControl};

}  // namespace

double PlannedE2eSeconds(const SectionContext& ctx) {
  auto modes = E2eModes(ctx);
  if (!modes.ok()) return 0;
  const Budget b = BudgetOf(ctx);
  const bool ganesha = rpc::Ganesha::Available().ok();
  const double run = b.seconds + b.warmup;
  double seconds = 0;
  const uint32_t window = rpc::ServerOptions{}.window;
  for (const auto& m : *modes) {
    for (const Case& c : kCases) {
      const double runs = RunsInRounds(c, 0) ? b.rounds : 1;
      seconds += runs * run;
      if (SysJustBefore(m.family, c, 0)) seconds += runs * run;
      if (ganesha && m.engine != "native") seconds += std::min(b.seconds, kGaneshaSeconds) + b.warmup;
      if (WideWindowControl(m.family, c, window)) seconds += runs * run;
      if (m.family == "sys") continue;
      // MIT's engines serialise a context's calls (the control runs when the
      // load reports "serialised": the native engine would too on a context
      // with GSS-level replay detection, which RPCSEC_GSS contexts do not ask for).
      if (m.engine != "native" && PerConnectionControl(c)) seconds += runs * run;
    }
  }
  return seconds;
}

Status RunE2eSection(SectionContext& ctx) {
  // One in-process server per GSS engine, so both ends of a row use the
  // engine the mode names.
  std::map<std::string, harness::LocalRpcServer> servers;
  auto server_for = [&](const std::string& engine_name,
                        uint32_t window) -> common::Result<harness::LocalRpcServer*> {
    const std::string key = engine_name + "/" + std::to_string(window);
    auto it = servers.find(key);
    if (it != servers.end()) return &it->second;
    rpc::ServerOptions so;
    so.window = window;
    if (engine_name != "none") {
      SECMODE_ASSIGN_OR_RETURN(so.engine, gss::ParseEngine(engine_name));
    }
    SECMODE_ASSIGN_OR_RETURN(auto s, harness::StartLocalRpcServer(ctx.env, true, so));
    return &servers.emplace(key, std::move(s)).first->second;
  };
  const uint32_t window = rpc::ServerOptions{}.window;
  // One row's load against `server`, and the calls its window dropped.
  struct Measured {
    common::Result<rpc::LoadReport> report;
    uint64_t window_drops;
  };
  auto measure = [](harness::LocalRpcServer& server, const rpc::LoadOptions& o) -> Measured {
    auto before = server.server->counters();
    auto r = rpc::RunLoad(o);
    auto after = server.server->counters();
    return {std::move(r),
            (after.duplicates + after.below_window) - (before.duplicates + before.below_window)};
  };

  SECMODE_ASSIGN_OR_RETURN(const std::vector<harness::ModeName> modes, E2eModes(ctx));
  if (modes.empty()) return Status::Ok();
  const Budget budget = BudgetOf(ctx);
  const double seconds = budget.seconds, warmup = budget.warmup, max_seconds = budget.max_seconds;
  Status first_failure;
  size_t rows_not_run = 0;
  // nfs-ganesha as the peer too, when it can run here: the same rows over
  // an NFSv4.1 session (rpc/nfs41.h) against its VFS export.
  std::unique_ptr<rpc::Ganesha> ganesha;
  std::string ganesha_skipped;
  if (Status why = rpc::Ganesha::Available(); !why.ok()) {
    ganesha_skipped = why.message();
  } else if (InterruptSignal(ctx.options)) {
    ganesha_skipped = "interrupted before it started";
  } else {
    SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx.env.GetRealm());
    rpc::GaneshaOptions go;
    go.keytab = realm->service_keytab();
    go.env = realm->Environment();
    go.principals = {realm->user_principal()};
    SECMODE_ASSIGN_OR_RETURN(ganesha, rpc::Ganesha::Start(go));
    SECMODE_RETURN_IF_ERROR(PutGaneshaFiles(*ganesha));
  }
  size_t rows_planned = 0;
  for (const harness::ModeName& name : modes) {
    rows_planned += std::size(kCases) * (ganesha && name.engine != "native" ? 2 : 1);
  }
  // One more run of a row's load, against the server of `engine` with
  // `window_of`: its report with that window, the drops counted and its
  // `round`, or nothing when the server, the run or any reply failed
  // (logged, naming `what`: these runs are controls and repeats, the row stays).
  auto run_again = [&](const std::string& engine, uint32_t window_of, const rpc::LoadOptions& load,
                       int round, const std::string& what) -> std::optional<nlohmann::json> {
    auto server = server_for(engine, window_of);
    Status failed = server.status();
    if (server.ok()) {
      rpc::LoadOptions aimed = load;
      (*server)->Aim(aimed);
      Measured m = measure(**server, aimed);
      failed = m.report.status();
      if (m.report.ok() && m.report->errors > 0) {
        failed = Status::Internal(std::to_string(m.report->errors) +
                                  " failed replies, first: " + m.report->first_error);
      }
      if (failed.ok()) {
        nlohmann::json w = harness::LoadReportJson(*m.report);
        w["window"] = window_of;
        w["server_window_drops"] = m.window_drops;
        w["round"] = round;
        return w;
      }
    }
    ctx.log << "\n  e2e " << what << " failed: " << failed.ToString();
    return std::nullopt;
  };
  // A control run of a row's load (`what` names the row).
  auto run_control = [&](const Control& control, const std::string& engine,
                         const rpc::LoadOptions& load, int round,
                         const std::string& what) -> std::optional<nlohmann::json> {
    rpc::LoadOptions aimed = load;
    aimed.context_per_connection = control.context_per_connection;
    return run_again(engine, kWideWindow, aimed, round,
                     what + (control.context_per_connection
                                 ? " with a context per connection"
                                 : " with window " + std::to_string(kWideWindow)) +
                         (round > 0 ? " (round " + std::to_string(round + 1) + ")" : ""));
  };
  // The sys run just before a GSS run (SysJustBefore): its load in AUTH_SYS
  // against the same server; nothing when it failed (logged).
  auto run_sys_before = [&](const std::string& engine, const rpc::LoadOptions& load, int round,
                            const std::string& what) {
    rpc::LoadOptions sys = load;
    sys.security = rpc::Security::kSys;
    return run_again(engine, window, sys, round, "sys run just before " + what);
  };
  size_t runs_not_made = 0;  // of controls and later rounds, after an interruption
  for (const Case& c : kCases) {
    // This case's rows that run again in later rounds: index in
    // ctx.results.e2e, the load and engine, and a name for the log.
    struct InRounds {
      size_t row;
      rpc::LoadOptions load;
      std::string engine, what;
      bool sys_just_before;
    };
    std::vector<InRounds> in_rounds;
    for (const harness::ModeName& name : modes) {
      for (int peer = 0; peer < (ganesha ? 2 : 1); ++peer) {
        // Ganesha's rows: the MIT engine's (its own GSS is MIT's; the
        // native engine would change only this client's half).
        if (peer == 1 && name.engine == "native") continue;
        if (InterruptSignal(ctx.options)) {
          ++rows_not_run;
          continue;
        }
        SECMODE_ASSIGN_OR_RETURN(harness::LocalRpcServer * server, server_for(name.engine, window));
        rpc::LoadOptions o;
        server->Aim(o);
        if (peer == 1) {
          // A call resent on a session with its slot and sequence id before
          // the first was answered gets NFS4ERR_RETRY_UNCACHED_REP (nothing
          // asks the server to cache replies): a make test run saw it on a
          // krb5p 1 MiB READ after the 1 s timeout. Ganesha drops no call in
          // these rows, so a resend would only be of a slow one.
          o.timeout_ms = 30000;
          o.port = ganesha->port();
          o.nfs41 = true;
          o.nfs41_options.read_file_has_pattern = true;
        }
        SECMODE_ASSIGN_OR_RETURN(const harness::RpcMode mode, harness::RpcModeOf(name));
        o.security = mode.security;
        o.engine = mode.engine;
        o.enctype = mode.enctype;
        o.op = c.op;
        o.size = c.size ? c.size : 4096;
        o.connections = c.one_at_a_time ? 1 : kConnections;
        o.slots = SlotsOf(c);
        // Ganesha's rows are shorter, so the default suite keeps its time.
        o.seconds = peer == 1 ? std::min(seconds, kGaneshaSeconds) : seconds;
        o.warmup_seconds = warmup;
        o.min_ops = kMinOps;
        o.max_seconds = peer == 1 ? std::min(max_seconds, kGaneshaMaxSeconds) : max_seconds;
        // Linux clients since about v5.0 re-encode a call whose sequence
        // number fell out of the window before it was sent.
        o.reencode = true;
        const std::string peer_name = peer == 1 ? "nfs-ganesha " + ganesha->version() : "secmode";
        std::string key = std::string(rpc::NfsOpName(c.op)) + "/" + std::to_string(c.size) +
                          (c.one_at_a_time ? " one at a time" : "") +
                          (peer == 1 ? " (" + peer_name + ")" : "");
        const bool sys_just_before = SysJustBefore(name.family, c, peer);
        std::optional<nlohmann::json> sys_before;
        if (sys_just_before) sys_before = run_sys_before(name.engine, o, 0, name.family + " " + key);
        Measured measured = measure(*server, o);
        auto& r = measured.report;
        const uint64_t window_drops = measured.window_drops;
        if (!r.ok()) {
          ctx.log << "\n  e2e " << name.family << " " << key
                  << " failed: " << r.status().ToString();
          if (first_failure.ok()) {
            first_failure = r.status().Annotate("e2e " + name.family + " " + key);
          }
          continue;
        }
        nlohmann::json row = harness::LoadReportJson(*r);
        row["engine"] = name.engine;
        row["enctype"] = name.enctype;
        row["transport"] = "tcp-loopback";
        row["server"] = peer_name;
        // Ganesha's window drops are not counted (its counters are not read).
        if (peer == 0) {
          row["window"] = window;
          row["server_window_drops"] = window_drops;
          row["round"] = 0;
        }
        // A row-level list (each with its round), so PutMedianRunFirst
        // leaves it where it is.
        if (sys_just_before) {
          row["sys_just_before"] = nlohmann::json::array();
          if (sys_before) row["sys_just_before"].push_back(std::move(*sys_before));
        }
        // Only controls: a server or run that fails is logged, the row stays.
        // The wide window where the load keeps more calls outstanding than
        // the window holds; a context per connection where the engine
        // serialised one context's calls (the call path's rate without
        // that), for loads whose crypto is a large share of the call.
        if (peer == 0) {
          const std::string what = name.family + " " + key;
          const bool controls[] = {
              WideWindowControl(name.family, c, window),
              r->crypto_threads == "serialised" && PerConnectionControl(c)};
          for (size_t i = 0; i < std::size(kControls); ++i) {
            if (!controls[i]) continue;
            if (InterruptSignal(ctx.options)) {
              ++runs_not_made;
              continue;
            }
            if (auto w = run_control(kControls[i], name.engine, o, 0, what)) {
              row[kControls[i].key] = std::move(*w);
            }
          }
        }
        // A row with failed replies is a failure of the section; it runs once.
        if (RunsInRounds(c, peer) && r->errors == 0) {
          in_rounds.push_back(
              {ctx.results.e2e.size(), o, name.engine, name.family + " " + key, sys_just_before});
        }
        ctx.results.e2e.push_back(std::move(row));
        if (r->errors > 0 && first_failure.ok()) {
          first_failure =
              Status::Internal("e2e " + name.family + " " + key + ": " + std::to_string(r->errors) +
                               " failed replies, first: " + r->first_error);
        }
      }
    }
    // The later rounds: each row's load again, the modes in the same order,
    // each row's controls after it; a run not made after a signal is counted.
    for (int round = 1; round < budget.rounds; ++round) {
      for (const InRounds& r : in_rounds) {
        // A run made goes to the list `key` of `target`; one not made, nowhere.
        auto add_to = [](nlohmann::json& target, const char* key,
                         std::optional<nlohmann::json> run) {
          if (run) target[key].push_back(std::move(*run));
        };
        const std::string in_round = r.what + " (round " + std::to_string(round + 1) + ")";
        if (InterruptSignal(ctx.options)) {
          runs_not_made += r.sys_just_before ? 2 : 1;
        } else {
          if (r.sys_just_before) {
            add_to(ctx.results.e2e[r.row], "sys_just_before",
                   run_sys_before(r.engine, r.load, round, in_round));
          }
          add_to(ctx.results.e2e[r.row], "repeats",
                 run_again(r.engine, window, r.load, round, in_round));
        }
        for (const Control& control : kControls) {
          if (!ctx.results.e2e[r.row].contains(control.key)) continue;
          if (InterruptSignal(ctx.options)) {
            ++runs_not_made;
            continue;
          }
          add_to(ctx.results.e2e[r.row][control.key], "repeats",
                 run_control(control, r.engine, r.load, round, r.what));
        }
      }
    }
    // Each row's (and control's) figures: its median run's.
    const int cpus = ctx.results.machine.logical_cpus;
    for (const InRounds& r : in_rounds) {
      nlohmann::json& row = ctx.results.e2e[r.row];
      harness::PutMedianRunFirst(row, cpus);
      for (const Control& control : kControls) {
        if (row.contains(control.key)) harness::PutMedianRunFirst(row[control.key], cpus);
      }
    }
  }
  if (ganesha) SECMODE_RETURN_IF_ERROR(ganesha->Stop());
  uint64_t calls = 0, contexts = 0, drops = 0;
  for (auto& [engine, s] : servers) {
    s.server->Stop();
    auto counters = s.server->counters();
    calls += counters.calls;
    contexts += counters.contexts_created;
    drops += counters.duplicates + counters.below_window;
  }
  ctx.results.sections["e2e"] = {
      {"connections", kConnections},
      {"slots", kSlots},
      {"slots_large_io", kSlotsLargeIo},
      {"seconds", seconds},
      {"warmup_seconds", warmup},
      {"max_seconds", max_seconds},
      {"min_ops", kMinOps},
      {"reencode", true},
      {"shared_context", true},
      {"window", window},
      {"wide_window", kWideWindow},
      {"rounds", budget.rounds},
      {"rounds_note",
       "each row under load against secmode's server, and its controls, ran once per round, "
       "the case's modes one after the other in each round; a row's figures are its median "
       "run's by busy CPU per call, its other runs are in `repeats` (each with its `round`); "
       "a GSS row whose load keeps more calls outstanding than the window holds has the wide "
       "window control in every round"},
      {"sys_just_before",
       "each run of a GSS row in rounds (and so its controls, which follow it) had a sys run of "
       "the same load against the same server just before it: the row's `sys_just_before`, each "
       "with its `round`; the legs' prediction (from_legs) pairs each run with the sys run of "
       "its round"},
      {"context_per_connection_control",
       "rows whose engine serialised one context's calls, GETATTR and 4 KiB under load: in each "
       "round also with a context per connection, window " +
           std::to_string(kWideWindow)},
      {"timeout_ms", rpc::LoadOptions{}.timeout_ms},
      {"servers", {{"calls", calls}, {"contexts_created", contexts}, {"window_drops", drops}}},
      {"ganesha_seconds", std::min(seconds, kGaneshaSeconds)},
      {"ganesha", ganesha_skipped.empty() ? nlohmann::json("ran")
                                          : nlohmann::json("not run: " + ganesha_skipped)}};
  // What the legs measured in the micro section predict for each row.
  const LegsPrediction from_legs =
      PredictE2eFromLegs(ctx.results.micro, ctx.results.e2e, ctx.results.machine.logical_cpus);
  ctx.results.sections["e2e"]["from_legs"] = {{"tolerance", kLegsPredictionTolerance},
                                              {"rows", from_legs.rows},
                                              {"skipped", from_legs.skipped}};
  if (rows_not_run > 0 || runs_not_made > 0) {
    const int sig = InterruptSignal(ctx.options);
    ctx.results.sections["e2e"]["interrupted"] = SignalName(sig);
    ctx.results.errors.push_back(InterruptedError(
        "section", "e2e", sig,
        (rows_not_run > 0 ? std::to_string(rows_not_run) + " of " +
                                std::to_string(rows_planned) + " rows not run"
                          : std::string("every row ran")) +
            (runs_not_made > 0
                 ? ", " + std::to_string(runs_not_made) + " runs of controls and later rounds not made"
                 : std::string())));
  }
  return first_failure;
}

}  // namespace secmode::suite
