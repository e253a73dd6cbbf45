#include "app/deadline.hpp"

#include "app/trial.hpp"

namespace locksim {

TrialsDeadline::TrialsDeadline(double seconds)
    : started_(std::chrono::steady_clock::now()),
      seconds_(seconds),
      scope_(std::make_unique<InterruptTrials>(seconds > 0 ? &interrupt_ : nullptr)) {
  if (seconds <= 0) return;
  const auto at = started_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  alarm_ = std::jthread([this, at](std::stop_token over) {
    std::unique_lock lock(mutex_);
    cv_.wait_until(lock, over, at, [] { return false; });
    if (!over.stop_requested()) interrupt_ = true;
  });
}

TrialsDeadline::~TrialsDeadline() = default;

bool TrialsDeadline::passed() const {
  return interrupt_.load() ||
         (seconds_ > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >= seconds_);
}

}  // namespace locksim
