#!/usr/bin/python3
"""The RPC benchmark of bench/engine_bench.cpp (rpc_engine) written for SimPy 2.

    /usr/bin/python3 bench/peers/simpy_rpc.py [calls_per_client [seed]]

Debian 12's python3-simpy is SimPy 2.3 (module `SimPy`, the old process API with
`yield hold, self, t`), importable by the Debian interpreter /usr/bin/python3 only: a
python3 from pyenv or a virtualenv does not see /usr/lib/python3/dist-packages.

The workload is the one of bench/peers/simgrid_rpc.cpp: 100 client processes and 1 server.
Each client makes its calls in sequence: the request travels to the server over a link with a
delay drawn uniform in [1 us, 100 us], the server replies at once, the reply travels back with
another uniform 1-100 us delay, and the client makes its next call when the reply has arrived.
A link delay is a `hold` of the drawn delay; messages go through Stores (unbounded FIFO
mailboxes): a client holds its request's delay, then puts the request in the server's Store;
the server takes it, draws the reply's delay and puts it in the client's Store; the client
takes it and holds that delay, after which the reply counts as delivered. A Store put or get
costs no simulated time. A message is one request or reply delivery.

Prints `messages: N`, `seconds: S` (wall time of simulate() only) and `msgs_per_s: R`, with
the simulated time at the end as a check. Exits 2, saying why, when SimPy cannot be imported.
"""

import random
import sys
import time

CLIENTS = 100
DEFAULT_CALLS = 3000  # 600,000 messages: about 2.5 s of run at ~240k messages/s
MIN_DELAY = 1e-6  # seconds
MAX_DELAY = 100e-6


def main(argv):
    try:
        import SimPy
        from SimPy.Simulation import Simulation, Process, Store, hold, get, put
    except ImportError as error:
        print("simpy_rpc: import failed: %s (Debian package python3-simpy, for %s)" % (error, sys.executable),
              file=sys.stderr)
        return 2

    if len(argv) > 3 or any(not a.isdigit() or int(a) <= 0 for a in argv[1:]):
        print("usage: simpy_rpc.py [calls_per_client [seed]]", file=sys.stderr)
        return 2
    calls = int(argv[1]) if len(argv) > 1 else DEFAULT_CALLS
    seed = int(argv[2]) if len(argv) > 2 else 1

    sim = Simulation()
    counts = {"messages": 0}
    inbox = Store(name="server", sim=sim)
    reply_boxes = [Store(name="client-%d" % c, sim=sim) for c in range(CLIENTS)]

    class Server(Process):
        def run(self, rng):
            uniform = rng.uniform
            while True:
                yield get, self, inbox, 1
                c = self.got[0]
                counts["messages"] += 1  # the request is delivered
                yield put, self, reply_boxes[c], [uniform(MIN_DELAY, MAX_DELAY)]

    class Client(Process):
        def run(self, c, rng):
            uniform = rng.uniform
            mine = reply_boxes[c]
            for _ in range(calls):
                yield hold, self, uniform(MIN_DELAY, MAX_DELAY)  # the request on its link
                yield put, self, inbox, [c]
                yield get, self, mine, 1
                yield hold, self, self.got[0]  # the reply on its link
                counts["messages"] += 1  # the reply is delivered

    # One random stream a process, all from the fixed seed.
    server = Server(name="server", sim=sim)
    sim.activate(server, server.run(random.Random("%d/server" % seed)))
    for c in range(CLIENTS):
        client = Client(name="client-%d" % c, sim=sim)
        sim.activate(client, client.run(c, random.Random("%d/client-%d" % (seed, c))))

    start = time.perf_counter()
    # The server never ends; the run stops when no event is left (every client done, the
    # server waiting on its Store). `until` only has to lie past the end.
    outcome = sim.simulate(until=float("inf"))
    seconds = time.perf_counter() - start

    messages = counts["messages"]
    if messages != 2 * CLIENTS * calls:
        print("simpy_rpc: %d messages, expected %d (%s)" % (messages, 2 * CLIENTS * calls, outcome), file=sys.stderr)
        return 1
    print("tool: SimPy %s (Python %s)" % (SimPy.__version__, sys.version.split()[0]))
    print("clients: %d" % CLIENTS)
    print("calls_per_client: %d" % calls)
    print("seed: %d" % seed)
    print("simulated_s: %.6f" % sim.now())
    print("messages: %d" % messages)
    print("seconds: %.6f" % seconds)
    print("msgs_per_s: %.0f" % (messages / seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
