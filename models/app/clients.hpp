#pragma once
// The users: clients issuing logical operations ("bind OpenID `key` to this device") to
// the app servers through the load balancer, each attempt with a timeout, retried with
// backoff.
//
// Imitates HTTP clients with a call timeout and automatic retries (DOMAIN.md, Parameters:
// OkHttp's 10 s timeouts with retry on connection failure; Apache HttpClient's 3 retries).
// A timed-out attempt may still be handled by the server later: each retry is a new
// request for the same logical operation. Arrivals are open-loop: an operation starts at
// its arrival time whether or not the client's earlier ones are done.

#include <cstdint>
#include <string>
#include <vector>

#include "models/app/backoff.hpp"
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
};

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
};

enum class Outcome : std::uint8_t {
  ok,       // an attempt succeeded
  failed,   // an attempt returned an error not worth retrying
  gave_up,  // every attempt failed with a retryable error
};
const char* to_string(Outcome outcome);

/// How one logical operation ended, as its client saw it.
struct OperationRecord {
  std::uint64_t operation = 0;  // client x operations_per_client + index: unique within a fleet
  std::uint32_t client = 0;
  std::uint64_t key = 0;
  sim::Time start;
  sim::Time end;
  int attempts = 0;
  Outcome outcome = Outcome::ok;
  ErrorKind last_error = ErrorKind::none;  // of the last failed attempt, if any
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
  void run_operation(std::uint32_t client, int index, std::uint64_t key, sim::Stream& stream);
  bool retryable(ErrorKind error) const;

  Network& net_;
  Node& node_;
  LoadBalancer& balancer_;
  ClientsConfig config_;
  std::vector<sim::Stream> streams_;  // one per client
  sim::TraceKind attempt_kind_;
  sim::TraceKind outcome_kind_;
  std::uint64_t issued_ = 0;
  std::vector<OperationRecord> records_;
};

}  // namespace models
