#!/usr/bin/env python3
"""What hooks cost (issue 32).

1. Start-up: the time from starting `harness9 -p hi` to its first chat request reaching
   the scripted server (the server's arrival stamp minus the spawn time), and the whole
   run's wall time, for
     - this binary with no hooks at all,
     - a baseline binary (--before, e.g. /work/bench-bins/ac9c352/harness9) with none,
     - this binary in a project whose .claude/settings.json holds 4 hooks not trusted
       (read, fingerprinted, reported, not run),
     - the same 4 hooks trusted (in force; none of them fires before the first request),
     - one SessionStart hook `true` from config.toml (it runs before the first request).
   All alternating, RUNS times each.
2. Per tool call: a `-p go --approval-mode full-auto` run in which the model makes
   CALLS `read_file` calls, then answers, with 0, 1 and 4 PreToolUse hooks `true`
   (distinct command lines, matcher `*`, from config.toml), alternating, SESSIONS times
   each; the overhead per call is (median with k hooks - median with none) / CALLS. Once
   with `--sandbox off` and once with the default sandbox (every hook then starts through
   the sandbox launcher, as each bash command does).

Usage: python3 scripts/bench_hooks.py [path/to/harness9] [--before path/to/old/harness9]
       [--port N] (default target/release/harness9, port 18660)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

RUNS = 30
SESSIONS = 15
CALLS = 20


def find_mock():
    """shared/tools/mockllm.py in the nearest folder above this script that has one."""
    here = os.path.dirname(os.path.abspath(__file__))
    while True:
        candidate = os.path.join(here, "shared", "tools", "mockllm.py")
        if os.path.isfile(candidate) or os.path.dirname(here) == here:
            return candidate
        here = os.path.dirname(here)


def arg(flag, default):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        value = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return value
    return default


class Server:
    def __init__(self, port, log):
        self.url = f"http://127.0.0.1:{port}/v1"
        self.log = log
        script = os.path.join(os.path.dirname(log), "script.json")
        with open(script, "w") as f:
            json.dump([], f)
        self.proc = subprocess.Popen(
            [sys.executable, find_mock(), "--port", str(port), "--script", script,
             "--log", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.time() + 10
        while time.time() < end:
            try:
                urllib.request.urlopen(self.url + "/models", timeout=1).read()
                return
            except OSError:
                time.sleep(0.05)
        sys.exit("the scripted server did not start")

    def load(self, replies):
        req = urllib.request.Request(self.url.replace("/v1", "/_mock/load"),
                                     data=json.dumps(replies).encode(), method="POST")
        urllib.request.urlopen(req, timeout=5).read()

    def first_chat_after(self, since_ns):
        with open(self.log) as f:
            for line in f:
                entry = json.loads(line)
                if entry["t_ns"] >= since_ns and entry["path"].endswith("/chat/completions"):
                    return entry["t_ns"]
        return None


def run(binary, server, home, project, args, replies):
    server.load(replies)
    env = {"PATH": os.environ["PATH"], "HOME": home, "HARNESS9_HOME": home,
           "OPENAI_API_KEY": "k"}
    argv = [binary, "--base-url", server.url, "--model", "gpt-4o-mini", "--no-session",
            "-C", project, *args]
    spawned = time.time_ns()
    start = time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, env=env, check=False)
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}")
    first = server.first_chat_after(spawned)
    return wall, (first - spawned) / 1e6 if first else None


def hook_toml(event, commands, matcher=None):
    out = ""
    for command in commands:
        out += f"[[hooks.{event}]]\n"
        if matcher:
            out += f'matcher = "{matcher}"\n'
        out += f'[[hooks.{event}.hooks]]\ntype = "command"\ncommand = "{command}"\n'
    return out


def home_with(config):
    home = tempfile.mkdtemp()
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(config)
    return home


def med(values):
    return statistics.median(values)


def main():
    before = arg("--before", None)
    port = int(arg("--port", "18660"))
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/harness9"
    tmp = tempfile.mkdtemp()
    server = Server(port, os.path.join(tmp, "log.jsonl"))
    plain = tempfile.mkdtemp()
    hooked = tempfile.mkdtemp()
    os.makedirs(os.path.join(hooked, ".claude"))
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"true {i}"} for i in range(4)]}]}}
    with open(os.path.join(hooked, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f)
    empty_home = home_with("")
    trusted_home = home_with("")
    env = {"PATH": os.environ["PATH"], "HOME": trusted_home, "HARNESS9_HOME": trusted_home}
    subprocess.run([binary, "-C", hooked, "hooks", "trust"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    start_home = home_with(hook_toml("SessionStart", ["true"]))
    answer = [{"text": "hello"}]
    cases = [("no hooks", binary, empty_home, plain),
             ("4 project hooks, not trusted", binary, empty_home, hooked),
             ("4 project hooks, trusted (none fires)", binary, trusted_home, hooked),
             ("1 SessionStart hook `true`", binary, start_home, plain)]
    if before:
        cases.insert(1, ("no hooks, baseline " + before, before, empty_home, plain))
    results = {name: ([], []) for name, *_ in cases}
    for _ in range(RUNS):
        for name, exe, home, project in cases:
            wall, first = run(exe, server, home, project, ["-p", "hi"], answer)
            results[name][0].append(wall)
            results[name][1].append(first)
    print(f"Start-up: `-p hi`, medians of {RUNS} alternating runs")
    base_first = med(results["no hooks"][1])
    base_wall = med(results["no hooks"][0])
    print(f"  {'case':48} {'first request':>14} {'ratio':>6} {'whole run':>10} {'ratio':>6}")
    for name, *_ in cases:
        wall, first = results[name]
        print(f"  {name:48} {med(first):11.2f} ms {med(first) / base_first:5.2f}x "
              f"{med(wall):7.2f} ms {med(wall) / base_wall:5.2f}x")

    calls = [{"tool_calls": [{"id": f"c{i}", "name": "read_file",
                              "arguments": {"path": "f.txt"}}]} for i in range(CALLS)]
    calls.append({"text": "done"})
    for f in (plain,):
        with open(os.path.join(f, "f.txt"), "w") as out:
            out.write("x\n")
    homes = {k: home_with(hook_toml("PreToolUse", [f"true {i}" for i in range(k)], "*"))
             for k in (0, 1, 4)}
    for sandbox in (["--sandbox", "off"], []):
        label = "--sandbox off" if sandbox else "default sandbox"
        times = {k: [] for k in homes}
        for _ in range(SESSIONS):
            for k, home in homes.items():
                args = ["-p", "go", "--approval-mode", "full-auto", *sandbox]
                wall, _ = run(binary, server, home, plain, args, calls)
                times[k].append(wall)
        print(f"\nPer tool call ({label}): `-p go` with {CALLS} read_file calls, "
              f"medians of {SESSIONS} alternating runs")
        zero = med(times[0])
        for k in homes:
            m = med(times[k])
            per_call = (m - zero) / CALLS
            per_hook = per_call / k if k else 0
            print(f"  {k} PreToolUse hook(s) `true`: run {m:7.1f} ms ({m / zero:4.2f}x), "
                  f"+{per_call:5.2f} ms per call, {per_hook:5.2f} ms per hook per call")
    server.proc.terminate()


if __name__ == "__main__":
    main()
