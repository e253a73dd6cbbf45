#include "bench/peers.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

// Set by bench/CMakeLists.txt; the defaults make a peer "not built" rather than break the build.
#ifndef LOCKSIM_SIMGRID_BENCH
#define LOCKSIM_SIMGRID_BENCH ""
#endif
#ifndef LOCKSIM_SIMPY_BENCH
#define LOCKSIM_SIMPY_BENCH ""
#endif
#ifndef LOCKSIM_SIMPY_PYTHON
#define LOCKSIM_SIMPY_PYTHON "/usr/bin/python3"
#endif

namespace bench {
namespace {

std::string shell_quote(std::string_view s) {
  std::string q = "'";
  for (char ch : s) {
    if (ch == '\'')
      q += "'\\''";
    else
      q += ch;
  }
  return q + "'";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

std::string last_line(const std::string& text) {
  const auto lines = lines_of(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->find_first_not_of(" \t\r") != std::string::npos) return *it;
  return "no output";
}

// The value after `key: ` on a line that starts with it, or nullptr.
const char* value_of(const std::string& line, std::string_view key) {
  if (line.size() <= key.size() + 1 || line.compare(0, key.size(), key) != 0 || line[key.size()] != ':') return nullptr;
  return line.c_str() + key.size() + 1;
}

// Runs `command` (already quoted for the shell) with stderr joined to stdout, and reads what
// the peer printed into `peer`, or says why there is no figure.
void run_peer(Peer& peer, const std::string& command) {
  std::fflush(nullptr);  // nothing of ours buffered twice, nothing out of order
  // exec: the shell becomes the peer, so a peer killed by a signal is seen as such.
  FILE* pipe = ::popen(("exec " + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    peer.why_missing = std::string("could not start: ") + std::strerror(errno);
    return;
  }
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  if (status == -1) {
    peer.why_missing = std::string("could not wait for it: ") + std::strerror(errno);
    return;
  }
  if (WIFSIGNALED(status)) {
    peer.why_missing = "killed by signal " + std::to_string(WTERMSIG(status)) + ": " + last_line(out);
    return;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    const std::string said = last_line(out);
    if (said.find("import failed") != std::string::npos)
      peer.why_missing = said;
    else if (code == 126 || code == 127)  // the shell could not run it
      peer.why_missing = "not installed (exit " + std::to_string(code) + "): " + said;
    else
      peer.why_missing = "exit status " + std::to_string(code) + ": " + said;
    return;
  }

  bool have_messages = false, have_seconds = false, have_rate = false;
  for (const std::string& line : lines_of(out)) {
    char* end = nullptr;
    if (const char* v = value_of(line, "tool")) {
      peer.name = v + std::strspn(v, " ");
    } else if (const char* v = value_of(line, "messages")) {
      peer.messages = std::strtoull(v, &end, 10);
      have_messages = end != v;
    } else if (const char* v = value_of(line, "seconds")) {
      peer.seconds = std::strtod(v, &end);
      have_seconds = end != v;
    } else if (const char* v = value_of(line, "msgs_per_s")) {
      peer.msgs_per_s = std::strtod(v, &end);
      have_rate = end != v && peer.msgs_per_s > 0;
    }
  }
  if (!have_messages || !have_seconds || !have_rate) {
    peer.why_missing = "ran, but printed no messages/seconds/msgs_per_s figures: " + last_line(out);
    peer.msgs_per_s = 0;
    peer.messages = 0;
    peer.seconds = 0;
    return;
  }
  peer.present = true;
}

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }
bool readable(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

Peer simgrid_peer() {
  Peer peer;
  peer.name = "SimGrid";
  const std::string program = LOCKSIM_SIMGRID_BENCH;
  if (program.empty()) {
    peer.why_missing =
        "not built: SimGrid (pkg-config simgrid) was not found when the build was configured; "
        "scripts/setup --bench installs libsimgrid-dev, then configure again";
    return peer;
  }
  if (!executable(program)) {
    peer.why_missing = "not built: " + program + " is missing";
    return peer;
  }
  run_peer(peer, shell_quote(program));
  return peer;
}

Peer simpy_peer() {
  Peer peer;
  peer.name = "SimPy";
  const std::string python = LOCKSIM_SIMPY_PYTHON;
  const std::string script = LOCKSIM_SIMPY_BENCH;
  if (!executable(python)) {
    peer.why_missing = "not installed: no Python interpreter at " + python;
    return peer;
  }
  if (!readable(script)) {
    peer.why_missing = "not found: the script " + (script.empty() ? std::string("(path not set)") : script);
    return peer;
  }
  run_peer(peer, shell_quote(python) + " " + shell_quote(script));
  return peer;
}

template <class F>
Peer guarded(const char* name, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    Peer peer;
    peer.name = name;
    peer.why_missing = std::string("error while running it: ") + e.what();
    return peer;
  }
}

}  // namespace

PeerFigures peers_bench() {
  PeerFigures figures;
  figures.simgrid = guarded("SimGrid", simgrid_peer);
  figures.simpy = guarded("SimPy", simpy_peer);
  return figures;
}

}  // namespace bench
