#include "models/coord/zk_lock.hpp"

#include <algorithm>

namespace models::zk {
namespace {
// Children sort by their ten-digit sequence suffix, whatever prefix a guid gave them.
std::string sequence_of(const std::string& name) { return name.size() >= 10 ? name.substr(name.size() - 10) : name; }
}  // namespace

Mutex::Mutex(Client& client, std::string path, LockRecipe recipe)
    : client_(client), path_(std::move(path)), recipe_(recipe) {}

std::string Mutex::create_protected(const std::string& guid) {
  const std::string prefix = "_c_" + guid + "-lock-";
  for (;;) {
    try {
      Stat stat;
      std::string created = client_.create(path_ + "/" + prefix, "", CreateMode::ephemeral_sequential, &stat);
      token_ = stat.czxid;
      return created;
    } catch (const sim::Timeout&) {
      // The create may have happened: look for our guid before creating again.
      for (const auto& child : client_.get_children(path_)) {
        if (child.starts_with(prefix)) {
          const std::string found = path_ + "/" + child;
          if (auto stat = client_.exists(found)) {
            token_ = stat->czxid;
            return found;
          }
        }
      }
    } catch (const KeeperError& e) {
      if (e.code() != Code::no_node) throw;
      // The lock path does not exist yet: create it and its parents, as Curator's
      // creatingParentContainersIfNeeded does.
      for (auto slash = path_.find('/', 1);; slash = path_.find('/', slash + 1)) {
        try {
          client_.create(path_.substr(0, slash), "", CreateMode::persistent);
        } catch (const KeeperError& exists) {
          if (exists.code() != Code::node_exists) throw;
        }
        if (slash == std::string::npos) break;
      }
    }
  }
}

bool Mutex::acquire(std::optional<sim::Duration> wait) {
  const Clock& clock = client_.node().clock();  // Curator times the wait locally
  const sim::Time deadline = wait ? clock.monotonic() + *wait : sim::kNever;
  node_ = create_protected(client_.unique_name());
  const std::string ours = node_.substr(path_.size() + 1);
  for (;;) {
    Watch watch;
    std::vector<std::string> children = client_.get_children(path_, recipe_ == LockRecipe::herd ? &watch : nullptr);
    std::sort(children.begin(), children.end(),
              [](const std::string& a, const std::string& b) { return sequence_of(a) < sequence_of(b); });
    const auto me = std::find(children.begin(), children.end(), ours);
    if (me == children.end()) throw KeeperError(Code::no_node, node_);  // our session expired
    if (me == children.begin()) {
      held_ = true;
      return true;
    }
    if (recipe_ == LockRecipe::next_lower) {
      try {
        client_.get_data(path_ + "/" + *(me - 1), &watch);
      } catch (const KeeperError& e) {
        if (e.code() != Code::no_node) throw;
        continue;  // it went before we could watch it: look again
      }
    }
    try {
      const WatchEvent event =
          deadline == sim::kNever ? watch.wait()
                                  : watch.wait_for(clock.true_duration(std::max(deadline - clock.monotonic(), sim::Duration{})));
      ++wakeups_;
      if (event.type == WatchEvent::Type::session_expired) throw KeeperError(Code::session_expired, node_);
    } catch (const sim::Timeout&) {
      release();
      return false;
    }
  }
}

void Mutex::release() {
  held_ = false;
  if (node_.empty()) return;
  try {
    client_.remove(node_);
  } catch (const KeeperError& e) {
    if (e.code() != Code::no_node && e.code() != Code::session_expired) throw;
  }
  node_.clear();
}

}  // namespace models::zk
