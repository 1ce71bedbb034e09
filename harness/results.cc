#include "harness/results.h"

#include <filesystem>

#include "common/clock.h"
#include "common/files.h"
#include "harness/measure.h"

namespace secmode::harness {

std::string MicroEstimatorOf(const RunResults& r) {
  if (!r.method.is_object()) return "";
  if (!r.method.contains("micro_estimator")) return "median";
  return r.method["micro_estimator"] == kMicroEstimator ? kMicroEstimator : "";
}

using common::Status;
using nlohmann::json;

json DefaultMethod() {
  return {
      {"timer", "CLOCK_MONOTONIC around each operation"},
      {"cycles", std::string(common::CycleSource()) + " ticks (constant rate, not core cycles)"},
      {"cycle_source", common::CycleSource()},
      {"open_legs",
       "open a fresh in-order message sealed by the peer leg just before, outside the timed "
       "region (in cache, as one just read from a socket)"},
      {"sources", "each operation's payload (seal legs) or message (open legs) from the next of " +
                      std::to_string(kSourcePlaces) + " places " +
                      std::to_string(kSourcePlaceStep) +
                      " bytes apart across a page, so a figure averages over the distances "
                      "between source and destination its operations met rather than resting on "
                      "where the allocator put the buffers"}};
}

json NoiseJson(const common::LoadAverage& load_before, const common::LoadAverage& load_after,
               const common::CpuTimes& cpu_before, const common::CpuTimes& cpu_after) {
  auto load = [](const common::LoadAverage& l) -> json {
    if (!l.known) return nullptr;
    return json::array({l.one, l.five, l.fifteen});
  };
  auto share = [](double f) -> json {
    if (f < 0) return nullptr;
    return f;
  };
  return {{"loadavg_before", load(load_before)},
          {"loadavg_after", load(load_after)},
          {"steal_fraction", share(common::StealFraction(cpu_before, cpu_after))},
          {"idle_fraction", share(common::IdleFraction(cpu_before, cpu_after))}};
}

json ToJson(const RunResults& r) {
  const auto& m = r.machine;
  json doc;
  doc["schema"] = kResultsSchema;
  doc["machine"] = {{"cpu_model", m.cpu_model},
                    {"logical_cpus", m.logical_cpus},
                    {"cpu_flags", m.cpu_flags},
                    {"kernel", m.kernel},
                    {"hostname", m.hostname},
                    {"openssl", m.openssl},
                    {"krb5", m.krb5},
                    {"compiler", m.compiler},
                    {"build_type", m.build_type},
                    {"tsc_ghz", m.tsc_ghz},
                    {"compiler_flags", m.compiler_flags},
                    {"secmode_commit", m.secmode_commit},
                    {"secmode_tree", m.secmode_tree}};
  json libraries = json::object();
  for (const auto& [name, version] : m.libraries) libraries[name] = version;
  doc["machine"]["libraries"] = std::move(libraries);
  doc["command"] = r.command;
  doc["started_at"] = r.started_at;
  doc["finished_at"] = r.finished_at;
  doc["method"] = r.method;
  json micro = json::array();
  for (const auto& row : r.micro) {
    micro.push_back({{"mode", row.mode},
                     {"engine", row.engine},
                     {"enctype", row.enctype},
                     {"leg", row.leg},
                     {"size", row.size},
                     {"threads", row.threads},
                     {"ns_per_op", row.m.ns_per_op},
                     {"bytes_per_second", row.m.bytes_per_second},
                     {"cycles_per_byte", row.m.cycles_per_byte},
                     {"p50_ns", row.m.p50_ns},
                     {"p99_ns", row.m.p99_ns},
                     {"p999_ns", row.m.p999_ns},
                     {"samples", row.m.samples},
                     {"repetitions_ns", row.m.repetitions_ns},
                     {"cv", row.m.cv},
                     {"noisy", row.m.noisy()}});
  }
  doc["micro"] = std::move(micro);
  json bounds = json::array();
  for (const auto& b : r.bounds) {
    bounds.push_back(
        {{"primitive", b.primitive}, {"size", b.size}, {"bytes_per_second", b.bytes_per_second}});
  }
  doc["bounds"] = std::move(bounds);
  doc["nconnect"] = r.nconnect;
  doc["predictions"] = r.predictions;
  doc["e2e"] = r.e2e;
  doc["sections"] = r.sections;
  if (!r.errors.empty()) doc["errors"] = r.errors;
  if (!r.noise.empty()) doc["noise"] = r.noise;
  return doc;
}

namespace {

enum class Kind { kString, kNumber, kUnsigned, kArray };

Status Expect(const json& obj, const std::string& path, const char* key, Kind kind) {
  if (!obj.contains(key)) return Status::Corrupt(path + "." + key + ": missing");
  const json& v = obj[key];
  bool ok = false;
  const char* want = "";
  switch (kind) {
    case Kind::kString:
      ok = v.is_string();
      want = "a string";
      break;
    case Kind::kNumber:
      ok = v.is_number();
      want = "a number";
      break;
    case Kind::kUnsigned:
      ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      want = "a non-negative integer";
      break;
    case Kind::kArray:
      ok = v.is_array();
      want = "an array";
      break;
  }
  if (!ok)
    return Status::Corrupt(path + "." + key + ": expected " + want + ", got " + v.type_name());
  return Status::Ok();
}

}  // namespace

Status ValidateResultsJson(const json& doc) {
  if (!doc.is_object()) return Status::Corrupt("results: not a JSON object");
  if (!doc.contains("schema") || !doc["schema"].is_string()) {
    return Status::Corrupt("not a secmode results file: no \"schema\" string");
  }
  const std::string schema = doc["schema"];
  const std::string prefix = "secmode-results/";
  if (schema.rfind(prefix, 0) != 0) {
    return Status::Corrupt("not a secmode results file: schema is '" + schema + "'");
  }
  if (schema != kResultsSchema) {
    return Status::Corrupt("results schema '" + schema + "' is not one this reader knows (" +
                           kResultsSchema + "); a newer secmode wrote it");
  }
  if (!doc.contains("machine") || !doc["machine"].is_object()) {
    return Status::Corrupt("machine: missing or not an object");
  }
  const json& m = doc["machine"];
  for (const char* k : {"cpu_model", "kernel", "openssl", "krb5", "compiler", "build_type"}) {
    SECMODE_RETURN_IF_ERROR(Expect(m, "machine", k, Kind::kString));
  }
  SECMODE_RETURN_IF_ERROR(Expect(m, "machine", "logical_cpus", Kind::kUnsigned));
  SECMODE_RETURN_IF_ERROR(Expect(m, "machine", "cpu_flags", Kind::kArray));
  // Optional (written since the fingerprint had them), strings when present.
  for (const char* k : {"hostname", "compiler_flags", "secmode_commit", "secmode_tree"}) {
    if (m.contains(k)) SECMODE_RETURN_IF_ERROR(Expect(m, "machine", k, Kind::kString));
  }
  if (m.contains("tsc_ghz"))
    SECMODE_RETURN_IF_ERROR(Expect(m, "machine", "tsc_ghz", Kind::kNumber));
  if (m.contains("libraries")) {
    if (!m["libraries"].is_object())
      return Status::Corrupt("machine.libraries: expected an object");
    for (const auto& [name, version] : m["libraries"].items()) {
      if (!version.is_string()) {
        return Status::Corrupt("machine.libraries." + name + ": expected a string");
      }
    }
  }
  if (doc.contains("noise") && !doc["noise"].is_object()) {
    return Status::Corrupt("noise: expected an object");
  }
  for (const char* k : {"command", "started_at", "finished_at"}) {
    SECMODE_RETURN_IF_ERROR(Expect(doc, "results", k, Kind::kString));
  }
  for (const char* section : {"micro", "bounds", "nconnect", "predictions", "e2e", "errors"}) {
    if (doc.contains(section) && !doc[section].is_array()) {
      return Status::Corrupt(std::string(section) + ": expected an array");
    }
  }
  if (doc.contains("sections") && !doc["sections"].is_object()) {
    return Status::Corrupt("sections: expected an object");
  }
  if (doc.contains("micro")) {
    const json& micro = doc["micro"];
    for (size_t i = 0; i < micro.size(); ++i) {
      const std::string path = "micro[" + std::to_string(i) + "]";
      const json& row = micro[i];
      if (!row.is_object()) return Status::Corrupt(path + ": not an object");
      for (const char* k : {"mode", "engine", "enctype", "leg"}) {
        SECMODE_RETURN_IF_ERROR(Expect(row, path, k, Kind::kString));
      }
      for (const char* k : {"size", "threads", "p50_ns", "p99_ns", "p999_ns", "samples"}) {
        SECMODE_RETURN_IF_ERROR(Expect(row, path, k, Kind::kUnsigned));
      }
      for (const char* k : {"ns_per_op", "bytes_per_second", "cycles_per_byte"}) {
        SECMODE_RETURN_IF_ERROR(Expect(row, path, k, Kind::kNumber));
      }
      const std::string leg = row["leg"];
      if (leg != "client-seal" && leg != "server-open" && leg != "server-seal" &&
          leg != "client-open") {
        return Status::Corrupt(path + ".leg: '" + leg +
                               "' is not one of client-seal, server-open, "
                               "server-seal, client-open");
      }
      if (row["ns_per_op"].get<double>() <= 0 || row["samples"].get<uint64_t>() == 0) {
        return Status::Corrupt(path + ": a measured row needs ns_per_op > 0 and samples > 0");
      }
      // Optional (files written before repetitions have a single figure).
      if (row.contains("repetitions_ns")) {
        const json& reps = row["repetitions_ns"];
        if (!reps.is_array()) return Status::Corrupt(path + ".repetitions_ns: expected an array");
        for (size_t k = 0; k < reps.size(); ++k) {
          if (!reps[k].is_number() || reps[k].get<double>() <= 0) {
            return Status::Corrupt(path + ".repetitions_ns[" + std::to_string(k) +
                                   "]: expected a number > 0");
          }
        }
      }
      if (row.contains("cv")) SECMODE_RETURN_IF_ERROR(Expect(row, path, "cv", Kind::kNumber));
    }
  }
  if (doc.contains("bounds")) {
    const json& bounds = doc["bounds"];
    for (size_t i = 0; i < bounds.size(); ++i) {
      const std::string path = "bounds[" + std::to_string(i) + "]";
      if (!bounds[i].is_object()) return Status::Corrupt(path + ": not an object");
      SECMODE_RETURN_IF_ERROR(Expect(bounds[i], path, "primitive", Kind::kString));
      SECMODE_RETURN_IF_ERROR(Expect(bounds[i], path, "size", Kind::kUnsigned));
      SECMODE_RETURN_IF_ERROR(Expect(bounds[i], path, "bytes_per_second", Kind::kNumber));
    }
  }
  return Status::Ok();
}

common::Result<RunResults> ReadResultsJson(const std::string& text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Corrupt("results.json is not valid JSON");
  return FromJson(doc);
}

common::Result<RunResults> ReadResultsFile(const std::string& path) {
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec) ? path + "/results.json" : path;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return Status::InvalidArgument(file +
                                   ": no such file (give a results.json or a run "
                                   "directory holding one)");
  }
  SECMODE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(file));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Corrupt(file + " is not valid JSON");
  auto r = FromJson(doc);
  if (!r.ok()) return r.status().Annotate(file);
  return r;
}

common::Result<RunResults> FromJson(const json& doc) {
  SECMODE_RETURN_IF_ERROR(ValidateResultsJson(doc));
  RunResults r;
  const json& m = doc["machine"];
  r.machine.cpu_model = m["cpu_model"];
  r.machine.logical_cpus = m["logical_cpus"];
  r.machine.cpu_flags = m["cpu_flags"].get<std::vector<std::string>>();
  r.machine.kernel = m["kernel"];
  r.machine.openssl = m["openssl"];
  r.machine.krb5 = m["krb5"];
  r.machine.compiler = m["compiler"];
  r.machine.build_type = m["build_type"];
  r.machine.hostname = m.value("hostname", "");
  r.machine.tsc_ghz = m.value("tsc_ghz", 0.0);
  // Written since the fingerprint had secmode's commit; "unknown" before.
  r.machine.compiler_flags = m.value("compiler_flags", "unknown");
  r.machine.secmode_commit = m.value("secmode_commit", "unknown");
  r.machine.secmode_tree = m.value("secmode_tree", "unknown");
  if (m.contains("libraries") && m["libraries"].is_object()) {
    for (const auto& [name, version] : m["libraries"].items()) {
      if (version.is_string()) r.machine.libraries.emplace_back(name, version.get<std::string>());
    }
  }
  r.command = doc["command"];
  r.started_at = doc["started_at"];
  r.finished_at = doc["finished_at"];
  for (const auto& row : doc.value("micro", json::array())) {
    MicroRow mr;
    mr.mode = row["mode"];
    mr.engine = row["engine"];
    mr.enctype = row["enctype"];
    mr.leg = row["leg"];
    mr.size = row["size"];
    mr.threads = row["threads"];
    mr.m.ns_per_op = row["ns_per_op"];
    mr.m.bytes_per_second = row["bytes_per_second"];
    mr.m.cycles_per_byte = row["cycles_per_byte"];
    mr.m.p50_ns = row["p50_ns"];
    mr.m.p99_ns = row["p99_ns"];
    mr.m.p999_ns = row["p999_ns"];
    mr.m.samples = row["samples"];
    if (row.contains("repetitions_ns")) {
      mr.m.repetitions_ns = row["repetitions_ns"].get<std::vector<double>>();
    }
    mr.m.cv = row.value("cv", 0.0);
    r.micro.push_back(mr);
  }
  for (const auto& row : doc.value("bounds", json::array())) {
    r.bounds.push_back({row["primitive"], row["size"], row["bytes_per_second"]});
  }
  r.nconnect = doc.value("nconnect", json::array());
  r.predictions = doc.value("predictions", json::array());
  r.e2e = doc.value("e2e", json::array());
  r.method = doc.value("method", json::object());
  r.sections = doc.value("sections", json::object());
  r.errors = doc.value("errors", json::array());
  r.noise = doc.value("noise", json::object());
  return r;
}

json ProbeReportJson(const rpc::ProbeReport& r) {
  json tests = json::array();
  for (const rpc::ProbeTest& t : r.tests) {
    json calls = json::array();
    for (const rpc::ProbeCall& c : t.calls) {
      calls.push_back({{"seq", c.seq},
                       {"outcome", rpc::ProbeOutcomeName(c.outcome)},
                       {"reply", c.reply},
                       {"ms", c.ms}});
    }
    tests.push_back({{"name", t.name},
                     {"lag", t.lag},
                     {"verdict", t.verdict},
                     {"connection_kept", t.connection_kept},
                     {"context_kept", t.context_kept},
                     {"calls", calls}});
  }
  json model = nullptr;
  const std::string reaction = rpc::ModelReaction(r);
  if (r.window > 0 && !reaction.empty()) model = {{"window", r.window}, {"reaction", reaction}};
  return {{"host", r.host},
          {"port", r.port},
          {"mode", r.mode},
          {"engine", r.engine},
          {"program", r.program},
          {"version", r.version},
          {"advertised_window", r.advertised_window},
          {"window", r.window},
          {"window_above", r.window_above},
          {"window_confirmed", r.window_confirmed},
          {"below_window", r.below_window},
          {"below_window_edge", r.below_window_edge},
          {"below_window_reply", r.below_window_reply},
          {"duplicate", r.duplicate},
          {"at_maxseq_minus_1", r.at_maxseq_minus_1},
          {"at_maxseq", r.at_maxseq},
          {"model", model},
          {"contexts_created", r.contexts_created},
          {"contexts_destroyed", r.contexts_destroyed},
          {"stray_replies", r.stray_replies},
          {"stray_reply_bytes", r.stray_reply_bytes},
          {"seconds", r.seconds},
          {"tests", tests}};
}

json LoadReportJson(const rpc::LoadReport& r) {
  return {{"mode", r.mode},
          {"op", r.op},
          {"size", r.size},
          {"connections", r.connections},
          {"slots", r.slots},
          {"shared_context", r.shared_context},
          {"seconds", r.seconds},
          {"ops", r.ops},
          {"ops_per_second", r.ops_per_second},
          {"mb_per_second", r.mb_per_second},
          {"p50_us", r.p50_us},
          {"p90_us", r.p90_us},
          {"p99_us", r.p99_us},
          {"p999_us", r.p999_us},
          {"retransmits", r.retransmits},
          {"timeouts", r.timeouts},
          {"disconnects", r.disconnects},
          {"reconnects_per_second", r.reconnects_per_second},
          {"reconnect_wait_seconds", r.reconnect_wait_seconds},
          {"context_recreations", r.context_recreations},
          {"reencodes", r.reencodes},
          {"stale_replies", r.stale_replies},
          {"errors", r.errors},
          {"first_error", r.first_error},
          {"crypto_threads", r.crypto_threads},
          {"receiver_cpu_ns", r.receivers.cpu_ns},
          {"receiver_reads", r.receiver_reads},
          {"receiver_sleeps", r.receivers.sleeps},
          {"receiver_preemptions", r.receivers.preemptions},
          {"receiver_run_queue_wait_ns", r.receivers.run_queue_wait_ns},
          {"receiver_runs", r.receivers.runs},
          {"idle_fraction", r.idle_fraction},
          {"steal_fraction", r.steal_fraction},
          {"sender_cpu_ns", r.sender_cpu_ns},
          {"sender_calls", r.sender_calls}};
}

json SmbLoadReportJson(const smb::SmbLoadReport& r) {
  const auto& k = r.counters;
  return {{"mode", r.mode},
          {"op", smb::SmbOpName(r.options.op)},
          {"size", r.options.op == smb::SmbOp::kMetadata ? 0u : r.options.size},
          {"connections", r.options.connections},
          {"channels", r.options.channels},
          {"outstanding", r.options.outstanding},
          {"dialect", smb::DialectName(r.dialect)},
          {"seconds", r.seconds},
          {"warmup_seconds", r.options.warmup_seconds},
          {"round_trip_us", r.options.round_trip_us},
          {"ops", r.ops},
          {"ops_per_connection", r.ops_per_connection},
          {"ops_per_second", r.ops_per_s},
          {"mb_per_second", r.mb_per_s},
          {"p50_us", r.p50_us},
          {"p90_us", r.p90_us},
          {"p99_us", r.p99_us},
          {"mean_us", r.mean_us},
          {"errors", r.errors},
          {"first_error", r.first_error},
          {"client_cpu_seconds", r.client_cpu_seconds},
          {"server_cpu_seconds", r.server_cpu_seconds},
          {"server_session_thread", r.server_session_thread},
          {"server_session_thread_cpu_seconds", r.server_session_thread_cpu_seconds},
          {"server_session_thread_system_seconds", r.server_session_thread_system_seconds},
          {"idle_fraction", r.idle_fraction},
          {"steal_fraction", r.steal_fraction},
          {"requests", k.requests},
          {"signed_requests", k.signed_requests},
          {"encrypted_requests", k.encrypted_requests},
          {"responses_verified", k.responses_verified},
          {"responses_decrypted", k.responses_decrypted},
          {"interim_responses", k.interim_responses}};
}

}  // namespace secmode::harness
