#include "common/seal.h"

namespace secmode::common {

const char* LegName(Leg leg) {
  switch (leg) {
    case Leg::kClientSeal: return "client-seal";
    case Leg::kServerOpen: return "server-open";
    case Leg::kServerSeal: return "server-seal";
    case Leg::kClientOpen: return "client-open";
  }
  return "unknown";
}

}  // namespace secmode::common
