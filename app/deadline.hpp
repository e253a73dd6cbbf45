#pragma once
// A --time deadline reaching the trials this thread runs: once it passes, the trial under way
// ends unfinished where its engine can stop it (sim::Interrupted, InterruptTrials), and
// passed() says so, so that no other starts.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace locksim {

class InterruptTrials;

class TrialsDeadline {
 public:
  /// `seconds` from now; 0 or less: none (nothing is interrupted, passed() stays false).
  explicit TrialsDeadline(double seconds);
  ~TrialsDeadline();
  TrialsDeadline(const TrialsDeadline&) = delete;
  TrialsDeadline& operator=(const TrialsDeadline&) = delete;
  bool passed() const;

 private:
  std::chrono::steady_clock::time_point started_;
  double seconds_;
  std::atomic<bool> interrupt_{false};
  std::mutex mutex_;
  std::condition_variable_any cv_;
  std::unique_ptr<InterruptTrials> scope_;
  std::jthread alarm_;  // declared last: stopped and joined before the rest goes
};

}  // namespace locksim
