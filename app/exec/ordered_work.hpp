#pragma once
// One queue of numbered work items (0, 1, 2, ...) shared by a pool of threads, whose results
// are folded in item order whatever order the threads finish them in. A result that finishes
// ahead of the next one to fold waits in a reorder buffer; an item is handed out only while it
// is less than `window` items ahead of the fold, so the buffer never holds `window` results,
// however uneven the items' run times: memory does not grow with the number of items.
//
// It is the one pool of the runner's trials and of the searches' runs: the caller's threads
// run items, and under mpirun the caller's own thread hands items to the other ranks
// (app/exec/executor.hpp) and folds their answers with its threads' results.

#include <algorithm>
#include <cassert>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace locksim {

template <class Result>
class OrderedWork {
 public:
  /// Answers of `try_take`.
  enum class Take { item, wait, over };

  /// `fold(item, result)` runs under the queue's lock, in item order, once for each item done.
  /// `stop()`, if given, is asked under the lock just before each item is handed out, and only
  /// then: once it says true, no more items are handed out (those handed out still finish).
  OrderedWork(std::size_t items, std::size_t window, std::function<void(std::size_t, Result&&)> fold,
              std::function<bool()> stop = {})
      : items_(items), window_(window), fold_(std::move(fold)), stop_(std::move(stop)) {
    assert(window_ >= 1);
  }

  /// Without blocking: the next item (into `item`), `wait` while it would be `window` or more
  /// ahead of the fold, or `over` once nothing more will be handed out (every item was, the
  /// run stopped, or an item failed).
  Take try_take(std::size_t& item) {
    const std::lock_guard lock(mutex_);
    return take_locked(item);
  }

  /// The next item, waiting while the window is full; nothing once the work is over.
  std::optional<std::size_t> take() {
    std::unique_lock lock(mutex_);
    std::size_t item = 0;
    for (;;) {
      switch (take_locked(item)) {
        case Take::item: return item;
        case Take::over: return std::nullopt;
        case Take::wait: changed_.wait(lock); break;
      }
    }
  }

  /// A handed-out item's result: kept until the items before it are done, then folded. A fold
  /// that throws is the work's failure, as an item's is: nothing is folded after it (an item
  /// finishing on another thread meanwhile is dropped, not folded), and `run` rethrows it.
  void done(std::size_t item, Result result) {
    const std::lock_guard lock(mutex_);
    if (failure_ || item >= limit_) return;
    buffer_.emplace(item, std::move(result));
    try {
      for (auto it = buffer_.begin(); it != buffer_.end() && it->first == folded_; it = buffer_.erase(it)) {
        fold_(folded_, std::move(it->second));
        ++folded_;
      }
    } catch (...) {
      failure_ = std::current_exception();
      buffer_.clear();
    }
    changed_.notify_all();
  }

  /// A handed-out item that cannot be done (a deadline interrupted it): nothing more is handed
  /// out, and nothing from it on is folded (a result done later is dropped), so the items
  /// folded stay a prefix, 0 .. item - 1 at most.
  void drop(std::size_t item) {
    const std::lock_guard lock(mutex_);
    stopped_ = true;
    limit_ = std::min(limit_, item);
    buffer_.erase(buffer_.lower_bound(limit_), buffer_.end());
    changed_.notify_all();
  }

  /// An item threw: nothing more is handed out; `run` rethrows the first failure.
  void fail(std::exception_ptr failure) {
    const std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(failure);
    changed_.notify_all();
  }

  /// Runs every item through `work` on `threads` threads (the caller's among them), then
  /// rethrows the first failure, if any; an item whose `work` gives nothing is dropped (drop()).
  /// With `caller`, the caller's thread runs that instead (it hands items to other processes,
  /// with try_take() and done()) beside `threads` threads running `work`; a failure it throws
  /// ends the work as an item's would.
  void run(int threads, const std::function<std::optional<Result>(std::size_t)>& work, const std::function<void()>& caller = {}) {
    auto loop = [&] {
      while (const auto item = take()) {
        try {
          if (std::optional<Result> result = work(*item))
            done(*item, std::move(*result));
          else
            drop(*item);
        } catch (...) {
          fail(std::current_exception());
        }
      }
    };
    std::vector<std::jthread> helpers;
    const auto most = static_cast<std::size_t>(threads > 1 ? threads : 1);
    for (std::size_t i = caller ? 0 : 1; i < std::min(most, items_); ++i) helpers.emplace_back(loop);
    if (caller) {
      try {
        caller();
      } catch (...) {
        fail(std::current_exception());
      }
    } else {
      loop();
    }
    helpers.clear();  // joins
    if (failure_) std::rethrow_exception(failure_);
  }

  /// Items handed out so far: after a stop, the items run are exactly 0 .. handed_out() - 1.
  std::size_t handed_out() const {
    const std::lock_guard lock(mutex_);
    return next_;
  }
  /// Results folded so far.
  std::size_t folded() const {
    const std::lock_guard lock(mutex_);
    return folded_;
  }
  /// Results done but waiting for an earlier item (always fewer than `window`).
  std::size_t buffered() const {
    const std::lock_guard lock(mutex_);
    return buffer_.size();
  }
  /// Whether `stop` ended the work before every item was handed out.
  bool stopped() const {
    const std::lock_guard lock(mutex_);
    return stopped_;
  }

 private:
  Take take_locked(std::size_t& item) {
    if (failure_ || stopped_ || next_ >= items_) return Take::over;
    if (next_ >= folded_ + window_) return Take::wait;
    if (stop_ && stop_()) {
      stopped_ = true;
      changed_.notify_all();  // the threads waiting on the window: there is nothing more
      return Take::over;
    }
    item = next_++;
    return Take::item;
  }

  const std::size_t items_, window_;
  std::function<void(std::size_t, Result&&)> fold_;
  std::function<bool()> stop_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;    // the next item to hand out
  std::size_t folded_ = 0;  // items 0 .. folded_ - 1 are folded
  std::size_t limit_ = static_cast<std::size_t>(-1);  // drop(): no item from this one on is folded
  std::map<std::size_t, Result> buffer_;
  bool stopped_ = false;
  std::exception_ptr failure_;
};

}  // namespace locksim
