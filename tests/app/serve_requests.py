#!/usr/bin/env python3
"""`locksim serve` under bad requests: every answer one line of JSON with a 4xx status, nothing
read outside its folders, the server still serving afterwards; a Lua strategy that loops is
bounded as in `run`; a run whose page stopped asking is stopped; many users at once.

Usage: serve_requests.py LOCKSIM

The requests: malformed JSON, the wrong content type, another site's Host, paths that climb
out, unknown calls, fields of the wrong type, and 400 requests mutated from valid ones by a
seeded generator (the same ones every time).
"""

import http.client
import json
import os
import random
import re
import sys
import tempfile
import threading
import time

import served

LOCKSIM = os.path.abspath(sys.argv[1])
failures = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def request(port, method, path, body=b"", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def call(port, name, body):
    status, data = request(port, "POST", "/api/" + name, json.dumps(body).encode())
    return status, json.loads(data)


def one_line_error(status, data):
    try:
        answer = json.loads(data)
    except ValueError:
        return False
    return 400 <= status < 500 and isinstance(answer.get("error"), str) and "\n" not in answer["error"]


def main():
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(folder, "loops.lua"), "w") as f:
            f.write('description = "loops"\nfunction bind(req)\n  while true do end\nend\n')
        server, url = served.start(LOCKSIM, folder, tmp)
        check("its drafts go in a folder of their own under TMPDIR",
              [d for d in os.listdir(tmp) if d.startswith("locksim-drafts-")] != [], str(os.listdir(tmp)))
        port = int(re.search(r":(\d+)/", url).group(1))
        try:
            status, scenarios = call(port, "scenarios", {})
            check("the catalogue is listed", status == 200 and len(scenarios) > 40)

            cases = {
                "malformed JSON": ("POST", "/api/trial", b"{\"scenario\": ", {}),
                "JSON that is no object": ("POST", "/api/trial", b"[1, 2]", {}),
                "the wrong content type": ("POST", "/api/trial", b"{}", {"Content-Type": "text/plain"}),
                "another site's Host": ("POST", "/api/scenarios", b"{}", {"Host": "evil.example:80"}),
                "an unknown call": ("POST", "/api/rm", b"{}", {}),
                "a path that climbs out": ("GET", "/../../etc/passwd", b"", {}),
                "a library path that climbs out": ("GET", "/lib/../../../etc/passwd", b"", {}),
                "a scenario outside the folders": ("POST", "/api/scenario", b"{\"scenario\": \"../../etc/passwd\"}", {}),
                "an override naming a file": ("POST", "/api/scenario",
                                              b"{\"scenario\": \"account-bind\", \"set\": [\"workload.script=/etc/passwd\"]}", {}),
                "a field of the wrong type": ("POST", "/api/branch", b"{\"token\": 5}", {}),
                "a body past the limit": ("POST", "/api/lua", b"{\"text\": \"" + b"x" * (5 << 20) + b"\"}", {}),
            }
            for name, (method, path, body, headers) in cases.items():
                status, data = request(port, method, path, body, headers)
                ok = one_line_error(status, data) if status != 404 else b"root:" not in data
                check(f"{name}: refused in one line ({status})", ok and b"root:" not in data, data[:200])

            # Mutations of valid requests, from a fixed seed.
            token = call(port, "trial", {"scenario": "two-clients-pause"})[1]["token"]
            valid = [("trial", {"scenario": "two-clients-pause", "strategy": "fencing-token", "seed": 3}),
                     ("branch", {"token": token, "choice": 2, "option": 1}),
                     ("scenario", {"scenario": "account-bind", "set": ["clients.count=3"]}),
                     ("lua", {"name": "a.lua", "text": "description = 'x'\nfunction bind(req) end\n"}),
                     ("hint", {"token": token, "property": "duplicate_rows", "bound": 0})]
            rng = random.Random(20261202)
            statuses = {}
            for i in range(400):
                name, body = valid[rng.randrange(len(valid))]
                text = json.dumps(body)
                mutation = rng.randrange(4)
                if mutation == 0:  # flip bytes
                    raw = bytearray(text.encode())
                    for _ in range(rng.randint(1, 4)):
                        raw[rng.randrange(len(raw))] = rng.randrange(256)
                    data = bytes(raw)
                elif mutation == 1:  # cut short
                    data = text.encode()[:rng.randrange(len(text))]
                elif mutation == 2:  # a field's value replaced
                    b = dict(body)
                    key = rng.choice(list(b))
                    b[key] = rng.choice([None, -1, 2**70, "", "x" * 70000, [], {}, "../../etc/passwd", 1e308, "dfs.99999999=1"])
                    data = json.dumps(b).encode()
                else:  # a field's name replaced
                    b = dict(body)
                    b[rng.choice(["scenario", "token", "set", "strategy_file", "schedule", "choice"])] = "/etc/passwd"
                    data = json.dumps(b).encode()
                status, answer = request(port, "POST", "/api/" + name, data)
                statuses[status] = statuses.get(status, 0) + 1
                if status not in (200, 400) or (status == 400 and not one_line_error(status, answer)) or b"root:x:" in answer:
                    check(f"mutated request {i} to {name}", False, f"{status} {answer[:200]!r} for {data[:200]!r}")
                    break
            check(f"400 mutated requests answered 200 or 400 in one line ({statuses})", not any("mutated" in f for f in failures))

            # A strategy that loops: bounded by the same budget as `run`, answered in one line.
            started = time.monotonic()
            status, answer = call(port, "trial", {"scenario": "account-bind", "strategy_file": "dir:loops.lua", "strategy": "loops.lua",
                                                  "set": ["clients.count=1", "clients.operations=1"]})
            spent = time.monotonic() - started
            check(f"a strategy that loops is stopped by its budget ({spent:.1f} s)", spent < 60 and status in (200, 400),
                  f"{status} {str(answer)[:200]}")

            # Many users at once: the same trial from eight threads, the same answer.
            answers = []

            def user():
                answers.append(call(port, "trial", {"scenario": "pause-anywhere"})[1].get("trace_hash"))

            threads = [threading.Thread(target=user) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            check("eight users at once get the same trial", len(answers) == 8 and len(set(answers)) == 1 and answers[0], str(answers))

            # A run whose page stopped asking (its browser closed) is stopped.
            status, job = call(port, "run", {"scenario": "account-bind", "trials": 100000})
            time.sleep(16)
            states = []
            for _ in range(600):
                states.append(call(port, "job", job)[1]["state"])
                if states[-1] not in ("queued", "running"):
                    break
                time.sleep(0.1)
            check("a run nobody asks about any more is stopped", states[-1] == "cancelled", str(states[-3:]))

            status, scenarios = call(port, "scenarios", {})
            check("the server still serves after all of it", status == 200 and len(scenarios) > 40)
        finally:
            code = served.stop(server)
            check("locksim serve stops on Ctrl-C, exit 0", code == 0, f"exit {code}")
            check("its drafts folder is removed", os.listdir(tmp) == [], str(os.listdir(tmp)))
            check("nothing but what was there is left in --dir", sorted(os.listdir(folder)) == ["loops.lua"], str(os.listdir(folder)))
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
