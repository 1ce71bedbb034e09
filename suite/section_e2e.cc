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
  return family != "sys" &&
         static_cast<uint32_t>(c.one_at_a_time ? 1 : kConnections * SlotsOf(c)) > window;
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

// One row's load against `server`, and the calls its window dropped.
struct Measured {
  common::Result<rpc::LoadReport> report;
  uint64_t window_drops;
};
Measured Measure(harness::LocalRpcServer& server, const rpc::LoadOptions& o) {
  auto before = server.server->counters();
  auto r = rpc::RunLoad(o);
  auto after = server.server->counters();
  return {std::move(r),
          (after.duplicates + after.below_window) - (before.duplicates + before.below_window)};
}

// A case's row that runs again in later rounds: index in ctx.results.e2e,
// the load and engine, and a name for the log.
struct InRounds {
  size_t row;
  rpc::LoadOptions load;
  std::string engine, what;
  bool sys_just_before;
};

// The e2e section while it runs: its servers, nfs-ganesha when it runs
// here, and what failed or was not run. RunE2eSection runs each case
// (RunCase: its first round, then its later rounds) and then Finish.
class E2eRun {
 public:
  E2eRun(SectionContext& ctx, std::vector<harness::ModeName> modes)
      : ctx_(ctx), modes_(std::move(modes)), budget_(BudgetOf(ctx)) {}

  // nfs-ganesha as the peer too, when it can run here: the same rows over
  // an NFSv4.1 session (rpc/nfs41.h) against its VFS export.
  Status StartGanesha() {
    if (Status why = rpc::Ganesha::Available(); !why.ok()) {
      ganesha_skipped_ = why.message();
    } else if (InterruptSignal(ctx_.options)) {
      ganesha_skipped_ = "interrupted before it started";
    } else {
      SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx_.env.GetRealm());
      rpc::GaneshaOptions go;
      go.keytab = realm->service_keytab();
      go.env = realm->Environment();
      go.principals = {realm->user_principal()};
      SECMODE_ASSIGN_OR_RETURN(ganesha_, rpc::Ganesha::Start(go));
      SECMODE_RETURN_IF_ERROR(PutGaneshaFiles(*ganesha_));
    }
    return Status::Ok();
  }

  // Every mode's row of `c` against each peer, then the later rounds of
  // those that run in rounds, then each such row's (and control's) figures:
  // its median run's.
  Status RunCase(const Case& c) {
    std::vector<InRounds> in_rounds;
    for (const harness::ModeName& name : modes_) {
      for (int peer = 0; peer < (ganesha_ ? 2 : 1); ++peer) {
        // Ganesha's rows: the MIT engine's (its own GSS is MIT's; the
        // native engine would change only this client's half).
        if (peer == 1 && name.engine == "native") continue;
        if (InterruptSignal(ctx_.options)) {
          ++rows_not_run_;
          continue;
        }
        SECMODE_RETURN_IF_ERROR(RunRow(c, name, peer, &in_rounds));
      }
    }
    RunLaterRounds(in_rounds);
    // Each row's (and control's) figures: its median run's.
    const int cpus = ctx_.results.machine.logical_cpus;
    for (const InRounds& r : in_rounds) {
      nlohmann::json& row = ctx_.results.e2e[r.row];
      harness::PutMedianRunFirst(row, cpus);
      for (const Control& control : kControls) {
        if (row.contains(control.key)) harness::PutMedianRunFirst(row[control.key], cpus);
      }
    }
    return Status::Ok();
  }

  // Stops the servers and nfs-ganesha, records the section (its load
  // shape, the servers' totals, the legs' prediction, what an interruption
  // left out); the first row that failed.
  Status Finish() {
    if (ganesha_) SECMODE_RETURN_IF_ERROR(ganesha_->Stop());
    uint64_t calls = 0, contexts = 0, drops = 0;
    for (auto& [engine, s] : servers_) {
      s.server->Stop();
      auto counters = s.server->counters();
      calls += counters.calls;
      contexts += counters.contexts_created;
      drops += counters.duplicates + counters.below_window;
    }
    const double seconds = budget_.seconds, warmup = budget_.warmup,
                 max_seconds = budget_.max_seconds;
    ctx_.results.sections["e2e"] = {
        {"connections", kConnections},
        {"slots", kSlots},
        {"slots_large_io", kSlotsLargeIo},
        {"seconds", seconds},
        {"warmup_seconds", warmup},
        {"max_seconds", max_seconds},
        {"min_ops", kMinOps},
        {"reencode", true},
        {"shared_context", true},
        {"window", window_},
        {"wide_window", kWideWindow},
        {"rounds", budget_.rounds},
        {"rounds_note",
         "each row under load against secmode's server, and its controls, ran once per round, "
         "the case's modes one after the other in each round; a row's figures are its median "
         "run's by busy CPU per call, its other runs are in `repeats` (each with its `round`); "
         "a GSS row whose load keeps more calls outstanding than the window holds has the wide "
         "window control in every round"},
        {"sys_just_before",
         "each run of a GSS row in rounds (and so its controls, which follow it) had a sys run of "
         "the same load against the same server just before it: the row's `sys_just_before`, "
         "each with its `round`; the legs' prediction (from_legs) pairs each run with the sys "
         "run of its round"},
        {"context_per_connection_control",
         "rows whose engine serialised one context's calls, GETATTR and 4 KiB under load: in "
         "each round also with a context per connection, window " +
             std::to_string(kWideWindow)},
        {"timeout_ms", rpc::LoadOptions{}.timeout_ms},
        {"servers", {{"calls", calls}, {"contexts_created", contexts}, {"window_drops", drops}}},
        {"ganesha_seconds", std::min(seconds, kGaneshaSeconds)},
        {"ganesha", ganesha_skipped_.empty() ? nlohmann::json("ran")
                                             : nlohmann::json("not run: " + ganesha_skipped_)}};
    // What the legs measured in the micro section predict for each row.
    const LegsPrediction from_legs =
        PredictE2eFromLegs(ctx_.results.micro, ctx_.results.e2e, ctx_.results.machine.logical_cpus);
    ctx_.results.sections["e2e"]["from_legs"] = {{"tolerance", kLegsPredictionTolerance},
                                                 {"rows", from_legs.rows},
                                                 {"skipped", from_legs.skipped}};
    if (rows_not_run_ > 0 || runs_not_made_ > 0) {
      size_t rows_planned = 0;
      for (const harness::ModeName& name : modes_) {
        rows_planned += std::size(kCases) * (ganesha_ && name.engine != "native" ? 2 : 1);
      }
      const int sig = InterruptSignal(ctx_.options);
      ctx_.results.sections["e2e"]["interrupted"] = SignalName(sig);
      ctx_.results.errors.push_back(InterruptedError(
          "section", "e2e", sig,
          (rows_not_run_ > 0 ? std::to_string(rows_not_run_) + " of " +
                                   std::to_string(rows_planned) + " rows not run"
                             : std::string("every row ran")) +
              (runs_not_made_ > 0 ? ", " + std::to_string(runs_not_made_) +
                                        " runs of controls and later rounds not made"
                                  : std::string())));
    }
    return first_failure_;
  }

 private:
  // One in-process server per GSS engine (and window), so both ends of a
  // row use the engine the mode names.
  common::Result<harness::LocalRpcServer*> ServerFor(const std::string& engine_name,
                                                     uint32_t window) {
    const std::string key = engine_name + "/" + std::to_string(window);
    auto it = servers_.find(key);
    if (it != servers_.end()) return &it->second;
    rpc::ServerOptions so;
    so.window = window;
    if (engine_name != "none") {
      SECMODE_ASSIGN_OR_RETURN(so.engine, gss::ParseEngine(engine_name));
    }
    SECMODE_ASSIGN_OR_RETURN(auto s, harness::StartLocalRpcServer(ctx_.env, true, so));
    return &servers_.emplace(key, std::move(s)).first->second;
  }

  // One more run of a row's load, against the server of `engine` with
  // `window_of`: its report with that window, the drops counted and its
  // `round`, or nothing when the server, the run or any reply failed
  // (logged, naming `what`: these runs are controls and repeats, the row stays).
  std::optional<nlohmann::json> RunAgain(const std::string& engine, uint32_t window_of,
                                         const rpc::LoadOptions& load, int round,
                                         const std::string& what) {
    auto server = ServerFor(engine, window_of);
    Status failed = server.status();
    if (server.ok()) {
      rpc::LoadOptions aimed = load;
      (*server)->Aim(aimed);
      Measured m = Measure(**server, aimed);
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
    ctx_.log << "\n  e2e " << what << " failed: " << failed.ToString();
    return std::nullopt;
  }

  // A control run of a row's load (`what` names the row).
  std::optional<nlohmann::json> RunControl(const Control& control, const std::string& engine,
                                           const rpc::LoadOptions& load, int round,
                                           const std::string& what) {
    rpc::LoadOptions aimed = load;
    aimed.context_per_connection = control.context_per_connection;
    return RunAgain(
        engine, kWideWindow, aimed, round,
        what +
            (control.context_per_connection ? " with a context per connection"
                                            : " with window " + std::to_string(kWideWindow)) +
            (round > 0 ? " (round " + std::to_string(round + 1) + ")" : ""));
  }

  // The sys run just before a GSS run (SysJustBefore): its load in AUTH_SYS
  // against the same server; nothing when it failed (logged).
  std::optional<nlohmann::json> RunSysBefore(const std::string& engine,
                                             const rpc::LoadOptions& load, int round,
                                             const std::string& what) {
    rpc::LoadOptions sys = load;
    sys.security = rpc::Security::kSys;
    return RunAgain(engine, window_, sys, round, "sys run just before " + what);
  }

  // The first round of one row: mode `name` in case `c` against `peer` (0
  // secmode's server, 1 nfs-ganesha), with its sys run just before and its
  // controls; the row goes to ctx.results.e2e, and to *in_rounds when it
  // runs again in later rounds. A row that fails is logged and the first
  // such kept for Finish.
  Status RunRow(const Case& c, const harness::ModeName& name, int peer,
                std::vector<InRounds>* in_rounds) {
    const double seconds = budget_.seconds, warmup = budget_.warmup,
                 max_seconds = budget_.max_seconds;
    SECMODE_ASSIGN_OR_RETURN(harness::LocalRpcServer * server, ServerFor(name.engine, window_));
    rpc::LoadOptions o;
    server->Aim(o);
    if (peer == 1) {
      // A call resent on a session with its slot and sequence id before
      // the first was answered gets NFS4ERR_RETRY_UNCACHED_REP (nothing
      // asks the server to cache replies): a make test run saw it on a
      // krb5p 1 MiB READ after the 1 s timeout. Ganesha drops no call in
      // these rows, so a resend would only be of a slow one.
      o.timeout_ms = 30000;
      o.port = ganesha_->port();
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
    const std::string peer_name = peer == 1 ? "nfs-ganesha " + ganesha_->version() : "secmode";
    std::string key = std::string(rpc::NfsOpName(c.op)) + "/" + std::to_string(c.size) +
                      (c.one_at_a_time ? " one at a time" : "") +
                      (peer == 1 ? " (" + peer_name + ")" : "");
    const bool sys_just_before = SysJustBefore(name.family, c, peer);
    std::optional<nlohmann::json> sys_before;
    if (sys_just_before) sys_before = RunSysBefore(name.engine, o, 0, name.family + " " + key);
    Measured measured = Measure(*server, o);
    auto& r = measured.report;
    const uint64_t window_drops = measured.window_drops;
    if (!r.ok()) {
      ctx_.log << "\n  e2e " << name.family << " " << key << " failed: " << r.status().ToString();
      if (first_failure_.ok()) {
        first_failure_ = r.status().Annotate("e2e " + name.family + " " + key);
      }
      return Status::Ok();
    }
    nlohmann::json row = harness::LoadReportJson(*r);
    row["engine"] = name.engine;
    row["enctype"] = name.enctype;
    row["transport"] = "tcp-loopback";
    row["server"] = peer_name;
    // Ganesha's window drops are not counted (its counters are not read).
    if (peer == 0) {
      row["window"] = window_;
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
      const bool controls[] = {WideWindowControl(name.family, c, window_),
                               r->crypto_threads == "serialised" && PerConnectionControl(c)};
      for (size_t i = 0; i < std::size(kControls); ++i) {
        if (!controls[i]) continue;
        if (InterruptSignal(ctx_.options)) {
          ++runs_not_made_;
          continue;
        }
        if (auto w = RunControl(kControls[i], name.engine, o, 0, what)) {
          row[kControls[i].key] = std::move(*w);
        }
      }
    }
    // A row with failed replies is a failure of the section; it runs once.
    if (RunsInRounds(c, peer) && r->errors == 0) {
      in_rounds->push_back(
          {ctx_.results.e2e.size(), o, name.engine, name.family + " " + key, sys_just_before});
    }
    ctx_.results.e2e.push_back(std::move(row));
    if (r->errors > 0 && first_failure_.ok()) {
      first_failure_ =
          Status::Internal("e2e " + name.family + " " + key + ": " + std::to_string(r->errors) +
                           " failed replies, first: " + r->first_error);
    }
    return Status::Ok();
  }

  // The later rounds: each row's load again, the modes in the same order,
  // each row's controls after it; a run not made after a signal is counted.
  void RunLaterRounds(const std::vector<InRounds>& in_rounds) {
    for (int round = 1; round < budget_.rounds; ++round) {
      for (const InRounds& r : in_rounds) {
        // A run made goes to the list `key` of `target`; one not made, nowhere.
        auto add_to = [](nlohmann::json& target, const char* key,
                         std::optional<nlohmann::json> run) {
          if (run) target[key].push_back(std::move(*run));
        };
        const std::string in_round = r.what + " (round " + std::to_string(round + 1) + ")";
        if (InterruptSignal(ctx_.options)) {
          runs_not_made_ += r.sys_just_before ? 2 : 1;
        } else {
          if (r.sys_just_before) {
            add_to(ctx_.results.e2e[r.row], "sys_just_before",
                   RunSysBefore(r.engine, r.load, round, in_round));
          }
          add_to(ctx_.results.e2e[r.row], "repeats",
                 RunAgain(r.engine, window_, r.load, round, in_round));
        }
        for (const Control& control : kControls) {
          if (!ctx_.results.e2e[r.row].contains(control.key)) continue;
          if (InterruptSignal(ctx_.options)) {
            ++runs_not_made_;
            continue;
          }
          add_to(ctx_.results.e2e[r.row][control.key], "repeats",
                 RunControl(control, r.engine, r.load, round, r.what));
        }
      }
    }
  }

  SectionContext& ctx_;
  const std::vector<harness::ModeName> modes_;
  const Budget budget_;
  const uint32_t window_ = rpc::ServerOptions{}.window;
  // Declared before ganesha_, so stopped after it.
  std::map<std::string, harness::LocalRpcServer> servers_;
  std::unique_ptr<rpc::Ganesha> ganesha_;
  std::string ganesha_skipped_;
  Status first_failure_;
  size_t rows_not_run_ = 0;
  size_t runs_not_made_ = 0;  // of controls and later rounds, after an interruption
};

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
      if (ganesha && m.engine != "native")
        seconds += std::min(b.seconds, kGaneshaSeconds) + b.warmup;
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
  SECMODE_ASSIGN_OR_RETURN(const std::vector<harness::ModeName> modes, E2eModes(ctx));
  if (modes.empty()) return Status::Ok();
  E2eRun run(ctx, modes);
  SECMODE_RETURN_IF_ERROR(run.StartGanesha());
  for (const Case& c : kCases) SECMODE_RETURN_IF_ERROR(run.RunCase(c));
  return run.Finish();
}

}  // namespace secmode::suite
