#include "gss/enctype.h"

#include <algorithm>
#include <vector>

namespace secmode::gss {

const EnctypeProfile* FindEnctype(int32_t number) {
  for (const EnctypeProfile& p : kEnctypeProfiles) {
    if (p.enctype == number) return &p;
  }
  return nullptr;
}

const char* EnctypeName(Enctype e) {
  const EnctypeProfile* p = FindEnctype(static_cast<int32_t>(e));
  return p ? p->name : "unknown";
}

common::Result<Enctype> ParseEnctype(std::string_view name) {
  for (const EnctypeProfile& p : kEnctypeProfiles) {
    if (name == p.name || name == std::to_string(p.enctype)) return static_cast<Enctype>(p.enctype);
  }
  std::string known;
  for (const EnctypeProfile& p : kEnctypeProfiles) {
    known += std::string(known.empty() ? "" : ", ") + p.name;
  }
  return common::Status::InvalidArgument("unknown enctype '" + std::string(name) +
                                         "' (known: " + known + ")");
}

bool IsSupportedEnctype(int32_t number) { return FindEnctype(number) != nullptr; }

bool IsNativeEnctype(Enctype e) {
  const EnctypeProfile* p = FindEnctype(static_cast<int32_t>(e));
  return p != nullptr && p->cbc != nullptr;
}

std::string KdcEnctypeList(const char* suffix) {
  std::vector<const EnctypeProfile*> rows;
  for (const EnctypeProfile& p : kEnctypeProfiles) rows.push_back(&p);
  std::sort(rows.begin(), rows.end(), [](const EnctypeProfile* a, const EnctypeProfile* b) {
    return a->kdc_preference < b->kdc_preference;
  });
  std::string out;
  for (const EnctypeProfile* p : rows) {
    if (!out.empty()) out += ' ';
    out += p->name;
    out += suffix;
  }
  return out;
}

}  // namespace secmode::gss
