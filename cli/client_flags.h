// The flags `secmode load` and `secmode probe` share: which server, whose
// tickets, which GSS engine and enctype, and --local (a throwaway realm and
// secmode's own server with a chosen window and policy). Parsing fails with
// exit status 2 naming the flag's bad value (cli.h).
#ifndef SECMODE_CLI_CLIENT_FLAGS_H_
#define SECMODE_CLI_CLIENT_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "gss/protector.h"
#include "harness/local_rpc.h"
#include "harness/modes.h"

namespace secmode::cli {

struct ClientFlags {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string mode;
  std::string engine = "mit", enctype, ccache, target = "nfs@localhost";
  bool local = false;
  uint32_t window = 128;
  std::string policy = "drop";
};

// Adds --host, --port (default `port`), --mode (help `mode_help`, default
// `mode`), --engine, --enctype, --ccache, --target, --local, --window,
// --reaction (and its old name --window-policy).
void AddClientFlags(CLI::App* cmd, ClientFlags* f, uint16_t port, const std::string& mode,
                    const std::string& mode_help);

struct ClientSecurity {
  gss::Engine engine = gss::Engine::kMit;
  int32_t enctype = 0;  // 0 = the KDC's choice
};
// The engine and enctype the flags name; Fail(command, ...) on bad ones.
ClientSecurity ParseClientSecurity(const std::string& command, const ClientFlags& f);

// Copies the flags into a client's options (rpc::LoadOptions,
// rpc::ProbeOptions: the same field names); Fail(command, ...) on a bad
// engine or enctype.
template <class Options>
void ApplyClientFlags(const std::string& command, const ClientFlags& f, Options* o) {
  o->host = f.host;
  o->port = f.port;
  o->mode = f.mode;
  o->ccache = f.ccache;
  o->target = f.target;
  const ClientSecurity sec = ParseClientSecurity(command, f);
  o->engine = sec.engine;
  o->enctype = sec.enctype;
}

// With --local: starts the realm (in `env`) and secmode's server with the
// flags' window and policy, keyed for RPCSEC_GSS when `kerberos`; Fail on
// errors. Without --local: an empty LocalRpcServer.
harness::LocalRpcServer StartLocalIfAsked(const std::string& command, const ClientFlags& f,
                                          gss::Engine engine, bool kerberos,
                                          harness::ModeEnvironment& env);

}  // namespace secmode::cli

#endif  // SECMODE_CLI_CLIENT_FLAGS_H_
