#!/usr/bin/env python3
"""What agent definitions cost the first request: process start -> the first chat
request's arrival (the scripted server's own timestamp) and that request's size, for
each binary given, alternating, RUNS times each, in a new project (a `.git` folder, no
AGENTS.md, no skills) with `-p hi`. With AGENTS_FROM=FOLDER the project holds that
folder's definitions in `.claude/agents`.

    scripts/bench_agents.py PORT RUNS BIN [BIN...]
    AGENTS_FROM=tests/fixtures/agents/voltagent scripts/bench_agents.py PORT RUNS BIN...

Needs the scripted server at /work/shared/tools/mockllm.py (MOCKLLM to override)."""
import json, os, shutil, subprocess, sys, time, tempfile, statistics
port = int(sys.argv[1]); runs = int(sys.argv[2]); bins = sys.argv[3:]
work = tempfile.mkdtemp(); proj = os.path.join(work, "proj"); os.makedirs(os.path.join(proj, ".git"))
home = os.path.join(work, "home"); os.makedirs(home)
if os.environ.get("AGENTS_FROM"):
    shutil.copytree(os.environ["AGENTS_FROM"], os.path.join(proj, ".claude/agents"))
log = os.path.join(work, "log.jsonl"); script = os.path.join(work, "s.json")
json.dump({"default": {"text": "hi"}}, open(script, "w"))
mock = subprocess.Popen([sys.executable, os.environ.get("MOCKLLM", "/work/shared/tools/mockllm.py"), "--port", str(port), "--script", script, "--log", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1)
res = {b: [] for b in bins}; size = {}
env = {"PATH": os.environ["PATH"], "HOME": home, "HARNESS9_HOME": home, "OPENAI_API_KEY": "k"}
for i in range(runs):
    for b in bins:
        before = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        t0 = time.time_ns()
        subprocess.run([b, "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "-C", proj, "-p", "hi"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lines = open(log).read().splitlines()[before:]
        chat = [json.loads(l) for l in lines if "chat/completions" in json.loads(l)["path"]]
        res[b].append((chat[0]["t_ns"] - t0) / 1e6); size[b] = chat[0]["body_bytes"]
mock.terminate()
for b in bins:
    v = sorted(res[b]); q = statistics.quantiles(v, n=4)
    print(f"{b}: start->first request median {statistics.median(v):.2f} ms (q1 {q[0]:.2f}, q3 {q[2]:.2f}), first request {size[b]} bytes, {runs} runs")
