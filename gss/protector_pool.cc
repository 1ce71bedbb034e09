#include "gss/protector_pool.h"

#include <sched.h>

#include <algorithm>
#include <array>

#include "common/machine.h"

namespace secmode::gss {

ProtectorPool::ProtectorPool(std::unique_ptr<Protector> first) : engine_(first->engine()) {
  // A fork that works says the engine and the context allow parallel use.
  auto fork = first->Fork();
  parallel_ = fork.ok();
  if (parallel_) {
    // A shelf per CPU, up to kMaxShelves (CPUs beyond share them): a pool
    // per context, and a server may hold thousands of contexts.
    shelf_count_ = std::min(static_cast<size_t>(common::LogicalCpus()), kMaxShelves);
    shelves_ = std::make_unique<Shelf[]>(shelf_count_);
    for (size_t i = 0; i < shelf_count_; ++i) shelves_[i].free.reserve(4);
    shelves_[0].free.push_back(fork->get());
    all_.push_back(std::move(fork).value());
    forker_ = std::move(first);
  } else {
    all_.push_back(std::move(first));
  }
}

size_t ProtectorPool::HomeShelf() const {
  const int cpu = sched_getcpu();  // glibc reads it from rseq: no system call
  return cpu < 0 ? 0 : static_cast<size_t>(cpu) % shelf_count_;
}

Protector* ProtectorPool::Shelf::Take() {
  if (free.empty()) return nullptr;
  Protector* p = free.back();
  free.pop_back();
  return p;
}

ProtectorPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), protector_(other.protector_), serial_(std::move(other.serial_)) {
  other.pool_ = nullptr;
  other.protector_ = nullptr;
}

ProtectorPool::Lease::~Lease() {
  if (pool_ != nullptr && !serial_.owns_lock()) pool_->Release(protector_);
}

common::Result<ProtectorPool::Lease> ProtectorPool::Acquire() {
  if (!parallel_) {
    std::unique_lock<std::mutex> lock(serial_mu_);
    return Lease(this, all_.front().get(), std::move(lock));
  }
  // This CPU's shelf first.
  {
    Shelf& home = shelves_[HomeShelf()];
    std::lock_guard<std::mutex> lock(home.mu);
    if (Protector* p = home.Take()) return Lease(this, p, {});
  }
  // Then every shelf, holding all their locks (in index order, the only
  // place that holds more than one): so a fork is made only when every
  // instance is leased at once, and the pool holds no more instances than
  // leases held at once. Nothing is allocated here (a fixed array of locks).
  {
    std::array<std::unique_lock<std::mutex>, kMaxShelves> locks;
    for (size_t k = 0; k < shelf_count_; ++k) locks[k] = std::unique_lock(shelves_[k].mu);
    for (size_t k = 0; k < shelf_count_; ++k) {
      if (Protector* p = shelves_[k].Take()) return Lease(this, p, {});
    }
  }
  // Every instance is in use: fork one more, outside the locks (it derives
  // keys). forker_ is used for nothing else, and forking reads only the
  // keys every fork shares, so forks may be made on several threads at once.
  SECMODE_ASSIGN_OR_RETURN(std::unique_ptr<Protector> fork, forker_->Fork());
  Protector* p = fork.get();
  std::lock_guard<std::mutex> lock(all_mu_);
  all_.push_back(std::move(fork));
  return Lease(this, p, {});
}

void ProtectorPool::Release(Protector* p) {
  Shelf& shelf = shelves_[HomeShelf()];
  std::lock_guard<std::mutex> lock(shelf.mu);
  shelf.free.push_back(p);
}

size_t ProtectorPool::size() {
  std::lock_guard<std::mutex> lock(all_mu_);
  return all_.size() + (forker_ ? 1 : 0);
}

}  // namespace secmode::gss
