"""One results page per experiment: a script's figures under a fixed header.

Every ``docs/make_*.py`` script keeps its figures in JSON under ``docs/results/`` and renders them into a
Markdown page, ``docs/results/<experiment>.md``, that opens with the same header:

- **Reproduce:** the command that reruns the experiment;
- **Figures:** the JSON files the page is rendered from;
- **Commit:** the commit (``git rev-parse --short HEAD``) of the code that produced the figures;
- **Machine:** the cores, CPU model and Python and numpy versions of the run;
- **This page:** the command that renders it again from the JSON, running nothing.

A run records its :func:`provenance` in its JSON, and the page reads the header from there, so a page
rendered again later names the run's commit and machine, not the renderer's. Figures kept before runs
recorded their provenance say so ("not recorded in …"): the header never names a commit or a machine that
the JSON does not record.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
#: The first line of every generated page (tests/docs/test_results_pages.py looks for it).
MARK = "<!-- results page: rendered from its JSON by the script named below; edit the script, not this page -->"


def _git(*argv: str) -> str | None:
    try:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def commit() -> str | None:
    """``git rev-parse --short HEAD``, with ``+changes`` when tracked files differ from it (None outside git)."""
    head = _git("rev-parse", "--short", "HEAD")
    if head is None:
        return None
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return head + ("+changes" if dirty else "")


def cpu_model() -> str:
    """The CPU model as the operating system names it (``/proc/cpuinfo`` on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict[str, Any]:
    """Cores, CPU model, the Python and numpy versions of this process, and the one-minute load average when
    the run started (where the system reports one): the context of any time the run measured."""
    import numpy

    found: dict[str, Any] = {"cores": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
                             "numpy": numpy.__version__}
    try:
        found["load_average"] = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        pass
    return found


def provenance(argv: list[str] | None = None) -> dict[str, Any]:
    """What a run records in its JSON: the command that reproduces it (this script with ``argv``, by default
    the process's own arguments), the commit and the machine."""
    script = Path(sys.argv[0])
    try:
        name = str(script.resolve().relative_to(ROOT))
    except ValueError:
        name = script.name
    args = sys.argv[1:] if argv is None else argv
    return {"command": shlex.join(["python", name, *args]), "commit": commit(), "machine": machine()}


def recorded(document: Any) -> dict[str, Any]:
    """The provenance a JSON document records: its ``provenance`` (written by :func:`provenance`), or the
    ``source`` commit and ``versions`` that docs/make_results.py and the runner recorded; {} if none."""
    if not isinstance(document, Mapping):
        return {}
    if isinstance(document.get("provenance"), Mapping):
        return dict(document["provenance"])
    found: dict[str, Any] = {}
    source = document.get("source")
    if isinstance(source, Mapping) and source.get("commit"):
        found["commit"] = str(source["commit"])[:7] + ("+changes" if source.get("uncommitted_changes") else "")
    versions = document.get("versions")
    if isinstance(versions, Mapping):
        found["machine"] = {k: versions[k] for k in ("python", "numpy") if k in versions}
    return found


def describe_machine(found: Mapping[str, Any] | None) -> str:
    """"2 cores, <CPU>, Python 3.11.7, numpy 2.4.6", naming what is not recorded."""
    found = found or {}
    parts, missing = [], []
    if found.get("cores"):
        parts.append(f"{found['cores']} cores")
    else:
        missing.append("cores")
    if found.get("cpu"):
        parts.append(str(found["cpu"]))
    else:
        missing.append("CPU model")
    for key, name in (("python", "Python"), ("numpy", "numpy")):
        if found.get(key):
            parts.append(f"{name} {found[key]}")
        else:
            missing.append(f"{name} version")
    if not parts:
        return "not recorded"
    text = ", ".join(parts) + (f" ({', '.join(missing)} not recorded)" if missing else "")
    if found.get("load_average") is not None:
        text += f"; load average {found['load_average']} when the run started"
    return text


def _code(path: Path) -> str:
    try:
        return f"`{path.resolve().relative_to(ROOT)}`"
    except ValueError:
        return f"`{path.name}`"


def header(title: str, *, reproduce: str | Sequence[str], render: str, figures: Iterable[Path],
           runs: Iterable[Mapping[str, Any]]) -> str:
    """The fixed header of a results page. ``reproduce`` is the command (or the commands, one per figures
    file) that reruns the experiment; ``runs`` are the provenance records of the figures (one per JSON, or one
    per cell; :func:`recorded`). The commands the runs recorded are shown when every run recorded one;
    commits and machines are named only as recorded, and where none is the header says so."""
    files = [Path(f) for f in figures]
    records = list(runs)
    commits = sorted({str(r["commit"]) for r in records if r.get("commit")})
    machines = sorted({describe_machine(r["machine"]) for r in records if r.get("machine")})
    if records and all(r.get("command") for r in records):
        commands = sorted({str(r["command"]) for r in records})
    else:
        commands = [reproduce] if isinstance(reproduce, str) else list(reproduce)
    shown_commands = "; ".join(f"`{c}`" for c in commands)
    unrecorded = sum(1 for r in records if not r.get("commit"))
    listed = ", ".join(_code(f) for f in files)
    if not commits:
        commit_line = "not recorded in the JSON above (the figures are regenerated by the command above)"
    else:
        shown = ", ".join(f"`{c}`" for c in commits[:12]) + (f" and {len(commits) - 12} more" if len(commits) > 12
                                                             else "")
        commit_line = shown + (f" ({unrecorded} of {len(records)} records name none)" if unrecorded else "")
        if len(commits) > 1:
            commit_line = f"recorded per run, {len(commits)} commits: " + commit_line
    machine_line = "; ".join(machines) if machines else "not recorded in the JSON above"
    lines = [MARK, "", f"# {title}", "",
             f"- **Reproduce:** {shown_commands}",
             f"- **Figures:** {listed}",
             f"- **Commit:** {commit_line}",
             f"- **Machine:** {machine_line}",
             f"- **This page:** rendered from the figures by `{render}` (it runs nothing)", ""]
    return "\n".join(lines) + "\n"


def write_page(path: Path, title: str, body: str, *, reproduce: str | Sequence[str], render: str,
               figures: Iterable[Path], runs: Iterable[Mapping[str, Any]]) -> Path:
    """Write the page: :func:`header`, then ``body`` (Markdown). Returns ``path``."""
    text = header(title, reproduce=reproduce, render=render, figures=figures, runs=runs) + body.rstrip() + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
