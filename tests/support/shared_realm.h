// SharedRealm(): one throwaway realm per test binary, started on first use
// and stopped when the binary's tests end (a GoogleTest Environment), so the
// KDC start-up cost is paid once per binary.
#ifndef SECMODE_TESTS_SUPPORT_SHARED_REALM_H_
#define SECMODE_TESTS_SUPPORT_SHARED_REALM_H_

#include "gss/realm.h"

namespace secmode::testing {

// Fails the calling test (ASSERT) if the realm cannot start; never null on
// success.
gss::Realm* SharedRealm();

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_SHARED_REALM_H_
