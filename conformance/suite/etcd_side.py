"""etcd's real side: each session of a script an etcd3 client (its own gRPC channel), its keys under
/NAME, its leases named L1, L2, ... in the order granted; each outcome written as the driver writes the
model's."""

import json
import time

from coord_scripts import compact
from servers import SCRIPT_LIMIT_S, STEP_LIMIT_S


def prefix_end(key):
    """The end of the range of keys that start with `key`: its last byte one more."""
    b = key.encode()
    return b[:-1] + bytes([b[-1] + 1])


class EtcdRun:
    """One etcd script on the real server, its keys under /NAME."""

    def __init__(self, server, script):
        from etcd3 import etcdrpc
        self.rpc = etcdrpc
        self.server = server
        self.script = script
        self.prefix = f"/{script['name']}"
        self.leases = {}  # the script's name for each lease it granted, L1, ...: its id
        self.clients = {}
        self.admin = server.client()
        self.base = None

    def key(self, k):
        return (self.prefix + k).encode()

    def kv_attributes(self, kv):
        names = {v: k for k, v in self.leases.items()}
        lease = "none" if not kv.lease else names.get(kv.lease, "other")
        return (f"create={kv.create_revision - self.base:+d} mod={kv.mod_revision - self.base:+d} version={kv.version} "
                f"lease={lease}")

    def kv_text(self, kv):
        key, value = kv.key.decode()[len(self.prefix):], kv.value.decode("utf-8", "replace")
        return f"{key}={json.dumps(value, ensure_ascii=False)} {self.kv_attributes(kv)}"

    def rev(self, response):
        return f"ok rev {response.header.revision - self.base:+d}"

    def compare(self, c):
        target, key, op, value = c
        rpc = self.rpc
        m = rpc.Compare(key=self.key(key), result={"=": rpc.Compare.EQUAL, ">": rpc.Compare.GREATER,
                                                   "<": rpc.Compare.LESS, "!=": rpc.Compare.NOT_EQUAL}[op])
        if target == "value":
            m.target, m.value = rpc.Compare.VALUE, value.encode()
        elif target == "version":
            m.target, m.version = rpc.Compare.VERSION, value
        else:
            n = self.base + int(value[1:]) if isinstance(value, str) else value
            if target == "create_revision":
                m.target, m.create_revision = rpc.Compare.CREATE, n
            else:
                m.target, m.mod_revision = rpc.Compare.MOD, n
        return m

    def operation(self, o):
        rpc = self.rpc
        if o[0] == "put":
            return rpc.RequestOp(request_put=rpc.PutRequest(key=self.key(o[1]), value=o[2].encode(),
                                                            lease=self.leases[o[3]] if len(o) > 3 else 0))
        return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=self.key(o[1])))

    def request(self, c, w):
        rpc, op, t = self.rpc, w[0], STEP_LIMIT_S
        if op == "grant":
            r = c.leasestub.LeaseGrant(rpc.LeaseGrantRequest(TTL=w[1]), t)
            name = f"L{len(self.leases) + 1}"
            self.leases[name] = r.ID
            return f"lease {name} ttl {r.TTL}"
        if op == "keepalive":
            call = c.leasestub.LeaseKeepAlive(iter([rpc.LeaseKeepAliveRequest(ID=self.leases[w[1]])]), t)
            try:
                return "alive" if next(call).TTL > 0 else "gone"
            except StopIteration:
                return "gone"
            finally:
                call.cancel()
        if op == "revoke":
            return self.rev(c.leasestub.LeaseRevoke(rpc.LeaseRevokeRequest(ID=self.leases[w[1]]), t))
        if op == "put":
            return self.rev(c.kvstub.Put(self.operation(w).request_put, t))
        if op == "get":
            kvs = c.kvstub.Range(rpc.RangeRequest(key=self.key(w[1])), t).kvs
            return self.kv_text(kvs[0]) if kvs else "none"
        if op == "range":
            kvs = c.kvstub.Range(rpc.RangeRequest(key=self.key(w[1]), range_end=prefix_end(self.prefix + w[1])), t).kvs
            return "; ".join(self.kv_text(kv) for kv in kvs) or "none"
        if op == "del":
            return self.rev(c.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key(w[1])), t))
        r = c.kvstub.Txn(rpc.TxnRequest(compare=[self.compare(x) for x in w[1]],
                                        success=[self.operation(o) for o in w[2]],
                                        failure=[self.operation(o) for o in w[3]]), t)
        return f"{'succeeded' if r.succeeded else 'failed'} rev {r.header.revision - self.base:+d}"

    def run(self):
        import grpc
        rpc, mine = self.rpc, prefix_end(self.prefix + "/")
        try:
            self.admin.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S)
            self.base = self.admin.kvstub.Range(rpc.RangeRequest(key=self.key("/")), STEP_LIMIT_S).header.revision
            deadline = time.monotonic() + SCRIPT_LIMIT_S
            outcomes = []
            for i, step in enumerate(self.script["steps"]):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the script ran past its time limit ({SCRIPT_LIMIT_S} s) at step {i + 1}")
                if "sleep_ms" in step:
                    time.sleep(step["sleep_ms"] / 1000)
                    outcomes.append("ok")
                    continue
                if step["session"] not in self.clients:
                    self.clients[step["session"]] = self.server.client()
                try:
                    outcomes.append(self.request(self.clients[step["session"]], step["etcd"]))
                except grpc.RpcError as e:
                    outcomes.append(etcd_error(e))
            kvs = self.admin.kvstub.Range(rpc.RangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S).kvs
            final = compact({kv.key.decode()[len(self.prefix):]: f"{kv.value.decode('utf-8', 'replace')} "
                             f"{self.kv_attributes(kv)}" for kv in kvs})
            return outcomes, {"keys": final}
        finally:
            for lease in self.leases.values():
                try:
                    self.admin.leasestub.LeaseRevoke(rpc.LeaseRevokeRequest(ID=lease), STEP_LIMIT_S)
                except grpc.RpcError:
                    pass  # expired or revoked by the script
            try:
                self.admin.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S)
            finally:
                for c in [*self.clients.values(), self.admin]:
                    c.close()


def etcd_error(e):
    """A refused request: `error lease not found`, or `error` and the server's message."""
    import grpc
    message = (e.details() or str(e.code())).strip()
    if e.code() == grpc.StatusCode.NOT_FOUND and "lease not found" in message:
        return "error lease not found"
    if message.startswith("etcdserver: "):
        message = message[len("etcdserver: "):]
    return f"error {message.lower().strip()}"
