#include "cli/client_flags.h"

#include "cli/cli.h"
#include "cli/old_spelling.h"
#include "gss/enctype.h"
#include "rpc/server_core.h"

namespace secmode::cli {

void AddClientFlags(CLI::App* cmd, ClientFlags* f, uint16_t port, const std::string& mode,
                    const std::string& mode_help) {
  f->mode = mode;
  cmd->add_option("--host", f->host, "Server host (default 127.0.0.1)");
  cmd->add_option("--port", f->port, "Server port (default " + std::to_string(port) + ")")
      ->default_val(port);
  cmd->add_option("--mode", f->mode,
                  mode_help +
                      ", as family[:enctype[:engine]] (e.g. krb5p::native; enctype "
                      "default: the KDC's choice; engine: mit, native or mit-iov, default "
                      "mit) (default " +
                      mode + ")");
  // Old spellings of the mode's parts: ParseClientMode folds them in.
  cmd->add_option("--engine", f->engine)->group("");
  cmd->add_option("--enctype", f->enctype)->group("");
  cmd->add_option("--ccache", f->ccache,
                  "Credential cache holding your tickets, e.g. FILE:/tmp/krb5cc_1000 after kinit "
                  "(default: KRB5CCNAME, else the Kerberos configuration's default ccache)");
  cmd->add_option("--target", f->target, "GSS host-based service name (default nfs@localhost)");
  cmd->add_flag("--local", f->local,
                "Start a throwaway realm and secmode's own server in-process on loopback "
                "(with --window and --reaction) and use that");
  cmd->add_option("--window", f->window, "With --local: the server's sequence window (default 128)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--reaction", f->policy,
                  "With --local: what the server does with a call below its window: drop, "
                  "drop-disconnect or discard-context (default drop, RFC 2203's silent discard, "
                  "as secmode serve)");
  AddOldName(cmd, cmd->get_name(), "--window-policy", "--reaction", &f->policy);
}

harness::RpcMode ParseClientMode(const std::string& command, const ClientFlags& f) {
  std::string text = f.mode;
  if (!f.engine.empty() || !f.enctype.empty()) {
    std::string old = "--mode " + f.mode;
    if (!f.enctype.empty()) old += " --enctype " + f.enctype;
    if (!f.engine.empty()) old += " --engine " + f.engine;
    if (f.mode.find(':') != std::string::npos) {
      FailUsage(command, old + ": name the enctype and engine once, in --mode " +
                             "family[:enctype[:engine]]");
    }
    auto family = harness::ParseRpcMode(f.mode);
    if (!family.ok()) Fail(command, family.status());
    // AUTH_SYS has neither: with it they only picked the --local server's
    // engine, which AUTH_SYS calls never use; they are dropped.
    if (family->kerberos()) {
      text += ":" + f.enctype;
      if (!f.engine.empty()) text += ":" + f.engine;
      if (text.back() == ':') text.pop_back();
    }
    TellOldSpelling(command, old, "--mode " + text);
  }
  auto mode = harness::ParseRpcMode(text);
  if (!mode.ok()) Fail(command, mode.status().Annotate("--mode"));
  return *mode;
}

harness::LocalRpcServer StartLocalIfAsked(const std::string& command, const ClientFlags& f,
                                          gss::Engine engine, bool kerberos,
                                          harness::ModeEnvironment& env) {
  if (!f.local) return {};
  auto policy = rpc::ParseWindowPolicy(f.policy);
  if (!policy.ok()) Fail(command, policy.status());
  rpc::ServerOptions so;
  so.engine = engine;
  so.window = f.window;
  so.policy = *policy;
  rpc::TcpServerOptions tcp;
  tcp.thread_scheduling = true;  // in-process: its threads' sleeps and waits are reported
  auto s = harness::StartLocalRpcServer(env, kerberos, so, tcp);
  if (!s.ok()) Fail(command, s.status());
  return std::move(s).value();
}

}  // namespace secmode::cli
