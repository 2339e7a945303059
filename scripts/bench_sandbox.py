#!/usr/bin/env python3
"""What the sandbox costs.

1. Per command: `true` and `bash -c true` started directly, and through the launcher with
   a workspace-write policy like a session's (the project, the temp folders, the
   project's protected paths, the user's secret paths and `$HARNESS9_HOME` masked, a
   `.env` in the project): with namespaces (user, mount and PID namespaces, the read-only
   file system with its masks, a fresh /proc, then Landlock and seccomp) and without
   (Landlock and seccomp only), through `harness9-sandbox` (the launcher's own binary,
   what a session starts when it is installed beside harness9) and through harness9
   itself. All alternating, RUNS times each. With `--before OLD`, the same through an
   older harness9 binary's launcher (Landlock and seccomp, its own argument format).
2. Per session: a one-shot `harness9 -p` run in full-auto against the scripted server
   (one bash call `true`, then an answer), with `--sandbox off` and with the default
   workspace-write sandbox (the namespace probe at start-up plus one confined command),
   alternating, SESSIONS times each.
3. Phases: the launcher started and refusing at once, and its probe (everything but
   running a command), against `true`.

Usage: python3 scripts/bench_sandbox.py [path/to/harness9] [--before path/to/old/harness9]
(default target/release/harness9; harness9-sandbox is looked for beside it)
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
def find_mock():
    """shared/tools/mockllm.py in the nearest folder above this script that has one."""
    here = os.path.dirname(os.path.abspath(__file__))
    while True:
        candidate = os.path.join(here, "shared", "tools", "mockllm.py")
        if os.path.isfile(candidate) or os.path.dirname(here) == here:
            return candidate
        here = os.path.dirname(here)


MOCK = find_mock()
HOME_SECRETS = [".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube",
                ".docker/config.json", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
                ".pgpass", ".cargo/credentials", ".cargo/credentials.toml", ".config/gh",
                ".config/hub", ".vault-token", ".terraform.d/credentials.tfrc.json",
                ".gem/credentials", ".password-store", ".local/share/keyrings",
                ".bash_history", ".zsh_history"]
PROTECTED = [".git/config", ".git/config.worktree", ".git/hooks", ".git/info/attributes",
             ".harness9"]


def timed(argv, env=None, cwd=None):
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=False)
    return (time.perf_counter() - start) * 1000


def line(name, times, base=None):
    med = statistics.median(times)
    p90 = sorted(times)[int(len(times) * 0.9)]
    added = "" if base is None else f"  added {med - statistics.median(base):+.2f} ms"
    print(f"  {name:58} median {med:6.2f} ms  p90 {p90:6.2f}{added}")


def project_dir():
    project = tempfile.mkdtemp()
    os.makedirs(os.path.join(project, ".git", "hooks"))
    os.makedirs(os.path.join(project, ".harness9"))
    for name, text in [(".git/config", "[core]\n"), (".git/HEAD", "ref: refs/heads/main\n"),
                       (".env", "SECRET=x\n"), (".harness9/permissions.toml", "")]:
        with open(os.path.join(project, name), "w") as f:
            f.write(text)
    return project


def launcher_args(launcher, project, namespaces):
    home = os.path.expanduser("~")
    args = [launcher, "__harness9-sandbox-exec", "--mode", "workspace-write", "--network",
            "deny", "--namespaces", namespaces, "--project", project]
    for path in [project, tempfile.gettempdir(), "/tmp", "/dev/shm"]:
        args += ["--write", path]
    for path in PROTECTED:
        args += ["--read-only", os.path.join(project, path)]
    for path in HOME_SECRETS + [".harness9"]:
        args += ["--mask", os.path.join(home, path)]
    args += ["--mask", os.path.join(project, ".env")]
    args += ["--visible", os.path.join(home, ".harness9", "skills")]
    return args + ["--"]


def per_command(binary, before):
    project = project_dir()
    small = os.path.join(os.path.dirname(binary), "harness9-sandbox")
    launchers = [("harness9-sandbox", small)] if os.path.isfile(small) else []
    launchers.append(("harness9", binary))
    for command in (["true"], ["bash", "-c", "true"]):
        shown = " ".join(command)
        cases = [(f"{shown}, unconfined", command)]
        for name, launcher in launchers:
            for ns in ("on", "off"):
                cases.append((f"{shown}, {name} launcher, namespaces {ns}",
                              launcher_args(launcher, project, ns) + command))
        if before:
            old = [before, "__harness9-sandbox-exec", "--mode", "workspace-write",
                   "--network", "deny", "--write", project, "--write", "/tmp", "--"]
            cases.append((f"{shown}, the older launcher (--before)", old + command))
        times = {name: [] for name, _ in cases}
        for _ in range(RUNS):
            for name, argv in cases:
                times[name].append(timed(argv, cwd=project))
        print(f"per command, {RUNS} runs each:")
        base = times[cases[0][0]]
        for name, _ in cases:
            line(name, times[name], None if name == cases[0][0] else base)


def phases(binary):
    """Where the time goes: the launcher started and refusing its arguments at once (the
    cost of one more process), and the probe (namespaces, file system, capabilities,
    Landlock and seccomp, then nothing run)."""
    small = os.path.join(os.path.dirname(binary), "harness9-sandbox")
    launcher = small if os.path.isfile(small) else binary
    cases = [("true, unconfined", ["true"]),
             ("launcher started, nothing done", [launcher, "__harness9-sandbox-exec", "--x"]),
             ("launcher probe: namespaces and confinement, nothing run",
              [launcher, "__harness9-sandbox-exec", "--probe"])]
    times = {name: [] for name, _ in cases}
    for _ in range(RUNS):
        for name, argv in cases:
            times[name].append(timed(argv))
    print(f"phases, {RUNS} runs each:")
    for name, _ in cases:
        line(name, times[name], None if name == cases[0][0] else times[cases[0][0]])


def per_session(binary):
    project = tempfile.mkdtemp()
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
        line("--sandbox off", off)
        line("workspace-write (default)", on, off)
    finally:
        server.terminate()


def main():
    args = sys.argv[1:]
    before = None
    if "--before" in args:
        i = args.index("--before")
        before = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    binary = os.path.abspath(args[0] if args else "target/release/harness9")
    per_command(binary, before)
    phases(binary)
    per_session(binary)


if __name__ == "__main__":
    main()
