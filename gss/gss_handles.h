// RAII holders for GSS-API handles, so every early return releases what was
// acquired. Each owns its handle; `.h` is passed to the GSS call that fills
// it. Not copyable; one thread at a time.
#ifndef SECMODE_GSS_GSS_HANDLES_H_
#define SECMODE_GSS_GSS_HANDLES_H_

#include <gssapi/gssapi.h>

namespace secmode::gss {

struct NameHandle {
  gss_name_t h = GSS_C_NO_NAME;
  NameHandle() = default;
  NameHandle(const NameHandle&) = delete;
  NameHandle& operator=(const NameHandle&) = delete;
  ~NameHandle() {
    OM_uint32 minor;
    if (h != GSS_C_NO_NAME) gss_release_name(&minor, &h);
  }
};

struct CredHandle {
  gss_cred_id_t h = GSS_C_NO_CREDENTIAL;
  CredHandle() = default;
  CredHandle(const CredHandle&) = delete;
  CredHandle& operator=(const CredHandle&) = delete;
  ~CredHandle() {
    OM_uint32 minor;
    if (h != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &h);
  }
};

struct ContextHandle {
  gss_ctx_id_t h = GSS_C_NO_CONTEXT;
  ContextHandle() = default;
  ContextHandle(const ContextHandle&) = delete;
  ContextHandle& operator=(const ContextHandle&) = delete;
  ~ContextHandle() {
    OM_uint32 minor;
    if (h != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &h, GSS_C_NO_BUFFER);
  }
  // Hands the context over; this holder no longer deletes it.
  gss_ctx_id_t Release() {
    gss_ctx_id_t c = h;
    h = GSS_C_NO_CONTEXT;
    return c;
  }
};

struct BufferHandle {
  gss_buffer_desc h = GSS_C_EMPTY_BUFFER;
  BufferHandle() = default;
  BufferHandle(const BufferHandle&) = delete;
  BufferHandle& operator=(const BufferHandle&) = delete;
  ~BufferHandle() {
    OM_uint32 minor;
    gss_release_buffer(&minor, &h);
  }
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_GSS_HANDLES_H_
