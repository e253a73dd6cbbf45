#include "reports/report_folder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace locksim::reports {

namespace fs = std::filesystem;

namespace {

std::filesystem::filesystem_error fs_error(const std::string& what, const fs::path& path, int error) {
  return fs::filesystem_error(what, path, std::error_code(error, std::system_category()));
}

// Where a folder of a kind sits in the layout.
struct Place {
  fs::path folder;    // absolute
  fs::path root;      // holds the scenario folder, the staging folders and the lock
  std::string scenario;
  std::string part;   // "report" for a scenario folder
};

// A part ("sweep-redlock.ttl_ms_1000_30000_log6"): a file name's characters, not starting with
// a dot. A staging folder's pid and number follow its last two dashes, so dashes in the part
// are read past.
bool is_part_name(const std::string& name) {
  return !name.empty() && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '+' || c == '.';
  });
}

Place place(const std::string& folder, FolderKind kind) {
  fs::path f = fs::absolute(folder).lexically_normal();
  if (!f.has_filename()) f = f.parent_path();
  const fs::path scenario = kind == FolderKind::scenario ? f : f.parent_path();
  if (!scenario.has_filename() || scenario.parent_path() == scenario)
    throw std::invalid_argument(folder + ": not a report folder (no scenario folder to hold it)");
  const std::string part = kind == FolderKind::scenario ? "report" : f.filename().string();
  if (!is_part_name(part)) throw std::invalid_argument(folder + ": a report part's name is a file name's characters");
  return {f, scenario.parent_path(), scenario.filename().string(), part};
}

// The process id in `name` when it names a staging folder of `scenario`
// (.<scenario>.<part>-<pid>-<n>), else 0.
long staging_pid(const std::string& name, const std::string& scenario) {
  const std::string prefix = "." + scenario + ".";
  if (!name.starts_with(prefix)) return 0;
  const std::string rest = name.substr(prefix.size());
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const auto last = rest.rfind('-');
  if (last == std::string::npos || last == 0 || !digits(rest.substr(last + 1))) return 0;
  const auto first = rest.rfind('-', last - 1);
  if (first == std::string::npos || !is_part_name(rest.substr(0, first))) return 0;
  const std::string pid = rest.substr(first + 1, last - first - 1);
  return digits(pid) ? std::stol(pid) : 0;
}

// Staging folders that writers of `scenario` left when they died: nobody will finish them.
void remove_dead_stagings(const fs::path& root, const std::string& scenario) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = staging_pid(it->path().filename().string(), scenario);
    if (pid > 0 && process_is_gone(pid)) {
      std::error_code ignored;  // another writer may be removing it at the same time
      fs::remove_all(it->path(), ignored);
    }
  }
}

fs::path make_staging(const Place& at) {
  static std::atomic<unsigned> counter{0};
  for (;;) {
    const fs::path path = at.root / fmt::format(".{}.{}-{}-{}", at.scenario, at.part, ::getpid(), ++counter);
    if (::mkdir(path.c_str(), 0777) == 0) return path;
    // A folder of this name is a dead process's whose id this one now has: take the next.
    if (const int error = errno; error != EEXIST) throw fs_error("cannot create a staging folder", path, error);
  }
}

// A file system's refusal as the folder's: where, and why, in the system's words.
FolderError folder_error(const fs::filesystem_error& e) {
  const std::string where = e.path1().empty() ? std::string() : e.path1().string() + ": ";
  return FolderError(fmt::format("cannot write the report: {}{}", where, e.code().message()));
}

// Throws unless `folder` is absent or a report of this kind: a folder that is not ours is
// never replaced (nor removed).
void check_replaceable(const fs::path& folder, FolderKind kind, const std::vector<std::string>& marks) {
  const fs::file_status status = fs::symlink_status(folder);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) throw FolderError(folder.string() + ": is there and is not a folder; not replacing it");
  bool only_kept = true;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    const fs::file_status s = entry.symlink_status();
    if (kind == FolderKind::scenario && fs::is_directory(s)) continue;
    if (fs::is_regular_file(s) && std::any_of(marks.begin(), marks.end(), [&](const auto& m) { return name.starts_with(m); }))
      return;
    only_kept = false;
  }
  if (!only_kept)
    throw FolderError(fmt::format("{}: holds files but none of a report ({}*); not replacing it", folder.string(),
                                         fmt::join(marks, "*, ")));
}

}  // namespace

bool process_is_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH; }

FolderLock::FolderLock(const std::string& folder, FolderKind kind) {
  const fs::path root = place(folder, kind).root;
  try {
    fs::create_directories(root);
  } catch (const fs::filesystem_error& e) {
    throw folder_error(e);
  }
  fd_ = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (const int error = errno; fd_ < 0) throw folder_error(fs_error("cannot open to lock it", root, error));
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) {
      const int error = errno;
      ::close(fd_);
      throw fs_error("cannot lock", root, error);
    }
}

FolderLock::~FolderLock() { ::close(fd_); }  // which unlocks

StagedFolder::StagedFolder(const std::string& folder, FolderKind kind, std::vector<std::string> marks)
    : kind_(kind), marks_(std::move(marks)) {
  const Place at = place(folder, kind);
  folder_ = at.folder.string();
  try {
    fs::create_directories(at.root);
    remove_dead_stagings(at.root, at.scenario);
    staging_ = make_staging(at).string();
  } catch (const fs::filesystem_error& e) {
    throw folder_error(e);
  }
  leftover_ = staging_;
}

StagedFolder::~StagedFolder() {
  std::error_code ignored;
  if (!leftover_.empty()) fs::remove_all(leftover_, ignored);
}

void StagedFolder::commit() {
  try {
    swap_in();
  } catch (const fs::filesystem_error& e) {
    throw folder_error(e);
  }
}

void StagedFolder::swap_in() {
  if (committed_) throw std::logic_error(folder_ + ": committed twice");
  const fs::path folder(folder_), staging(staging_);
  {
    FolderLock lock(folder_, kind_);
    check_replaceable(folder, kind_, marks_);
    if (!fs::exists(fs::symlink_status(folder))) {
      fs::create_directories(folder.parent_path());
      fs::rename(staging, folder);
      leftover_.clear();
      committed_ = true;
      return;
    }
    std::vector<std::string> carried;  // other reports' subfolders: they stay in the scenario folder
    if (kind_ == FolderKind::scenario)
      for (const auto& entry : fs::directory_iterator(folder))
        if (fs::is_directory(entry.symlink_status())) carried.push_back(entry.path().filename().string());
    for (const auto& name : carried) fs::rename(folder / name, staging / name);
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) != 0) {
      const int error = errno;
      if (error != EINVAL && error != ENOSYS) {
        std::error_code ignored;
        for (const auto& name : carried) fs::rename(staging / name, folder / name, ignored);
        throw fs_error("cannot swap in the new report", folder, error);
      }
      // A file system without the exchange: the old folder moves aside, the new one takes its
      // place; in between, a reader finds no folder rather than a mixed one.
      const fs::path aside = make_staging(place(folder_, kind_));
      fs::rename(folder, aside);
      fs::rename(staging, folder);
      leftover_ = aside.string();
    }
  }
  committed_ = true;
  std::error_code ignored;  // the old report, now under a staging name: a later writer removes what is left
  fs::remove_all(leftover_, ignored);
  leftover_.clear();
}

}  // namespace locksim::reports
