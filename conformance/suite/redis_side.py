"""The real side of a Redis script: a fresh redis-server (servers.Redis) with the script's appendfsync,
each session a redis-py client, the server killed (SIGKILL) and started again where the script says, and
every key's value at the end; the replies written as the Redis driver writes the model's
(redis_outcome)."""

import json
import time

from outcomes import pttl_band, redis_outcome
from servers import SCRIPT_LIMIT_S


CAS_DEL = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
CAS_PEXPIRE = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
               "else return 0 end")


def real_redis(server, script):
    server.start(script.get("redis", {}).get("appendfsync", "none"))
    try:
        outcomes = []
        clients = {}
        deadline = time.monotonic() + SCRIPT_LIMIT_S
        for step in script["steps"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the script ran past its time limit")
            if "sleep_ms" in step:
                time.sleep(step["sleep_ms"] / 1000)
                outcomes.append("ok")
                continue
            if step.get("kill"):
                server.kill9()
                clients = {}
                outcomes.append("ok")
                continue
            if step.get("restart"):
                server.launch()
                outcomes.append("ok")
                continue
            name = step["session"]
            if name not in clients:
                clients[name] = server.client()
            c = clients[name]
            cmd = step["redis"]
            op = cmd[0].upper()
            try:
                if op == "CAS_DEL":
                    reply = c.eval(CAS_DEL, 1, cmd[1], cmd[2])
                elif op == "CAS_PEXPIRE":
                    reply = c.eval(CAS_PEXPIRE, 1, cmd[1], cmd[2], cmd[3])
                else:
                    reply = c.execute_command(*cmd)
            except Exception as e:
                reply = e
            outcomes.append(pttl_band(step, redis_outcome(reply)))
        keys = {}
        c = server.client()
        for k in sorted(c.keys("*")):
            keys[k] = c.get(k)
        return outcomes, {"keys": json.dumps(keys, sort_keys=True, separators=(",", ":"))}
    finally:
        server.stop()
