#pragma once
// The users: clients issuing logical operations ("bind OpenID `key` to this device") to
// the app servers through the load balancer, each attempt with a timeout, retried with
// backoff.
//
// Imitates HTTP clients with a call timeout and automatic retries (docs/models.md, Figures
// the models take: OkHttp's 10 s timeouts with retry on connection failure; Apache
// HttpClient's 3 retries). A timed-out attempt may still be handled by the server later:
// each retry is a new request for the same logical operation. Arrivals are open-loop: an
// operation starts at its arrival time whether or not the client's earlier ones are done.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/app/backoff.hpp"
#include "sim/distribution.hpp"
#include "models/app/load_balancer.hpp"

namespace models {

enum class ArrivalKind {
  at_start,  // every operation at start-up, each at U(0, spread): the mobile app syncing on launch
  fixed,     // a client's operation i at start + i x interval: every client in lockstep
  poisson,   // exponential gaps with mean `interval`, per client
  listed,    // a client's operation i at start + times[i]: a teaching scenario's timeline
};
const char* to_string(ArrivalKind kind);

struct Arrival {
  ArrivalKind kind = ArrivalKind::at_start;
  sim::Duration start{};
  sim::Duration spread{};
  sim::Duration interval = std::chrono::seconds(1);
  std::vector<sim::Duration> times{};  // listed: one per operation
};

struct RetryPolicy {
  int max_attempts = 3;
  sim::Duration attempt_timeout = std::chrono::seconds(10);
  BackoffConfig backoff;
  /// Errors worth another attempt; any other error ends the operation as failed.
  std::vector<ErrorKind> retry_on = {ErrorKind::timeout, ErrorKind::rejected};
  /// And these server errors or answers of a strategy's own, by their code ("40001", "seat_taken").
  std::vector<std::string> retry_on_codes{};
};

/// Which key an operation of the whole population's traffic binds.
enum class KeyChoice {
  fresh,    // a new key each: only retries and double submissions share one
  uniform,  // uniformly one of `key_count`
  zipf,     // one of `key_count`, the k-th most popular with weight 1 / k^exponent
};

/// Traffic of the whole population rather than per client: operations arrive at `rate_per_s`
/// (exponential gaps, or evenly spaced), for `duration` or until `operations` have arrived,
/// or at the listed `times` after `start`; each is a user's request of its own. A user
/// double-clicks with `double_submit` probability: the same request again (same key and
/// value) after `double_submit_delay`.
struct Traffic {
  enum class Kind { poisson, constant, listed } kind = Kind::poisson;
  double rate_per_s = 1;
  std::vector<sim::Duration> times{};  // listed: in order
  std::uint64_t operations = 0;  // 0: until `duration`
  sim::Duration duration{};
  sim::Duration start{};
  KeyChoice keys = KeyChoice::fresh;
  std::uint64_t key_count = 0;
  double zipf_exponent = 1;
  double double_submit = 0;
  sim::Distribution double_submit_delay = sim::fixed(sim::Duration{});
  /// Only the operations numbered in these [first, last] ranges (ascending, apart) are sent;
  /// the others are drawn as before but not sent, so the ones sent arrive as they did.
  /// Empty: every one. What shrinking keeps of a finding's traffic.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> only{};
  bool sends(std::uint64_t operation) const;
};
const char* to_string(KeyChoice keys);

struct ClientsConfig {
  /// Names the processes and streams: "<name>-3", "<name>-3.op-0".
  std::string name = "client";
  int clients = 10;
  int operations_per_client = 1;
  Arrival arrival;
  RetryPolicy retry;
  /// 0: each client works on its own key (first_key + its index); otherwise keys are
  /// drawn uniformly from [first_key, first_key + keys), so different clients can collide.
  std::uint64_t keys = 0;
  std::uint64_t first_key = 0;
  /// Set: one arrival process for the whole population instead of `clients` x `operations`.
  std::optional<Traffic> traffic{};
};

enum class Outcome : std::uint8_t {
  ok,       // an attempt succeeded
  failed,   // an attempt returned an error not worth retrying
  gave_up,  // every attempt failed with a retryable error
};
const char* to_string(Outcome outcome);

/// How one logical operation ended, as its client saw it.
struct OperationRecord {
  std::uint64_t operation = 0;  // client x operations_per_client + index (traffic: its arrival): unique within a fleet
  std::uint32_t client = 0;
  std::uint64_t key = 0;
  std::uint64_t value = 0;  // what it binds the key to: its own operation, or a double click's first submission
  sim::Time start;
  sim::Time end;
  int attempts = 0;
  Outcome outcome = Outcome::ok;
  ErrorKind last_error = ErrorKind::none;  // of the last failed attempt, if any
  std::string last_code{};                 // its Response::code: a server error's code, a business answer's name
  /// Where its latency went: the answered attempts' waits on the server, the attempts that
  /// timed out, the backoff sleeps, and the rest as service and network; the parts sum to it.
  TimeSpent time{};
  sim::Duration latency() const { return end - start; }
};

class Clients {
 public:
  Clients(Network& net, Node& node, LoadBalancer& balancer, ClientsConfig config);
  Clients(const Clients&) = delete;
  Clients& operator=(const Clients&) = delete;

  /// Starts every client's arrival process.
  void start();

  const ClientsConfig& config() const { return config_; }
  /// Operations started so far.
  std::uint64_t issued() const { return issued_; }
  /// One record per finished operation, in the order they finished.
  const std::vector<OperationRecord>& records() const { return records_; }

 private:
  void run_client(std::uint32_t client);
  void run_traffic();
  std::uint64_t traffic_key(sim::Stream& stream, std::uint64_t operation) const;
  void run_operation(std::uint32_t client, std::uint64_t operation, std::uint64_t key, std::uint64_t value, sim::Stream& stream);
  bool retryable(ErrorKind error, const std::string& code) const;

  Network& net_;
  Node& node_;
  LoadBalancer& balancer_;
  ClientsConfig config_;
  std::vector<sim::Stream> streams_;  // one per client; with traffic, the arrivals' and the operations' streams
  std::vector<double> zipf_cdf_{};    // traffic over Zipf keys: P(key index <= i)
  sim::TraceKind attempt_kind_;
  sim::TraceKind outcome_kind_;
  std::uint64_t issued_ = 0;
  std::vector<OperationRecord> records_;
};

}  // namespace models
