// Workload: what a fio job asks of the file system, in fio's vocabulary
// (rw, rwmixread, bs, iodepth, numjobs, ioengine), the input of the workload
// model (sim/workload_model.h). One comes from flags or from a fio job file.
//
// A fio job file is INI: `[global]` holds defaults for the job sections that
// follow it, each other section is one job, a line is `key=value` or a bare
// `key`, `#` and `;` start comments. ParseFioJobFile reads the keys that
// matter (rw / readwrite, rwmixread, rwmixwrite, bs / blocksize, iodepth,
// numjobs, ioengine); every other key is named in a warning and ignored.
// Sizes take fio's suffixes with fio's default base of 1024 (4k = 4096,
// 1m = 1048576; "ki", "kib", "kb" the same). What the model cannot take is
// an error naming the key and the job: separate read/write block sizes
// ("bs=4k,64k"), bs ranges, an rw fio has that is not a read or a write
// (trim), an unknown ioengine.
//
// `metadata` is secmode's own rw: an operation without payload (GETATTR-like).
//
// Thread safety: plain values and pure functions.
#ifndef SECMODE_SIM_WORKLOAD_H_
#define SECMODE_SIM_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace secmode::sim {

enum class Rw { kRead, kWrite, kRandRead, kRandWrite, kReadWrite, kRandRw, kMetadata };
const char* RwName(Rw rw);
// fio's names (readwrite and rw are the same) and "metadata".
common::Result<Rw> ParseRw(std::string_view s);

// fio's sync engines (sync, psync, vsync, pvsync, pvsync2) keep one I/O per
// job in flight whatever iodepth says; the async ones (libaio, io_uring,
// posixaio) keep iodepth per job.
enum class EngineClass { kSync, kAsync };
common::Result<EngineClass> ParseIoEngine(std::string_view s);

// A byte count with fio's suffixes (k, m, g, t; optional i and b; base 1024).
common::Result<int64_t> ParseFioSize(std::string_view s);

// A link rate as tc writes it, in bits per second with SI prefixes (bit,
// kbit, mbit, gbit, tbit; "1gbit" = 10^9 bit/s), as bytes per second.
common::Result<double> ParseLinkRate(std::string_view s);

inline constexpr int64_t kMaxBlockSize = 64ll << 20;
inline constexpr int kMaxIodepth = 65536;
inline constexpr int kMaxNumjobs = 4096;

struct Workload {
  std::string name = "job";
  Rw rw = Rw::kRandRead;
  int rwmixread = 50;  // percent of reads, for readwrite and randrw
  int64_t bs = 4096;
  int iodepth = 1;
  int numjobs = 1;
  std::string ioengine = "psync";  // fio's default
  EngineClass engine = EngineClass::kSync;

  // The first bad field, named (bs 0, iodepth 0, rwmixread over 100 ...).
  common::Status Validate() const;
  // I/Os in flight at once: numjobs x (iodepth with an async engine, else 1).
  int64_t Outstanding() const;
  // The share of operations that read (1 for read and randread, 0 for
  // write, randwrite and metadata).
  double ReadShare() const;
  bool IsMetadata() const { return rw == Rw::kMetadata; }
  std::string Describe() const;  // "randread bs=4096 iodepth=64 numjobs=4 libaio"
};

struct FioJobs {
  std::vector<Workload> jobs;         // in file order
  std::vector<std::string> warnings;  // keys ignored, iodepth a sync engine ignores
};

// The jobs of a fio job file; an error names the line and what is wrong.
common::Result<FioJobs> ParseFioJobFile(std::string_view text);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_WORKLOAD_H_
