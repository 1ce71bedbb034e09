// SecretBytes: an owned byte buffer for keys and anything equivalent to a
// key (a derived key, a session key, a KDF's output block), which wipes its
// bytes with OPENSSL_cleanse whenever it lets go of them.
//
// What it promises: no byte it has held is left behind in memory it gives
// up. Precisely,
//   - destruction and Clear() cleanse the buffer before freeing it;
//   - Resize() to fewer bytes cleanses the dropped tail at once (the
//     buffer stays until it is freed); to more bytes it copies into a new
//     buffer and cleanses the old one before freeing it. Nothing else
//     reallocates (there is no push_back or reserve);
//   - Assign() and copy assignment overwrite in place when the size is
//     unchanged, otherwise copy into a new buffer and cleanse and free the
//     old one;
//   - a move hands the buffer itself over (no copy is made) and leaves the
//     source empty; move assignment cleanses what the target held.
// What it does not promise: copies the caller makes through data() or a
// ByteView, registers, or the stack frames of the functions the bytes are
// passed to (OpenSSL cleanses its own key schedules when its contexts are
// freed). Copying a SecretBytes is allowed (each copy wipes itself).
//
// operator== compares in constant time for equal sizes (CRYPTO_memcmp).
// Keys are set up once per association, never per message: a SecretBytes
// allocates when it is made or grows, which is never on a per-message path.
//
// BasicSecretBytes takes the allocator as a parameter only so that tests can
// place its buffer in memory they own and read it after it is freed;
// everything else uses SecretBytes.
// Thread safety: a plain value; one thread at a time per object.
#ifndef SECMODE_COMMON_SECRET_BYTES_H_
#define SECMODE_COMMON_SECRET_BYTES_H_

#include <openssl/crypto.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "common/bytes.h"

namespace secmode::common {

template <typename Alloc = std::allocator<uint8_t>>
class BasicSecretBytes {
  using Traits = std::allocator_traits<Alloc>;

 public:
  BasicSecretBytes() = default;
  explicit BasicSecretBytes(const Alloc& alloc) : alloc_(alloc) {}
  // `n` zero bytes.
  explicit BasicSecretBytes(size_t n, const Alloc& alloc = Alloc()) : alloc_(alloc) { Resize(n); }
  // A copy of `bytes`.
  explicit BasicSecretBytes(ByteView bytes, const Alloc& alloc = Alloc()) : alloc_(alloc) {
    Assign(bytes);
  }
  BasicSecretBytes(const BasicSecretBytes& other) : alloc_(other.alloc_) { Assign(other); }
  BasicSecretBytes(BasicSecretBytes&& other) noexcept
      : alloc_(other.alloc_),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        allocated_(std::exchange(other.allocated_, 0)) {}
  BasicSecretBytes& operator=(const BasicSecretBytes& other) {
    if (this != &other) Assign(other);
    return *this;
  }
  BasicSecretBytes& operator=(BasicSecretBytes&& other) noexcept {
    if (this != &other) {
      Clear();
      alloc_ = other.alloc_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      allocated_ = std::exchange(other.allocated_, 0);
    }
    return *this;
  }
  ~BasicSecretBytes() { Clear(); }

  // Replaces the contents by a copy of `bytes` (which may be part of them).
  void Assign(ByteView bytes) {
    if (bytes.size() == size_) {
      if (size_ > 0 && bytes.data() != data_) std::memmove(data_, bytes.data(), size_);
      return;
    }
    BasicSecretBytes fresh(bytes.size(), alloc_, Uninitialised{});
    if (!bytes.empty()) std::memcpy(fresh.data_, bytes.data(), bytes.size());
    *this = std::move(fresh);  // cleanses and frees the old buffer
  }
  // Keeps the first min(n, size()) bytes; new bytes are zero.
  void Resize(size_t n) {
    if (n == size_) return;
    if (n < size_) {
      OPENSSL_cleanse(data_ + n, size_ - n);
      if (n == 0)
        Clear();
      else
        size_ = n;  // the cleansed tail stays allocated until Clear
      return;
    }
    BasicSecretBytes bigger(n, alloc_, Uninitialised{});
    if (size_ > 0) std::memcpy(bigger.data_, data_, size_);
    std::memset(bigger.data_ + size_, 0, n - size_);
    *this = std::move(bigger);  // cleanses and frees the old buffer
  }
  // Cleanses and frees the buffer; size() is 0 afterwards.
  void Clear() {
    if (data_ == nullptr) return;
    OPENSSL_cleanse(data_, allocated_);
    Traits::deallocate(alloc_, data_, allocated_);
    data_ = nullptr;
    size_ = allocated_ = 0;
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint8_t* begin() { return data_; }
  uint8_t* end() { return data_ + size_; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }
  uint8_t& operator[](size_t i) { return data_[i]; }
  uint8_t operator[](size_t i) const { return data_[i]; }
  ByteView view() const { return ByteView(data_, size_); }
  operator ByteView() const { return view(); }  // NOLINT: a key is passed as a view

  friend bool operator==(const BasicSecretBytes& a, const BasicSecretBytes& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || CRYPTO_memcmp(a.data_, b.data_, a.size_) == 0);
  }

 private:
  struct Uninitialised {};
  BasicSecretBytes(size_t n, const Alloc& alloc, Uninitialised) : alloc_(alloc) { Allocate(n); }
  void Allocate(size_t n) {
    if (n == 0) return;
    data_ = Traits::allocate(alloc_, n);
    size_ = allocated_ = n;
  }

  Alloc alloc_{};
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t allocated_ = 0;  // what data_ points to (size_ or more after a shrink)
};

using SecretBytes = BasicSecretBytes<>;

}  // namespace secmode::common

#endif  // SECMODE_COMMON_SECRET_BYTES_H_
