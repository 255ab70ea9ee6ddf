#!/usr/bin/env python3
"""Writes clang-tidy's batches: the given folders' .cpp files, eight to a translation unit.

clang-tidy's checks walk the whole AST of a translation unit, standard library, nlohmann's JSON
and cpp-httplib included, so one file at a time pays for those headers once per file: about 80 %
of clang_tidy's CPU time went to headers no finding may come from. A batch (one .cpp that
includes eight of one target's sources, compiled with that target's flags) pays once per eight,
as the presets' unity builds do; the sources are written to compile together (no two
files of one target share a name in an anonymous namespace), which the release build checks too.

Writes OUT_DIR/compile_commands.json and OUT_DIR/batch_N.cpp, and prints one line per run:
"batch PATH", or "alone PATH" for a source the build does not compile (clang-tidy reads it with
the build's database and the flags it infers).
  usage: clang_tidy_batches.py BUILD_DIR OUT_DIR FOLDER...
"""
import json
import os
import re
import shlex
import sys

FILES_PER_BATCH = 8  # CMake's default unity batch size, as the release build uses


def target_flags(entry):
    """The entry's compile command without its source and output: the flags of its target."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != entry["file"] and arg != "-c":
            kept.append(arg)
    return kept


def entry_sources(entry):
    """The sources an entry compiles: its file, or the files a unity build's unit includes (the
    dev preset's libraries compile eight sources to a unit, CMake's unity_N_cxx.cxx, which
    includes each by its absolute path)."""
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if not re.search(r"/Unity/unity_[0-9]+_cxx\.cxx$", path):
        return [path]
    with open(path, encoding="utf-8") as f:
        return [os.path.normpath(m.group(1)) for m in re.finditer(r'#include "([^"]+)"', f.read())]


def main():
    build_dir, out_dir, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.getcwd()
    wanted = set()
    for folder in folders:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            wanted.update(os.path.join(dirpath, n) for n in names if n.endswith(".cpp"))
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        database = json.load(f)
    groups = {}  # (directory, flags) -> sources, in the build's order
    seen = set()
    for entry in database:
        key = (entry["directory"], tuple(target_flags(entry)))
        for source in entry_sources(entry):
            if source not in wanted or source in seen:
                continue
            seen.add(source)
            groups.setdefault(key, []).append(source)
    os.makedirs(out_dir, exist_ok=True)
    commands, batches = [], []
    for (directory, flags), sources in groups.items():
        for start in range(0, len(sources), FILES_PER_BATCH):
            path = os.path.join(out_dir, f"batch_{len(batches)}.cpp")
            with open(path, "w", encoding="utf-8") as f:
                for source in sources[start:start + FILES_PER_BATCH]:
                    f.write(f'#include "{source}"  // NOLINT(bugprone-suspicious-include)\n')
            commands.append({"directory": directory, "file": path,
                             "arguments": list(flags) + ["-c", path]})
            batches.append(path)
    with open(os.path.join(out_dir, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(commands, f, indent=1)
    for path in batches:
        print("batch", path)
    for path in sorted(wanted - seen):
        print("alone", path)


if __name__ == "__main__":
    main()
