#include "app/serve.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <thread>

#include "app/input.hpp"
#include "app/metrics.hpp"
#include "app/workbench.hpp"

namespace locksim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The server's own folder for Lua text edited in the page: made at start, removed at exit.
class Drafts {
 public:
  Drafts() {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "locksim-drafts-XXXXXX").string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr) throw InputError("serve: cannot make a folder for drafts under " + pattern);
    path_ = pattern;
  }
  ~Drafts() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Drafts(const Drafts&) = delete;
  Drafts& operator=(const Drafts&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Where Debian's libjs-codemirror puts CodeMirror 5.
constexpr const char* kCodeMirror = "/usr/share/javascript/codemirror";

void answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace

int serve(const ServeOptions& o, const std::function<void(const std::string& url)>& ready) {
  std::string dir;
  if (!o.dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(o.dir, ec)) throw InputError(fmt::format("--dir {}: expected a folder", quote_value(o.dir)));
    dir = fs::canonical(o.dir).string();
  }
  // SIGINT and SIGTERM are waited for by one thread; every other thread (the server's) blocks them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Drafts drafts;
  workbench::Workbench bench({dir, drafts.path()});
  freeze_workload_metrics();  // trials run on the server's threads while others load scenarios
  httplib::Server server;
  server.set_payload_max_length(limits::max_file_bytes + (64u << 10));
  server.set_read_timeout(std::chrono::seconds(10));
  server.set_write_timeout(std::chrono::seconds(10));
  int port = 0;

  // A page of another site may not drive this one: on loopback a request must name this server
  // as its host (DNS rebinding), and an API call must be JSON (a form of another origin cannot send it
  // without asking first, and the server never allows it).
  // Bound to another address than loopback (--bind 0.0.0.0, for a classroom), the server is
  // reached by names of its own choosing: any Host is let through.
  const bool loopback = o.bind.starts_with("127.") || o.bind == "::1" || o.bind == "localhost";
  const auto host_ok = [&](const httplib::Request& req) {
    if (!loopback) return true;
    const std::string host = req.get_header_value("Host");
    for (const std::string& name : {o.bind, std::string("localhost"), std::string("127.0.0.1"), std::string("[::1]")})
      if (host == name || host == fmt::format("{}:{}", name, port)) return true;
    return false;
  };
  server.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (!host_ok(req)) {
      answer(res, 403, {{"error", "this server answers only requests addressed to it by its own address"}});
      return httplib::Server::HandlerResponse::Handled;
    }
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    res.set_content(std::string(workbench_page()), "text/html; charset=utf-8");
  });
  // The editor: Debian's CodeMirror 5 (libjs-codemirror), these three files of it and no other.
  for (const auto& [route, file, type] : {std::tuple{"/lib/codemirror.js", "lib/codemirror.js", "text/javascript"},
                                          std::tuple{"/lib/codemirror.css", "lib/codemirror.css", "text/css"},
                                          std::tuple{"/lib/lua.js", "mode/lua/lua.js", "text/javascript"}})
    server.Get(route, [file = std::string(kCodeMirror) + "/" + file, type = std::string(type)](const httplib::Request&, httplib::Response& res) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        res.status = 404;
        res.set_content("// not installed: " + file + " (scripts/setup installs libjs-codemirror)", "text/javascript");
        return;
      }
      res.set_content(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), type);
    });
  server.Post(R"(/api/([a-z]+))", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      answer(res, 415, {{"error", "expected Content-Type: application/json"}});
      return;
    }
    json request;
    try {
      request = req.body.empty() ? json::object() : json::parse(req.body, nullptr, true, false);
    } catch (const json::exception& e) {
      answer(res, 400, {{"error", std::string("the request is not JSON: ") + e.what()}});
      return;
    }
    try {
      answer(res, 200, bench.call(req.matches[1].str(), request));
    } catch (const workbench::BadRequest& e) {
      answer(res, 400, {{"error", e.what()}});
    } catch (const std::bad_alloc&) {
      answer(res, 503, {{"error", "out of memory for this request; the server goes on"}});
    } catch (const std::exception& e) {
      answer(res, 500, {{"error", fmt::format("a defect of locksim, not of the request: {}", e.what())}});
    }
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) answer(res, res.status, {{"error", fmt::format("HTTP {}", res.status)}});
  });

  port = o.port == 0 ? server.bind_to_any_port(o.bind) : (server.bind_to_port(o.bind, o.port) ? o.port : -1);
  if (port <= 0) throw InputError(fmt::format("serve: cannot listen on {}:{} (in use, or not an address of this machine)", o.bind, o.port));
  std::thread stopper([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  });
  const std::string host = o.bind.find(':') != std::string::npos ? "[" + o.bind + "]" : o.bind;
  ready(fmt::format("http://{}:{}/", host, port));
  server.listen_after_bind();
  // Stopped by a signal, or the listener failed: wake the waiting thread either way.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return 0;
}

}  // namespace locksim
