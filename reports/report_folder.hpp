#pragma once
// Report folders replaced whole. A writer fills a fresh staging folder and swaps it in by
// rename, so a reader sees the old report or the new one, never a mix, and a writer killed
// halfway leaves the old one as it was; of two writers at once, the last to finish wins.
//
// The layout: <root>/<scenario>/ holds a run's report (its files) and, as subfolders, the
// reports of other commands (sweep/, replay/) and a sweep's progress (sweep.partial/), which a
// run's swap carries over. Staging folders are <root>/.<scenario>.<part>-<pid>-<n>: beside the
// scenario folder, never inside a folder that a swap moves; the next writer of that scenario
// removes those of processes that no longer exist. Changes to the folders of one root take
// turns (an flock on the root), so a swap is a handful of renames that nothing interleaves.

#include <stdexcept>
#include <string>
#include <vector>

namespace locksim::reports {

/// A report that cannot be written where it goes: a file or a dangling link where its folder
/// should be, a folder of someone else's, no permission. The place and the reason, in a line.
class FolderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a staged folder replaces.
enum class FolderKind {
  scenario,  // <root>/<scenario>: a run's report; its subfolders belong to other reports and are kept
  part,      // <root>/<scenario>/<part>: a sweep's or a replay's report
};

/// The changes to the report folders of one root, taking turns while it lives.
class FolderLock {
 public:
  /// Locks the root of `folder`, a folder of the kind given. Throws FolderError.
  FolderLock(const std::string& folder, FolderKind kind);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

/// A new report for `folder`, written aside until commit() swaps it in.
class StagedFolder {
 public:
  /// Creates the staging folder, after removing those that dead writers of this scenario left.
  /// An existing `folder` is only ever replaced when it holds a file whose name starts with
  /// one of `marks` (what every report of this kind writes), or nothing but kept subfolders.
  StagedFolder(const std::string& folder, FolderKind kind, std::vector<std::string> marks);
  /// Removes the staging folder unless it was committed.
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  /// Where the new report is written.
  const std::string& path() const { return staging_; }
  /// Swaps the new report in and removes the old one. Throws FolderError, leaving the old
  /// report in place, when `folder` is not a report folder or cannot be written.
  void commit();

 private:
  void swap_in();
  std::string folder_, staging_;
  std::string leftover_;  // what the destructor removes: the staging folder, or the old report after a swap
  FolderKind kind_;
  std::vector<std::string> marks_;
  bool committed_ = false;
};

/// Whether no process `pid` exists any more (one that exists but is not ours counts as alive).
bool process_is_gone(long pid);

}  // namespace locksim::reports
