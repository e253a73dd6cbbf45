"""The real servers' start and stop: MariaDB, PostgreSQL and Redis for the database suite
(conformance.py), and the helpers the coordination services' suite starts ZooKeeper and etcd with
(coord_servers.py). Each server runs in a private folder under the run's temporary folder, on a socket
or a free loopback port, and dies with the suite however the suite dies; the limits below bound what it
and a script on it may take."""

import os
import shutil
import signal
import socket
import subprocess
import time

PG_BIN = "/usr/lib/postgresql/15/bin"           # Debian's postgresql-15: initdb and postgres are not on the PATH
STEP_LIMIT_S = 20       # no statement, command or request may take longer
START_LIMIT_S = 30      # server start-up
SCRIPT_LIMIT_S = 60     # one script on the real server


def program(name):
    """A server program on the PATH, or in /usr/sbin where Debian puts mariadbd (not on every user's PATH)."""
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/usr/local/sbin")


def pg_bindir():
    """The folder of PostgreSQL's initdb and postgres: Debian's postgresql-15 folder, else one on the PATH."""
    for d in [PG_BIN, *os.environ.get("PATH", "").split(os.pathsep)]:
        if d and all(os.path.isfile(os.path.join(d, n)) and os.access(os.path.join(d, n), os.X_OK)
                     for n in ("initdb", "postgres")):
            return d
    return None


def log_tail(path, lines=5):
    try:
        with open(path, errors="replace") as f:
            return " / ".join(line.strip() for line in f.read().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def die_with_parent():
    """In the server's child process: the kernel kills it when the suite dies, however it dies."""
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, limit_s, what):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not come up within {limit_s} s")


def wait_for_server(proc, connect, what, exited):
    """Until `connect()` gets a connection (closed at once) or START_LIMIT_S pass; `exited()` is the
    message when the server process ends first."""
    def up():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited at start: {exited()}")
        try:
            connect().close()
            return True
        except Exception:
            return False
    wait_until(up, START_LIMIT_S, what)


def stop(proc, limit_s=10):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(limit_s)


class MariaDB:
    """mariadbd on a socket, networking off, grant tables skipped, in a private data folder."""

    def __init__(self, root):
        self.dir = os.path.join(root, "mariadb")
        self.sock = os.path.join(self.dir, "mariadb.sock")
        self.proc = None

    def start(self):
        import pymysql  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(self.dir)
        data = os.path.join(self.dir, "data")
        user = ["--user=root"] if os.geteuid() == 0 else []
        log = open(os.path.join(self.dir, "install.log"), "w")
        subprocess.run([program("mariadb-install-db"), "--no-defaults", f"--datadir={data}", "--skip-test-db",
                        "--auth-root-authentication-method=normal", *user], stdout=log, stderr=log, check=True,
                       timeout=START_LIMIT_S)
        self.proc = subprocess.Popen(
            [program("mariadbd"), "--no-defaults", f"--datadir={data}", f"--socket={self.sock}", "--skip-networking",
             "--skip-grant-tables", f"--pid-file={os.path.join(self.dir, 'mariadbd.pid')}",
             f"--log-error={os.path.join(self.dir, 'error.log')}", "--innodb-buffer-pool-size=32M",
             "--innodb-log-file-size=8M", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2", *user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)

        wait_for_server(self.proc, self.connect, "mariadbd", lambda: "see its error log")

    def connect(self, db=None):
        import pymysql
        return pymysql.connect(unix_socket=self.sock, user="root", database=db, autocommit=True,
                               connect_timeout=5, read_timeout=STEP_LIMIT_S, write_timeout=STEP_LIMIT_S)

    def stop(self):
        stop(self.proc)


class PostgreSQL:
    """postgres on a Unix socket in a private folder, TCP off, trust authentication (initdb --auth=trust
    -U postgres), fsync off, in a private data folder. initdb and postgres refuse to run as root: under
    root both run as the `postgres` user (Debian's postgresql-15 makes it), else as `nobody`, and their
    folders are that user's."""

    PORT = 5432  # names the socket only (.s.PGSQL.5432, in a folder of its own): no TCP

    def __init__(self, root):
        self.root = root
        self.dir = os.path.join(root, "postgresql")
        self.sock = os.path.join(self.dir, "sock")
        self.bindir = pg_bindir()
        self.proc = None

    @staticmethod
    def account():
        """subprocess's user, group and extra_groups to run initdb and postgres with: none unless root."""
        if os.geteuid() != 0:
            return {}
        import pwd
        for name in ("postgres", "nobody"):
            try:
                pw = pwd.getpwnam(name)
            except KeyError:
                continue
            return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        raise RuntimeError("running as root, with no user postgres or nobody to run PostgreSQL as")

    def start(self):
        import psycopg2  # noqa: F401  (fails here, before a server starts, when the client is missing)
        account = self.account()
        os.makedirs(self.sock)
        if account:
            os.chmod(self.root, 0o711)  # that user passes through the run's folder (and lists nothing there)
            for d in (self.dir, self.sock):
                os.chown(d, account["user"], account["group"])
        os.chmod(self.dir, 0o700)
        data = os.path.join(self.dir, "data")
        install_log = os.path.join(self.dir, "initdb.log")
        with open(install_log, "w") as log:
            p = subprocess.run([os.path.join(self.bindir, "initdb"), "-D", data, "--auth=trust", "-U", "postgres",
                                "--no-sync", "--no-locale", "--encoding=UTF8"], stdout=log, stderr=log,
                               cwd=self.dir, timeout=START_LIMIT_S, preexec_fn=die_with_parent, **account)
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed ({p.returncode}): {log_tail(install_log)}")
        self.log = os.path.join(self.dir, "postgres.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [os.path.join(self.bindir, "postgres"), "-D", data, "-p", str(self.PORT), "-k", self.sock,
                 "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=50"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir, preexec_fn=die_with_parent,
                **account)

        wait_for_server(self.proc, self.connect, "postgres", lambda: log_tail(self.log))

    def connect(self, db=None):
        """A connection in autocommit: a script's BEGIN and COMMIT open and end its transactions."""
        import psycopg2
        conn = psycopg2.connect(host=self.sock, port=self.PORT, user="postgres", dbname=db or "postgres",
                                connect_timeout=5)
        conn.autocommit = True
        return conn

    def stop(self):
        """A fast shutdown (SIGINT): the sessions' backends are ended, not waited for."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class Redis:
    """redis-server on a free loopback port, in a private folder; killed and restarted by the scripts."""

    def __init__(self, root):
        self.dir = os.path.join(root, "redis")
        self.proc = None
        self.port = None
        self.args = []

    def start(self, appendonly="none"):
        import redis  # noqa: F401
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        aof = [] if appendonly == "none" else ["--appendonly", "yes", "--appendfsync", appendonly]
        self.args = ["--bind", "127.0.0.1", "--dir", self.dir, "--save", "", "--daemonize", "no", "--logfile",
                     os.path.join(self.dir, "redis.log"), *(aof or ["--appendonly", "no"])]
        self.launch()

    def launch(self):
        self.port = free_port()
        self.proc = subprocess.Popen([program("redis-server"), "--port", str(self.port), *self.args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited at start: see its log")
            try:
                return self.client().ping()
            except Exception:
                return False
        wait_until(up, START_LIMIT_S, "redis-server")

    def client(self):
        import redis
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=STEP_LIMIT_S, decode_responses=True)
        c.response_callbacks.clear()  # the server's replies as they come (PEXPIRE's 1, not True)
        return c

    def kill9(self):
        if "--appendfsync" in self.args:
            self.wait_for_aof_write()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def wait_for_aof_write(self):
        """Until Redis has written every command it acknowledged to its AOF (the OS page cache, which a
        process kill keeps), at most STEP_LIMIT_S. With appendfsync everysec Redis postpones that write,
        for up to 2 s, while its last background fsync is still running: on a busy disk a kill right
        after a write can lose it. That depends on the machine's disk and load, not on the rules the
        scripts pin (docs/conformance.md, "Redis"), so the kill waits for the write."""
        c = self.client()
        try:
            deadline = time.monotonic() + STEP_LIMIT_S
            while True:
                info = c.execute_command("INFO", "persistence")
                info = info.decode() if isinstance(info, bytes) else info
                fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
                if fields.get("aof_buffer_length", "0").strip() == "0":
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not write its AOF within {STEP_LIMIT_S} s")
                time.sleep(0.01)
        finally:
            c.close()

    def stop(self):
        stop(self.proc)
