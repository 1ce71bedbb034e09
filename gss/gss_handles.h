// Owners of GSS-API handles, so every path releases what was acquired.
//
// The pointer handles (gss_name_t, gss_cred_id_t, gss_ctx_id_t,
// gss_buffer_set_t) are owned by a unique_ptr whose deleter calls the
// matching gss_release_* / gss_delete_sec_context: NamePtr, CredPtr,
// ContextPtr, BufferSetPtr. Pass `.get()` to calls that only use a handle.
// Calls that write a handle through a pointer take `Out(p)`:
//   NamePtr name;
//   major = gss_import_name(&minor, &buf, type, Out(name));
// Out lends p's current handle to the call and takes back whatever the call
// leaves there, so it also serves the in/out parameters: a context carried
// across gss_init_sec_context rounds, or cleared by
// gss_krb5_export_lucid_sec_context when that consumes it.
//
// The same idiom for the krb5 handles secmode uses directly (LucidPtr for
// the exported lucid context, Krb5ContextPtr, Krb5CcachePtr).
//
// gss_buffer_desc is a struct held by value (callers pass its address and
// the library fills length and value in place), not a pointer a unique_ptr
// could own, so BufferHandle holds one and releases it.
//
// Not copyable; each owner is used by one thread at a time.
#ifndef SECMODE_GSS_GSS_HANDLES_H_
#define SECMODE_GSS_GSS_HANDLES_H_

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include <memory>
#include <type_traits>

#include "common/bytes.h"

namespace secmode::gss {

struct NameDeleter {
  void operator()(gss_name_t name) const {
    OM_uint32 minor;
    gss_release_name(&minor, &name);
  }
};
struct CredDeleter {
  void operator()(gss_cred_id_t cred) const {
    OM_uint32 minor;
    gss_release_cred(&minor, &cred);
  }
};
struct ContextDeleter {
  void operator()(gss_ctx_id_t context) const {
    OM_uint32 minor;
    gss_delete_sec_context(&minor, &context, GSS_C_NO_BUFFER);
  }
};
struct BufferSetDeleter {
  void operator()(gss_buffer_set_t set) const {
    OM_uint32 minor;
    gss_release_buffer_set(&minor, &set);
  }
};

// gss_krb5_export_lucid_sec_context's output.
struct LucidDeleter {
  void operator()(void* lucid) const {
    OM_uint32 minor;
    gss_krb5_free_lucid_sec_context(&minor, lucid);
  }
};
struct Krb5ContextDeleter {
  void operator()(krb5_context k) const { krb5_free_context(k); }
};
// A ccache is closed with the context that opened it.
struct Krb5CcacheCloser {
  krb5_context context = nullptr;
  void operator()(krb5_ccache cc) const { krb5_cc_close(context, cc); }
};

using NamePtr = std::unique_ptr<std::remove_pointer_t<gss_name_t>, NameDeleter>;
using CredPtr = std::unique_ptr<std::remove_pointer_t<gss_cred_id_t>, CredDeleter>;
using ContextPtr = std::unique_ptr<std::remove_pointer_t<gss_ctx_id_t>, ContextDeleter>;
using LucidPtr = std::unique_ptr<void, LucidDeleter>;
using Krb5ContextPtr = std::unique_ptr<std::remove_pointer_t<krb5_context>, Krb5ContextDeleter>;
using Krb5CcachePtr = std::unique_ptr<std::remove_pointer_t<krb5_ccache>, Krb5CcacheCloser>;
using BufferSetPtr = std::unique_ptr<std::remove_pointer_t<gss_buffer_set_t>, BufferSetDeleter>;

// What Out(p) returns: converts to a pointer to the raw handle for the
// duration of the call's full expression, then gives the handle back to p.
template <typename Ptr>
class OutParam {
 public:
  using Handle = typename Ptr::pointer;
  explicit OutParam(Ptr& owner) : owner_(owner), raw_(owner.release()) {}
  ~OutParam() { owner_.reset(raw_); }
  OutParam(const OutParam&) = delete;
  OutParam& operator=(const OutParam&) = delete;
  operator Handle*() && { return &raw_; }  // NOLINT: implicit by design

 private:
  Ptr& owner_;
  Handle raw_;
};

template <typename Ptr>
OutParam<Ptr> Out(Ptr& owner) {
  return OutParam<Ptr>(owner);
}

// Holds a gss_buffer_desc the library allocated (a token, a status text)
// and releases it. Pass `&b.h` to the call that fills it.
struct BufferHandle {
  gss_buffer_desc h = GSS_C_EMPTY_BUFFER;
  BufferHandle() = default;
  BufferHandle(const BufferHandle&) = delete;
  BufferHandle& operator=(const BufferHandle&) = delete;
  ~BufferHandle() { reset(); }
  // Releases the contents now; the holder is empty afterwards.
  void reset() {
    OM_uint32 minor;
    gss_release_buffer(&minor, &h);
  }
  common::ByteView view() const {
    return common::ByteView(static_cast<const uint8_t*>(h.value), h.length);
  }
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_GSS_HANDLES_H_
