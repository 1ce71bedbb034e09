#include "tests/support/shared_realm.h"

#include <gtest/gtest.h>

#include <memory>

namespace secmode::testing {
namespace {

std::unique_ptr<gss::Realm>& Holder() {
  static std::unique_ptr<gss::Realm> realm;
  return realm;
}

class RealmEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Holder().reset(); }
};

[[maybe_unused]] auto* const kRegistered =
    ::testing::AddGlobalTestEnvironment(new RealmEnvironment());

}  // namespace

gss::Realm* SharedRealm() {
  if (!Holder()) {
    auto realm = gss::Realm::Start();
    if (!realm.ok()) {
      ADD_FAILURE() << "cannot start the throwaway realm: " << realm.status().ToString();
      return nullptr;
    }
    Holder() = std::move(realm).value();
  }
  return Holder().get();
}

}  // namespace secmode::testing
