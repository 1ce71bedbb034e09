// gssrpc_peer: a small MIT gssrpc (libgssrpc) peer for the interop tests.
//
//   gssrpc_peer client HOST PORT none|integrity|privacy COUNT
//       calls ECHO (program 0x2000ec01 version 1 procedure 1, opaque<> in and
//       out) COUNT times with RPCSEC_GSS via authgss_create_default against
//       nfs@localhost, checks every answer, then destroys the context.
//   gssrpc_peer server PORT_FILE
//       serves ECHO with svcauth_gss (RPCSEC_GSS only) on a free TCP port,
//       writes the port number to PORT_FILE, runs until killed.
//
// Exit 0 on success; otherwise prints the failure and exits non-zero. The
// Kerberos environment (KRB5_CONFIG, KRB5CCNAME, KRB5_KTNAME) comes from the
// test's throwaway realm.
#include <arpa/inet.h>
#include <gssapi/gssapi_krb5.h>
#include <gssrpc/auth_gss.h>
#include <gssrpc/rpc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const rpcprog_t kProg = 0x2000ec01;
const rpcvers_t kVers = 1;
const rpcproc_t kEcho = 1;

struct Buf {
  char* data = nullptr;
  unsigned int len = 0;
};

bool_t XdrBuf(XDR* x, void* p) {
  Buf* b = static_cast<Buf*>(p);
  return xdr_bytes(x, &b->data, &b->len, 1u << 20);
}

bool_t XdrVoid(XDR*, void*) { return TRUE; }

// gssrpc declares xdrproc_t as int (*)() (K&R style); the library calls it
// with (XDR*, void*).
xdrproc_t Proc(bool_t (*f)(XDR*, void*)) {
  return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(f));
}

int Client(const char* host, int port, const char* service, int count) {
  rpc_gss_svc_t svc = RPCSEC_GSS_SVC_NONE;
  if (std::strcmp(service, "integrity") == 0) svc = RPCSEC_GSS_SVC_INTEGRITY;
  if (std::strcmp(service, "privacy") == 0) svc = RPCSEC_GSS_SVC_PRIVACY;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
    std::fprintf(stderr, "bad address %s\n", host);
    return 2;
  }
  int sock = RPC_ANYSOCK;
  CLIENT* c = clnttcp_create(&sin, kProg, kVers, &sock, 0, 0);
  if (c == nullptr) {
    std::fprintf(stderr, "clnttcp_create: %s\n", clnt_spcreateerror(const_cast<char*>(host)));
    return 2;
  }
  rpc_gss_sec sec{const_cast<gss_OID>(gss_mech_krb5), GSS_C_QOP_DEFAULT, svc};
  AUTH* auth = authgss_create_default(c, const_cast<char*>("nfs@localhost"), &sec);
  if (auth == nullptr) {
    std::fprintf(stderr, "authgss_create_default failed: %s\n",
                 clnt_spcreateerror(const_cast<char*>("authgss")));
    return 3;
  }
  c->cl_auth = auth;
  timeval tv{10, 0};
  if (clnt_call(c, 0, Proc(XdrVoid), nullptr, Proc(XdrVoid), nullptr, tv) != RPC_SUCCESS) {
    std::fprintf(stderr, "NULL call: %s\n", clnt_sperror(c, const_cast<char*>("null")));
    return 4;
  }
  for (int i = 0; i < count; ++i) {
    std::vector<char> data(static_cast<size_t>((i * 977) % 5000 + 1));
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<char>(k * 31 + i);
    Buf in{data.data(), static_cast<unsigned int>(data.size())};
    Buf out;
    enum clnt_stat st = clnt_call(c, kEcho, Proc(XdrBuf), reinterpret_cast<caddr_t>(&in),
                                  Proc(XdrBuf), reinterpret_cast<caddr_t>(&out), tv);
    if (st != RPC_SUCCESS) {
      std::fprintf(stderr, "ECHO call %d: %s\n", i, clnt_sperror(c, const_cast<char*>("echo")));
      return 5;
    }
    if (out.len != in.len || std::memcmp(out.data, in.data, in.len) != 0) {
      std::fprintf(stderr, "ECHO call %d: answer differs (%u vs %u bytes)\n", i, out.len, in.len);
      return 6;
    }
    XDR free_xdr;
    free_xdr.x_op = XDR_FREE;
    XdrBuf(&free_xdr, &out);
  }
  auth_destroy(c->cl_auth);  // sends RPCSEC_GSS_DESTROY
  clnt_destroy(c);
  std::printf("ok: %d ECHO calls with service %s\n", count, service);
  return 0;
}

void Dispatch(svc_req* rq, SVCXPRT* t) {
  if (rq->rq_cred.oa_flavor != RPCSEC_GSS) {
    svcerr_weakauth(t);
    return;
  }
  if (rq->rq_proc == 0) {
    svc_sendreply(t, Proc(XdrVoid), nullptr);
    return;
  }
  if (rq->rq_proc != kEcho) {
    svcerr_noproc(t);
    return;
  }
  Buf b;
  if (!svc_getargs(t, Proc(XdrBuf), reinterpret_cast<caddr_t>(&b))) {
    svcerr_decode(t);
    return;
  }
  svc_sendreply(t, Proc(XdrBuf), reinterpret_cast<caddr_t>(&b));
  svc_freeargs(t, Proc(XdrBuf), reinterpret_cast<caddr_t>(&b));
}

int Server(const char* port_file) {
  SVCXPRT* t = svctcp_create(RPC_ANYSOCK, 0, 0);
  if (t == nullptr) {
    std::fprintf(stderr, "svctcp_create failed\n");
    return 2;
  }
  std::string svc_name = "nfs@localhost";
  gss_buffer_desc b{svc_name.size(), svc_name.data()};
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 minor;
  if (GSS_ERROR(gss_import_name(&minor, &b, GSS_C_NT_HOSTBASED_SERVICE, &name))) {
    std::fprintf(stderr, "gss_import_name failed\n");
    return 2;
  }
  if (!svcauth_gss_set_svc_name(name)) {
    std::fprintf(stderr, "svcauth_gss_set_svc_name failed\n");
    return 2;
  }
  if (!svc_register(t, kProg, kVers, Dispatch, 0)) {
    std::fprintf(stderr, "svc_register failed\n");
    return 2;
  }
  std::string tmp = std::string(port_file) + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return 2;
  std::fprintf(f, "%d\n", t->xp_port);
  std::fclose(f);
  std::rename(tmp.c_str(), port_file);
  svc_run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::strcmp(argv[1], "client") == 0) {
    return Client(argv[2], std::atoi(argv[3]), argv[4], std::atoi(argv[5]));
  }
  if (argc == 3 && std::strcmp(argv[1], "server") == 0) return Server(argv[2]);
  std::fprintf(stderr, "usage: gssrpc_peer client HOST PORT SERVICE COUNT | server PORT_FILE\n");
  return 1;
}
