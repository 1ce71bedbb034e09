// The flags `secmode load` and `secmode probe` share: which server, whose
// tickets, which mode (family[:enctype[:engine]], as `secmode run --modes`
// spells it), and --local (a throwaway realm and secmode's own server with
// a chosen window and policy). Parsing fails with exit status 2 naming the
// flag's bad value (cli.h).
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
  std::string engine, enctype;  // old spellings of the mode's parts; "" = not given
  std::string ccache, target = "nfs@localhost";
  bool local = false;
  uint32_t window = 128;
  std::string policy = "drop";
};

// Adds --host, --port (default `port`), --mode (help `mode_help`, default
// `mode`), --ccache, --target, --local, --window, --reaction (and its old
// name --window-policy), and --engine and --enctype, the old spellings of
// the mode's parts (hidden).
void AddClientFlags(CLI::App* cmd, ClientFlags* f, uint16_t port, const std::string& mode,
                    const std::string& mode_help);

// The mode the flags name, parsed once (harness::ParseRpcMode: an enctype
// left out is the KDC's choice), with --engine and --enctype folded in and
// their user told the one spelling; Fail(command, ...) on a bad one.
harness::RpcMode ParseClientMode(const std::string& command, const ClientFlags& f);

// Copies the flags into a client's options (rpc::LoadOptions,
// rpc::ProbeOptions: the same field names); Fail(command, ...) on a bad
// mode.
template <class Options>
void ApplyClientFlags(const std::string& command, const ClientFlags& f, Options* o) {
  o->host = f.host;
  o->port = f.port;
  o->ccache = f.ccache;
  o->target = f.target;
  const harness::RpcMode mode = ParseClientMode(command, f);
  o->security = mode.security;
  o->engine = mode.engine;
  o->enctype = mode.enctype;
}

// With --local: starts the realm (in `env`) and secmode's server with the
// flags' window and policy, keyed for RPCSEC_GSS when `kerberos`; Fail on
// errors. Without --local: an empty LocalRpcServer.
harness::LocalRpcServer StartLocalIfAsked(const std::string& command, const ClientFlags& f,
                                          gss::Engine engine, bool kerberos,
                                          harness::ModeEnvironment& env);

}  // namespace secmode::cli

#endif  // SECMODE_CLI_CLIENT_FLAGS_H_
