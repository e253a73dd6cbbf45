#pragma once
// `locksim serve`: the workbench's page and its JSON API (app/workbench.hpp) over HTTP, on
// loopback by default. See docs/workbench.md.

#include <functional>
#include <string>
#include <string_view>

namespace locksim {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::string dir;  // the user's own folder; empty: the catalogue alone
};

/// Serves until SIGINT or SIGTERM; `ready(url)` once it listens. Throws InputError when the
/// address cannot be bound or --dir is no folder.
int serve(const ServeOptions& options, const std::function<void(const std::string& url)>& ready);

/// The page (app/web/workbench.html, compiled in).
std::string_view workbench_page();

}  // namespace locksim
