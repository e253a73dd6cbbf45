#pragma once
// Several processes of one command, started by `mpirun` or Slurm's `srun` (Open MPI): rank 0
// (the leader) hands out numbered work items, the other ranks (workers) run them and send
// back their answers, and the leader folds every answer in item order, exactly as it folds its
// own threads' results: the results are those of a run in one process. Every rank reads the
// same command line and files and builds the same work; only the leader prints and writes.
//
// Started without mpirun, there is one rank and nothing here does anything: MPI is not even
// initialized.
//
// Failures end every rank: a worker's error (a defect in a trial, input it could not read) is
// sent to the leader, which ends the work and reports it as "rank N: ..."; a leader that fails
// tells the workers to quit; a rank that dies is ended by mpirun, which ends the others.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace locksim::cluster {

/// The MPI lifetime of a process, in main(): initializes MPI when this process was started by
/// mpirun or srun (and only then), and finalizes it at the end. On a worker, stdout goes to
/// /dev/null: only the leader prints.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  /// The command failed on this rank with `message` (already printed by the leader; a worker's
  /// goes to the leader, in case the leader did not fail the same way). `exit_code`: 2 bad
  /// input, 70 a defect.
  void failed(const std::string& message, int exit_code);
};

/// This process's rank and the number of ranks: 0 and 1 without mpirun.
int rank();
int ranks();
/// Whether this process prints and writes: rank 0.
inline bool leader() { return rank() == 0; }
/// Whether there are workers to hand work to, or this rank is one.
inline bool distributed() { return ranks() > 1; }

/// The leader's side of one piece of distributed work: workers with free slots take items,
/// their answers come back.
class Workers {
 public:
  /// Waits for every worker to start the same work: `fingerprint` says what the work is (the
  /// scenarios, their hashes, the items), so a worker that read other files is refused.
  /// `ahead`: items handed to a worker per thread it runs, so that it has the next ones at
  /// hand while the answers travel (more for short items).
  Workers(const std::string& fingerprint, int ahead);
  /// Tells every worker the work is over (also when it failed: they stop quietly).
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  /// Threads over every worker: the items it pays to have handed out at once.
  int threads() const { return threads_; }
  /// Whether a worker has room for one more item.
  bool has_room() const;
  /// Hands `item` with its request to a worker with room (has_room() must be true).
  void send(std::uint64_t item, const std::string& request);
  /// An answer, if one has come: its item and its bytes. A worker's failure throws it here, as
  /// "rank N: ...": an InputError for bad input, std::runtime_error for anything else.
  std::optional<std::pair<std::uint64_t, std::string>> receive();
  /// Items handed out whose answers have not come.
  std::size_t in_flight() const { return in_flight_; }
  /// Marks the work failed: the workers' last message says so.
  void fail() { failed_ = true; }

 private:
  int threads_ = 0;
  std::vector<int> room_;  // by rank: items it may take now (0 for the leader)
  std::size_t in_flight_ = 0;
  bool failed_ = false;
};

/// A worker's side: announces `fingerprint`, then runs each item's request through `answer` on
/// `jobs` threads and sends the answers back, until the leader says the work is over. Throws
/// `Quit` when the leader failed or told it to quit.
void serve(const std::string& fingerprint, int jobs, const std::function<std::string(std::uint64_t, const std::string&)>& answer);

/// Thrown on a worker when the leader failed: the worker ends quietly, the leader reports.
struct Quit {
  int exit_code = 1;
};

/// The leader's loop over its local threads and the workers: `take()` gives the next item to
/// hand out (nothing while none may be handed out now; `over` once none will be), `request(i)`
/// its request, `answered(i, bytes)` takes an answer. Returns once nothing is in flight and
/// `take` says over; polls without busy-waiting. Failures as in Workers::receive.
enum class Next { item, wait, over };
void lead(Workers& workers, const std::function<Next(std::uint64_t&)>& take, const std::function<std::string(std::uint64_t)>& request,
          const std::function<void(std::uint64_t, std::string&&)>& answered);

}  // namespace locksim::cluster
