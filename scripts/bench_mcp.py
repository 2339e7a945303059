#!/usr/bin/env python3
"""What configured MCP servers cost harness9: start-up, the first request, loading one.

Five stdio servers are configured in `$HARNESS9_HOME/config.toml`, each the test fixture
(`examples/mcp_fixture.rs`: 8 tools of its own + `--tools N` generated ones, and
resources) with N chosen so that the five hold TOTAL tools together (default 100: 20
each). Against the scripted server (/work/shared/tools/mockllm.py, or --mock PATH) on
127.0.0.1, in print mode (`-p`, full-auto), it measures:

1. process start (just before spawning) → the first chat request's arrival (the
   server's own timestamp), RUNS times with no server configured and RUNS times with the
   five, alternating; medians. No server may start for that: every run's
   `logs/mcp/` must stay without a `fixture NAME starting` line (the fixture writes it
   to stderr at start, which harness9 keeps in `logs/mcp/NAME.log`), and one extra run,
   whose reply is held back for a while, looks for fixture processes while the first
   request waits (a run that loads a server shows the same check finds them).
2. the first request's size in bytes, with none and with the five (after one session
   has started them, so the index lines name their tool counts; also before, "cold"),
   and what the difference is made of (system prompt, tools).
3. loading one server (`use_skill("mcp:s1")`, 20 tools + its resources tool): the second
   request's size against the first, split into the tools added and the messages added;
   and the time between a session's first and second requests' arrivals when the model's
   first answer is that `use_skill` call (the server is started, initialized and listed
   in between), RUNS times, alternating with sessions whose call is a built-in
   `read_file` of a small file; medians (the difference is what loading costs). Also the
   fixture alone: spawn → `tools/list` answered, JSON-RPC by hand.

    cargo build --release --bin harness9 --example mcp_fixture
    scripts/bench_mcp.py --bin target/release/harness9 \\
        --fixture target/release/examples/mcp_fixture --runs 30

With --real DIR (what scripts/mcp_real_servers.sh installed), step 3 is also run for
real servers: mcp-server-time (Python) and server-everything (node), stdio.
With --codex PATH (`codex` of npm's @openai/codex) and --claude PATH (`claude` of npm's
@anthropic-ai/claude-code), the same five servers are configured for those agents too
(Codex: `mcp_servers` in `$CODEX_HOME/config.toml` and a model provider pointing at the
scripted server's Responses API; Claude Code: `--mcp-config FILE --strict-mcp-config`,
`ANTHROPIC_BASE_URL` at its Messages API; once more with `ENABLE_TOOL_SEARCH=false`),
and their first requests are measured the same way (fewer runs: they take ~0.3–1 s).
Run it then in a network namespace with only the loopback device, so that nothing they
might try to reach leaves the machine:

    unshare -n sh -c 'ip link set lo up && scripts/bench_mcp.py --runs 30 \
        --real /tmp/h9-mcp-real --codex PATH/codex --claude PATH/claude'

Loopback only; nothing else is contacted.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted_server import start_server  # noqa: E402

FIXTURE_OWN_TOOLS = 8


def requests(log, path="/chat/completions"):
    """The logged requests to `path` so far (a line still being written is left)."""
    out = []
    try:
        f = open(log)
    except FileNotFoundError:
        return out
    with f:
        for raw in f:
            try:
                r = json.loads(raw)
            except ValueError:
                break
            if r.get("method") == "POST" and r["path"].endswith(path):
                out.append(r)
    return out


def wait_requests(log, count, path="/chat/completions", deadline=30.0):
    end = time.time() + deadline
    while time.time() < end:
        got = requests(log, path)
        if len(got) >= count:
            return got
        time.sleep(0.005)
    sys.exit(f"the server logged {len(requests(log, path))} requests, expected {count}")


def fixture_processes(fixture):
    """Pids of running processes whose program is the fixture."""
    real = os.path.realpath(fixture)
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == real:
                pids.append(int(pid))
        except OSError:
            pass
    return pids


def started_servers(home):
    """Names of the fixtures that wrote their start line into harness9's MCP logs."""
    d = os.path.join(home, "logs", "mcp")
    if not os.path.isdir(d):
        return []
    out = []
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), errors="replace") as f:
            if "starting" in f.read():
                out.append(name)
    return out


def handshake_ms(server, runs):
    """Spawn → `tools/list` answered for a stdio server (`(command, args)`), talking
    JSON-RPC by hand: initialize, initialized, tools/list. Per run, in ms."""
    command, args = server
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}}
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        timer = threading.Timer(30, p.kill)
        timer.start()
        try:
            def send(msg):
                p.stdin.write((json.dumps(msg) + "\n").encode())
                p.stdin.flush()

            def answer(i):
                while True:
                    line = p.stdout.readline()
                    if not line:
                        sys.exit(f"{command} closed its output during the handshake")
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if msg.get("id") == i:
                        return msg

            send(init)
            answer(1)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            answer(2)
            out.append((time.perf_counter() - t0) * 1000)
        finally:
            timer.cancel()
            p.stdin.close()
            p.kill()
            p.wait()
    return out


def load_call(server):
    return {"id": "u", "name": "use_skill", "arguments": {"skill_name": f"mcp:{server}"}}


def served(url):
    """How many scripted replies the server has taken (counted on arrival)."""
    base = url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(base + "/_mock/state", timeout=2) as r:
        return json.loads(r.read())["served"]


def processes_while_waiting(b, home, prompt, replies, fixture):
    """Fixture processes seen once the last of `replies` was taken (its answer is held
    back by its first_delay_ms)."""
    srv, url, _ = b.server(f"procs-{len(replies)}", replies)
    try:
        p, _ = b.run(url, home, prompt, wait=False)
        end = time.time() + 30
        while served(url) < len(replies):
            if time.time() > end:
                sys.exit("the held request never came")
            time.sleep(0.002)
        found = fixture_processes(fixture)
        _, err = p.communicate(timeout=60)
        if p.returncode != 0:
            sys.exit(f"harness9 exited {p.returncode}: {err.decode()[-2000:]}")
        return found
    finally:
        srv.terminate()
        srv.wait()


class Bench:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.bin = os.path.realpath(args.bin)
        self.project = os.path.join(tmp, "project")
        os.makedirs(self.project)
        with open(os.path.join(self.project, "small.txt"), "w") as f:
            f.write("small file\n" * 20)

    def home(self, name, servers):
        """A HARNESS9_HOME with `servers` ({name: (command, args)}) configured."""
        home = os.path.join(self.tmp, name)
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, "config.toml"), "w") as f:
            for server, (command, args) in servers.items():
                f.write(f"[mcp_servers.{server}]\ncommand = {json.dumps(command)}\n")
                f.write(f"args = {json.dumps(args)}\n\n")
        return home

    def run(self, url, home, prompt="hi", wait=True):
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "HARNESS9_HOME": home,
            "OPENAI_API_KEY": "k",
            "NO_COLOR": "1",
        }
        cmd = [self.bin, "--base-url", url, "--model", "m", "--approval-mode", "full-auto",
               "-C", self.project, "-p", prompt]
        t0 = time.time_ns()
        p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if not wait:
            return p, t0
        _, err = p.communicate(timeout=120)
        if p.returncode != 0:
            sys.exit(f"harness9 exited {p.returncode}: {err.decode()[-2000:]}")
        return p, t0

    def server(self, name, replies):
        script = os.path.join(self.tmp, f"{name}.json")
        log = os.path.join(self.tmp, f"{name}.log")
        with open(script, "w") as f:
            json.dump(replies, f)
        proc, url = start_server(self.args.mock, script, log)
        return proc, url, log


def body_parts(body):
    """Compact-JSON sizes of a request body's parts."""
    size = lambda v: len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())
    system = "".join(m.get("content") or "" for m in body["messages"] if m.get("role") == "system")
    return {
        "system": len(system.encode()),
        "tools": size(body.get("tools") or []),
        "n_tools": len(body.get("tools") or []),
        "messages": size(body["messages"]),
        "tool_names": [t["function"]["name"] for t in body.get("tools") or []],
        "system_text": system,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/harness9")
    ap.add_argument("--fixture", default="target/release/examples/mcp_fixture")
    ap.add_argument("--mock", default="/work/shared/tools/mockllm.py")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--servers", type=int, default=5)
    ap.add_argument("--total-tools", type=int, default=100)
    ap.add_argument("--real", metavar="DIR", help="also load real servers installed in DIR")
    ap.add_argument("--codex", metavar="PATH", help="also measure Codex CLI's first request")
    ap.add_argument("--claude", metavar="PATH", help="also measure Claude Code's first request")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    per_server = args.total_tools // args.servers
    extra = per_server - FIXTURE_OWN_TOOLS
    if extra < 0 or per_server * args.servers != args.total_tools:
        sys.exit("--total-tools must be a multiple of --servers, at least 8 per server")
    fixture = os.path.realpath(args.fixture)
    servers = {f"s{i}": (fixture, ["--name", f"s{i}", "--tools", str(extra)])
               for i in range(1, args.servers + 1)}

    tmp = tempfile.mkdtemp(prefix="h9-bench-mcp.")
    b = Bench(args, tmp)
    home_none = b.home("home-none", {})
    home_mcp = b.home("home-mcp", servers)
    print(f"harness9 {b.bin}; {args.servers} stdio servers (fixture --tools {extra}: "
          f"{per_server} tools each, {args.total_tools} in all, plus a resources tool each)")
    if fixture_processes(fixture):
        sys.exit(f"fixture processes are already running: {fixture_processes(fixture)}")

    # --- 2 (cold): the first request before any server was ever started ---------------
    srv, url, log = b.server("sizes", [])
    try:
        b.run(url, home_none)
        b.run(url, home_mcp)
        reqs = wait_requests(log, 2)
        size_none, size_cold = reqs[0]["body_bytes"], reqs[1]["body_bytes"]
        parts_none, parts_cold = body_parts(reqs[0]["body"]), body_parts(reqs[1]["body"])
        if started_servers(home_mcp):
            sys.exit(f"servers started without being used: {started_servers(home_mcp)}")
    finally:
        srv.terminate()
        srv.wait()

    # One session that loads all five: the cache then knows their tool counts.
    prime = [{"tool_calls": [{"id": f"p{i}", "name": "use_skill",
                              "arguments": {"skill_name": f"mcp:{s}"}}]}
             for i, s in enumerate(servers)] + [{"text": "primed"}]
    srv, url, log = b.server("prime", prime)
    try:
        b.run(url, home_mcp, "load them all")
        primed = wait_requests(log, len(servers) + 1)
        loaded = [n for n in body_parts(primed[-1]["body"])["tool_names"] if n.startswith("mcp__")]
        print(f"priming session: loaded {len(loaded)} MCP tools; "
              f"started: {', '.join(started_servers(home_mcp))}")
    finally:
        srv.terminate()
        srv.wait()
    time.sleep(0.5)
    if fixture_processes(fixture):
        sys.exit(f"fixture processes outlived harness9: {fixture_processes(fixture)}")

    # --- 1: start → first request, alternating; nothing may start --------------------
    srv, url, log = b.server("start", [])
    starts = {"none": [], "mcp": []}
    try:
        for _ in range(args.runs):
            for kind, home in (("none", home_none), ("mcp", home_mcp)):
                shutil.rmtree(os.path.join(home, "logs", "mcp"), ignore_errors=True)
                before = len(requests(log))
                _, t0 = b.run(url, home)
                first = wait_requests(log, before + 1)[before]
                starts[kind].append((first["t_ns"] - t0) / 1e6)
                if started_servers(home):
                    sys.exit(f"a server started in a plain run: {started_servers(home)}")
        reqs = requests(log)
        size_warm = reqs[-1]["body_bytes"]
        parts_warm = body_parts(reqs[-1]["body"])
    finally:
        srv.terminate()
        srv.wait()

    # The process check: while the first request waits for its (delayed) answer, no
    # fixture runs; while the request after use_skill("mcp:s1") waits, one does.
    procs_at_first = processes_while_waiting(
        b, home_mcp, "hi", [{"text": "late", "first_delay_ms": 1500}], fixture)
    procs_loaded = processes_while_waiting(
        b, home_mcp, "load", [{"tool_calls": [load_call("s1")]},
                              {"text": "late", "first_delay_ms": 1500}], fixture)

    # --- 3: loading one server ---------------------------------------------------------
    def load_runs(name, home, runs, calls):
        """Runs `runs` rounds; in each, one session per call of `calls` (the model makes
        that call, then answers), alternating. Per call: the gaps between the arrivals of
        a session's two requests (ms), and the last session's two requests."""
        replies = []
        for _ in range(runs):
            for c in calls:
                replies += [{"tool_calls": [c]}, {"text": "done"}]
        srv, url, log = b.server(name, replies)
        gaps = [[] for _ in calls]
        last = [None for _ in calls]
        try:
            n = 0
            for _ in range(runs):
                for i in range(len(calls)):
                    b.run(url, home, "load")
                    n += 2
                    r1, r2 = wait_requests(log, n)[n - 2:n]
                    gaps[i].append((r2["t_ns"] - r1["t_ns"]) / 1e6)
                    last[i] = (r1, r2)
        finally:
            srv.terminate()
            srv.wait()
        return gaps, last

    read = {"id": "r", "name": "read_file", "arguments": {"path": "small.txt"}}
    (gaps_load, gaps_read), ((r1, r2), (q1, q2)) = load_runs(
        "load", home_mcp, args.runs, [load_call("s1"), read])
    fixture_start = handshake_ms(servers["s1"], args.runs)
    p1, p2 = body_parts(r1["body"]), body_parts(r2["body"])
    added_tools = [n for n in p2["tool_names"] if n not in p1["tool_names"]]

    real = {}
    if args.real:
        d = args.real
        mods = os.path.join(d, "npm", "node_modules", "@modelcontextprotocol")
        real_servers = {
            "time": (os.path.join(d, "venv", "bin", "mcp-server-time"), []),
            "everything": (shutil.which("node"),
                           [os.path.join(mods, "server-everything", "dist", "index.js"), "stdio"]),
        }
        home_real = b.home("home-real", real_servers)
        for name in real_servers:
            (g,), ((a, z),) = load_runs(f"real-{name}", home_real, max(5, args.runs // 3),
                                        [load_call(name)])
            pa, pz = body_parts(a["body"]), body_parts(z["body"])
            real[name] = (g, z["body_bytes"] - a["body_bytes"], pz["tools"] - pa["tools"],
                          pz["n_tools"] - pa["n_tools"],
                          handshake_ms(real_servers[name], max(5, args.runs // 3)))

    peers = {}
    for kind, exe in (("codex", args.codex), ("claude", args.claude),
                      ("claude-no-tool-search", args.claude)):
        if exe:
            peers[kind] = measure_peer(kind, os.path.realpath(exe), args, b, servers, fixture)

    # --- report ------------------------------------------------------------------------
    med = statistics.median
    print()
    print(f"1. start → first request, median of {args.runs} (min):")
    print(f"   no server configured:   {med(starts['none']):6.2f} ms ({min(starts['none']):.2f})")
    print(f"   {args.servers} servers configured:  {med(starts['mcp']):6.2f} ms ({min(starts['mcp']):.2f})"
          f"   difference {med(starts['mcp']) - med(starts['none']):+.2f} ms")
    print(f"   servers started in the {args.runs} runs with servers configured: none "
          f"(logs/mcp/ never had a start line)")
    print(f"   fixture processes while the first request waited: {len(procs_at_first)}"
          f"; while the request after use_skill(\"mcp:s1\") waited: {len(procs_loaded)}")
    print()
    print("2. first request size:")
    print(f"   none:                      {size_none:7,} bytes ({parts_none['n_tools']} tools,"
          f" {parts_none['tools']:,} bytes of tools; system prompt {parts_none['system']:,})")
    for label, size, parts in (("5 servers, cache cold", size_cold, parts_cold),
                               ("5 servers, cache warm", size_warm, parts_warm)):
        extra_tools = [n for n in parts["tool_names"] if n not in parts_none["tool_names"]]
        print(f"   {label}:     {size:7,} bytes (+{size - size_none:,}: system prompt "
              f"+{parts['system'] - parts_none['system']:,}, tools "
              f"+{parts['tools'] - parts_none['tools']:,} {extra_tools})")
    section = parts_warm["system_text"][parts_warm["system_text"].find("## MCP Servers"):]
    print("   the index (warm):")
    for line in section.splitlines()[:args.servers + 3]:
        print(f"     {line}")
    print()
    print(f"3. loading one server (use_skill(\"mcp:s1\"): {len(added_tools)} tools added):")
    print(f"   request after loading: {r2['body_bytes']:,} bytes, before: {r1['body_bytes']:,} "
          f"(+{r2['body_bytes'] - r1['body_bytes']:,}: tools +{p2['tools'] - p1['tools']:,},"
          f" messages +{p2['messages'] - p1['messages']:,})")
    print(f"   same for read_file:    {q2['body_bytes']:,} bytes, before: {q1['body_bytes']:,} "
          f"(+{q2['body_bytes'] - q1['body_bytes']:,})")
    print(f"   request → next request, median of {args.runs} (min): use_skill {med(gaps_load):6.2f} ms"
          f" ({min(gaps_load):.2f}), read_file {med(gaps_read):6.2f} ms ({min(gaps_read):.2f}):"
          f" loading costs {med(gaps_load) - med(gaps_read):+.2f} ms")
    print(f"   the fixture alone, spawn → tools/list answered, median of {args.runs}: "
          f"{med(fixture_start):6.2f} ms ({min(fixture_start):.2f})")
    for name, (g, total, tools, n, alone) in real.items():
        print(f"   real server {name}: request → next request after use_skill, median of {len(g)}: "
              f"{med(g):7.1f} ms ({min(g):.1f}); alone, spawn → tools/list answered: "
              f"{med(alone):7.1f} ms; request +{total:,} bytes (tools +{tools:,}, {n} tools)")
    for kind, res in peers.items():
        print()
        print(f"4. {kind} with the same servers:")
        for k, v in res.items():
            if not k.endswith(", sizes"):
                print(f"   {k}: {v}")
        keys = sorted(k for k in res if k.endswith(", sizes"))
        if len(keys) == 2:
            (s0, t0), (s5, t5) = res[keys[1]], res[keys[0]]
            print(f"   difference: +{s5 - s0:,.0f} bytes, {t5 - t0:+.1f} ms")
    if args.keep:
        print(f"\nfiles kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def peer_setup(kind, exe, b, servers, url, home):
    """The command line, environment and request path of one peer run."""
    base = {"PATH": os.environ.get("PATH", ""), "HOME": home, "NO_COLOR": "1"}
    if kind == "codex":
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write('model = "m"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n\n'
                    '[model_providers.mock]\nname = "mock"\n'
                    f'base_url = "{url}"\nenv_key = "MOCK_API_KEY"\nwire_api = "responses"\n\n')
            for name, (command, a) in servers.items():
                f.write(f"[mcp_servers.{name}]\ncommand = {json.dumps(command)}\n"
                        f"args = {json.dumps(a)}\n\n")
        env = dict(base, CODEX_HOME=home, MOCK_API_KEY="k")
        return [exe, "exec", "--skip-git-repo-check", "-C", b.project, "hi"], env, "/responses"
    mcp = os.path.join(home, "mcp.json")
    with open(mcp, "w") as f:
        json.dump({"mcpServers": {n: {"command": c, "args": a} for n, (c, a) in servers.items()}}, f)
    env = dict(base, ANTHROPIC_BASE_URL=url.rsplit("/v1", 1)[0], ANTHROPIC_API_KEY="k",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    if kind == "claude-no-tool-search":
        env["ENABLE_TOOL_SEARCH"] = "false"
    return [exe, "-p", "hi", "--mcp-config", mcp, "--strict-mcp-config"], env, "/messages"


def mcp_bytes(body):
    """Bytes of a peer request's MCP tool schemas, and how many MCP tool names it holds."""
    tools = body.get("tools") or []
    schemas = [t for t in tools if str(t.get("name", "")).startswith("mcp__")]
    size = sum(len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode())
               for t in schemas)
    count = 0
    for t in schemas:
        count += len(t.get("tools") or []) if t.get("type") == "namespace" else 1
    raw = json.dumps(body)
    names = len(set(re.findall(r"mcp__s\d+__[A-Za-z0-9_-]+", raw)))
    return size, count, names


def measure_peer(kind, exe, args, b, servers, fixture):
    """A peer's first request with no servers and with `servers`: start → first request
    and its size (medians), its MCP schemas, and the fixture processes running while it
    waited for its answer (held back)."""
    out = {}
    runs = max(5, args.runs // 3)
    for label, conf in (("none", {}), (f"{len(servers)} servers", servers)):
        tag = f"{kind}-{len(conf)}"
        home = os.path.join(b.tmp, tag)
        os.makedirs(home, exist_ok=True)
        replies = [{"text": "done"}] * runs + [{"text": "late", "first_delay_ms": 3000}]
        srv, url, log = b.server(tag, replies)
        try:
            cmd, env, path = peer_setup(kind, exe, b, conf, url, home)
            times, sizes = [], []
            for k in range(runs + 1):
                before = len(requests(log, path))
                t0 = time.time_ns()
                p = subprocess.Popen(cmd, env=env, cwd=b.project, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                procs = None
                if k == runs:  # the held run: who runs while the first request waits?
                    end = time.time() + 60
                    while served(url) < runs + 1 and time.time() < end:
                        time.sleep(0.002)
                    procs = fixture_processes(fixture)
                _, err = p.communicate(timeout=180)
                got = requests(log, path)[before:]
                if not got:
                    out[label] = f"no request (exit {p.returncode}): {err.decode()[-600:]}"
                    break
                if procs is not None:
                    out[label + ", fixture processes while the first request waited"] = len(procs)
                    continue
                times.append((got[0]["t_ns"] - t0) / 1e6)
                sizes.append(got[0]["body_bytes"])
            else:
                first = requests(log, path)[0]["body"]
                size, count, names = mcp_bytes(first)
                out[label] = (f"first request {statistics.median(sizes):,.0f} bytes "
                              f"({len(first.get('tools') or [])} tool entries; MCP schemas "
                              f"{size:,} bytes for {count} tools; {names} MCP tool names in the "
                              f"request); start → first request median "
                              f"{statistics.median(times):.1f} ms (min {min(times):.1f}) "
                              f"over {len(times)} runs")
                out[label + ", sizes"] = (statistics.median(sizes), statistics.median(times))
        finally:
            srv.terminate()
            srv.wait()
    return out


if __name__ == "__main__":
    main()
