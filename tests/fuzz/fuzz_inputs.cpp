// A fuzz test of how the `locksim` command takes its input: every catalogue scenario file,
// mutated on the parsed JSON and on the bytes, mutated flag sets and replay tokens, and
// strategies written in Lua (strategies/*.lua mutated, and files made up whole), each case run
// as a child process under a time and a memory limit.
//
// The command's contract for bad input is one line on stderr, exit status 2 and nothing
// written. Otherwise it exits 0 (ran), 1 (an expectation of the scenario not met) or 3 (a
// checker fired). Anything else is a failure: a signal, another exit status (70, an internal
// error, included), a rejection of several lines or of none, files left by a rejection, files
// written outside reports/out/, a case over its time limit.
//
// The cases are a function of the seed: case i draws from a generator of its own, so a failing
// case reruns alone with `--seed S --case i`, and each failure is saved with a script that
// reproduces it.
//
//   locksim_fuzz LOCKSIM SCENARIO_DIR [--seed S] [--cases N] [--case I] [--time-s T]
//                [--case-time-s T] [--failures DIR] [--log FILE] [--family TEXT]
//
// --family TEXT draws only from the families whose name holds TEXT ("lua": the Lua scripts);
// a case found so reruns alone with the same --family.
//
// LOCKSIM_FUZZ_SEED, LOCKSIM_FUZZ_CASES and LOCKSIM_FUZZ_TIME_S give --seed, --cases and
// --time-s when the flags do not.

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz.hpp"

namespace fuzz {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Limits and options

struct Options {
  std::string locksim;
  fs::path scenario_dir;
  std::uint64_t seed = 1;
  // 800: case i mutates catalogue file i mod N, so each of the 34 files is the source of about
  // 23 cases, and the families are drawn by weight (kFamilies, 129 in all): the rarest, weight
  // 1 to 3, come up about 6, 12 and 19 times. Fewer cases would leave some file or family barely
  // tried; the test runs in the normal build only (not under the sanitizers, see the Makefile).
  int cases = 800;
  std::optional<int> only_case;
  double total_s = 240;  // no case starts after this; the CTest timeout is well above it
  double case_s = 30;    // a case still running after this is a hang
  // A case's address space: a runaway allocation fails in the child rather than swapping the
  // machine that other builds share.
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;
  fs::path failures = "fuzz-failures";
  std::optional<fs::path> log;  // a line for every case: what it was and how it ended
  std::string family;           // only the families whose name holds this ("lua"), when set
  std::size_t failures_shown_max = 25;  // printed in full; all are saved
  std::size_t failures_saved_max = 200;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---------------------------------------------------------------------------------------------
// Running a case

struct Outcome {
  bool timed_out = false;
  int signal = 0;  // it died of this signal
  int exit_code = -1;
  std::string err;  // what it wrote on stderr (the first MiB)
  double wall_s = 0;
};

volatile sig_atomic_t running_group = 0;  // the child's process group, ended if the driver is stopped

void stop_on_signal(int sig) {
  if (running_group != 0) ::kill(-running_group, SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string read_head(const fs::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(max_bytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(max_bytes));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

// Runs locksim in `cwd`, in a process group of its own (it may start gnuplot), stdin empty,
// stdout to `out_file`, stderr to `err_file`, and ends the group after `limit_s`.
Outcome run_child(const Options& o, const std::vector<std::string>& args, const fs::path& cwd, const fs::path& out_file,
                  const fs::path& err_file, double limit_s) {
  std::vector<std::string> words{o.locksim};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string cwd_text = cwd.string(), out_text = out_file.string(), err_text = err_file.string();

  const auto started = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    if (::chdir(cwd_text.c_str()) != 0) ::_exit(126);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    const rlimit memory{o.memory_bytes, o.memory_bytes}, no_core{0, 0};
    ::setrlimit(RLIMIT_AS, &memory);
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::execv(argv[0], argv.data());
    const char failed[] = "locksim_fuzz: exec failed\n";
    [[maybe_unused]] const auto written = ::write(2, failed, sizeof failed - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // here too, so the group exists before any kill
  running_group = pid;

  Outcome r;
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  for (;;) {
    // WNOWAIT leaves the child a zombie, so its group id cannot be reused before the kill below.
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (info.si_pid == pid) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      break;
    }
    const auto wait_ns = std::min<std::int64_t>(std::chrono::nanoseconds(deadline - now).count(), 50'000'000);
    const timespec wait{0, static_cast<long>(wait_ns)};
    ::sigtimedwait(&child, nullptr, &wait);
  }
  ::kill(-pid, SIGKILL);  // on a timeout the child and its own; otherwise what it left behind
  int status = 0;
  ::waitpid(pid, &status, 0);
  running_group = 0;
  r.wall_s = seconds_since(started);
  if (WIFSIGNALED(status) && !r.timed_out) r.signal = WTERMSIG(status);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.err = read_head(err_file, 1 << 20);
  // Not a finding about locksim: the binary under test is gone (being rebuilt, say).
  if (r.exit_code == 127 && r.err.starts_with("locksim_fuzz: exec failed"))
    throw std::runtime_error(fmt::format("cannot start {} (being rebuilt?); no verdict", o.locksim));
  return r;
}

// ---------------------------------------------------------------------------------------------
// Judging a case

enum class Kind { ran, rejected, crashed, hung, multi_line, silent, unnamed, half_written, stray_files, internal, other_exit };

bool is_failure(Kind k) { return k != Kind::ran && k != Kind::rejected; }

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::ran: return "ran";
    case Kind::rejected: return "rejected";
    case Kind::crashed: return "crashed";
    case Kind::hung: return "hung";
    case Kind::multi_line: return "multi-line rejection";
    case Kind::silent: return "rejection without a message";
    case Kind::unnamed: return "rejection not naming the file";
    case Kind::half_written: return "rejection that wrote files";
    case Kind::stray_files: return "wrote outside reports/out";
    case Kind::internal: return "internal error";
    case Kind::other_exit: return "other exit status";
  }
  return "?";
}

// What a case left in its folder besides its inputs, as paths relative to the folder.
std::vector<std::string> left_behind(const fs::path& dir, const Case& c) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).string();
    const std::string top = rel.substr(0, rel.find('/'));
    if (c.files.count(top) || std::find(c.folders.begin(), c.folders.end(), top) != c.folders.end()) continue;
    out.push_back(rel);
  }
  return out;
}

struct Judged {
  Kind kind;
  std::string status;  // "exit 2", "SIGSEGV", "over 30 s"
  std::string note;    // what was wrong, for a failure
};

Judged judge(const Case& c, const Outcome& r, const std::vector<std::string>& left, double limit_s) {
  if (r.timed_out) return {Kind::hung, fmt::format("over {:g} s", limit_s), "still running at the case's time limit"};
  if (r.signal != 0) {
    const char* abbrev = ::sigabbrev_np(r.signal);
    return {Kind::crashed, abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", r.signal), "killed by a signal"};
  }
  const std::string status = fmt::format("exit {}", r.exit_code);
  const auto newlines = static_cast<std::size_t>(std::count(r.err.begin(), r.err.end(), '\n'));
  const bool one_line = !r.err.empty() && (newlines == 0 || (newlines == 1 && r.err.back() == '\n'));
  switch (r.exit_code) {
    case 0:
    case 1:
    case 3:
      for (const auto& path : left)
        if (path != "reports" && path != "reports/out" && !path.starts_with("reports/out/"))
          return {Kind::stray_files, status, "wrote " + printable(path, 100)};
      return {Kind::ran, status, ""};
    case 2:
      if (r.err.empty()) return {Kind::silent, status, "nothing on stderr"};
      if (!one_line) return {Kind::multi_line, status, fmt::format("{} lines on stderr", newlines + (r.err.back() != '\n'))};
      if (!c.names_file.empty() && r.err.find(c.names_file) == std::string::npos && !r.err.starts_with("locksim: --"))
        return {Kind::unnamed, status, "the message names neither " + c.names_file + " nor a flag"};
      if (!left.empty()) return {Kind::half_written, status, "left " + printable(left.front(), 100)};
      return {Kind::rejected, status, ""};
    case 70: return {Kind::internal, status, one_line ? "an internal error" : "an internal error, not on one line"};
    default: return {Kind::other_exit, status, "an exit status outside 0, 1, 2, 3"};
  }
}

// The first line of stderr (for an uncaught exception, its type and what()), with numbers and
// quoted text made alike, so that failures of one cause group together.
std::string signature(const std::string& err) {
  std::string line = err.substr(0, err.find('\n'));
  const std::string uncaught = "terminate called after throwing an instance of '";
  if (line.starts_with(uncaught)) {
    const std::string rest = err.size() > line.size() ? err.substr(line.size() + 1) : "";
    std::string what = rest.substr(0, rest.find('\n'));
    what.erase(0, what.find_first_not_of(' '));
    if (what.starts_with("what():")) what.erase(0, what.find_first_not_of(' ', 7));
    line = "uncaught " + line.substr(uncaught.size(), line.size() - uncaught.size() - 1) + ": " + what;
  }
  std::string out;
  bool quoted = false;
  for (char c : line.substr(0, 400)) {
    if (c == '"' || (quoted && c == '\'')) {
      quoted = !quoted;
      if (quoted) out += "\"...\"";
      continue;
    }
    if (quoted) continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += c;
  }
  return printable(out, 200);
}

// ---------------------------------------------------------------------------------------------
// Setting up: the catalogue and a replay token

Context load_catalogue(const Options& o) {
  Context ctx;
  ctx.scenario_dir = o.scenario_dir.string();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(o.scenario_dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    Source s;
    s.file_name = file.filename().string();
    s.name = file.stem().string();
    s.bytes = read_head(file, 16 << 20);
    s.doc = json::parse(s.bytes);
    // The first strategy the file lists, as `explore --strategy` names it; "all" lists none.
    s.strategy = "unique-index";
    const json list = s.doc.value("strategies", json());
    for (const auto& item : list.is_array() ? list : json::array()) {
      const std::string name = item.is_string() ? item.get<std::string>() : item.value("name", "");
      if (!name.empty()) ctx.strategies.push_back(name);
    }
    if (list.is_array() && !list.empty()) {
      const json& first = list.front();
      s.strategy = first.is_string() ? first.get<std::string>() : first.value("as", first.value("name", s.strategy));
    }
    ctx.sources.push_back(std::move(s));
  }
  // The scripts run in two-clients-pause (small and fast), else in the first account-bind scenario.
  for (std::size_t i = ctx.sources.size(); i-- > 0;) {
    const json workload = ctx.sources[i].doc.value("workload", json::object());
    if (ctx.sources[i].name == "two-clients-pause") {
      ctx.script_scenario = i;
      break;
    }
    if (workload.is_object() && workload.value("kind", "account-bind") == "account-bind") ctx.script_scenario = i;
  }
  // The Lua strategies: strategies/ beside the scenario folder; the script families make up a
  // minimal one when there are none.
  std::vector<fs::path> scripts;
  std::error_code ec;
  const fs::path strategies = o.scenario_dir / ".." / "strategies";
  for (auto it = fs::directory_iterator(strategies, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".lua") scripts.push_back(it->path());
  std::sort(scripts.begin(), scripts.end());
  for (const auto& file : scripts) ctx.scripts.push_back({file.filename().string(), read_head(file, 1 << 20)});
  std::sort(ctx.strategies.begin(), ctx.strategies.end());
  ctx.strategies.erase(std::unique(ctx.strategies.begin(), ctx.strategies.end()), ctx.strategies.end());
  if (ctx.strategies.empty()) ctx.strategies.push_back("unique-index");
  return ctx;
}

// A token that replays, from `explore` on a scenario where it finds a violation at once; a
// made-up one (still worth mutating) when that fails.
std::string find_token(const Options& o, const Context& ctx, const fs::path& work) {
  const fs::path folder = work / "token";
  fs::create_directories(folder);
  const Outcome r = run_child(o,
                              {"explore", "gc-pause-longer-than-lease", "--strategy", "redis-set-nx-ex-drop", "--budget", "20",
                               "--time", "20", "--no-shrink"},
                              folder, work / "token.out", work / "token.err", o.case_s);
  std::istringstream out(read_head(work / "token.out", 1 << 20));
  for (std::string line; std::getline(out, line);)
    if (line.starts_with("token: ")) return line.substr(7);
  const Source& s = ctx.sources.front();
  fmt::print("fuzz: explore found no token ({}); replay cases mutate a made-up one\n",
             r.signal ? "it crashed" : fmt::format("exit {}", r.exit_code));
  return fmt::format("locksim:1:{}:0000000000000000:{}:1::", s.name, s.strategy);
}

// ---------------------------------------------------------------------------------------------
// Reporting

std::string family_flag(const Options& o) { return o.family.empty() ? "" : " --family " + shell_word(o.family); }

std::string command_text(const Case& c, std::size_t max_arg = 80) {
  std::string text = "locksim";
  for (const auto& a : c.args) text += " " + (a.size() > max_arg ? printable(a, 40) : shell_word(a));
  return text;
}

// The case's inputs, what it wrote on stderr and a script that reruns it, in `folder`.
void save_failure(const Options& o, const Case& c, const Outcome& r, const Judged& j, int index, const fs::path& folder) {
  fs::create_directories(folder);
  for (const auto& [name, bytes] : c.files) std::ofstream(folder / name, std::ios::binary) << bytes;
  for (const auto& name : c.folders) fs::create_directories(folder / name);
  std::ofstream(folder / "stderr.txt", std::ios::binary) << r.err;
  std::ofstream script(folder / "reproduce.sh", std::ios::binary);
  script << "#!/bin/bash\n"
         << fmt::format("# locksim_fuzz --seed {} --case {}{}: {}: {} {}\n", o.seed, index, family_flag(o), c.family,
                        printable(c.what, 100), printable(c.where, 100))
         << fmt::format("# found: {} ({}): {}\n", kind_name(j.kind), j.status, j.note)
         << "# Runs in a copy of this folder, removed after, so the reports it writes do not stay.\n"
         << "set -e\nhere=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nwork=\"$(mktemp -d)\"\ntrap 'rm -rf \"$work\"' EXIT\n"
         << "cp -r \"$here\"/. \"$work\"/ && rm -f \"$work\"/reproduce.sh \"$work\"/stderr.txt && cd \"$work\"\n"
         << shell_word(o.locksim);
  for (const auto& a : c.args) script << " " << shell_word(a);
  script << "\n";
  script.close();
  fs::permissions(folder / "reproduce.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
}

void print_failure(const Options& o, int index, const Case& c, const Outcome& r, const Judged& j, const fs::path& saved) {
  fmt::print("FAIL case {} ({}, {}): {}: {} {}\n", index, kind_name(j.kind), j.status, c.family, printable(c.what, 100),
             printable(c.where, 100));
  fmt::print("  command: {}\n", command_text(c));
  const std::string err_head = r.err.substr(0, r.err.find('\n'));
  fmt::print("  {}; stderr: {}\n", j.note, err_head.empty() ? "(nothing)" : printable(err_head, 200));
  fmt::print("  saved:   {}/reproduce.sh; alone: locksim_fuzz ... --seed {} --case {}{}\n", saved.string(), o.seed, index,
             family_flag(o));
}

// How the cases ended: by kind and by family, and the failures grouped in classes of one
// kind, family and signature, each likely one cause.
class Tally {
 public:
  void add(int index, const Case& c, const Outcome& r, const Judged& j) {
    ++cases_;
    ++kinds_[j.kind];
    auto& [family_cases, family_kinds] = families_[c.family];
    ++family_cases;
    ++family_kinds[j.kind];
    if (r.wall_s > slowest_s_) slowest_s_ = r.wall_s, slowest_ = index;
    if (!is_failure(j.kind)) return;
    ++failures_;
    const std::string key = fmt::format("{} ({}) | {} | {}", kind_name(j.kind), j.status, c.family, signature(r.err));
    Class& k = classes_.try_emplace(key, Class{0, index, {}}).first->second;
    ++k.cases;
    const std::string example = printable(c.what, 60);
    if (k.examples.size() < 3 && std::find(k.examples.begin(), k.examples.end(), example) == k.examples.end())
      k.examples.push_back(example);
  }
  int cases() const { return cases_; }
  int failures() const { return failures_; }

  void print(std::uint64_t seed) const {
    fmt::print("\nby family: cases: how they ended\n");
    for (const auto& [family, tally] : families_) {
      std::string ends;
      for (const auto& [kind, n] : tally.second) ends += fmt::format("{}{} {}", ends.empty() ? "" : ", ", n, kind_name(kind));
      fmt::print("  {:<24} {:>4}: {}\n", family, tally.first, ends);
    }
    if (!classes_.empty()) {
      fmt::print("\nfailure classes (kind (status) | family | stderr, numbers as # and quotes as \"...\"):\n");
      for (const auto& [key, k] : classes_)
        fmt::print("  {}\n      {} cases, first {}; e.g. {}\n", key, k.cases, k.first, fmt::join(k.examples, "; "));
    }
    const auto n = [&](Kind k) { return kinds_.count(k) ? kinds_.at(k) : 0; };
    const int others = n(Kind::silent) + n(Kind::unnamed) + n(Kind::half_written) + n(Kind::stray_files) + n(Kind::internal) +
                       n(Kind::other_exit);
    fmt::print("\nfuzz: {} cases (seed {}): {} rejected, {} ran, {} crashed, {} hung, {} multi-line rejections, {} other failures "
               "({} silent rejections, {} not naming the file, {} rejections that wrote files, {} runs that wrote outside "
               "reports/out, {} internal errors, {} other exit statuses)\n",
               cases_, seed, n(Kind::rejected), n(Kind::ran), n(Kind::crashed), n(Kind::hung), n(Kind::multi_line), others,
               n(Kind::silent), n(Kind::unnamed), n(Kind::half_written), n(Kind::stray_files), n(Kind::internal),
               n(Kind::other_exit));
    fmt::print("fuzz: slowest case {} ({:.1f} s)\n", slowest_, slowest_s_);
  }

 private:
  struct Class {
    int cases = 0;
    int first = 0;
    std::vector<std::string> examples;  // distinct mutations, a few
  };
  int cases_ = 0, failures_ = 0, slowest_ = -1;
  double slowest_s_ = 0;
  std::map<Kind, int> kinds_;
  std::map<std::string, std::pair<int, std::map<Kind, int>>> families_;
  std::map<std::string, Class> classes_;
};

// ---------------------------------------------------------------------------------------------

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

Options parse_options(int argc, char** argv) {
  Options o;
  if (auto v = env("LOCKSIM_FUZZ_SEED")) o.seed = std::stoull(*v);
  if (auto v = env("LOCKSIM_FUZZ_CASES")) o.cases = std::stoi(*v);
  if (auto v = env("LOCKSIM_FUZZ_TIME_S")) o.total_s = std::stod(*v);
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--cases") o.cases = std::stoi(value());
    else if (a == "--case") o.only_case = std::stoi(value());
    else if (a == "--time-s") o.total_s = std::stod(value());
    else if (a == "--case-time-s") o.case_s = std::stod(value());
    else if (a == "--failures") o.failures = value();
    else if (a == "--log") o.log = value();
    else if (a == "--family") o.family = value();
    else if (a.starts_with("--")) throw std::invalid_argument("unknown flag " + a);
    else positional.push_back(a);
  }
  if (positional.size() != 2) throw std::invalid_argument("expected LOCKSIM and SCENARIO_DIR");
  o.locksim = fs::absolute(positional[0]).string();
  o.scenario_dir = fs::absolute(positional[1]);
  if (::access(o.locksim.c_str(), X_OK) != 0) throw std::invalid_argument(o.locksim + ": not an executable");
  if (o.cases < 1) throw std::invalid_argument("--cases: expected at least 1");
  return o;
}

int fuzz(const Options& o) {
  const auto started = Clock::now();
  std::string pattern = (fs::temp_directory_path() / "locksim-fuzz-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
  const fs::path work = pattern;
  struct RemovedAtEnd {  // also when the driver stops on an error
    fs::path path;
    ~RemovedAtEnd() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } removed_at_end{work};

  const Context loaded = load_catalogue(o);
  if (loaded.sources.empty()) throw std::invalid_argument(o.scenario_dir.string() + ": no scenario files");
  Context ctx = loaded;
  ctx.token = find_token(o, ctx, work);

  const int first = o.only_case.value_or(0);
  const int last = o.only_case ? *o.only_case + 1 : o.cases;
  fmt::print("fuzz: seed {} (LOCKSIM_FUZZ_SEED or --seed), {} cases (LOCKSIM_FUZZ_CASES or --cases) over {} scenario files\n",
             o.seed, last - first, ctx.sources.size());
  fmt::print("fuzz: at most {:g} s in all (LOCKSIM_FUZZ_TIME_S or --time-s), {:g} s and {} GiB a case; locksim: {}\n",
             o.total_s, o.case_s, o.memory_bytes >> 30, o.locksim);
  fmt::print("fuzz: replay cases mutate {}\n", printable(ctx.token, 200));
  fmt::print("fuzz: script cases mutate {} scripts of strategies/ and run them in {}{}\n", ctx.scripts.size(),
             ctx.sources[ctx.script_scenario].name, o.family.empty() ? "" : "; families: those named *" + o.family + "*");
  std::fflush(stdout);
  if (!o.only_case && fs::is_directory(o.failures))  // the last run's failures, not anything else there
    for (const auto& e : fs::directory_iterator(o.failures))
      if (e.path().filename().string().starts_with("case-")) fs::remove_all(e.path());

  Tally tally;
  std::ofstream log;
  if (o.log) log.open(*o.log);
  for (int i = first; i < last && seconds_since(started) <= o.total_s; ++i) {
    const Case c = make_case(o.seed, i, ctx, o.family);
    const fs::path folder = work / "case";
    fs::remove_all(folder);
    fs::create_directories(folder);
    for (const auto& [name, bytes] : c.files) std::ofstream(folder / name, std::ios::binary) << bytes;
    for (const auto& name : c.folders) fs::create_directories(folder / name);

    const Outcome r = run_child(o, c.args, folder, "/dev/null", work / "stderr", o.case_s);
    const Judged j = judge(c, r, left_behind(folder, c), o.case_s);
    tally.add(i, c, r, j);
    if (log)
      log << fmt::format("{}\t{}\t{}\t{}\t{:.2f}\t{}\t{}\t{}\n", i, kind_name(j.kind), j.status, c.family, r.wall_s,
                         printable(c.what, 80), printable(command_text(c), 200), printable(r.err, 300));
    if (o.only_case)
      fmt::print("case {}: {}: {} {}\n  command: {}\n  {} ({}), {:.2f} s; stderr:\n{}\n", i, c.family, printable(c.what, 100),
                 printable(c.where, 100), command_text(c), kind_name(j.kind), j.status, r.wall_s, printable(r.err, 2000));
    if (is_failure(j.kind)) {
      const auto failures = static_cast<std::size_t>(tally.failures());
      const fs::path saved = o.failures / fmt::format("case-{}", i);
      if (failures <= o.failures_saved_max) save_failure(o, c, r, j, i, saved);
      if (failures <= o.failures_shown_max) print_failure(o, i, c, r, j, saved);
    }
    if (!o.only_case && (i + 1) % 100 == 0) fmt::print("fuzz: {} cases, {:.0f} s\n", i + 1, seconds_since(started));
    std::fflush(stdout);
  }

  const auto failures = static_cast<std::size_t>(tally.failures());
  if (failures > o.failures_shown_max)
    fmt::print("... {} more failures, the first {} saved under {}\n", failures - o.failures_shown_max, o.failures_saved_max,
               o.failures.string());
  tally.print(o.seed);
  fmt::print("fuzz: {:.1f} s in all{}\n", seconds_since(started),
             tally.cases() < last - first
                 ? fmt::format("; stopped at the time limit: {} of {} cases ran", tally.cases(), last - first)
                 : "");
  return failures == 0 ? 0 : 1;
}

}  // namespace fuzz

using namespace fuzz;

int main(int argc, char** argv) {
  // SIGCHLD stays pending for sigtimedwait, which wakes the wait for a child at once.
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child, nullptr);
  ::signal(SIGINT, stop_on_signal);
  ::signal(SIGTERM, stop_on_signal);
  try {
    return fuzz::fuzz(parse_options(argc, argv));
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr,
               "locksim_fuzz: {}\nusage: locksim_fuzz LOCKSIM SCENARIO_DIR [--seed S] [--cases N] [--case I] [--time-s T] "
               "[--case-time-s T] [--failures DIR] [--log FILE] [--family TEXT]\n",
               e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "locksim_fuzz: {}\n", e.what());
    return 2;
  }
}
