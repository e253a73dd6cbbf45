#pragma once
// A move-only `void()` callable that keeps small callables inline.
//
// Every message delivery is a callback (Engine::at), so a callback must not cost an
// allocation: std::function keeps only 16 bytes inline in libstdc++, which a lambda
// capturing three references already exceeds. This one keeps 48; larger callables go
// to the heap. Move-only, so it also holds callables that own move-only state.

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace sim {

class Callback {
 public:
  static constexpr std::size_t kInlineBytes = 48;

  Callback() = default;

  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, Callback> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  Callback(F&& f) {  // NOLINT(google-explicit-constructor): any callable converts, as to std::function
    using D = std::decay_t<F>;
    if constexpr (fits_inline<D>()) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      ::new (static_cast<void*>(storage_)) D*(new D(std::forward<F>(f)));
      ops_ = &kHeapOps<D>;
    }
  }

  Callback(Callback&& other) noexcept : ops_(std::exchange(other.ops_, nullptr)) {
    if (ops_ != nullptr) ops_->relocate(other.storage_, storage_);
  }
  Callback& operator=(Callback&& other) noexcept {
    if (this != &other) {
      reset();
      ops_ = std::exchange(other.ops_, nullptr);
      if (ops_ != nullptr) ops_->relocate(other.storage_, storage_);
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  /// Calls the callable; it must be set.
  void operator()() { ops_->call(storage_); }
  void reset() {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(storage_);
  }

 private:
  struct Ops {
    void (*call)(void* storage);
    void (*relocate)(void* from, void* to) noexcept;  // move into `to`, destroy `from`
    void (*destroy)(void* storage) noexcept;
  };

  template <class D>
  static constexpr bool fits_inline() {
    return sizeof(D) <= kInlineBytes && alignof(D) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<D>;
  }

  template <class D>
  static constexpr Ops kInlineOps{
      [](void* s) { (*std::launder(static_cast<D*>(s)))(); },
      [](void* from, void* to) noexcept {
        D* f = std::launder(static_cast<D*>(from));
        ::new (to) D(std::move(*f));
        f->~D();
      },
      [](void* s) noexcept { std::launder(static_cast<D*>(s))->~D(); },
  };
  template <class D>
  static constexpr Ops kHeapOps{
      [](void* s) { (**std::launder(static_cast<D**>(s)))(); },
      [](void* from, void* to) noexcept { ::new (to) D*(*std::launder(static_cast<D**>(from))); },
      [](void* s) noexcept { delete *std::launder(static_cast<D**>(s)); },
  };

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace sim
