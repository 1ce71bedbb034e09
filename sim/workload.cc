#include "sim/workload.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <optional>

namespace secmode::sim {

using common::Result;
using common::Status;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Result<int64_t> ParseInt(std::string_view key, std::string_view s, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return Status::InvalidArgument(std::string(key) + " '" + std::string(s) +
                                   "' is not a whole number");
  }
  if (v < lo || v > hi) {
    return Status::InvalidArgument(std::string(key) + " " + std::string(s) + " is out of range (" +
                                   std::to_string(lo) + " to " + std::to_string(hi) + ")");
  }
  return v;
}

// The keys the model reads; every other key is warned about and ignored.
Status Apply(Workload& w, const std::string& key, std::string_view value) {
  if (key == "rw" || key == "readwrite") {
    SECMODE_ASSIGN_OR_RETURN(w.rw, ParseRw(value));
  } else if (key == "rwmixread" || key == "rwmixwrite") {
    SECMODE_ASSIGN_OR_RETURN(int64_t v, ParseInt(key, value, 0, 100));
    w.rwmixread = static_cast<int>(key == "rwmixread" ? v : 100 - v);
  } else if (key == "bs" || key == "blocksize") {
    if (value.find(',') != std::string_view::npos) {
      return Status::InvalidArgument(key + "=" + std::string(value) +
                                     ": separate read and write block sizes are not modelled");
    }
    if (value.find('-') != std::string_view::npos || value.find(':') != std::string_view::npos) {
      return Status::InvalidArgument(key + "=" + std::string(value) +
                                     ": block size ranges are not modelled");
    }
    SECMODE_ASSIGN_OR_RETURN(w.bs, ParseFioSize(value));
  } else if (key == "iodepth") {
    SECMODE_ASSIGN_OR_RETURN(int64_t v, ParseInt(key, value, 0, kMaxIodepth));
    w.iodepth = static_cast<int>(v);
  } else if (key == "numjobs") {
    SECMODE_ASSIGN_OR_RETURN(int64_t v, ParseInt(key, value, 0, kMaxNumjobs));
    w.numjobs = static_cast<int>(v);
  } else if (key == "ioengine") {
    SECMODE_ASSIGN_OR_RETURN(w.engine, ParseIoEngine(value));
    w.ioengine = Lower(Trim(value));
  } else {
    return Status::Unavailable("");  // not a key of the model
  }
  return Status::Ok();
}

}  // namespace

const char* RwName(Rw rw) {
  switch (rw) {
    case Rw::kRead: return "read";
    case Rw::kWrite: return "write";
    case Rw::kRandRead: return "randread";
    case Rw::kRandWrite: return "randwrite";
    case Rw::kReadWrite: return "readwrite";
    case Rw::kRandRw: return "randrw";
    case Rw::kMetadata: return "metadata";
  }
  return "?";
}

Result<Rw> ParseRw(std::string_view s) {
  const std::string v = Lower(Trim(s));
  if (v == "read") return Rw::kRead;
  if (v == "write") return Rw::kWrite;
  if (v == "randread") return Rw::kRandRead;
  if (v == "randwrite") return Rw::kRandWrite;
  if (v == "rw" || v == "readwrite") return Rw::kReadWrite;
  if (v == "randrw") return Rw::kRandRw;
  if (v == "metadata") return Rw::kMetadata;
  return Status::InvalidArgument(
      "rw '" + std::string(s) +
      "' is not one the model takes (read, write, randread, randwrite, readwrite/rw, randrw, "
      "metadata)");
}

Result<EngineClass> ParseIoEngine(std::string_view s) {
  const std::string v = Lower(Trim(s));
  for (const char* e : {"sync", "psync", "vsync", "pvsync", "pvsync2"}) {
    if (v == e) return EngineClass::kSync;
  }
  for (const char* e : {"libaio", "io_uring", "posixaio"}) {
    if (v == e) return EngineClass::kAsync;
  }
  return Status::InvalidArgument(
      "ioengine '" + std::string(s) +
      "' is not one the model knows (sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, "
      "posixaio)");
}

Result<int64_t> ParseFioSize(std::string_view s) {
  const std::string v = Lower(Trim(s));
  size_t digits = 0;
  while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
  if (digits == 0) return Status::InvalidArgument("size '" + std::string(s) + "' has no number");
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + digits, n);
  if (ec != std::errc() || end != v.data() + digits) {
    return Status::InvalidArgument("size '" + std::string(s) + "' is too large");
  }
  std::string suffix = v.substr(digits);
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  if (suffix.size() == 2 && suffix[1] == 'i') suffix.pop_back();
  int shift = 0;
  if (suffix.empty()) {
    shift = 0;
  } else if (suffix == "k") {
    shift = 10;
  } else if (suffix == "m") {
    shift = 20;
  } else if (suffix == "g") {
    shift = 30;
  } else if (suffix == "t") {
    shift = 40;
  } else {
    return Status::InvalidArgument("size '" + std::string(s) +
                                   "' has an unknown suffix (k, m, g, t; base 1024)");
  }
  if (n > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) >> shift)) {
    return Status::InvalidArgument("size '" + std::string(s) + "' is too large");
  }
  return static_cast<int64_t>(n << shift);
}

Result<double> ParseLinkRate(std::string_view s) {
  const std::string v = Lower(Trim(s));
  size_t end = 0;
  while (end < v.size() && (std::isdigit(static_cast<unsigned char>(v[end])) || v[end] == '.')) {
    ++end;
  }
  double n = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + end, n);
  if (end == 0 || ec != std::errc() || p != v.data() + end || !(n > 0)) {
    return Status::InvalidArgument("link rate '" + std::string(s) +
                                   "' needs a positive number and a unit (bit, kbit, mbit, gbit, "
                                   "tbit), e.g. 1gbit");
  }
  const std::string unit = v.substr(end);
  double scale = 0;
  if (unit == "bit") scale = 1;
  if (unit == "kbit") scale = 1e3;
  if (unit == "mbit") scale = 1e6;
  if (unit == "gbit") scale = 1e9;
  if (unit == "tbit") scale = 1e12;
  if (scale == 0) {
    return Status::InvalidArgument("link rate '" + std::string(s) +
                                   "' has an unknown unit (bit, kbit, mbit, gbit, tbit)");
  }
  return n * scale / 8;
}

Status Workload::Validate() const {
  if (bs <= 0)
    return Status::InvalidArgument("bs must be at least 1 byte (got " + std::to_string(bs) + ")");
  if (bs > kMaxBlockSize) {
    return Status::InvalidArgument("bs " + std::to_string(bs) + " is above the model's limit of " +
                                   std::to_string(kMaxBlockSize) + " bytes");
  }
  if (iodepth < 1 || iodepth > kMaxIodepth) {
    return Status::InvalidArgument("iodepth must be 1 to " + std::to_string(kMaxIodepth) +
                                   " (got " + std::to_string(iodepth) + ")");
  }
  if (numjobs < 1 || numjobs > kMaxNumjobs) {
    return Status::InvalidArgument("numjobs must be 1 to " + std::to_string(kMaxNumjobs) +
                                   " (got " + std::to_string(numjobs) + ")");
  }
  if (rwmixread < 0 || rwmixread > 100) {
    return Status::InvalidArgument("rwmixread must be 0 to 100 (got " + std::to_string(rwmixread) +
                                   ")");
  }
  return Status::Ok();
}

int64_t Workload::Outstanding() const {
  return static_cast<int64_t>(numjobs) * (engine == EngineClass::kAsync ? iodepth : 1);
}

double Workload::ReadShare() const {
  switch (rw) {
    case Rw::kRead:
    case Rw::kRandRead: return 1.0;
    case Rw::kReadWrite:
    case Rw::kRandRw: return rwmixread / 100.0;
    default: return 0.0;
  }
}

std::string Workload::Describe() const {
  std::string s = std::string(RwName(rw));
  if (rw == Rw::kReadWrite || rw == Rw::kRandRw) s += " rwmixread=" + std::to_string(rwmixread);
  if (rw != Rw::kMetadata) s += " bs=" + std::to_string(bs);
  return s + " iodepth=" + std::to_string(iodepth) + " numjobs=" + std::to_string(numjobs) + " " +
         ioengine;
}

Result<FioJobs> ParseFioJobFile(std::string_view text) {
  FioJobs out;
  Workload global;
  global.name = "global";
  std::optional<Workload> job;
  bool in_global = false, any_section = false;
  auto finish = [&] {
    if (job) out.jobs.push_back(*job);
    job.reset();
  };
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    line = Trim(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    const std::string where = "fio job file line " + std::to_string(line_no);
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        return Status::InvalidArgument(where + ": a section header is [name]");
      }
      finish();
      any_section = true;
      const std::string name(Trim(line.substr(1, line.size() - 2)));
      in_global = name == "global";
      if (!in_global) {
        job = global;
        job->name = name;
      }
      continue;
    }
    if (!any_section) {
      return Status::InvalidArgument(where + ": '" + std::string(line) +
                                     "' comes before any [section]");
    }
    const size_t eq = line.find('=');
    const std::string key = Lower(Trim(line.substr(0, eq)));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : Trim(line.substr(eq + 1));
    Workload& target = in_global ? global : *job;
    const Status s = Apply(target, key, value);
    if (s.code() == common::Code::kUnavailable) {
      out.warnings.push_back(where + ": key '" + key + "' is not used by the model, ignored");
    } else if (!s.ok()) {
      return Status::InvalidArgument(where + " [" + (in_global ? "global" : job->name) +
                                     "]: " + s.message());
    }
  }
  finish();
  if (out.jobs.empty()) return Status::InvalidArgument("fio job file: no job section");
  for (const Workload& w : out.jobs) {
    if (Status s = w.Validate(); !s.ok()) {
      return Status::InvalidArgument("fio job [" + w.name + "]: " + s.message());
    }
    if (w.engine == EngineClass::kSync && w.iodepth > 1) {
      out.warnings.push_back("job [" + w.name + "]: iodepth=" + std::to_string(w.iodepth) +
                             " with the sync engine " + w.ioengine +
                             " keeps one I/O in flight per job (as fio does)");
    }
  }
  return out;
}

}  // namespace secmode::sim
