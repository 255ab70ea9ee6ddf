"""Starts the real gpucost binary on a free loopback port for the Python tests."""
import json
import os
import subprocess
import time


def start(binary, extra_args=(), embedded=True, timeout_s=20, stdout=None, log=None,
          access_log=False):
    """Runs `binary --port 0 [--access-log false] *extra_args` and reads the port from its
    `listening` log line. `embedded` drops DATABASE_URL from the environment. stderr is a pipe
    unless `log` (an open file) is given: a test that keeps the server's log, or one whose
    access log would fill an undrained pipe, passes one. Returns (process, port); port is None
    (and the process killed) when no port was logged in time."""
    env = {k: v for k, v in os.environ.items() if not (embedded and k == "DATABASE_URL")}
    args = [binary, "--port", "0", *([] if access_log else ["--access-log", "false"]), *extra_args]
    proc = subprocess.Popen(args, stdout=stdout, stderr=log or subprocess.PIPE, text=True,
                            env=env)
    lines = _lines_of(proc) if log is None else _lines_of_file(proc, log.name, timeout_s)
    deadline = time.time() + timeout_s
    for line in lines:
        if time.time() > deadline:
            break
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "listening":
            return proc, entry["port"]
    proc.kill()
    return proc, None


def _lines_of(proc):
    """The server's stderr lines, as they come, until it closes."""
    while line := proc.stderr.readline():
        yield line


def _lines_of_file(proc, path, timeout_s):
    """The log file's lines, as they are written, until the server exits or time runs out."""
    deadline = time.time() + timeout_s
    seen = 0
    while time.time() < deadline:
        with open(path) as f:
            lines = f.readlines()
        yield from lines[seen:]
        seen = len(lines)
        if proc.poll() is not None:
            return
        time.sleep(0.05)
