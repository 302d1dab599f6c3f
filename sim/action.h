// sim::InlineFunction<R(Args...), N>: a move-only callable with N bytes of inline storage
// (48 unless given), and sim::Action = InlineFunction<void(), 40>, what events carry.
//
// Callables up to kInlineBytes (and nothrow-movable) live inside the object without a heap
// allocation, which matters at tens of millions of events per second; larger ones go to
// the heap. Not copyable.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "sim/assert.h"

namespace afasim::sim {

template <typename Signature, std::size_t N = 48>
class InlineFunction;

template <typename R, typename... Args, std::size_t N>
class InlineFunction<R(Args...), N> {
 public:
  static constexpr std::size_t kInlineBytes = N;

  InlineFunction() = default;
  InlineFunction(std::nullptr_t) {}  // NOLINT

  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, InlineFunction> &&
                                        std::is_invocable_r_v<R, D&, Args...>>>
  InlineFunction(F&& f) {  // NOLINT: implicit, like std::function
    construct<D>(std::forward<F>(f));
  }

  // Replaces the callable with `f`, built in place (no temporary InlineFunction to move
  // from); an InlineFunction given is moved in. REQUIRES: an InlineFunction is an rvalue.
  template <typename F, typename D = std::decay_t<F>>
  void assign(F&& f) {
    if constexpr (std::is_same_v<D, InlineFunction>) {
      static_assert(!std::is_lvalue_reference_v<F>, "assign(std::move(f)): InlineFunction is move-only");
      *this = std::move(f);
    } else {
      static_assert(std::is_invocable_r_v<R, D&, Args...>, "assign: not callable with this signature");
      reset();
      construct<D>(std::forward<F>(f));
    }
  }

  // Inline (always): a move is a few words' copy, and an out-of-line one costs a call and its
  // register saves at the hot sites that hand callbacks on (Callgrind, docs/performance.md).
  [[gnu::always_inline]] InlineFunction(InlineFunction&& other) noexcept { move_from(other); }
  [[gnu::always_inline]] InlineFunction& operator=(InlineFunction&& other) noexcept {
    if (this != &other) {
      reset();
      move_from(other);
    }
    return *this;
  }
  InlineFunction(const InlineFunction&) = delete;
  InlineFunction& operator=(const InlineFunction&) = delete;
  ~InlineFunction() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  // REQUIRES: not empty.
  R operator()(Args... args) {
    AFASIM_ASSERT(ops_ != nullptr, "calling an empty sim::InlineFunction");
    return ops_->invoke(storage_, std::forward<Args>(args)...);
  }

  [[gnu::always_inline]] void reset() {
    if (ops_ != nullptr) {
      if (ops_->destroy != nullptr) ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

 private:
  // move null: the stored bytes move as they are (a trivially copyable callable, or the
  // pointer to one on the heap), without an indirect call; destroy null: nothing to do.
  struct Ops {
    R (*invoke)(void*, Args&&...);
    void (*move)(void* dst, void* src);  // move-constructs dst from src, destroys src
    void (*destroy)(void*);
  };

  template <typename D>
  static constexpr bool kTrivial = std::is_trivially_copyable_v<D> && std::is_trivially_destructible_v<D>;
  template <typename D>
  static void move_inline(void* dst, void* src) {
    ::new (dst) D(std::move(*static_cast<D*>(src)));
    static_cast<D*>(src)->~D();
  }
  template <typename D>
  static void destroy_inline(void* p) {
    static_cast<D*>(p)->~D();
  }
  template <typename D>
  static constexpr Ops inline_ops = {
      [](void* p, Args&&... args) -> R { return (*static_cast<D*>(p))(std::forward<Args>(args)...); },
      kTrivial<D> ? nullptr : &move_inline<D>,
      kTrivial<D> ? nullptr : &destroy_inline<D>,
  };
  template <typename D>
  static constexpr Ops heap_ops = {
      [](void* p, Args&&... args) -> R { return (**static_cast<D**>(p))(std::forward<Args>(args)...); },
      nullptr,
      [](void* p) { delete *static_cast<D**>(p); },
  };

  // REQUIRES: empty.
  template <typename D, typename F>
  void construct(F&& f) {
    if constexpr (sizeof(D) <= kInlineBytes && alignof(D) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<D>) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      ops_ = &inline_ops<D>;
    } else {
      *reinterpret_cast<D**>(storage_) = new D(std::forward<F>(f));
      ops_ = &heap_ops<D>;
    }
  }

  // Inline at every move: out of line it was a call per move (~12 instructions a callback
  // move on a read's path, four or five moves per read).
  [[gnu::always_inline]] void move_from(InlineFunction& other) noexcept {
    if (other.ops_ != nullptr) {
      if (other.ops_->move != nullptr) other.ops_->move(storage_, other.storage_);
      else std::memcpy(storage_, other.storage_, kInlineBytes);
      ops_ = other.ops_;
      other.ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

// 40 bytes inline (an event's whole capture on every hot path: at most a `this`, an id and a
// callback of the same), so that an action, its ops pointer and the simulator's per-event
// state fill one 64-byte line (Simulator::Event): the event's slot is one cold line when it
// runs, not two.
using Action = InlineFunction<void(), 40>;

}  // namespace afasim::sim
