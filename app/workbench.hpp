#pragma once
// The workbench's API (`locksim serve`, docs/workbench.md): what the page asks of the runner,
// explore and replay, as JSON in and JSON out, with no HTTP in it, so the same calls can be
// answered by a server or, later, by the simulator built for the browser.
//
// Every call names a scenario of the catalogue or of the user's own folder and nothing else of
// the file system: a request that names a path, an override that would point the loader at a
// file, a token whose scenario lies elsewhere, is refused (BadRequest). A trial is a replay
// token's: the page's "trial" is `locksim replay TOKEN`'s trial, figures and story.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>

namespace locksim::workbench {

/// A request the workbench refuses: one line, what was expected (HTTP 400).
class BadRequest : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Folders {
  std::string dir;     // the user's own folder (scenarios and Lua files); empty: none
  std::string drafts;  // the server's own folder for Lua text edited in the page, not yet saved
};

/// The calls, each `call(name, request)`: see docs/workbench.md for each one's request and answer.
///   scenarios           the catalogue's and the folder's scenarios, with their strategies
///   scenario            one scenario's description, lesson, strategies and every value in effect
///   run                 starts a run (as `run --json`) in the background; answers its job
///   job                 a run's progress, and its results once done (as `run --json` prints them)
///   cancel              stops a run; its work ends, nothing is written
///   trial               one trial (a token, or a scenario, strategy, seed and schedule): its
///                       timeline, story, findings and the choices it asked
///   branch              the trial with one choice changed: the choices before it kept, those
///                       after it at their defaults
///   hint                the next choice of the shortest schedule `explore --mode dfs` finds
///   lua                 checks a Lua strategy's text (its errors at their line) and keeps it as a
///                       draft a run or trial can name
///   save                writes a draft into the user's folder
///   scripts, script     the Lua strategies of strategies/, and one's text (to start an edit from)
class Workbench {
 public:
  explicit Workbench(Folders folders);
  ~Workbench();
  Workbench(const Workbench&) = delete;
  Workbench& operator=(const Workbench&) = delete;

  /// Answers one call; throws BadRequest for a request it refuses (InputError's words included).
  nlohmann::json call(const std::string& name, const nlohmann::json& request);

  /// Runs in the background at once, at most; another waits for a slot.
  static constexpr int kRunsAtOnce = 2;
  /// A run whose page stopped asking for it this long ago is stopped (its browser closed).
  static constexpr double kForgottenAfterS = 15;
  /// A run's wall time at most, as `run --time`.
  static constexpr double kRunSeconds = 120;

 private:
  struct Job;
  nlohmann::json scenarios() const;
  nlohmann::json scenario(const nlohmann::json& request) const;
  nlohmann::json run(const nlohmann::json& request);
  nlohmann::json job(const nlohmann::json& request);
  nlohmann::json cancel(const nlohmann::json& request);
  nlohmann::json trial(const nlohmann::json& request) const;
  nlohmann::json branch(const nlohmann::json& request) const;
  nlohmann::json hint(const nlohmann::json& request) const;
  nlohmann::json lua(const nlohmann::json& request) const;
  nlohmann::json save(const nlohmann::json& request) const;
  nlohmann::json scripts() const;
  nlohmann::json script(const nlohmann::json& request) const;
  /// The scenario a request names ("name" of the catalogue, or "dir/NAME.json"), as a path the
  /// loader reads, and its overrides; refused when outside the folders.
  std::string scenario_file(const std::string& id) const;
  std::vector<std::string> overrides(const nlohmann::json& request) const;
  void reap();  // stops forgotten runs, forgets finished ones nobody asked for

  Folders folders_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<Job>> jobs_;
  std::uint64_t next_job_ = 1;
  std::atomic<int> running_{0};
};

}  // namespace locksim::workbench
