#include "gss/protector_pool.h"

namespace secmode::gss {

ProtectorPool::ProtectorPool(std::unique_ptr<Protector> first) : engine_(first->engine()) {
  // A fork that works says the engine and the context allow parallel use.
  auto fork = first->Fork();
  parallel_ = fork.ok();
  if (parallel_) {
    free_.push_back(fork->get());
    all_.push_back(std::move(fork).value());
    forker_ = std::move(first);
  } else {
    free_.push_back(first.get());
    all_.push_back(std::move(first));
  }
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      Protector* p = free_.back();
      free_.pop_back();
      return Lease(this, p, {});
    }
  }
  // Every instance is in use: fork one more, outside the lock (it derives
  // keys). forker_ is used for nothing else, and forking reads only the
  // keys every fork shares, so forks may be made on several threads at once.
  SECMODE_ASSIGN_OR_RETURN(std::unique_ptr<Protector> fork, forker_->Fork());
  Protector* p = fork.get();
  std::lock_guard<std::mutex> lock(mu_);
  all_.push_back(std::move(fork));
  return Lease(this, p, {});
}

void ProtectorPool::Release(Protector* p) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(p);
}

size_t ProtectorPool::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size() + (forker_ ? 1 : 0);
}

}  // namespace secmode::gss
