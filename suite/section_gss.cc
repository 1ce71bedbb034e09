// Section "gss": OpenSSL primitive bounds for every enctype (into
// RunResults::bounds), krb5p micro rows for the enctypes the micro section
// does not cover, and mit, mit-iov and native krb5p seal+open against the
// bound per enctype and size (RunResults::sections["gss"].comparison).
//
// Default run: all four enctypes x all engines. A run restricted with
// --modes covers only the enctypes of its krb5 modes and measures no extra
// micro rows.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "gss/context_pair.h"
#include "gss/enctype.h"
#include "gss/protector.h"
#include "harness/gss_bounds.h"
#include "harness/measure.h"
#include "harness/modes.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;
using harness::BoundOp;
using harness::BoundRunner;

namespace {

// Mean ns per op of one bound, timed in a tight loop (the operations are
// allocation-free and uniform, so the mean is what matters).
common::Result<double> MeasureBound(BoundRunner& runner, BoundOp op, size_t size,
                                    double min_seconds) {
  common::Bytes buf = common::PatternBytes(size, 5);
  for (int i = 0; i < 3; ++i) SECMODE_RETURN_IF_ERROR(runner.Run(op, buf.data(), size));
  const uint64_t budget = static_cast<uint64_t>(min_seconds * 1e9);
  uint64_t ops = 0;
  const uint64_t t0 = common::NowNs();
  uint64_t elapsed = 0;
  while (elapsed < budget || ops < 10) {
    for (int i = 0; i < 8; ++i) SECMODE_RETURN_IF_ERROR(runner.Run(op, buf.data(), size));
    ops += 8;
    elapsed = common::NowNs() - t0;
  }
  return static_cast<double>(elapsed) / static_cast<double>(ops);
}

// One krb5p side pair per engine for the comparison.
struct EnginePair {
  std::string engine;
  std::unique_ptr<gss::Protector> initiator, acceptor;
};

// The comparison for one enctype and size, interleaved: every iteration
// times a batch of the bound (encrypt+HMAC then decrypt+HMAC), then a batch
// of seal+open for each engine, back to back, in thread CPU time (what an
// operation costs even when the thread is preempted mid-operation; batches of
// about 64 KiB of payload so the clock's own cost vanishes at small sizes).
// Each column keeps its fastest batch: interference from other processes
// (caches, frequency) only ever adds time. The micro table keeps wall-clock
// means and percentiles of single operations.
struct Comparison {
  double bound = 0;                       // ns per message, seal bound + open bound
  std::map<std::string, double> engines;  // ns per message, seal + open
  int iterations = 0;
};

common::Result<Comparison> Compare(BoundRunner& bound, std::vector<EnginePair>& pairs, size_t size,
                                   double seconds) {
  const common::Bytes payload = common::PatternBytes(size, 21);
  common::Bytes scratch = payload, token, opened;
  const size_t batch = std::max<size_t>(1, 65536 / std::max<size_t>(size, 1));
  const double inf = 1e300;
  Comparison c;
  c.bound = inf;
  for (const auto& p : pairs) c.engines[p.engine] = inf;
  const uint64_t budget = static_cast<uint64_t>(seconds * 1e9);
  const uint64_t start = common::NowNs();
  for (int iter = 0; common::NowNs() - start < budget || iter < 10; ++iter) {
    uint64_t t0 = common::ThreadCpuNs();
    for (size_t k = 0; k < batch; ++k) {
      SECMODE_RETURN_IF_ERROR(bound.Run(BoundOp::kCbcEncryptHmac, scratch.data(), size));
      SECMODE_RETURN_IF_ERROR(bound.Run(BoundOp::kCbcDecryptHmac, scratch.data(), size));
    }
    uint64_t t1 = common::ThreadCpuNs();
    const double per = 1.0 / static_cast<double>(batch);
    if (iter > 0) c.bound = std::min(c.bound, static_cast<double>(t1 - t0) * per);  // 0 warms up
    for (auto& p : pairs) {
      t0 = common::ThreadCpuNs();
      for (size_t k = 0; k < batch; ++k) {
        SECMODE_RETURN_IF_ERROR(p.initiator->Wrap(payload, true, &token));
        bool conf = false;
        SECMODE_RETURN_IF_ERROR(p.acceptor->Unwrap(token, &opened, &conf));
        if (k == 0 && (opened != payload || !conf)) {
          return Status::Internal(p.engine + ": unwrapped payload differs from the sealed one");
        }
      }
      t1 = common::ThreadCpuNs();
      if (iter > 0) {
        c.engines[p.engine] = std::min(c.engines[p.engine], static_cast<double>(t1 - t0) * per);
      }
    }
    c.iterations = iter;
  }
  return c;
}

double BoundSeconds(const SuiteOptions& o) { return o.quick ? 0.04 : 0.25; }
double ComparisonSeconds(const SuiteOptions& o) { return o.quick ? 0.3 : 1.5; }

}  // namespace

// The bounds, the extra krb5p rows and the comparison, per enctype and size
// (the bounds' shared primitives counted once per enctype).
double PlannedGssSeconds(const SectionContext& ctx) {
  const SuiteOptions& o = ctx.options;
  std::set<std::string> enctypes, krb5p;
  for (const auto& m : ctx.modes) {
    if (m.family.rfind("krb5", 0) == 0) enctypes.insert(m.enctype);
    if (m.family == "krb5p") krb5p.insert(m.enctype + ":" + m.engine);
  }
  if (enctypes.empty()) return 0;
  const double e = ctx.restricted ? enctypes.size() : std::size(gss::kNativeEnctypes);
  double sizes = 0;
  for (size_t s : ctx.sizes) sizes += s > 0 && s % 16 == 0 ? 1 : 0;
  double seconds = e * 5 * sizes * BoundSeconds(o) + e * sizes * ComparisonSeconds(o);
  if (!ctx.restricted && o.full) {
    const double rows = std::max(0.0, e * 3 - static_cast<double>(krb5p.size()));
    seconds += rows * static_cast<double>(ctx.sizes.size() * std::size(common::kAllLegs)) *
               MicroMeasureOptions(o).min_seconds;
  }
  return seconds;
}

namespace {

Status RunGss(SectionContext& ctx) {
  const SuiteOptions& o = ctx.options;
  const std::vector<size_t>& sizes = ctx.sizes;
  const double min_seconds = BoundSeconds(o);
  const double comparison_seconds = ComparisonSeconds(o);
  const bool full = !ctx.restricted;
  const std::vector<std::string> engines = {"mit", "mit-iov", "native"};

  // The enctypes with an AES-CBC + HMAC bound: those of the native engine
  // (gss/enctype.h; an enctype only MIT can do has no bound to set beside).
  std::vector<gss::Enctype> enctypes;
  if (full) {
    enctypes.assign(std::begin(gss::kNativeEnctypes), std::end(gss::kNativeEnctypes));
  } else {
    std::set<std::string> names;
    for (const auto& row : ctx.results.micro) {
      if (row.mode.rfind("krb5", 0) == 0 && !row.enctype.empty()) names.insert(row.enctype);
    }
    for (gss::Enctype e : gss::kNativeEnctypes) {
      if (names.count(gss::EnctypeName(e))) enctypes.push_back(e);
    }
  }
  if (enctypes.empty()) return Status::Ok();  // nothing Kerberos in this run

  // 1. Bounds.
  std::set<std::string> done;
  for (gss::Enctype e : enctypes) {
    BoundRunner runner;
    SECMODE_RETURN_IF_ERROR(runner.Init(e));
    for (BoundOp op : {BoundOp::kCbcEncrypt, BoundOp::kCbcDecrypt, BoundOp::kHmac,
                       BoundOp::kCbcEncryptHmac, BoundOp::kCbcDecryptHmac}) {
      const std::string name = runner.Name(op);
      if (!done.insert(name).second) continue;
      for (size_t size : sizes) {
        if (size == 0 || size % 16 != 0) continue;
        SECMODE_ASSIGN_OR_RETURN(double ns, MeasureBound(runner, op, size, min_seconds));
        ctx.results.bounds.push_back({name, size, static_cast<double>(size) * 1e9 / ns});
      }
    }
  }

  // 2. krb5p micro rows (all four legs) for the enctypes the per-mode loop
  // did not cover, so results.json has every enctype x engine: with --full
  // only (they would make the default run longer than its 10 minutes); the
  // comparison table below covers every enctype in every run.
  auto have_rows = [&](const std::string& engine, const std::string& enctype) {
    for (const auto& row : ctx.results.micro) {
      if (row.mode == "krb5p" && row.engine == engine && row.enctype == enctype) return true;
    }
    return false;
  };
  const harness::MeasureOptions mopts = MicroMeasureOptions(o);
  if (full && o.full) {
    for (gss::Enctype e : enctypes) {
      for (const auto& engine : engines) {
        if (have_rows(engine, gss::EnctypeName(e))) continue;
        harness::ModeName name{"krb5p", gss::EnctypeName(e), engine};
        auto a = harness::MakeAssociation(name, ctx.env);
        if (!a.ok()) return a.status().Annotate("gss section");
        for (size_t size : sizes) {
          for (common::Leg leg : common::kAllLegs) {
            auto m = harness::MeasureLeg(*a, leg, size, mopts);
            if (!m.ok()) return m.status().Annotate("gss section " + name.ToString());
            ctx.results.micro.push_back(
                {"krb5p", engine, gss::EnctypeName(e), common::LegName(leg), size, 1, *m});
          }
        }
      }
    }
  }

  // 3. The engines against the bound, per enctype and size.
  nlohmann::json comparison = nlohmann::json::array();
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx.env.GetRealm());
  for (gss::Enctype e : enctypes) {
    const std::string en = gss::EnctypeName(e);
    harness::BoundRunner namer;
    SECMODE_RETURN_IF_ERROR(namer.Init(e));
    std::vector<EnginePair> pairs;
    for (const auto& engine : engines) {
      SECMODE_ASSIGN_OR_RETURN(gss::Engine eng, gss::ParseEngine(engine));
      SECMODE_ASSIGN_OR_RETURN(auto cp, gss::ContextPair::Establish(*realm, e));
      EnginePair p{engine, nullptr, nullptr};
      SECMODE_ASSIGN_OR_RETURN(p.initiator, gss::NewProtector(eng, cp->ReleaseInitiator()));
      SECMODE_ASSIGN_OR_RETURN(p.acceptor, gss::NewProtector(eng, cp->ReleaseAcceptor()));
      pairs.push_back(std::move(p));
    }
    for (size_t size : sizes) {
      if (size == 0 || size % 16 != 0) continue;
      SECMODE_ASSIGN_OR_RETURN(Comparison cmp, Compare(namer, pairs, size, comparison_seconds));
      comparison.push_back({{"enctype", en},
                            {"size", size},
                            {"bound_ns", cmp.bound},
                            {"engines_ns", cmp.engines},
                            {"iterations", cmp.iterations}});
    }
  }
  ctx.results.sections["gss"] = {
      {"engines", engines},
      {"quick", o.quick},
      {"every_enctype_rows", full && o.full},
      {"restricted", !full},
      {"micro_seconds", min_seconds},
      {"comparison_seconds", comparison_seconds},
      {"comparison", std::move(comparison)},
      {"method",
       "token level, initiator seals (wrap conf=1), acceptor opens; thread CPU time of seal + "
       "open, the fastest of interleaved batches; bound = OpenSSL AES-CBC + HMAC over the "
       "payload bytes"}};
  ctx.log << " (" << ctx.results.bounds.size() << " bounds)";
  return Status::Ok();
}

}  // namespace

Status RunGssSection(SectionContext& context) { return RunGss(context); }

}  // namespace secmode::suite
