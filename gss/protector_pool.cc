#include "gss/protector_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace secmode::gss {

ProtectorPool::ProtectorPool(std::unique_ptr<Protector> first) : engine_(first->engine()) {
  // A fork that works says the engine and the context allow parallel use.
  auto fork = first->Fork();
  parallel_ = fork.ok();
  if (parallel_) {
    // A shelf per CPU, up to kMaxShelves (CPUs beyond share them): a pool
    // per context, and a server may hold thousands of contexts.
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    shelf_count_ = std::clamp<size_t>(cpus > 0 ? static_cast<size_t>(cpus) : 1, 1, kMaxShelves);
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
  return cpu > 0 ? static_cast<size_t>(cpu) % shelf_count_ : 0;
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
  // This CPU's shelf first, then the others in turn.
  const size_t home = HomeShelf();
  for (size_t k = 0; k < shelf_count_; ++k) {
    Shelf& shelf = shelves_[(home + k) % shelf_count_];
    std::lock_guard<std::mutex> lock(shelf.mu);
    if (!shelf.free.empty()) {
      Protector* p = shelf.free.back();
      shelf.free.pop_back();
      return Lease(this, p, {});
    }
  }
  // Every shelf was empty when looked at, one at a time; an instance may
  // have moved meanwhile from a shelf not yet looked at to one already
  // looked at. Look again holding every shelf's lock (in index order, the
  // only place that holds more than one), so a fork is made only when every
  // instance is leased at once: no more instances than leases held at once.
  {
    std::vector<std::unique_lock<std::mutex>> all_shelves;
    all_shelves.reserve(shelf_count_);
    for (size_t k = 0; k < shelf_count_; ++k) all_shelves.emplace_back(shelves_[k].mu);
    for (size_t k = 0; k < shelf_count_; ++k) {
      std::vector<Protector*>& free = shelves_[k].free;
      if (!free.empty()) {
        Protector* p = free.back();
        free.pop_back();
        return Lease(this, p, {});
      }
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
  if (!parallel_) return;  // a serialised lease holds its lock instead (~Lease)
  Shelf& shelf = shelves_[HomeShelf()];
  std::lock_guard<std::mutex> lock(shelf.mu);
  shelf.free.push_back(p);
}

size_t ProtectorPool::size() {
  std::lock_guard<std::mutex> lock(all_mu_);
  return all_.size() + (forker_ ? 1 : 0);
}

}  // namespace secmode::gss
