"""Ctrl-C, SIGTERM and SIGKILL of ``ptxc profile DIR`` (issue 27): the batch
stops promptly, its worker processes and the multiprocessing resource
tracker end with it (also when ptxc is SIGKILLed: workers die with their
parent), the semaphores of the pool leave /dev/shm, the modules that
finished are reported and the others marked as not profiled, exit 130.

The directory: a1.ptx and c1.ptx hold ``quick`` (3 instructions, no
branch: one CTA of 32 threads, 1 warp, runs 3 warp instructions and 96
thread instructions), b1.ptx and b2.ptx ``forever`` (a loop of 2**32
iterations; with --max-steps 10**12 it runs for hours). In input order,
two workers take a1 and b1; when a1 is done, b2 goes to the free worker,
and c1 waits. ptxc's stderr is a terminal (a pty), so the progress line
says when a1 is done ("1/4 modules done"): then the signal comes.

The forked processes of ``ptxc profile FILE --jobs N`` (ptxc/profile/fork.py)
also end when their parent is SIGKILLed.
"""
from __future__ import annotations

import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process tree and /dev/shm checks read /proc")

QUICK = """.version 8.0
.target sm_90
.address_size 64

.visible .entry quick()
.reqntid 32, 1, 1
{
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    add.u32 %r2, %r1, 1;
    ret;
}
"""

FOREVER = """.version 8.0
.target sm_90
.address_size 64

.visible .entry forever()
.reqntid 32, 1, 1
{
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOOP;
    ret;
}
"""

NAMES = ["a1", "b1", "b2", "c1"]
STATES = {"b1": "running", "b2": "running", "c1": "not started"}


@pytest.fixture
def modules(tmp_path):
    d = tmp_path / "modules"
    d.mkdir()
    for n in NAMES:
        (d / f"{n}.ptx").write_text(FOREVER if n.startswith("b") else QUICK)
    return d


class Batch:
    """``ptxc profile`` in its own session, stderr on a pty (the progress line)."""

    def __init__(self, args, cwd):
        master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "ptxc.cli", "profile",
                                      "--max-steps", str(10**12), *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=slave, cwd=cwd,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.err = b""

    def read_err(self, timeout: float) -> None:
        import select
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:            # the other side closed
                return
            if not chunk:
                return
            self.err += chunk

    def wait_for(self, text: bytes, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while text not in self.err:
            assert time.monotonic() < end and self.proc.poll() is None, self.err.decode()
            self.read_err(0.1)

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        out, _ = self.proc.communicate(timeout=timeout)
        self.read_err(0.5)
        os.close(self.master)
        err = self.err.decode(errors="replace").replace("\r\n", "\n").replace("\r\033[K", "\n")
        return self.proc.returncode, out.decode(), err

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def group(pgid: int) -> dict[int, str]:
    """{pid: state} of the processes of process group ``pgid``."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid:
            out[int(name)] = fields[0]
    return out


def semaphores(pids) -> set[int]:
    """Inodes of the /dev/shm semaphores these processes have mapped."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 6 and parts[5].startswith("/dev/shm/sem."):
                        found.add(int(parts[4]))
        except OSError:
            pass
    return found


def shm_inodes() -> set[int]:
    out = set()
    for name in os.listdir("/dev/shm"):
        try:
            out.add(os.stat(os.path.join("/dev/shm", name)).st_ino)
        except OSError:
            pass
    return out


def gone(pids, sems, timeout: float) -> tuple[list, set]:
    """Wait until none of ``pids`` runs (zombies are dead: an orphan's
    parent may not reap it) and no semaphore of ``sems`` is in /dev/shm;
    what is left at the end."""
    end = time.monotonic() + timeout
    while True:
        alive = []
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
                if stat[stat.rindex(")") + 2] != "Z":
                    alive.append(pid)
            except OSError:
                pass
        left = sems & shm_inodes()
        if (not alive and not left) or time.monotonic() > end:
            return alive, left
        time.sleep(0.1)


def start_and_catch(args, cwd):
    """Start the batch, wait until a1 is done (b1 and b2 running);
    (batch, its processes, their semaphores)."""
    batch = Batch(args, cwd)
    try:
        batch.wait_for(b"1/4 modules done")
        time.sleep(0.3)
        procs = group(batch.proc.pid)
        return batch, procs, semaphores(procs)
    except BaseException:
        batch.kill()
        raise


def interrupted_line(sig: str) -> str:
    return (f"ptxc: interrupted ({sig}): 1 of 4 modules profiled; 3 not profiled "
            f"(2 were running); the profiled ones are reported")


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_interrupt_stops_workers_and_reports_finished(modules, tmp_path, how):
    report = tmp_path / "r.sqlite"
    fmt = "json" if how == "SIGINT" else "text"
    batch, procs, sems = start_and_catch(["--jobs", 2, "--format", fmt, "--report", report,
                                          modules], tmp_path)
    try:
        others = [p for p in procs if p != batch.proc.pid]
        assert len(others) >= 3            # two workers and the resource tracker
        t0 = time.monotonic()
        if how == "SIGINT":                # Ctrl-C: the terminal signals the whole group
            os.killpg(batch.proc.pid, signal.SIGINT)
        else:
            os.kill(batch.proc.pid, signal.SIGTERM)
        status, out, err = batch.finish()
        seconds = time.monotonic() - t0
    finally:
        batch.kill()
    assert status == 130 and seconds < 10, err
    assert interrupted_line(how) in err.splitlines() and "Traceback" not in err
    alive, left = gone(others, sems, 5.0)
    assert alive == [] and left == set(), (procs, alive, left)
    files = [str(modules / f"{n}.ptx") for n in NAMES]
    if how == "SIGINT":
        doc = json.loads(out)
        assert doc["interrupted"] == "SIGINT"
        by_file = {m["file"]: m for m in doc["modules"]}
        assert list(by_file) == files
        for n, f in zip(NAMES, files):
            if n in STATES:
                when = "while it ran" if STATES[n] == "running" else "before it started"
                assert by_file[f] == {"file": f, "interrupted": STATES[n],
                                      "error": f"not profiled: interrupted (SIGINT) {when}"}
            else:
                p = by_file[f]["kernels"][0]["profile"]
                assert (p["inst_executed"], p["thread_inst_executed"]) == (3, 96)
        t = doc["total"]
        assert (t["modules"], t["modules_failed"], t["modules_interrupted"]) == (4, 0, 3)
        assert (t["inst_executed"], t["thread_inst_executed"]) == (3, 96)
    else:
        lines = out.splitlines()
        assert lines[1] == ("interrupted (SIGTERM): 1 of 4 modules profiled; 3 not profiled "
                            "(2 were running); the profiled ones are reported")
        assert lines[-4:] == ["not profiled, interrupted (3):", f"  {files[1]}: running",
                              f"  {files[2]}: running", f"  {files[3]}: not started"]
        rows = [line.split() for line in lines if line.startswith(str(modules))]
        assert [r[1] for r in rows] == ["quick", "total", "(not", "(not", "(not"]
        grand = next(line for line in lines if line.startswith("(grand total)"))
        assert "4 modules, 3 not profiled; 1 of 1 ran" in grand
    db = sqlite3.connect(report)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        assert (meta["interrupted"], meta["modules"], meta["modules_interrupted"]) == \
            (how, "4", "3")
        assert [tuple(r) for r in db.execute("SELECT file, status FROM modules ORDER BY id")] == \
            [(f, "interrupted" if n in STATES else "ok") for n, f in zip(NAMES, files)]
    finally:
        db.close()


def test_sigkill_leaves_no_worker_and_no_semaphore(modules, tmp_path):
    batch, procs, sems = start_and_catch(["--jobs", 2, modules], tmp_path)
    try:
        others = [p for p in procs if p != batch.proc.pid]
        assert len(others) >= 3 and sems
        os.kill(batch.proc.pid, signal.SIGKILL)
        status, _, _ = batch.finish()
        assert status == -signal.SIGKILL
        alive, left = gone(others, sems, 10.0)
    finally:
        batch.kill()
    assert alive == [] and left == set(), (procs, alive, left)


def test_sigterm_in_process_batch_keeps_finished_rows(modules, tmp_path):
    """--jobs 1: the modules run in ptxc itself; SIGTERM stops the running launch."""
    batch, _, _ = start_and_catch(["--jobs", 1, "--format", "csv", modules], tmp_path)
    try:
        os.kill(batch.proc.pid, signal.SIGTERM)
        status, out, err = batch.finish()
    finally:
        batch.kill()
    assert status == 130, err
    assert ("ptxc: interrupted (SIGTERM): 1 of 4 modules profiled; 3 not profiled "
            "(1 was running); the profiled ones are reported") in err.splitlines()
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(out)))
    got = [(os.path.basename(r["file"]), r["kernel"], r["status"]) for r in rows[:-1]]
    assert [g for g in got if g[2] == "interrupted"] == \
        [("b1.ptx", "", "interrupted"), ("b2.ptx", "", "interrupted"),
         ("c1.ptx", "", "interrupted")]
    notes = {os.path.basename(r["file"]): r["note"] for r in rows if r["status"] == "interrupted"}
    assert notes == {"b1.ptx": "not profiled: interrupted (SIGTERM) while it ran",
                     "b2.ptx": "not profiled: interrupted (SIGTERM) before it started",
                     "c1.ptx": "not profiled: interrupted (SIGTERM) before it started"}
    assert rows[-1]["note"] == "4 modules, 0 failed, 3 not profiled (interrupted)"


FORKED = """
import os, sys, time
from ptxc.profile.fork import fork_child
pid, read = fork_child(lambda: time.sleep(60))
print(pid, flush=True)
time.sleep(60)
"""


def test_forked_kernel_process_dies_with_its_parent(tmp_path):
    """ptxc profile FILE --jobs N forks (ptxc/profile/fork.py): a child whose
    parent is SIGKILLed ends too."""
    proc = subprocess.Popen([sys.executable, "-c", FORKED], stdout=subprocess.PIPE, cwd=ROOT,
                            start_new_session=True)
    try:
        child = int(proc.stdout.readline())
        assert gone([child], set(), 0.2)[0] == [child]        # it runs
        proc.kill()
        proc.wait()
        assert gone([child], set(), 5.0) == ([], set())
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
