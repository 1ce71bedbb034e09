// ProtectorPool: the Protectors of one context for many threads at once.
//
// Where the engine can fork (Protector::Fork: the native engine, on a
// context without GSS-level replay detection), each Acquire() hands the
// caller an instance of its own for as long as it holds the lease, forking
// a new one when all are in use; so the crypto of one context runs in
// parallel on every thread that uses it, as the Linux kernel's rpcsec_gss
// does. Only the context's owners serialise what must be serial (the
// RPCSEC_GSS sequence counter on the client, the window on the server).
// Where the engine cannot (MIT's mit and mit-iov: a context is not safe for
// concurrent use), every lease holds the one instance under a lock: calls
// are serialised, and parallel() says so.
//
// The free instances wait on a shelf per CPU (up to kMaxShelves), each under
// its own lock on its own cache line: a lease is taken from the shelf of the
// CPU the caller runs on (another's when that one is empty, a new fork when
// every instance is leased) and goes back to the shelf of the CPU it ends
// on, so the pool holds no more instances than leases held at once. One
// shared list under one lock moved its lock's cache line between the CPUs
// on each of a call's four leases and made threads wait on the lock (futex
// calls) in the end-to-end runs (`make profile`: "locks and futexes").
//
// Ownership: the pool owns every instance; a lease borrows one and must not
// outlive the pool. Thread safety: Acquire from any thread.
#ifndef SECMODE_GSS_PROTECTOR_POOL_H_
#define SECMODE_GSS_PROTECTOR_POOL_H_

#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "gss/protector.h"

namespace secmode::gss {

class ProtectorPool {
 public:
  explicit ProtectorPool(std::unique_ptr<Protector> first);
  ProtectorPool(const ProtectorPool&) = delete;
  ProtectorPool& operator=(const ProtectorPool&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Protector& operator*() const { return *protector_; }
    Protector* operator->() const { return protector_; }

   private:
    friend class ProtectorPool;
    Lease(ProtectorPool* pool, Protector* p, std::unique_lock<std::mutex> serial)
        : pool_(pool), protector_(p), serial_(std::move(serial)) {}
    ProtectorPool* pool_;
    Protector* protector_;
    std::unique_lock<std::mutex> serial_;  // held for the whole lease when serialised
  };

  // An instance for the caller's thread. Fails only when a fork fails.
  common::Result<Lease> Acquire();
  // Whether leases run in parallel (the engine forks).
  bool parallel() const { return parallel_; }
  // Instances made so far (1 when serialised).
  size_t size();
  Engine engine() const { return engine_; }

 private:
  void Release(Protector* p);
  // The shelf of the CPU the caller runs on now.
  size_t HomeShelf() const;

  static constexpr size_t kMaxShelves = 16;
  // The free instances of the CPUs whose number modulo shelf_count_ is the
  // shelf's index.
  struct alignas(64) Shelf {
    std::mutex mu;  // guards free
    std::vector<Protector*> free;
    Protector* Take();  // with mu held: a free instance, or null
  };

  const Engine engine_;
  bool parallel_ = false;
  std::mutex all_mu_;     // guards all_
  std::mutex serial_mu_;  // when serialised: held by the lease
  std::vector<std::unique_ptr<Protector>> all_;
  std::unique_ptr<Shelf[]> shelves_;  // when parallel: one per logical CPU, up to kMaxShelves
  size_t shelf_count_ = 0;
  std::unique_ptr<Protector> forker_;  // the first instance, kept to fork from
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_PROTECTOR_POOL_H_
