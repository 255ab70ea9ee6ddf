"""Every curl example of README.md and docs/*.md run against the real binary and compared with
the answer the doc shows below it.

    tests/docs/examples_test.py BINARY SOURCE_DIR embedded
    tests/pg/with_pg.sh python3 tests/docs/examples_test.py BINARY SOURCE_DIR database

Each file's examples run in order, as a reader would type them, against a fresh server (in
database mode a fresh, migrated and seeded database too). The rules the docs are written to:

* An example is a ```bash or ```sh block holding a curl command. It runs in bash in a scratch
  directory (holding `tests/` and `schema/` of the source tree), with `localhost:8080` meaning
  the server under test and `gpucost` on PATH. Keys come from the environment: an admin key in
  GPUCOST_ADMIN_KEY and a read key named "research" in GPUCOST_READ_KEY (database mode), both of
  team `default`. A block that needs a file writes it first (a heredoc).
* An HTML comment on the line before a block says how it is meant:
  `<!-- example: database -->` or `<!-- example: embedded -->` runs it in that mode only;
  `<!-- example: not run: REASON -->` never runs it (servers, containers, builds, benchmarks,
  synopses); the test counts those and prints the reasons. A shell block without curl must
  carry `not run`, so that every block is accounted for.
* Status: a curl command whose line ends in a comment starting with a status (`# 204`,
  `# 404 ...`) must answer that status; every other curl command a 2xx. A block that exits
  non-zero (a failed `grep`, say) fails.
* Answers: a ```json or ```text block right after an example (only blank lines between), or
  one marked `<!-- answer: 1, 3 -->` anywhere after it, shows answers of that example's curl
  commands: the marked ones (1-based, in the block's order) or, unmarked, the last ones, one
  per JSON value shown. A shown JSON value matches the served one when
  - every member shown is present with a matching value; members not shown are not compared
    (`...` or `…` among the members says the answer is trimmed, and is optional);
  - an array shown without `...` has exactly the elements shown, each matching; with `...` the
    elements shown appear in the served array in that order;
  - a number matches when it agrees to the decimal places shown (55.04 matches 55.0400001,
    105100 does not match 105139);
  - a string matches exactly, except that `...` or `…` in it stands for any text (so
    `"2026-11-27T…"` or `"… Owned capacity …"`); `…` alone as a value matches anything
    (timestamps, request ids, keys, catalog versions that differ between the modes).
  A ```text answer whose first line names comma-separated columns is CSV: each column shown
  must be served, with the rows shown, each cell matching as a JSON value does.
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contract"))
import serve  # noqa: E402

FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(example|answer):\s*(.*?)\s*-->\s*$")
SHELL_LANGS = ("bash", "sh")
ANSWER_LANGS = ("json", "text")
ELLIPSES = ("...", "\u2026")


class Any:
    """`…` or `...` as a whole value: anything matches."""


class Trim:
    """`…` or `...` in an array or object: more was served than is shown."""


class Num:
    def __init__(self, text):
        self.value = float(text)
        digits = text.lower().split("e")[0]
        self.decimals = len(digits.split(".")[1]) if "." in digits else 0
        exponent = int(text.lower().split("e")[1]) if "e" in text.lower() else 0
        self.decimals = max(0, self.decimals - exponent)


# --- the trimmed JSON the docs show ---------------------------------------------------------

class ShownJson:
    """JSON plus `...`/`…` where members, elements or a value were left out."""

    def __init__(self, text):
        self.text, self.at = text, 0

    def values(self):
        out = []
        while self.skip_space() < len(self.text):
            out.append(self.value())
        return out

    def skip_space(self):
        while self.at < len(self.text) and self.text[self.at] in " \t\r\n,":
            self.at += 1
        return self.at

    def ellipsis(self):
        for e in ELLIPSES:
            if self.text.startswith(e, self.at):
                self.at += len(e)
                return True
        return False

    def value(self):
        self.skip_space()
        c = self.text[self.at]
        if self.ellipsis():
            return Any()
        if c == "{":
            return self.members()
        if c == "[":
            return self.elements()
        if c == '"':
            return self.string()
        m = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?").match(self.text, self.at)
        if m:
            self.at = m.end()
            return Num(m.group(0))
        for word, v in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return v
        raise ValueError(f"not JSON at {self.text[self.at:self.at + 40]!r}")

    def string(self):
        end = self.at + 1
        while self.text[end] != '"':
            end += 2 if self.text[end] == "\\" else 1
        s = json.loads(self.text[self.at:end + 1])
        self.at = end + 1
        return s

    def members(self):
        self.at += 1
        out = {}
        while self.skip_space() < len(self.text) and self.text[self.at] != "}":
            if self.ellipsis():
                out[Trim] = True
                continue
            key = self.string()
            self.skip_space()
            if self.text[self.at] != ":":
                raise ValueError(f"no ':' after {key!r}")
            self.at += 1
            out[key] = self.value()
        self.at += 1
        return out

    def elements(self):
        self.at += 1
        out = []
        while self.skip_space() < len(self.text) and self.text[self.at] != "]":
            before = self.at
            v = self.value()
            is_trim = isinstance(v, Any) or (v in ELLIPSES and self.text[before] == '"')
            out.append(Trim if is_trim else v)
        self.at += 1
        return out


def mismatches(shown, served, path="$"):
    """What differs between a shown value and the served one, by the rules above."""
    if isinstance(shown, Any):
        return []
    if isinstance(shown, dict):
        if not isinstance(served, dict):
            return [f"{path}: an object is shown, {json.dumps(served)[:80]} was served"]
        out = []
        for key, value in shown.items():
            if key is Trim:
                continue
            if key not in served:
                out.append(f"{path}.{key}: shown, not served")
            else:
                out += mismatches(value, served[key], f"{path}.{key}")
        return out
    if isinstance(shown, list):
        if not isinstance(served, list):
            return [f"{path}: an array is shown, {json.dumps(served)[:80]} was served"]
        wanted = [v for v in shown if v is not Trim]
        if len(wanted) == len(shown):
            if len(shown) != len(served):
                return [f"{path}: {len(shown)} elements shown, {len(served)} served"]
            out = []
            for i, (a, b) in enumerate(zip(shown, served)):
                out += mismatches(a, b, f"{path}[{i}]")
            return out
        at = 0
        for i, value in enumerate(wanted):
            while at < len(served) and mismatches(value, served[at], path):
                at += 1
            if at == len(served):
                return [f"{path}: shown element {i} ({short(value)}) not served in that order"]
            at += 1
        return []
    if isinstance(shown, Num):
        if isinstance(served, bool) or not isinstance(served, (int, float)):
            return [f"{path}: {shown.value} shown, {json.dumps(served)} served"]
        tolerance = 0.5 * 10 ** -shown.decimals + 1e-9 * abs(shown.value)
        if abs(served - shown.value) > tolerance:
            return [f"{path}: {shown.value} shown, {served!r} served"]
        return []
    if isinstance(shown, str):
        if not isinstance(served, str) or not re.fullmatch(text_pattern(shown), served, re.S):
            return [f"{path}: {shown!r} shown, {json.dumps(served)[:300]} served"]
        return []
    if type(shown) is not type(served) or shown != served:
        return [f"{path}: {json.dumps(shown)} shown, {json.dumps(served)[:80]} served"]
    return []


def text_pattern(shown):
    parts = re.split(r"\.\.\.|\u2026", shown)
    return ".*".join(re.escape(p) for p in parts)


def short(value):
    return repr(value)[:80]


def csv_mismatches(shown_text, served_text):
    shown = list(csv.DictReader(io.StringIO(shown_text.strip() + "\n")))
    served = list(csv.DictReader(io.StringIO(served_text)))
    if not served:
        return ["no CSV rows served"]
    missing = [c for c in shown[0] if c not in served[0]] if shown else []
    if missing:
        return [f"columns shown, not served: {missing}"]
    if len(shown) != len(served):
        return [f"{len(shown)} rows shown, {len(served)} served"]
    out = []
    for i, (a, b) in enumerate(zip(shown, served)):
        for column, cell in a.items():
            value = ShownJson(cell).values()[0] if re.fullmatch(r"-?[\d.eE+-]+", cell) else cell
            out += mismatches(value, parse_cell(b[column]), f"row {i + 1}.{column}")
    return out


def parse_cell(cell):
    try:
        return float(cell)
    except ValueError:
        return cell


def check_rules():
    """The comparison rules on known cases, so that a matcher that lets everything through
    fails here rather than passing every doc."""
    def differs(shown, served):
        return bool(mismatches(ShownJson(shown).values()[0], served))
    cases = [
        ('{"a": 55.04}', {"a": 55.0400001, "b": 1}, False),
        ('{"a": 105100}', {"a": 105139}, True),
        ('{"a": -3266.0999999999995}', {"a": -3266.1}, False),
        ('{"a": 1.0}', {"a": 1.2}, True),
        ('{"a": 1}', {"a": "1"}, True),
        ('{"a": "x"}', {}, True),
        ('{"a": …, "b": "2026-…Z"}', {"a": [1], "b": "2026-11-27T06:51:00Z"}, False),
        ('{"a": "… days ago"}', {"a": "553 days ago"}, False),
        ('{"a": "540 days ago"}', {"a": "553 days ago"}, True),
        ('[1, 2]', [1, 2, 3], True),
        ('[1, ..., 3]', [1, 2, 3], False),
        ('[3, ..., 1]', [1, 2, 3], True),
        ('{"a": [{"id": "x", ...}, ...], ...}', {"a": [{"id": "x", "n": 1}, {"id": "y"}]}, False),
        ('{"a": null}', {"a": 0}, True),
        ('{"a": true}', {"a": 1}, True),
    ]
    for shown, served, expected in cases:
        assert differs(shown, served) == expected, (shown, served)
    assert csv_mismatches("a,b\n1,x\n", "a,b,c\n1.0000001,x,z\n") == []
    assert csv_mismatches("a,b\n2,x\n", "a,b,c\n1,x,z\n") != []


# --- the docs' blocks ------------------------------------------------------------------------

class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        self.kind, self.how = (marker or (None, ""))
        self.commands = shell_commands(text) if lang in SHELL_LANGS else []
        self.curls = [c for c in self.commands if re.search(r"(^|[|;&(]\s*)curl\s", c[0])]
        self.answers = []   # (curl index, shown text, lang)

    def where(self):
        return f"{self.path}:{self.line}"

    def words(self):
        return [w.strip() for w in self.how.split(",")] if self.kind == "example" else []

    def mode(self):
        if self.how.startswith("not run") and self.kind == "example":
            return "not run"
        modes = [w for w in self.words() if w in ("database", "embedded")]
        return modes[0] if modes else "both"

    def fresh(self):
        return "fresh" in self.words()


def shell_commands(text):
    """The block's commands as (text without comments, trailing comment): a newline ends one
    outside quotes and unless escaped, as bash reads it; a here-document's lines are data."""
    commands, current, comment, quote, i = [], "", "", None, 0
    while i < len(text):
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", current) if text[i] == "\n" and not quote else None
        if heredoc:
            end = re.compile(rf"^\s*{heredoc.group(1)}$", re.M).search(text, i + 1)
            commands.append((current.strip(), comment))
            current, comment = "", ""
            i = end.end() if end else len(text)
            continue
        c = text[i]
        if quote:
            current += c
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                current += text[i + 1]
                i += 1
        elif c in "'\"":
            quote = c
            current += c
        elif c == "\\" and text[i + 1:i + 2] == "\n":
            current += " "
            i += 1
        elif c == "#" and (not current or current[-1] in " \t\n"):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            comment = text[i + 1:end].strip()
            i = end - 1
        elif c == "\n":
            if current.strip():
                commands.append((current.strip(), comment))
            current, comment = "", ""
        else:
            current += c
        i += 1
    if current.strip():
        commands.append((current.strip(), comment))
    return commands


def read_blocks(path, label):
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, marker, i = [], None, 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            marker = (m.group(1), m.group(2))
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if fence and fence.group(1):
            end = i + 1
            while not lines[end].startswith("```"):
                end += 1
            blocks.append(Block(label, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n",
                                marker))
            blocks[-1].follows_blank = all(not l.strip() for l in lines[prev_end(blocks, lines):i])
            blocks[-1].end = end
            marker, i = None, end + 1
            continue
        if lines[i].strip():
            marker = None
        i += 1
    attach_answers(blocks)
    return blocks


def prev_end(blocks, lines):
    return blocks[-2].end + 1 if len(blocks) > 1 else 0


def attach_answers(blocks):
    example = None
    for block in blocks:
        if block.curls:
            example = block
            continue
        if example is None or block.lang not in ANSWER_LANGS:
            continue
        marked = block.kind == "answer"
        adjacent = block.follows_blank and blocks[blocks.index(block) - 1] is example
        if not (marked or adjacent):
            continue
        if block.lang == "json":
            shown = ShownJson(block.text).values()
        else:
            shown = [block.text]
        if marked:
            which = [int(n) - 1 for n in re.findall(r"\d+", block.how)]
        else:
            which = list(range(max(0, len(example.curls) - len(shown)), len(example.curls)))
        for index, value in zip(which, shown):
            example.answers.append((index, value, block.lang, block.where()))


# --- running ---------------------------------------------------------------------------------

CURL_WRAPPER = r"""
curl() {
  local n args=() a
  n=$(( $(cat "$EXAMPLE_LOG/count") + 1 )); echo "$n" > "$EXAMPLE_LOG/count"
  for a in "$@"; do
    a=${a//localhost:8080/127.0.0.1:$EXAMPLE_PORT}
    a=${a//127.0.0.1:8080/127.0.0.1:$EXAMPLE_PORT}
    args+=("$a")
  done
  command curl "${args[@]}" -o "$EXAMPLE_LOG/$n.body" -w '%{response_code}' > "$EXAMPLE_LOG/$n.status"
  echo $? > "$EXAMPLE_LOG/$n.rc"
  cat "$EXAMPLE_LOG/$n.body"
}
compgen -v > "$EXAMPLE_LOG/initial"
[ -f "$EXAMPLE_STATE" ] && source "$EXAMPLE_STATE"
keep_variables() {
  for __v in $(compgen -v); do
    [[ $__v == __v ]] || grep -qx "$__v" "$EXAMPLE_LOG/initial" || declare -p "$__v"
  done > "$EXAMPLE_STATE"
}
trap keep_variables EXIT
"""


def run_block(block, port, workdir, env):
    log = tempfile.mkdtemp(dir=workdir, prefix=".log")
    with open(os.path.join(log, "count"), "w") as f:
        f.write("0")
    script = CURL_WRAPPER + block.text
    done = subprocess.run(["bash", "-c", script], cwd=workdir, capture_output=True, text=True,
                          timeout=120, env={**env, "EXAMPLE_LOG": log, "EXAMPLE_PORT": str(port),
                               "EXAMPLE_STATE": os.path.join(workdir, ".variables")})
    calls = int(open(os.path.join(log, "count")).read())
    problems = []
    if done.returncode != 0:
        problems.append(f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
    if calls != len(block.curls):
        problems.append(f"{calls} curl calls made, {len(block.curls)} in the block")
    answers = []
    for n in range(1, calls + 1):
        status = open(os.path.join(log, f"{n}.status")).read().strip()
        rc = open(os.path.join(log, f"{n}.rc")).read().strip()
        body = open(os.path.join(log, f"{n}.body"), errors="replace").read() \
            if os.path.exists(os.path.join(log, f"{n}.body")) else ""
        answers.append((int(status or 0), body))
        command, comment = block.curls[n - 1] if n <= len(block.curls) else ("?", "")
        expected = re.match(r"(\d{3})\b", comment)
        ok = int(status or 0) == int(expected.group(1)) if expected else status.startswith("2")
        if rc != "0" or not ok:
            want = expected.group(1) if expected else "2xx"
            problems.append(f"curl {n} answered {status} (curl exit {rc}), {want} expected: "
                            f"{command[:100]} -> {body.strip()[:300]}")
    for index, shown, lang, where in block.answers:
        if index >= len(answers):
            problems.append(f"answer at {where}: no curl {index + 1}")
            continue
        body = strip_headers(answers[index][1])
        if lang == "json":
            try:
                served = json.loads(body)
            except ValueError:
                problems.append(f"answer at {where}: curl {index + 1} served no JSON: {body[:200]}")
                continue
            found = mismatches(shown, served)
        elif "," in shown.split("\n")[0]:
            found = csv_mismatches(shown, body)
        else:
            found = [] if re.fullmatch(text_pattern(shown.strip()), body.strip(), re.S) else \
                [f"text shown differs from {body.strip()[:200]!r}"]
        problems += [f"answer at {where}, curl {index + 1}: {m}" for m in found[:8]]
    return problems


def strip_headers(body):
    if body.startswith("HTTP/"):
        return body.split("\r\n\r\n", 1)[-1]
    return body


def gpucost(binary, env, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"gpucost {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip().split("\n")[-1]


def template_database(binary):
    """Migrated, seeded and holding the keys the docs use: every fresh database is a copy of
    it (CREATE DATABASE ... TEMPLATE), so each file starts as a new deployment does, without
    migrating and seeding again. Returns the keys."""
    psql(os.environ["DATABASE_URL"], "CREATE DATABASE examples_template")
    env = {**os.environ, "DATABASE_URL": database_url("examples_template")}
    gpucost(binary, env, "migrate")
    gpucost(binary, env, "seed")
    return {
        "GPUCOST_ADMIN_KEY": gpucost(binary, env, "apikey", "create", "--scope", "admin",
                                     "--name", "pricing"),
        "GPUCOST_READ_KEY": gpucost(binary, env, "apikey", "create", "--scope", "read",
                                    "--name", "research"),
    }


def fresh_database(name, keys, env):
    """A database of its own for one file (or a block marked `fresh`)."""
    psql(env["DATABASE_URL"], f"CREATE DATABASE examples_{name} TEMPLATE examples_template")
    return {**env, **keys, "DATABASE_URL": database_url(f"examples_{name}")}


def database_url(name):
    return os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + name


def psql(url, sql):
    client = os.path.join(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"), "psql")
    subprocess.run([client if os.path.exists(client) else "psql", url, "-qc", sql], check=True,
                   capture_output=True, timeout=60)


class Session:
    """A fresh server (in database mode on a fresh database) and a scratch directory: what a
    reader starts with at the top of a file, or at a block marked `fresh`."""

    def __init__(self, binary, source, mode, name, keys):
        self.workdir = tempfile.mkdtemp(prefix="gpucost-examples-")
        for link in ("tests", "schema"):
            os.symlink(os.path.join(source, link), os.path.join(self.workdir, link))
        env = {k: v for k, v in os.environ.items()
               if k not in ("GPUCOST_ADMIN_KEY", "GPUCOST_READ_KEY")}
        env["PATH"] = os.path.dirname(os.path.abspath(binary)) + ":" + env["PATH"]
        if mode == "database":
            env = fresh_database(name, keys, env)
        else:
            env.pop("DATABASE_URL", None)
        self.env = env
        self.log = open(os.path.join(self.workdir, ".server.log"), "w")
        server_env = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            self.proc, self.port = serve.start(binary, embedded=(mode == "embedded"),
                                               log=self.log)
        finally:
            os.environ.clear()
            os.environ.update(server_env)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.workdir, ignore_errors=True)


def run_file(binary, source, label, blocks, mode, index, counts, keys):
    runnable = [b for b in blocks if b.curls and b.mode() in ("both", mode)]
    problems, session = [], None
    try:
        for block in runnable:
            if session is None or block.fresh():
                if session:
                    session.stop()
                session_started = time.time()
                session = Session(binary, source, mode, f"{index}_{block.line}", keys)
                print(f"     a fresh server for {block.where()}: "
                      f"{time.time() - session_started:.1f} s")
                if session.port is None:
                    return [f"{block.where()}: the server did not start: "
                            f"{open(session.log.name).read()[-500:]}"]
            block_started = time.time()
            found = run_block(block, session.port, session.workdir, session.env)
            block.seconds = time.time() - block_started
            counts["run"] += 1
            counts["curls"] += len(block.curls)
            counts["answers"] += len(block.answers)
            if found:
                counts["failed"] += 1
                counts["failed curls"] += len({p.split(":")[0] for p in found
                                              if p.startswith("curl ")})
                problems += [f"{block.where()}: {p}" for p in found]
                print(f"FAIL {block.where()}")
            else:
                print(f"ok   {block.where()} ({len(block.curls)} curl, "
                      f"{len(block.answers)} answers compared, {block.seconds:.1f} s)")
    finally:
        if session:
            session.stop()
    return problems


def main():
    binary, source, mode = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    check_rules()
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(source, "docs"))
                                   if f.endswith(".md"))
    counts = {"run": 0, "curls": 0, "answers": 0, "failed": 0, "failed curls": 0,
              "other mode": 0}
    not_run, problems = {}, []
    started = time.time()
    keys = template_database(binary) if mode == "database" else {}
    for index, label in enumerate(files):
        blocks = read_blocks(os.path.join(source, label), label)
        for block in blocks:
            if block.lang not in SHELL_LANGS:
                continue
            if block.mode() == "not run":
                reason = block.how.split(":", 1)[-1].strip() if ":" in block.how else ""
                not_run.setdefault(reason or "(no reason given)", []).append(block.where())
                if not reason:
                    problems.append(f"{block.where()}: `not run` without a reason")
            elif not block.curls:
                problems.append(f"{block.where()}: a shell block without curl: mark it "
                                f"<!-- example: not run: REASON --> or make it an example")
            elif block.mode() not in ("both", mode):
                counts["other mode"] += 1
        problems += run_file(binary, source, label, blocks, mode, index, counts, keys)
    print(f"\n{mode} mode, {time.time() - started:.1f} s: {counts['run']} example blocks run "
          f"({counts['curls']} curl commands, {counts['answers']} answers compared), "
          f"{counts['failed']} failed ({counts['failed curls']} curl commands with another "
          f"status); {counts['other mode']} for the other mode only; "
          f"{sum(len(v) for v in not_run.values())} not run:")
    for reason, where in sorted(not_run.items()):
        print(f"  {len(where)} x {reason}: {', '.join(where)}")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
