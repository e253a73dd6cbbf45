"""The real ZooKeeper and etcd, started once for the coordination suite's run (coord.py) and stopped at
its end, each on free loopback ports in a private folder: a standalone ZooKeeper of tickTime 100 ms, a
one-member etcd of a 10 ms heartbeat."""

import logging
import os
import socket
import subprocess

from servers import START_LIMIT_S, STEP_LIMIT_S, die_with_parent, free_port, log_tail, program, stop, wait_until

ZK_JAR = "/usr/share/java/zookeeper.jar"    # Debian's zookeeper: the server and its dependencies
TICK_MS = 100           # ZooKeeper's tickTime: sessions of 200 ms to 2 s, expired at 100 ms ticks
RESUME_RETRY_S = 0.05   # a resumed client's round trips, this far apart
RESUME_LIMIT_S = 10     # for at most this long


def log_text(path):
    return log_tail(path, 3)


class ZooKeeper:
    """A standalone ZooKeeper (Debian's jar, with its dependencies on its manifest's class path) on a
    free loopback port, in a private folder: tickTime 100 ms, so sessions of 200 ms to 2 s, expired
    at 100 ms ticks; its four-letter words srvr and mntr answer the harness."""

    def __init__(self, root):
        self.dir = os.path.join(root, "zookeeper")
        self.port = None
        self.proc = None

    @staticmethod
    def available():
        return program("java") and os.path.isfile(ZK_JAR)

    def start(self):
        import kazoo  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(os.path.join(self.dir, "data"))
        self.port = free_port()
        config = os.path.join(self.dir, "zoo.cfg")
        with open(config, "w") as f:
            f.write(f"tickTime={TICK_MS}\ndataDir={os.path.join(self.dir, 'data')}\nclientPort={self.port}\n"
                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n"
                    "4lw.commands.whitelist=srvr,mntr\n")
        self.log = os.path.join(self.dir, "zookeeper.log")
        with open(self.log, "w") as log:
            # forceSync=no: the log is not fsynced at each write; a crash is no scenario here.
            self.proc = subprocess.Popen(
                [program("java"), "-Xmx256m", "-XX:+UseSerialGC", "-Dzookeeper.forceSync=no",
                 f"-Dzookeeper.log.dir={self.dir}", "-cp", ZK_JAR, "org.apache.zookeeper.server.ZooKeeperServerMain",
                 config], stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir,
                preexec_fn=die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited at start: {log_text(self.log)}")
            try:
                return "Mode: standalone" in self.four_letters("srvr")
            except OSError:
                return False
        wait_until(up, START_LIMIT_S, "ZooKeeper")

    def four_letters(self, word):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(word.encode())
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return out.decode(errors="replace")
                out += chunk

    def sessions(self):
        """How many sessions the server holds (mntr's zk_global_sessions)."""
        for line in self.four_letters("mntr").splitlines():
            key, _, value = line.partition("\t")
            if key == "zk_global_sessions":
                return int(value)
        raise RuntimeError("ZooKeeper's mntr gave no zk_global_sessions")

    def client(self):
        """The harness's own client, no chroot: its session the longest the server gives (2 s)."""
        from kazoo.client import KazooClient
        # kazoo logs each lost connection: the script's outcome says what matters.
        logging.getLogger("kazoo").addHandler(logging.NullHandler())
        logging.getLogger("kazoo").propagate = False
        c = KazooClient(hosts=f"127.0.0.1:{self.port}", timeout=TICK_MS * 20 / 1000, connection_retry=ZK_RETRY)
        try:
            c.start(timeout=STEP_LIMIT_S)
        except Exception:
            c.stop()
            c.close()
            raise
        return c

    def stop(self):
        stop(self.proc)


# kazoo's default reconnects with a delay doubling up to an hour: a resumed client is to reconnect
# at once, as the model's does.
ZK_RETRY = {"max_tries": -1, "delay": RESUME_RETRY_S, "backoff": 1, "max_jitter": 0, "max_delay": RESUME_RETRY_S}


class Etcd:
    """A one-member etcd on free loopback ports, in a private folder: heartbeat 10 ms and election
    timeout 100 ms, so its shortest lease TTL is 1 s."""

    def __init__(self, root):
        self.dir = os.path.join(root, "etcd")
        self.port = None
        self.proc = None

    @staticmethod
    def available():
        return program("etcd")

    def start(self):
        import etcd3  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(self.dir)
        self.port, peer = free_port(), free_port()
        client_url, peer_url = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{peer}"
        self.log = os.path.join(self.dir, "etcd.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [program("etcd"), "--name", "t", "--data-dir", os.path.join(self.dir, "data"),
                 "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                 "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                 "--initial-cluster", f"t={peer_url}", "--heartbeat-interval", "10", "--election-timeout", "100"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir, preexec_fn=die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"etcd exited at start: {log_text(self.log)}")
            c = self.client(timeout_s=2)
            try:
                c.status()
                return True
            except Exception:
                return False
            finally:
                c.close()
        wait_until(up, START_LIMIT_S, "etcd")

    def client(self, timeout_s=STEP_LIMIT_S):
        import etcd3
        return etcd3.client("127.0.0.1", self.port, timeout=timeout_s)

    def stop(self):
        stop(self.proc)
