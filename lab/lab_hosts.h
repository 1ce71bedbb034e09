// LabHosts: `secmode serve` in the lab's server namespace and `secmode
// load` in its client namespace (lab/net_lab.h), each a process of the
// secmode binary, as two real hosts would run them. RPCSEC_GSS works across
// the lab without the KDC being reachable from it: the realm (in the
// machine's namespace, on loopback) gives the server its keytab, and the
// client's ticket for the service is fetched into the client's ccache
// before (`kvno`), so GSS-API finds it there and never calls the KDC.
//
// SetLink shapes the pair and restarts the server with the link's one-way
// delay on its replies (serve --delay-ms); every Load holds its calls the
// same time (load --delay-ms): the round trip is twice the delay, emulated
// in user space (this kernel has no netem), which TCP does not see.
// The server's RPCSEC_GSS window is wide (LabHostsOptions::window) so that
// no call is dropped for being out of window: the lab measures the modes'
// costs over a link, not the window (the nconnect simulator, sim/, does).
//
// Each process is waited for with a deadline (the server's "serving on"
// line; a load's run with its own --deadline and a margin), its output kept
// in the lab's directory for errors, and killed with the lab.
//
// Thread safety: none; one owner. Ownership: owns the lab and the server
// process; borrows the realm, which must outlive it.
#ifndef SECMODE_LAB_LAB_HOSTS_H_
#define SECMODE_LAB_LAB_HOSTS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "gss/realm.h"
#include "lab/net_lab.h"

namespace secmode::lab {

struct LabHostsOptions {
  std::string secmode_path;  // the secmode binary; "" = this process's (/proc/self/exe)
  std::string engine = "native";
  uint32_t window = 65536;
  int server_start_timeout_ms = 10000;
};

// One link between the two hosts.
struct LabLink {
  double one_way_delay_ms = 0;  // each direction: the round trip is twice it
  LinkShape shape;
  std::string Describe() const;  // "RTT 20 ms, 1 Gbit/s both ways"
};

// One `secmode load` run.
struct LabLoad {
  std::string mode = "sys";  // sys, krb5, krb5i, krb5p
  std::string op = "read";   // getattr, read, write
  uint32_t size = 4096;
  int connections = 4;
  int slots = 1;
  double seconds = 2, warmup = 0.5;
  // Retransmit timeout: long, as a Linux TCP mount's (timeo=600), so a
  // slow link's queue is not mistaken for a lost call.
  int timeout_ms = 60000;
};

class LabHosts {
 public:
  static common::Result<std::unique_ptr<LabHosts>> Start(const LabHostsOptions& options,
                                                         gss::Realm* realm);
  ~LabHosts();

  common::Status SetLink(const LabLink& link);
  const LabLink& link() const { return link_; }
  // The load's JSON report (rpc::LoadReport's fields, `failure` set when it
  // failed after measuring something); an error when it measured nothing,
  // with the end of its output.
  common::Result<nlohmann::json> Load(const LabLoad& load);
  NetLab& net() { return *net_; }

 private:
  LabHosts() = default;
  common::Status StartServer();
  void StopServer();

  LabHostsOptions options_;
  gss::Realm* realm_ = nullptr;
  std::unique_ptr<NetLab> net_;
  LabLink link_;
  pid_t server_pid_ = -1;
  int runs_ = 0;  // names each load's output files
};

}  // namespace secmode::lab

#endif  // SECMODE_LAB_LAB_HOSTS_H_
