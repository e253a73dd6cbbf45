#pragma once
// The request/reply calls of one trial, kept for telling and drawing it (a replay, a report's
// first violating trial): who called whom with what, when it arrived and was taken up, what
// came back and when, or when the caller stopped waiting. Kept only when asked
// (Network::keep_calls): it draws nothing random and records nothing in the trace, so a trial
// runs the same with it or without it.
//
// A message type is told by an overload of `call_text(const Req&)` (and its reply by
// `reply_text(const Resp&)`) in its own namespace; calls of a type without one are not kept.
// The caller is the calling process unless `call_caller(const Req&)` names another (a client's
// request names its client).

#include <cstddef>
#include <string>
#include <vector>

#include "sim/sim.hpp"

namespace models {

struct CallRecord {
  std::string caller_node;  // "app-1"
  std::string caller;       // the calling process ("app-1.worker-3") or what call_caller named ("client 7")
  std::string callee_node;  // the node called ("redis-1")
  std::string callee;       // the process that took the request up ("app-1.worker-2"); empty: none did
  std::string request;      // "SET lock:openid:0 app-1-3-7-1 NX PX 10000"
  std::string reply{};  // "OK", "nil"; empty while none was sent
  sim::Time sent{};
  sim::Time arrived = sim::kNever;   // at the callee's node; never: lost, or held past the trial
  sim::Time taken = sim::kNever;     // taken up by a process of the callee (an app server's worker)
  sim::Time answered = sim::kNever;  // the reply sent
  sim::Time returned = sim::kNever;  // the reply reached the caller (after gave_up: too late, unread)
  sim::Time gave_up = sim::kNever;   // the caller's timeout ran out before a reply
  std::int64_t operation = -1;       // a client's attempt: the operation it is of; < 0: another call
  std::uint32_t attempt = 0;         // a client's attempt: which one, from 1
};

class CallLog {
 public:
  static constexpr std::size_t kNone = ~std::size_t{0};
  /// At most this many calls are kept (about 40 MB; a minute at 500 requests a second); later
  /// ones are counted only. Only a trial drawn keeps its calls.
  static constexpr std::size_t kMostKept = 150000;

  std::size_t open(std::string caller_node, std::string caller, std::string callee_node, std::string request, sim::Time at) {
    if (calls_.size() == kMostKept) {
      ++dropped_;
      return kNone;
    }
    calls_.push_back({std::move(caller_node), std::move(caller), std::move(callee_node), {}, std::move(request)});
    calls_.back().sent = at;
    return calls_.size() - 1;
  }
  CallRecord* find(std::size_t id) { return id < calls_.size() ? &calls_[id] : nullptr; }

  const std::vector<CallRecord>& calls() const { return calls_; }
  std::size_t dropped() const { return dropped_; }

 private:
  std::vector<CallRecord> calls_;
  std::size_t dropped_ = 0;
};

}  // namespace models
