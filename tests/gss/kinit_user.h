// Test helper: a user of the throwaway realm as a person would be one: a
// password principal (no keytab) whose ticket comes from the real `kinit`,
// and an environment in which MIT cannot fetch tickets on its own
// (KRB5_CLIENT_KTNAME names a keytab that does not exist), so only that
// ticket can authenticate. Header-only; used by the gss, rpc and CLI tests.
#ifndef SECMODE_TESTS_GSS_KINIT_USER_H_
#define SECMODE_TESTS_GSS_KINIT_USER_H_

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/status.h"
#include "common/subprocess.h"
#include "gss/realm.h"

namespace secmode::testing {

inline constexpr const char* kKinitUser = "alice";
inline constexpr const char* kKinitPassword = "alice-secret-7";

// The environment of a child (kinit, secmode) that sees `realm` but no
// client keytab; with `ccache` empty, no KRB5CCNAME either (the caller's
// environment must not set it then; see ScopedEnv).
inline std::map<std::string, std::string> NoKeytabEnvironment(const gss::Realm& realm,
                                                              const std::string& ccache) {
  auto env = realm.Environment();
  env["KRB5_CLIENT_KTNAME"] = "FILE:" + realm.dir() + "/no-such-client.keytab";
  env.erase("KRB5CCNAME");
  if (!ccache.empty()) env["KRB5CCNAME"] = ccache;
  return env;
}

// Creates the password principal (once per realm) and runs `kinit` for it
// into `ccache` ("" = the default ccache of the environment) with the
// password on stdin; `extra` goes before the principal (e.g. "-l", "3s").
// `env` overrides NoKeytabEnvironment.
inline common::Status KinitUser(gss::Realm& realm, const std::string& ccache,
                                const std::vector<std::string>& extra = {},
                                const std::map<std::string, std::string>& env = {}) {
  static std::string made_in;  // the realm directory the principal was made in
  if (made_in != realm.dir()) {
    SECMODE_RETURN_IF_ERROR(realm.AddPasswordPrincipal(kKinitUser, kKinitPassword));
    made_in = realm.dir();
  }
  const std::string pw = realm.dir() + "/alice.password";
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(pw, std::string(kKinitPassword) + "\n"));
  common::Command kinit;
  kinit.argv = {"kinit"};
  if (!ccache.empty()) kinit.argv.insert(kinit.argv.end(), {"-c", ccache});
  kinit.argv.insert(kinit.argv.end(), extra.begin(), extra.end());
  kinit.argv.push_back(std::string(kKinitUser) + "@" + realm.name());
  kinit.env = NoKeytabEnvironment(realm, ccache);
  for (const auto& [k, v] : env) kinit.env[k] = v;
  kinit.stdin_path = pw;
  kinit.log_path = realm.dir() + "/kinit-alice.log";
  SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(kinit, 30000));
  if (rc != 0) {
    return common::Status::Unavailable("kinit " + std::string(kKinitUser) + " exited " +
                                       std::to_string(rc) + ": " +
                                       common::TailOfFile(kinit.log_path));
  }
  return common::Status::Ok();
}

// Sets (or, with nullptr, unsets) an environment variable of this process
// for a scope, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_GSS_KINIT_USER_H_
