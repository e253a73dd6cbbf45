#include "reports/gnuplot.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

namespace locksim::reports {

namespace {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string_view rest(path);
  for (;;) {
    const auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

enum class Exit { ok, failed, timed_out };

// Waits for `child` to exit, killing it at `limit`; its exit status in `status`.
Exit wait_for(pid_t child, std::chrono::steady_clock::duration limit, int& code) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto pause = std::chrono::milliseconds(1);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? Exit::ok : Exit::failed;
    }
    if (done < 0 && errno != EINTR) return Exit::failed;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child, SIGKILL);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      return Exit::timed_out;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

// The first line of gnuplot's error output that says something, cut to a line's length.
std::string first_error(const std::string& file) {
  std::ifstream in(file);
  std::string line, out;
  while (std::getline(in, line)) {
    std::string clean;
    for (const char c : line)
      if (c >= ' ' && c != 0x7f) clean += c;
    const auto start = clean.find_first_not_of(' ');
    if (start == std::string::npos || clean.find_first_not_of(" ^") == std::string::npos) continue;
    out = clean.substr(start);
    break;
  }
  return out.size() > 160 ? out.substr(0, 157) + "..." : out;
}

}  // namespace

Plotted run_gnuplot(const std::string& folder, const std::string& script) {
  const std::string program = find_on_path("gnuplot");
  if (program.empty()) return {false, "gnuplot is not installed"};
  std::string arg0 = "gnuplot", arg1 = script;
  char* const argv[] = {arg0.data(), arg1.data(), nullptr};
  const std::string errors = folder + "/" + script + ".errors";
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return {false, "gnuplot could not be started"};
  if (child == 0) {
    // Only async-signal-safe calls here: this process may have had other threads.
    // The child dies with its parent (strictly, with this thread, which waits for it); if the
    // parent died already, before the request, stop.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
    const int null = ::open("/dev/null", O_RDWR);
    const int err = ::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (null < 0 || err < 0 || ::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    if (::chdir(folder.c_str()) != 0) ::_exit(127);
    ::execve(program.c_str(), argv, environ);
    ::_exit(127);
  }
  int code = 0;
  const Exit exit = wait_for(child, kGnuplotTimeLimit, code);
  const std::string said = first_error(errors);
  std::error_code ignored;
  std::filesystem::remove(errors, ignored);
  switch (exit) {
    case Exit::ok: return {true};
    case Exit::timed_out: return {false, fmt::format("gnuplot ran past {} s and was stopped", kGnuplotTimeLimit.count())};
    case Exit::failed: break;
  }
  return {false, fmt::format("gnuplot failed (exit {}){}", code, said.empty() ? "" : ": " + said)};
}

}  // namespace locksim::reports
