#include "models/app/clients.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace models {

const char* to_string(ArrivalKind kind) {
  switch (kind) {
    case ArrivalKind::at_start: return "at-start";
    case ArrivalKind::fixed: return "fixed";
    case ArrivalKind::poisson: return "poisson";
    case ArrivalKind::listed: return "listed";
  }
  return "?";
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok: return "ok";
    case Outcome::failed: return "failed";
    case Outcome::gave_up: return "gave_up";
  }
  return "?";
}

Clients::Clients(Network& net, Node& node, LoadBalancer& balancer, ClientsConfig config)
    : net_(net),
      node_(node),
      balancer_(balancer),
      config_(std::move(config)),
      attempt_kind_(node.engine().trace().kind("client.attempt")),
      outcome_kind_(node.engine().trace().kind("client.outcome")) {
  if (config_.clients < 0 || config_.operations_per_client < 0)
    throw sim::UsageError("models::Clients: client and operation counts must not be negative");
  if (config_.retry.max_attempts < 1)
    throw sim::UsageError(fmt::format("models::Clients: max_attempts must be at least 1, got {}", config_.retry.max_attempts));
  if (config_.retry.attempt_timeout <= sim::Duration::zero())
    throw sim::UsageError("models::Clients: the attempt timeout must be positive");
  if (config_.arrival.kind == ArrivalKind::poisson && config_.arrival.interval <= sim::Duration::zero())
    throw sim::UsageError("models::Clients: a Poisson arrival needs a positive mean interval");
  if (config_.arrival.kind == ArrivalKind::listed &&
      (config_.arrival.times.size() != static_cast<std::size_t>(config_.operations_per_client) ||
       !std::is_sorted(config_.arrival.times.begin(), config_.arrival.times.end())))
    throw sim::UsageError("models::Clients: a listed arrival needs one time per operation, in order");
  Backoff{config_.retry.backoff};  // checks the backoff parameters now, not at the first retry
  if (const auto& t = config_.traffic) {
    if (t->kind == Traffic::Kind::listed) {
      if (t->times.empty() || !std::is_sorted(t->times.begin(), t->times.end()))
        throw sim::UsageError("models::Clients: listed traffic needs its times, in order");
    } else {
      if (!(t->rate_per_s > 0) || !std::isfinite(t->rate_per_s)) throw sim::UsageError("models::Clients: traffic needs a positive rate");
      if (t->operations == 0 && t->duration <= sim::Duration::zero())
        throw sim::UsageError("models::Clients: traffic needs a duration or an operation count");
    }
    if (t->keys != KeyChoice::fresh && t->key_count == 0) throw sim::UsageError("models::Clients: traffic over keys needs a key count");
    if (!(t->double_submit >= 0 && t->double_submit <= 1)) throw sim::UsageError("models::Clients: double_submit is a probability");
    if (t->keys == KeyChoice::zipf) {
      double total = 0;
      zipf_cdf_.reserve(t->key_count);
      for (std::uint64_t k = 1; k <= t->key_count; ++k) zipf_cdf_.push_back(total += std::pow(static_cast<double>(k), -t->zipf_exponent));
      for (double& p : zipf_cdf_) p /= total;
    }
  }
}

const char* to_string(KeyChoice keys) {
  switch (keys) {
    case KeyChoice::fresh: return "fresh";
    case KeyChoice::uniform: return "uniform";
    case KeyChoice::zipf: return "zipf";
  }
  return "?";
}

void Clients::start() {
  sim::Engine& engine = node_.engine();
  streams_.clear();
  if (config_.traffic) {
    // The arrivals' own stream, and another for what the operations draw (their retries'
    // backoff): arrivals are then the same whatever the strategy makes the operations do.
    streams_.push_back(engine.stream(config_.name + "-traffic"));
    streams_.push_back(engine.stream(config_.name + "-traffic-operations"));
    node_.spawn(config_.name + "-traffic", [this] { run_traffic(); });
    return;
  }
  for (int c = 0; c < config_.clients; ++c) streams_.push_back(engine.stream(fmt::format(FMT_COMPILE("{}-{}"), config_.name, c)));
  for (int c = 0; c < config_.clients; ++c)
    node_.spawn(fmt::format(FMT_COMPILE("{}-{}"), config_.name, c), [this, c] { run_client(static_cast<std::uint32_t>(c)); });
}

void Clients::run_client(std::uint32_t client) {
  sim::Stream& stream = streams_[client];
  const Arrival& arrival = config_.arrival;
  const sim::Time begin = sim::Time{arrival.start};
  sim::Time next = begin;
  for (int i = 0; i < config_.operations_per_client; ++i) {
    switch (arrival.kind) {
      case ArrivalKind::at_start:
        next = begin + (arrival.spread > sim::Duration::zero()
                            ? sim::Duration{static_cast<std::int64_t>(stream.choose(static_cast<std::uint64_t>(arrival.spread.count()) + 1))}
                            : sim::Duration::zero());
        break;
      case ArrivalKind::fixed: next = begin + arrival.interval * i; break;
      case ArrivalKind::poisson: next += sim::exponential(arrival.interval).sample_duration(stream); break;
      case ArrivalKind::listed: next = begin + arrival.times.at(static_cast<std::size_t>(i)); break;
    }
    const std::uint64_t key = config_.first_key + (config_.keys == 0 ? client : stream.choose(config_.keys));
    const std::uint64_t operation = static_cast<std::uint64_t>(client) * static_cast<std::uint64_t>(config_.operations_per_client) +
                                    static_cast<std::uint64_t>(i);
    auto start_operation = [this, client, operation, key, &stream] { run_operation(client, operation, key, operation, stream); };
    if (arrival.kind == ArrivalKind::at_start) {
      node_.spawn(fmt::format(FMT_COMPILE("{}-{}.op-{}"), config_.name, client, i), [start_operation, next] {
        sim::sleep_until(next);
        start_operation();
      });
    } else {
      sim::sleep_until(next);
      node_.spawn(fmt::format(FMT_COMPILE("{}-{}.op-{}"), config_.name, client, i), start_operation);
    }
  }
}

std::uint64_t Clients::traffic_key(sim::Stream& stream, std::uint64_t operation) const {
  const Traffic& t = *config_.traffic;
  switch (t.keys) {
    case KeyChoice::fresh: return config_.first_key + operation;
    case KeyChoice::uniform: return config_.first_key + stream.choose(t.key_count);
    case KeyChoice::zipf: {
      const double u = stream.uniform01();
      const auto it = std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u);
      return config_.first_key + static_cast<std::uint64_t>(std::min<std::ptrdiff_t>(it - zipf_cdf_.begin(), zipf_cdf_.size() - 1));
    }
  }
  return config_.first_key;
}

// The population's arrivals, one process: each operation a request of a user of its own
// (client = the operation's number), a double click now and then.
bool Traffic::sends(std::uint64_t operation) const {
  if (only.empty()) return true;
  const auto after = std::upper_bound(only.begin(), only.end(), operation, [](std::uint64_t op, const auto& r) { return op < r.first; });
  return after != only.begin() && operation <= std::prev(after)->second;
}

void Clients::run_traffic() {
  const Traffic& t = *config_.traffic;
  sim::Stream& stream = streams_.front();
  sim::Stream& operations = streams_.back();
  const sim::Time begin = sim::Time{t.start};
  const sim::Time end = begin + t.duration;
  const auto gap = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double>(1.0 / t.rate_per_s));
  const sim::Distribution gaps = t.kind == Traffic::Kind::poisson ? sim::exponential(gap) : sim::fixed(gap);
  std::uint64_t next_operation = 0;
  sim::Time next = begin;
  for (std::uint64_t arrived = 0;; ++arrived) {
    if (t.kind == Traffic::Kind::listed) {
      if (arrived == t.times.size()) return;
      next = begin + t.times[arrived];
    } else {
      if (t.kind == Traffic::Kind::poisson || arrived > 0) next += gaps.sample_duration(stream);
      if (t.operations != 0 ? arrived == t.operations : next >= end) return;
    }
    sim::sleep_until(next);
    const std::uint64_t operation = next_operation++;
    const std::uint64_t key = traffic_key(stream, operation);
    const auto client = static_cast<std::uint32_t>(operation);
    if (t.sends(operation))
      node_.spawn(fmt::format(FMT_COMPILE("{}-traffic.op-{}"), config_.name, operation),
                  [this, client, operation, key, &operations] { run_operation(client, operation, key, operation, operations); });
    if (t.double_submit > 0 && stream.uniform01() < t.double_submit) {  // the same request again, as a second click sends it
      const std::uint64_t again = next_operation++;
      const sim::Duration delay = t.double_submit_delay.sample_duration(stream);
      if (t.sends(again))
        node_.spawn(fmt::format(FMT_COMPILE("{}-traffic.op-{}"), config_.name, again),
                    [this, client, again, key, operation, delay, &operations] {
                      sim::sleep_for(delay);
                      run_operation(client, again, key, operation, operations);
                    });
    }
  }
}

bool Clients::retryable(ErrorKind error, const std::string& code) const {
  const auto& codes = config_.retry.retry_on_codes;
  if (!code.empty()) return std::find(codes.begin(), codes.end(), code) != codes.end();
  return std::find(config_.retry.retry_on.begin(), config_.retry.retry_on.end(), error) != config_.retry.retry_on.end();
}

void Clients::run_operation(std::uint32_t client, std::uint64_t operation, std::uint64_t key, std::uint64_t value, sim::Stream& stream) {
  sim::Engine& engine = node_.engine();
  const RetryPolicy& retry = config_.retry;
  ++issued_;
  OperationRecord record;
  record.operation = operation;
  record.value = value;
  record.client = client;
  record.key = key;
  record.start = engine.now();
  Backoff backoff(retry.backoff);
  TimeSpent& spent = record.time;
  for (int attempt = 1;; ++attempt) {
    record.attempts = attempt;
    AppServer& server = balancer_.pick(key);
    engine.record(attempt_kind_, record.operation, attempt, server.node().id());
    const Request request{record.operation, static_cast<std::uint32_t>(attempt), client, key, value, engine.now()};
    const std::optional<Response> response = try_call_server<Response>(net_, node_.id(), server, request, retry.attempt_timeout);
    if (response) {  // its waits on the server lie inside the attempt; the rest is service and network
      spent.queue += response->time.queue;
      spent.pool += response->time.pool;
      spent.db_lock += response->time.db_lock;
      spent.lock_service += response->time.lock_service;
    } else {
      spent.timed_out += engine.now() - request.sent;
    }
    const ErrorKind error = response ? response->error : ErrorKind::timeout;
    if (error == ErrorKind::none) {
      record.outcome = Outcome::ok;
      break;
    }
    record.last_error = error;
    record.last_code = response ? response->code : std::string();
    if (!retryable(error, record.last_code)) {
      record.outcome = Outcome::failed;
      break;
    }
    if (attempt == retry.max_attempts) {
      record.outcome = Outcome::gave_up;
      break;
    }
    const sim::Time slept = engine.now();
    sim::sleep_for(backoff.next(stream));
    spent.backoff += engine.now() - slept;
  }
  record.end = engine.now();
  spent.service_network = record.latency() - spent.total();
  if (spent.service_network < sim::Duration::zero() || std::min({spent.queue, spent.pool, spent.db_lock, spent.lock_service}) < sim::Duration::zero())
    throw std::logic_error(fmt::format("models::Clients: operation {} measured waits longer than its latency", record.operation));
  engine.record(outcome_kind_, record.operation, static_cast<std::int64_t>(record.outcome),
                static_cast<std::int64_t>(record.last_error));
  records_.push_back(record);
}

}  // namespace models
