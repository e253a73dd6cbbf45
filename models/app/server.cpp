#include "models/app/server.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>

namespace models {

AppServer::AppServer(Network& net, Node& node, AppServerConfig config, Handler& handler)
    : net_(net), node_(node), config_(config), handler_(handler), queue_(node.name() + ".accept-queue", config.accept_queue) {
  if (config_.workers < 1)
    throw sim::UsageError(fmt::format("models::AppServer '{}': needs at least one worker, got {}", node.name(), config_.workers));
  if (config_.accept_queue < 1)
    throw sim::UsageError(fmt::format("models::AppServer '{}': the accept queue needs room for at least one request", node.name()));
}

void AppServer::start() {
  if (started_) throw sim::UsageError(fmt::format("models::AppServer::start: '{}' is already started", name()));
  started_ = true;
  node_.on_crash([this] {
    while (queue_.try_get()) {
    }
    busy_ = 0;
  });
  node_.on_restart([this] { spawn_workers(); });
  spawn_workers();
}

void AppServer::spawn_workers() {
  for (int w = 0; w < config_.workers; ++w) {
    const std::string worker_name = fmt::format(FMT_COMPILE("{}.worker-{}"), name(), w);
    node_.spawn(worker_name, [this, w, worker_name] {
      sim::Stream stream = node_.engine().stream(worker_name);
      Worker worker{*this, w, stream};
      while (auto next = queue_.get_unless_killed()) {
        Job& job = *next;
        job.reply.taken();
        ++busy_;
        worker.time = TimeSpent{.queue = node_.engine().now() - job.accepted};
        Response response;
        try {
          response = handler_.handle(job.request, worker);
        } catch (const sim::Timeout&) {
          response.error = ErrorKind::internal;
        }
        response.time = worker.time;
        --busy_;
        ++handled_;
        job.reply.send(response);
      }
    }, sim::SpawnOptions{.daemon = true});
  }
}

void AppServer::accept(Request request, ReplyTo<Response> reply) {
  if (queue_.try_put(Job{std::move(request), reply, node_.engine().now()})) {
    ++accepted_;
    max_queued_ = std::max(max_queued_, queue_.size());
  } else {
    ++rejected_;
    reply.send(Response{ErrorKind::rejected});
  }
}

}  // namespace models
