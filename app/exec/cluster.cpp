#include "app/exec/cluster.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "app/input.hpp"

namespace locksim::cluster {

namespace {

// Messages. From the leader: an item to run, the end of a piece of work, quit (the leader's
// command ended: a worker still waiting for work it will not get ends too). From a worker:
// ready for a piece of work, an item's answer, an item that failed, the end of its piece of
// work, its command failed (it waits for quit), and done (it finished the command: a leader
// still waiting for it would wait forever).
enum Tag : int { kItem = 1, kEnd, kQuit, kReady, kAnswer, kFailure, kEnded, kFailed, kDone };

int g_rank = 0, g_ranks = 1;
bool g_mpi = false;

// Started by mpirun (Open MPI), or by srun or another launcher speaking PMI or PMIx.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

// How long a rank waits, when there is nothing to do, before it looks at the network again.
constexpr auto kPoll = std::chrono::microseconds(2000);

// Messages on their way. Every send is non-blocking: a blocking send of a message past the
// eager limit (a few kilobytes) spins until the other side takes it, which here would be a
// thread's worth of processor time polling. A message's bytes live here until it is sent.
struct Outgoing {
  std::string bytes;
  MPI_Request request = MPI_REQUEST_NULL;
};
std::list<Outgoing> g_outgoing;  // a list: the bytes must not move while MPI reads them

// Drops the messages that have gone.
void progress() {
  for (auto it = g_outgoing.begin(); it != g_outgoing.end();) {
    int done = 0;
    MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done != 0 ? g_outgoing.erase(it) : std::next(it);
  }
}

void post(int to, Tag tag, std::string bytes) {
  Outgoing& out = g_outgoing.emplace_back(Outgoing{std::move(bytes), MPI_REQUEST_NULL});
  MPI_Isend(out.bytes.data(), static_cast<int>(out.bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &out.request);
  progress();
}

// Until every message has gone, where the other side is known to take them.
void flush() {
  for (progress(); !g_outgoing.empty(); progress()) std::this_thread::sleep_for(kPoll);
}

struct Message {
  int from = 0;
  Tag tag = kItem;
  std::string bytes;
};

// A message from `from` (any rank: MPI_ANY_SOURCE), if one has come.
std::optional<Message> try_receive(int from) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (flag == 0) return std::nullopt;
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  Message m{status.MPI_SOURCE, static_cast<Tag>(status.MPI_TAG), std::string(static_cast<std::size_t>(size), '\0')};
  MPI_Recv(m.bytes.data(), size, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

std::string with_item(std::uint64_t item, const std::string& bytes) {
  std::string out(sizeof item, '\0');
  std::memcpy(out.data(), &item, sizeof item);
  return out + bytes;
}
std::pair<std::uint64_t, std::string> split_item(std::string&& bytes) {
  std::uint64_t item = 0;
  if (bytes.size() < sizeof item) throw std::logic_error("cluster: a message without its item number");
  std::memcpy(&item, bytes.data(), sizeof item);
  return {item, bytes.substr(sizeof item)};
}

// A failure as a message: its exit code, then its text (cut to a line's worth).
std::string failure_bytes(int exit_code, const std::string& message) {
  return std::string(1, static_cast<char>(exit_code)) + message.substr(0, 2000);
}

// What a worker's message means to a leader that did not expect it.
[[noreturn]] void worker_failed(const Message& m) {
  if ((m.tag == kFailure || m.tag == kFailed) && !m.bytes.empty()) {
    const std::string text = fmt::format("rank {}: {}", m.from, m.bytes.substr(1));
    if (m.bytes[0] == 2) throw InputError(text);
    throw std::runtime_error(text);
  }
  if (m.tag == kDone)
    throw InputError(fmt::format("rank {} finished the command without taking part in the work: every rank must read the same "
                                 "command line and files (docs/cluster.md)",
                                 m.from));
  throw std::logic_error(fmt::format("cluster: rank {} sent an unexpected message (tag {})", m.from, static_cast<int>(m.tag)));
}

}  // namespace

int rank() { return g_rank; }
int ranks() { return g_ranks; }

Session::Session(int& argc, char**& argv) {
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // only the main thread speaks MPI
  g_mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_ranks);
  if (g_rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) std::fclose(stdout);
}

Session::~Session() {
  if (!g_mpi) return;
  // A worker waiting for work the leader will not hand out (their paths through the command
  // parted) ends; a leader still waiting for this worker learns it is gone.
  if (g_rank == 0) {
    for (int r = 1; r < g_ranks; ++r) post(r, kQuit, "");
  } else {
    post(0, kDone, "");
  }
  // These are a byte or a line, sent at once; a message still out after that (an answer the
  // leader gave up on) is let go.
  for (int i = 0; i < 1000 && !g_outgoing.empty(); ++i) {
    progress();
    std::this_thread::sleep_for(kPoll);
  }
  for (Outgoing& out : g_outgoing) MPI_Request_free(&out.request);
  MPI_Finalize();
}

void Session::failed(const std::string& message, int exit_code) {
  if (!g_mpi || g_rank == 0) return;  // the leader's workers quit when it ends
  post(0, kFailed, failure_bytes(exit_code, message));
  // mpirun ends every rank once one exits with an error: this one waits for the leader's end,
  // so that the leader has said what went wrong first.
  for (;;) {
    progress();
    const std::optional<Message> m = try_receive(0);
    if (m && m->tag == kQuit) return;
    if (!m) std::this_thread::sleep_for(kPoll);
  }
}

Workers::Workers(const std::string& fingerprint, int ahead) : room_(static_cast<std::size_t>(g_ranks), 0) {
  for (int ready = 1; ready < g_ranks;) {
    const std::optional<Message> m = try_receive(MPI_ANY_SOURCE);
    if (!m) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    if (m->tag != kReady) worker_failed(*m);
    const auto newline = m->bytes.find('\n');
    if (m->bytes.substr(newline + 1) != fingerprint)
      throw InputError(fmt::format("rank {} read other work than rank 0: every rank must read the same command line and files "
                                   "(docs/cluster.md)",
                                   m->from));
    const int jobs = std::max(1, std::atoi(m->bytes.substr(0, newline).c_str()));
    room_[static_cast<std::size_t>(m->from)] = std::max(1, ahead) * jobs;
    threads_ += jobs;
    ++ready;
  }
}

Workers::~Workers() {
  const bool failed = failed_ || std::uncaught_exceptions() > 0;
  for (int r = 1; r < g_ranks; ++r) post(r, kEnd, failed ? "failed" : "");
  // Every worker's last answers and failures are taken (and dropped) until it says it has
  // ended, so that nothing it sent is left unreceived.
  for (int ended = 1; ended < g_ranks;) {
    progress();
    const std::optional<Message> m = try_receive(MPI_ANY_SOURCE);
    if (!m) std::this_thread::sleep_for(kPoll);
    else if (m->tag == kEnded || m->tag == kFailed || m->tag == kDone) ++ended;
  }
}

bool Workers::has_room() const {
  return std::any_of(room_.begin(), room_.end(), [](int n) { return n > 0; });
}

void Workers::send(std::uint64_t item, const std::string& request) {
  // The worker with the most room: the items spread over the workers as they free up.
  const auto it = std::max_element(room_.begin(), room_.end());
  if (*it <= 0) throw std::logic_error("cluster: an item handed out with no worker free");
  --*it;
  ++in_flight_;
  post(static_cast<int>(it - room_.begin()), kItem, with_item(item, request));
}

std::optional<std::pair<std::uint64_t, std::string>> Workers::receive() {
  progress();
  std::optional<Message> m = try_receive(MPI_ANY_SOURCE);
  if (!m) return std::nullopt;
  if (m->tag != kAnswer) {
    failed_ = true;
    worker_failed(*m);
  }
  ++room_[static_cast<std::size_t>(m->from)];
  --in_flight_;
  return split_item(std::move(m->bytes));
}

void serve(const std::string& fingerprint, int jobs, const std::function<std::string(std::uint64_t, const std::string&)>& answer) {
  post(0, kReady, fmt::format("{}\n{}", jobs, fingerprint));
  struct Done {
    Tag tag;  // kAnswer or kFailure
    std::string bytes;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> items;  // requests with their item numbers
  std::deque<Done> done;
  bool closing = false;
  const auto loop = [&] {
    for (;;) {
      std::string item;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return closing || !items.empty(); });
        if (closing) return;
        item = std::move(items.front());
        items.pop_front();
      }
      Done d{kAnswer, {}};
      try {
        auto [number, request] = split_item(std::move(item));
        d.bytes = with_item(number, answer(number, request));
      } catch (const InputError& e) {
        d = {kFailure, failure_bytes(2, e.what())};
      } catch (const std::exception& e) {
        d = {kFailure, failure_bytes(70, e.what())};
      }
      const std::lock_guard lock(mutex);
      done.push_back(std::move(d));
      changed.notify_all();
    }
  };
  std::vector<std::jthread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t) threads.emplace_back(loop);
  const auto close = [&] {
    {
      const std::lock_guard lock(mutex);
      closing = true;
      changed.notify_all();
    }
    threads.clear();  // joins
  };
  try {
    for (;;) {
      std::deque<Done> to_send;
      {
        std::unique_lock lock(mutex);
        if (done.empty()) changed.wait_for(lock, kPoll, [&] { return !done.empty(); });
        to_send.swap(done);
      }
      for (Done& d : to_send) post(0, d.tag, std::move(d.bytes));
      while (std::optional<Message> m = try_receive(0)) {
        if (m->tag == kItem) {
          const std::lock_guard lock(mutex);
          items.push_back(std::move(m->bytes));
          changed.notify_all();
          continue;
        }
        close();  // the items not started are dropped: the leader no longer waits for them
        if (m->tag != kEnd) throw Quit{0};
        post(0, kEnded, "");
        flush();  // the leader takes every message until it has this one
        if (!m->bytes.empty()) throw Quit{0};  // the leader failed and reports it
        return;
      }
    }
  } catch (...) {
    close();
    throw;
  }
}

void lead(Workers& workers, const std::function<Next(std::uint64_t&)>& take, const std::function<std::string(std::uint64_t)>& request,
          const std::function<void(std::uint64_t, std::string&&)>& answered) {
  try {
    for (;;) {
      bool busy = false;
      while (auto a = workers.receive()) {
        answered(a->first, std::move(a->second));
        busy = true;
      }
      bool over = false;
      while (workers.has_room()) {
        std::uint64_t item = 0;
        const Next next = take(item);
        if (next != Next::item) {
          over = next == Next::over;
          break;
        }
        workers.send(item, request(item));
        busy = true;
      }
      if (over && workers.in_flight() == 0) return;
      if (!busy) std::this_thread::sleep_for(kPoll);
    }
  } catch (...) {
    workers.fail();
    throw;
  }
}

}  // namespace locksim::cluster
