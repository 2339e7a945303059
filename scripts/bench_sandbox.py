#!/usr/bin/env python3
"""What the sandbox costs.

1. Per command: `bash -c true` started directly, and through harness9's launcher with the
   workspace-write policy (Landlock + the seccomp socket filter, then exec), alternating,
   RUNS times each. This is the whole added cost of a confined `bash` call.
2. Per session: a one-shot `harness9 -p` run in full-auto against the scripted server
   (one bash call `true`, then an answer), with `--sandbox off` and with the default
   workspace-write sandbox (the Landlock probe at start-up plus one confined command),
   alternating, SESSIONS times each.

Usage: python3 scripts/bench_sandbox.py [path/to/harness9] (default target/release/harness9)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted_server import start_server  # noqa: E402

RUNS = 300
SESSIONS = 40
MOCK = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tools", "mockllm.py")


def timed(argv, env=None):
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - start) * 1000


def report(name_a, a, name_b, b):
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"  {name_a}: median {ma:.2f} ms (p90 {sorted(a)[int(len(a) * 0.9)]:.2f})")
    print(f"  {name_b}: median {mb:.2f} ms (p90 {sorted(b)[int(len(b) * 0.9)]:.2f})")
    print(f"  added: {mb - ma:+.2f} ms ({mb / ma:.2f}x)")


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/harness9")
    project = tempfile.mkdtemp()
    launcher = [binary, "__harness9-sandbox-exec", "--mode", "workspace-write",
                "--network", "deny", "--write", project, "--write", "/tmp", "--"]
    direct, confined = [], []
    for _ in range(RUNS):
        direct.append(timed(["bash", "-c", "true"]))
        confined.append(timed(launcher + ["bash", "-c", "true"]))
    print(f"per command, {RUNS} runs each:")
    report("bash -c true", direct, "through the launcher", confined)

    script = os.path.join(project, "script.json")
    log = os.path.join(project, "log.jsonl")
    replies = []
    for _ in range(2 * SESSIONS + 2):
        replies.append({"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]})
        replies.append({"text": "done"})
    with open(script, "w") as f:
        json.dump(replies, f)
    server, url = start_server(os.path.abspath(MOCK), script, log)
    home = tempfile.mkdtemp()
    env = {"PATH": os.environ["PATH"], "HOME": home, "HARNESS9_HOME": home,
           "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "x"}
    base = [binary, "-C", project, "--model", "m", "--no-session", "-p", "go",
            "--approval-mode", "full-auto"]
    try:
        off, on = [], []
        for _ in range(SESSIONS):
            off.append(timed(base + ["--sandbox", "off"], env))
            on.append(timed(base, env))
        print(f"one -p run with one bash call, {SESSIONS} runs each:")
        report("--sandbox off", off, "workspace-write (default)", on)
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
