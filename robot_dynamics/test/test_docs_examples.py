"""Every Python block of README.md and docs/*.md runs as written: each document's blocks in order in one
namespace (a block may use what the blocks before it defined), started from a temporary directory,
not the repository's root. A failing block fails the test naming the document and the block's line.

Two marks, an HTML comment on the line just before a block's fence (visible in the Markdown source
only), say how a block runs otherwise:
- `<!-- not run: <why> -->`: not run (e.g. it needs the demo's extras or a running simulator);
- `<!-- with the node running: python -m robot_dynamics.ros --ros-args ... -->`: the block talks to a
  node over DDS; the test marked `ros` starts that command (this interpreter for `python`), runs the
  document's blocks in order with it, and stops it. The library test runs the document without them.
Bash and other blocks are not run."""
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCUMENTS = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
MARK = re.compile(r"^\s*<!--\s*(not run|with the node running):\s*(.*?)\s*-->\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
NODE_STOP_TIMEOUT = 10.0     # s a node gets to exit after SIGINT before it is killed


@dataclass
class Block:
    document: str      # path relative to the repository
    line: int          # the line of its opening fence (1-based)
    language: str
    code: str
    mark: str = None   # "not run" or "with the node running"
    detail: str = ""   # the mark's reason or command

    @property
    def where(self):
        return f"{self.document}, the block at line {self.line}"


def blocks(path):
    """The fenced blocks of a Markdown file, with the mark on the line before each (if any)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    found, i, name = [], 0, os.path.relpath(path, ROOT)
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, ticks, language = fence.groups()
        end = next((k for k in range(i + 1, len(lines)) if lines[k].strip().startswith(ticks)), None)
        assert end is not None, f"{name}: the block at line {i + 1} is never closed"
        body = [line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:end]]
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark = MARK.match(before)
        found.append(Block(name, i + 1, language.lower(), "\n".join(body) + "\n",
                           *(mark.groups() if mark else ())))
        i = end + 1
    return found


def python_blocks(path):
    return [b for b in blocks(path) if b.language in ("python", "py", "python3")]


def run_document(path, skip_node_blocks):
    """Run the document's Python blocks in order in one namespace from a temporary directory;
    pytest.fail naming the block on the first error."""
    namespace = {"__name__": "__main__"}
    ran = 0
    with tempfile.TemporaryDirectory(prefix="docs_examples_") as folder:
        here = os.getcwd()
        os.chdir(folder)
        try:
            for block in python_blocks(path):
                if block.mark == "not run" or (skip_node_blocks and block.mark == "with the node running"):
                    continue
                failure = run_block(block, namespace)
                if failure:
                    pytest.fail(failure, pytrace=False)
                ran += 1
        finally:
            os.chdir(here)
    return ran


def run_block(block, namespace):
    """Run one block in the namespace: None, or what failed, naming the document's line."""
    name = f"{block.document}:{block.line}"
    try:
        exec(compile(block.code, name, "exec"), namespace)
    except BaseException as exc:    # noqa: BLE001 (SystemExit too: a block must not exit)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == name]
        line = (f", line {block.line + frames[-1].lineno}: {block.code.splitlines()[frames[-1].lineno - 1].strip()}"
                if frames else "")
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])
        return f"{block.where}{line} raised {type(exc).__name__}: {exc}\n{detail}"
    return None


def prose(path):
    """The document's lines outside fenced blocks (numbered from 1)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    inside = set()
    for block in blocks(path):
        inside.update(range(block.line, block.line + block.code.count("\n") + 2))
    return [(i + 1, line) for i, line in enumerate(lines) if i + 1 not in inside]


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def names(paths):
    return [os.path.relpath(p, ROOT) for p in paths]


def test_the_documents_are_found():
    assert os.path.isfile(os.path.join(ROOT, "README.md")) and len(DOCUMENTS) >= 5, DOCUMENTS


@pytest.mark.parametrize("path", DOCUMENTS, ids=names(DOCUMENTS))
def test_every_mark_says_why_and_stands_before_a_python_block(path):
    marked = [b for b in blocks(path) if b.mark]
    for block in marked:
        assert block.language == "python", f"{block.where}: '{block.mark}' before a {block.language or 'plain'} block"
        assert block.detail, f"{block.where}: '{block.mark}' without saying why (or which node)"
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    stray = [i + 1 for i, line in enumerate(lines) if MARK.match(line)
             and not any(b.line > i + 1 and not any(s.strip() for s in lines[i + 1:b.line - 1]) for b in marked)]
    assert not stray, f"{os.path.relpath(path, ROOT)}: marks not followed by a block at lines {stray}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=names(DOCUMENTS))
def test_every_link_points_to_a_file_or_heading_that_exists(path):
    lines = prose(path)
    headings = {anchor(line.lstrip("#")) for _, line in lines if line.startswith("#")}
    broken = []
    for number, line in lines:
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):           # http:, https:, mailto:
                continue
            file, _, fragment = target.partition("#")
            if file and not os.path.exists(os.path.join(os.path.dirname(path), file)):
                broken.append(f"line {number}: {target} (no such file)")
            elif not file and fragment not in headings:
                broken.append(f"line {number}: {target} (no such heading)")
    assert not broken, f"{os.path.relpath(path, ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("path", DOCUMENTS, ids=names(DOCUMENTS))
def test_the_python_blocks_run_as_written(path):
    run_document(path, skip_node_blocks=True)


NODE_DOCUMENTS = [p for p in DOCUMENTS if any(b.mark == "with the node running" for b in python_blocks(p))]


def node_command(text):
    """The marked command, `python` being this interpreter; it must start the dynamics node."""
    words = shlex.split(text)
    assert words[:3] == ["python", "-m", "robot_dynamics.ros"], f"not a node command: {text!r}"
    return [sys.executable] + words[1:]


@pytest.mark.ros
@pytest.mark.parametrize("path", NODE_DOCUMENTS, ids=names(NODE_DOCUMENTS))
def test_the_node_blocks_run_with_the_node(path):
    """The document's blocks in order, each marked node started (once per command) before its block;
    every node stopped at the end (SIGINT, as Ctrl-C) and checked to exit cleanly."""
    pytest.importorskip("rclpy")
    commands = list(dict.fromkeys(b.detail for b in python_blocks(path) if b.mark == "with the node running"))
    nodes = []
    try:
        for command in commands:
            log = tempfile.TemporaryFile()
            nodes.append((subprocess.Popen(node_command(command), stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True), log))
        assert run_document(path, skip_node_blocks=False)
    finally:
        outputs = []
        for process, log in nodes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                process.wait(NODE_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            log.seek(0)
            outputs.append((process.returncode, log.read().decode(errors="replace")[-2000:]))
            log.close()
    for code, output in outputs:
        assert code == 0, f"the node exited with code {code}:\n{output}"
