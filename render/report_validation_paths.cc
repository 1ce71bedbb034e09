// The validation's report: the traced real runs' paths beside the model's
// (where violations come from, how connections were replaced and contexts
// re-created, the stages and threads) and the ablation.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "common/format.h"
#include "common/stats.h"
#include "render/markdown.h"
#include "render/report_sections.h"
#include "render/report_validation_parts.h"

namespace secmode::render {

using common::Fmt;
using nlohmann::json;

namespace {

// How the threads of the model and of the real runs ran, per point: per
// call, the socket reads (batches), the times a thread went to sleep and
// was given a core, and the mean wait for a core per run, at each end;
// simulated / real (the median of the runs). Empty when no run counted them.
std::string ThreadRunsTable(const std::vector<const json*>& rows) {
  std::ostringstream md;
  bool any = false;
  for (const json* row : rows) {
    const json sim = row->value("simulated", json::object());
    const json runs = row->value("measured_runs", json::array());
    if (IntField(sim, "client_runs") <= 0 || runs.empty() || IntField(runs[0], "client_runs") <= 0)
      continue;
    if (!any) {
      md << "### How the threads ran\n\n"
            "Per call: socket reads (each a batch), sleeps (a thread blocked with nothing to "
            "do: the real threads' voluntary context switches), runs (a thread given a core: "
            "the real threads' schedstat count), and per run the mean wait runnable for a core "
            "in us (the real threads' schedstat run-queue delay), client receivers and server "
            "threads, simulated / real (the median of the runs). A model whose threads sleep "
            "and run more often per call than the real ones reads smaller batches, and at a "
            "cost per read spends more CPU per call.\n\n"
            "| point | client reads | client sleeps | client runs | client wait per run | "
            "server reads | server sleeps | server runs | server wait per run |\n"
            "|---|---|---|---|---|---|---|---|---|\n";
      any = true;
    }
    auto per_call = [](const json& r, const char* key) {
      const double calls = static_cast<double>(std::max<int64_t>(1, IntField(r, "completed")));
      return static_cast<double>(IntField(r, key)) / calls;
    };
    auto per_run = [](const json& r, const char* wait, const char* runs) {
      return static_cast<double>(IntField(r, wait)) / 1e3 /
             static_cast<double>(std::max<int64_t>(1, IntField(r, runs)));
    };
    auto real_median = [&](auto f) {
      std::vector<double> v;
      for (const json& r : runs) v.push_back(f(r));
      return common::Median(v);
    };
    md << "| " << MdText(row->value("name", "")) << " |";
    for (const char* end : {"client", "server"}) {
      const std::string e = end;
      for (const std::string what : {"_reads", "_sleeps", "_runs"}) {
        const std::string key = e + what;
        md << " " << Fmt("%.2f", per_call(sim, key.c_str())) << " / "
           << Fmt("%.2f", real_median([&](const json& r) { return per_call(r, key.c_str()); }))
           << " |";
      }
      const std::string wait = e + "_wait_ns", n = e + "_runs";
      md << " " << Fmt("%.0f", per_run(sim, wait.c_str(), n.c_str())) << " / "
         << Fmt("%.0f",
                real_median([&](const json& r) { return per_run(r, wait.c_str(), n.c_str()); }))
         << " |";
    }
    md << "\n";
  }
  if (any) md << "\n";
  return md.str();
}

// " p50 / p90 |" of a simulated step (ScenarioResult::Step) in us, " - |"
// when the simulated run had none.
std::string ModelStep(const json& steps, const char* name) {
  const json step = steps.value(name, json::object());
  if (IntField(step, "count") == 0) return " - |";
  std::ostringstream o;
  o << " " << Fmt("%.0f", IntField(step, "p50_ns") / 1e3) << " / "
    << Fmt("%.0f", IntField(step, "p90_ns") / 1e3) << " |";
  return o.str();
}

}  // namespace

std::string AttributionMarkdown(const ValidationRows& rows) {
  bool any_attribution = false;
  for (const json* row : rows) any_attribution |= row->contains("attribution");
  if (!any_attribution) return "";
  std::ostringstream md;
  md << "\n### Where the violations come from\n\n"
        "Every call of the real runs is traced at both ends (numbered, queued, written by the "
        "client; read, checked, answered by the server). Each violation's path is cut into "
        "encode (numbered to queued), hold (queued to written: the receiver's batch or the "
        "skew delay line), socket (written to read by the server's thread) and check (read to "
        "checked, within the records of one read); the stage whose time exceeds that stage's "
        "median over all calls the most is the cause, named with the thread that held the "
        "call there. Excess = that stage's time minus its median; lag = how far below the "
        "highest number seen the call arrived.\n\n"
        "| point | violations (matched) | stage medians us: encode / hold / socket / check | "
        "cause: stage, thread | count | median excess us | max excess us | median lag |\n"
        "|---|---:|---|---|---:|---:|---:|---:|\n";
  for (const json* row : rows) {
    if (!row->contains("attribution")) continue;
    const json& a = (*row)["attribution"];
    const json st = a.value("stages", json::object());
    std::string medians;
    for (const char* stage : {"encode", "hold", "socket", "check"}) {
      medians += (medians.empty() ? "" : " / ") +
                 Fmt("%.0f", st.value(stage, json::object()).value("median_us", 0.0));
    }
    const json causes = a.value("causes", json::array());
    const std::string head = "| " + MdText(row->value("name", "")) + " | " +
                             std::to_string(IntField(a, "violations")) + " (" +
                             std::to_string(IntField(a, "matched")) + ") | " + medians + " | ";
    if (causes.empty()) {
      md << head << "- | 0 | - | - | - |\n";
      continue;
    }
    bool first = true;
    for (const auto& c : causes) {
      md << (first ? head : "| | | | ") << MdText(c.value("stage", "")) << ", "
         << MdText(c.value("thread", "")) << " | " << IntField(c, "count") << " | "
         << Fmt("%.0f", c.value("median_excess_us", 0.0)) << " | "
         << Fmt("%.0f", c.value("max_excess_us", 0.0)) << " | "
         << Fmt("%.0f", c.value("median_lag", 0.0)) << " |\n";
      first = false;
    }
  }
  md << "\n";
  return md.str();
}

std::string ReconnectsMarkdown(const ValidationRows& rows) {
  bool any_reconnects = false;
  for (const json* row : rows) any_reconnects |= row->contains("reconnects");
  if (!any_reconnects) return "";
  std::ostringstream md;
  md << "### How the closed connections were replaced under load\n\n"
        "Each time the server closed a connection (drop-disconnect), the traced real run "
        "recorded the steps of its replacement: the server shut it down (close), the client's "
        "receiver read the end of the stream (eof), its new connect returned (connected), the "
        "server's accept returned the new connection (accepted) and its thread began to run "
        "(started), the lost calls were numbered and written again (resent), and the server "
        "checked the first call written on the new connection (first checked). Median / p90 "
        "in us. Beside them, the same two steps of the simulated run (its receiver waits for a "
        "core to read the end of the stream, reconnects in one RTT plus the reconnect time "
        "the calibration measured, then waits for a core again to number and write the "
        "resends).\n\n"
        "| point | reconnects | close -> eof | eof -> connected | connected -> accepted | "
        "accepted -> started | eof -> resent | eof -> first checked | model: reconnects | "
        "model: close -> eof | model: eof -> resent |\n"
        "|---|---:|---|---|---|---|---|---|---:|---|---|\n";
  for (const json* row : rows) {
    if (!row->contains("reconnects")) continue;
    const json& r = (*row)["reconnects"];
    md << "| " << MdText(row->value("name", "")) << " | " << IntField(r, "reconnects") << " |";
    for (const char* name : {"close -> eof", "eof -> connected", "connected -> accepted",
                             "accepted -> started", "eof -> resent", "eof -> first checked"}) {
      json step = json::object();
      for (const auto& st : r.value("steps", json::array())) {
        if (st.value("step", "") == name) step = st;
      }
      if (IntField(step, "count") == 0) {
        md << " - |";
      } else {
        md << " " << Fmt("%.0f", step.value("median_us", 0.0)) << " / "
           << Fmt("%.0f", step.value("p90_us", 0.0)) << " |";
      }
    }
    const json steps = row->value("simulated", json::object()).value("steps", json::object());
    md << " " << IntField(row->value("simulated", json::object()), "disconnects") << " |"
       << ModelStep(steps, "close -> eof") << ModelStep(steps, "eof -> resent") << "\n";
  }
  md << "\n";
  return md.str();
}

std::string RecreationsMarkdown(const ValidationRows& rows) {
  bool any_recreations = false;
  for (const json* row : rows) any_recreations |= row->contains("recreations");
  if (!any_recreations) return "";
  std::ostringstream md;
  md << "### How contexts were re-created under load\n\n"
        "Each time the server discarded the shared context (discard-context), a receiver of "
        "the traced real run re-created it: from beginning the GSS exchange, holding the "
        "context's lock (the other receivers that need the context wait for it), to the new "
        "context. Median / p90 in us, beside the simulated run's re-creations (its receiver "
        "spends the creation's CPU on a core, then waits one RTT plus the rest of the "
        "creation time the calibration measured with the cores awake). Then how the "
        "receivers went on: from the new context to each receiver's first call numbered "
        "under it (every receiver that numbered one before the next re-creation, pooled). "
        "The receivers that waited meanwhile blocked on the context's lock, and a mutex wakes "
        "one waiter per release, so they take it one after another; the model does the same "
        "(each woken waiter wakes the next once it has a core; the ablation's \"a context's "
        "waiters wake together\" is the model without it).\n\n"
        "| point | re-creations | began -> done | done -> each receiver's first call | model: "
        "re-creations | model: began -> done | model: done -> each receiver's first call |\n"
        "|---|---:|---|---|---:|---|---|\n";
  for (const json* row : rows) {
    if (!row->contains("recreations")) continue;
    const json& r = (*row)["recreations"];
    const json sim = row->value("simulated", json::object());
    const json resumes = row->value("resumes", json::object());
    md << "| " << MdText(row->value("name", "")) << " | " << IntField(r, "count") << " | "
       << Fmt("%.0f", r.value("median_us", 0.0)) << " / " << Fmt("%.0f", r.value("p90_us", 0.0))
       << " | "
       << (IntField(resumes, "count") > 0 ? Fmt("%.0f", resumes.value("median_us", 0.0)) + " / " +
                                                Fmt("%.0f", resumes.value("p90_us", 0.0))
                                          : std::string("-"))
       << " | " << IntField(sim, "context_recreations") << " |"
       << ModelStep(sim.value("steps", json::object()), "began -> done")
       << ModelStep(sim.value("steps", json::object()), "done -> each receiver's first call")
       << "\n";
  }
  md << "\n";
  return md.str();
}

std::string ModelPathsMarkdown(const ValidationRows& rows) {
  bool any_model_stages = false;
  for (const json* row : rows) {
    any_model_stages |= row->value("simulated", json::object()).contains("stages");
  }
  if (!any_model_stages) return "";
  std::ostringstream md;
  md << "### The model's paths beside the real ones\n\n"
        "The same four stages in the simulator (thread model: a receiver thread per "
        "connection, a server thread per connection, per-wakeup batches, the machine's cores "
        "with the probe's time slice and wakeup preemption): median and p99 in us, simulated / "
        "real, and how many violations each stage caused, simulated / real; the model's "
        "figures are its first seed's.\n\n"
        "| point | encode p50, p99 | hold p50, p99 | socket p50, p99 | check p50, p99 | "
        "violations by stage: encode / hold / socket / check |\n|---|---|---|---|---|---|\n";
  for (const json* row : rows) {
    const json st = row->value("simulated", json::object()).value("stages", json::object());
    if (st.empty()) continue;
    const json real = row->value("attribution", json::object()).value("stages", json::object());
    std::map<std::string, int64_t> real_causes;
    for (const auto& c : row->value("attribution", json::object()).value("causes", json::array())) {
      real_causes[c.value("stage", "")] += IntField(c, "count");
    }
    md << "| " << MdText(row->value("name", "")) << " |";
    std::string counts;
    for (const char* stage : {"encode", "hold", "socket", "check"}) {
      const json sim = st.value(stage, json::object());
      const json re = real.value(stage, json::object());
      md << " " << Fmt("%.0f", IntField(sim, "p50_ns") / 1e3) << " / "
         << Fmt("%.0f", re.value("median_us", 0.0)) << ", "
         << Fmt("%.0f", IntField(sim, "p99_ns") / 1e3) << " / "
         << Fmt("%.0f", re.value("p99_us", 0.0)) << " |";
      counts += (counts.empty() ? "" : " / ") + std::to_string(IntField(sim, "violations")) + "/" +
                std::to_string(real_causes[stage]);
    }
    md << " " << counts << " |\n";
  }
  md << "\n";
  md << ThreadRunsTable(rows);
  return md.str();
}

std::string AblationMarkdown(const ValidationRows& rows) {
  bool any_ablation = false;
  for (const json* row : rows) any_ablation |= row->contains("ablation");
  if (!any_ablation) return "";
  std::ostringstream md;
  md << "### What each mechanism changes (ablation)\n\n"
        "Each point simulated again with one mechanism off or changed: violations and goodput "
        "(ops/s), beside the full model and the real run, each with the model's first seed "
        "(the verdicts above take the seeds' mean). \"whole socket per wakeup\": a "
        "thread's batch is everything its socket holds instead of one 64 KiB read; \"the "
        "waker is preempted\": a waking thread takes the core of the thread whose write woke "
        "it instead of the one that has run longest; \"one run queue for all cores\": any "
        "free core takes any waiting thread at once, instead of a queue per core whose "
        "threads another core takes only once their cache is cold; \"no thread model\" is the "
        "model "
        "without threads and cores (the server's workers take calls in arrival order, "
        "numbering costs no client CPU); \"every cost per call\": no CPU per socket read, "
        "the row's no-violation run's reads' CPU added to each call instead (the model before "
        "it had a cost per read); \"no core pauses\": no pause of a busy core that no "
        "modelled thread causes; \"pauses as the probe saw them (not the runs' steal)\": the "
        "pause probe's rate, not the one fed the share the hypervisor took in the point's "
        "real runs; \"context creation off the cores\" and \"reconnects off the "
        "cores\": those cost waiting only, no CPU; \"busy cores preempted at the wakeup\": "
        "a woken thread's preemption of a busy core lands at its wakeup, not the busy-core "
        "probe's delay later; \"idle cores wake as after a long idle\": every wakeup of an "
        "idle core takes what the idle-core probe measured after its longest idle, whatever "
        "the core's idle time; \"woken threads wait behind descheduled ones\": every waiting "
        "thread in "
        "order of arrival, not the probe's share ahead; \"context creation as on a quiet "
        "machine\": a re-creation "
        "takes what back-to-back creations took, not what one right after a burst of the "
        "mode's load took; \"a context's waiters wake together\": the receivers waiting for "
        "a re-created context all wake when it is ready, instead of one after another as a "
        "mutex's waiters do.\n\n";
  // One column per variant, in the order the rows list them.
  std::vector<std::string> variants;
  for (const json* row : rows) {
    for (const auto& a : row->value("ablation", json::array())) {
      const std::string v = a.value("without", "");
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) {
        variants.push_back(v);
      }
    }
  }
  md << "| point | real | full model";
  for (const std::string& v : variants) md << " | " << MdText(v);
  md << " |\n|---|---|---";
  for (size_t i = 0; i < variants.size(); ++i) md << "|---";
  md << "|\n";
  auto cell = [](const json& r) {
    return std::to_string(IntField(r, "violations")) + ", " +
           Fmt("%.0f", r.value("ops_per_s", 0.0));
  };
  for (const json* row : rows) {
    if (!row->contains("ablation")) continue;
    std::map<std::string, json> by;
    for (const auto& a : (*row)["ablation"])
      by[a.value("without", "")] = a.value("simulated", json::object());
    md << "| " << MdText(row->value("name", "")) << " | "
       << cell(row->value("measured", json::object())) << " | "
       << cell(row->value("simulated", json::object()));
    for (const std::string& v : variants) {
      md << " | " << (by.count(v) ? cell(by[v]) : std::string("-"));
    }
    md << " |\n";
  }
  md << "\n";
  return md.str();
}

}  // namespace secmode::render
