# SPDX-License-Identifier: Apache-2.0
"""The progress line of a live capture, under a real pseudo-terminal
(Python's pty module as xprobe's stderr), against the bundled live_service
fixture (two threads mapping and unmapping forever):

- drawn only when stderr is a terminal and --non-interactive is not given;
- at most 10 redraws a second, each cut to the terminal's width;
- what is armed, pairs against --samples or time left against
  --duration-ms, events and drops;
- erased at the end ("\\r", blanks over the last line, "\\r"), before the
  result is printed; nothing on stdout;
- colored only when colors are allowed (--no-color, NO_COLOR);
- Ctrl-C stops the capture cleanly and the result says what was cancelled.
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import tempfile
import termios
import time

import xprobe_test
from measure_live_helpers import Fixture, fixture_path

MMAP = ["--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact"]
DRAW = re.compile(r"\r(?:\x1b\[1;36mxprobe:\x1b\[0m |xprobe: )")


def service():
    return Fixture([fixture_path("live_service"), "--seconds", 120])


def env_of(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    env.update(kw)
    return env


class TtyRun:
    """xprobe with stderr on a pseudo-terminal of @cols columns (stdout a
    pipe); .tty holds every byte the terminal got, .draws their times."""

    def __init__(self, xprobe, args, cols=100, env=None, sigint_after_draws=None,
                 stdout_tty=False):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
        self.argv = [xprobe.binary] + [str(a) for a in args]
        t0 = time.monotonic()
        out = tempfile.TemporaryFile()  # not a pipe: a document may exceed its buffer
        p = subprocess.Popen(self.argv, stdout=slave if stdout_tty else out, stderr=slave,
                             env=env or env_of())
        os.close(slave)
        buf, signalled = b"", False
        while True:
            r, _, _ = select.select([master], [], [], 60)
            assert r, "the terminal got nothing for 60 s"
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the slave side is closed (xprobe exited)
                break
            if not data:
                break
            buf += data
            if (sigint_after_draws and not signalled and
                    len(DRAW.findall(buf.decode(errors="replace"))) >= sigint_after_draws):
                p.send_signal(signal.SIGINT)
                signalled = True
        os.close(master)
        p.wait(timeout=60)
        out.seek(0)
        self.stdout = out.read().decode()
        out.close()
        self.elapsed = time.monotonic() - t0
        self.rc = p.returncode
        self.tty = buf.decode()
        self.lines = [m for m in re.split(r"(?=\r)", self.tty) if m]

    def drawn(self):
        """The text of each redraw (prefix, colors and trailing blanks gone)."""
        out = []
        for chunk in self.lines:
            if DRAW.match(chunk):
                out.append(DRAW.sub("", chunk).rstrip(" "))
        return out


def visible(chunk):
    return len(re.sub(r"\x1b\[[0-9;]*m", "", chunk.lstrip("\r")))


def test_progress_line_on_a_terminal(xprobe):
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 2000],
                     cols=160)
    assert run.rc == 0, (run.stdout, run.tty)
    draws = run.drawn()
    # redrawn while it ran, at most 10 times a second (one at arming)
    assert len(draws) >= 5, run.tty
    assert len(draws) <= 10 * run.elapsed + 1, (len(draws), run.elapsed)
    for text in draws:
        m = re.fullmatch(r"armed 2 probes on pid %d \| <=(\d+) pairs \| (\d+\.\d)s left of "
                         r"2\.0s \| (\d+) events, (\d+) dropped \| syscall:mmap:entry -> "
                         r"syscall:mmap:exit" % fx.pid, text)
        assert m, text
        # an end needs its start (but for a call in flight on each thread at arming)
        assert int(m.group(3)) >= 2 * int(m.group(1)) - 2
        assert m.group(4) == "0"
    assert re.search(r"<=(\d+)", draws[-1]).group(1) != "0"
    left = [float(re.search(r"(\d+\.\d)s left", t).group(1)) for t in draws]
    assert left == sorted(left, reverse=True)
    # every line within the width, less one column
    assert all(visible(c) <= 159 for c in run.lines), run.lines
    # erased at the end: "\r", blanks over the widest the last line had, "\r"
    assert run.tty.endswith("\r"), repr(run.tty[-120:])
    last = run.lines[-2]
    assert last[0] == "\r" and set(last[1:]) == {" "}, repr(run.tty[-300:])
    assert len(last) - 1 >= visible(run.lines[-3].rstrip(" ")), repr(run.tty[-300:])
    # the result on stdout, no progress in it
    assert run.stdout.startswith("syscall:mmap:entry -> syscall:mmap:exit"), run.stdout
    assert "armed" not in run.stdout and "\r" not in run.stdout
    assert "histogram of " in run.stdout


def test_samples_progress_and_narrow_terminal(xprobe):
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--samples", 400,
                              "--timeout-ms", 20000], cols=40)
    assert run.rc == 0, (run.stdout, run.tty)
    draws = run.drawn()
    assert draws, run.tty
    # 40 columns: the prefix and 31 characters of text
    assert all(visible(c) <= 39 for c in run.lines), run.lines
    assert draws[0].startswith("armed 2 probes on pid %d | " % fx.pid)
    assert "status: completed; 400 pairs matched" in run.stdout
    # the same line, wider: pairs against --samples, time against the timeout
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--samples", 600,
                              "--timeout-ms", 20000], cols=200)
    draws = run.drawn()
    assert draws, run.tty
    for text in draws:
        assert re.fullmatch(r"armed 2 probes on pid %d \| (<=)?\d+/600 pairs \| \d+\.\ds, "
                            r"timeout in \d+\.\ds \| \d+ events, 0 dropped \| "
                            r"syscall:mmap:entry -> syscall:mmap:exit" % fx.pid, text), text


def test_no_progress_without_a_terminal_or_with_non_interactive(xprobe):
    with service() as fx:
        # --non-interactive: the terminal gets nothing at all
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 500,
                              "--non-interactive"])
        assert run.rc == 0, run.stdout
        assert run.tty == "", repr(run.tty)
        assert run.stdout.startswith("syscall:mmap:entry")
        # stderr a pipe: nothing on it
        p = subprocess.run([xprobe.binary, "measure", "--pid", str(fx.pid), *MMAP,
                            "--duration-ms", "500"], capture_output=True, text=True,
                           env=env_of(), timeout=60)
        assert p.returncode == 0, p
        assert p.stderr == ""
        assert p.stdout.startswith("syscall:mmap:entry")


def test_colors_of_the_progress_line(xprobe):
    with service() as fx:
        args = ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 400]
        run = TtyRun(xprobe, args)
        assert run.rc == 0
        assert "\x1b[1;36mxprobe:\x1b[0m " in run.tty
        for env, extra in ((env_of(NO_COLOR="1"), []), (env_of(), ["--no-color"]),
                           (env_of(TERM="dumb"), [])):
            run = TtyRun(xprobe, args + extra, env=env)
            assert run.rc == 0
            assert run.drawn(), run.tty
            assert "\x1b" not in run.tty, repr(run.tty)


def test_json_at_a_terminal(xprobe):
    """--json without --non-interactive at a terminal: the line is drawn
    and erased on stderr; stdout holds the one document."""
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 400,
                              "--json", "--no-color"])
    assert run.drawn()
    doc = xprobe_test.check_document(run.argv, run.rc, run.stdout, "measurement-result")
    assert doc["status"] == "completed"


def test_ctrl_c_stops_cleanly_and_says_so(xprobe):
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 20000],
                     sigint_after_draws=3)
    assert run.rc == 0, (run.stdout, run.tty)
    assert run.elapsed < 15
    lines = run.stdout.splitlines()
    assert lines[1].startswith("status: cancelled; "), run.stdout
    assert lines[2] == ("cancelled: signal 2 (Interrupt) stopped the live capture early; "
                        "these are the pairs captured until then")
    assert run.tty.endswith("\r") and run.drawn()
    # the JSON of a cancelled capture is unchanged: status, no extra field
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *MMAP, "--duration-ms", 20000,
                              "--json"], sigint_after_draws=3)
    doc = xprobe_test.check_document(run.argv, run.rc, run.stdout, "measurement-result")
    assert doc["status"] == "cancelled"


def test_histogram_window_progress(xprobe):
    """measure --histogram: its window has a progress line too (the time;
    the pairs stay in the kernel's maps until the window ends)."""
    with service() as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, "--histogram", *MMAP,
                              "--duration-ms", 1500], cols=160)
        assert run.rc == 0, (run.stdout, run.tty)
        draws = run.drawn()
        assert 5 <= len(draws) <= 10 * run.elapsed + 1, (len(draws), run.elapsed)
        for text in draws:
            assert re.fullmatch(r"histogram armed on pid %d \| \d+\.\ds left of 1\.5s \| "
                                r"syscall:mmap:entry -> syscall:mmap:exit" % fx.pid, text), text
        assert run.tty.endswith("\r") and set(run.lines[-2][1:]) == {" "}
        assert run.stdout.startswith("latency histogram of pid %d" % fx.pid)
        # without --duration-ms: until Ctrl-C (which ends it as a result)
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, "--histogram", *MMAP], cols=160,
                     sigint_after_draws=3)
        assert run.rc == 0, (run.stdout, run.tty)
        assert run.drawn()[0].startswith(
            "histogram armed on pid %d | 0.0s, until Ctrl-C or the target exits" % fx.pid)
        assert "stopped by cancelled" in run.stdout
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, "--histogram", *MMAP,
                              "--duration-ms", 300, "--non-interactive"])
        assert run.rc == 0 and run.tty == ""


def test_histogram_bars_in_color_on_a_terminal(xprobe):
    with service() as fx:
        args = ["measure", "--pid", fx.pid, "--histogram", *MMAP, "--duration-ms", 300]
        run = TtyRun(xprobe, args, stdout_tty=True)
        assert run.rc == 0 and "\x1b[32m@" in run.tty, repr(run.tty[-500:])
        run = TtyRun(xprobe, args, stdout_tty=True, env=env_of(NO_COLOR="1"))
        assert run.rc == 0 and "|@" in run.tty and "\x1b" not in run.tty, repr(run.tty)


def test_inventory_window_progress(xprobe):
    """--syscall-aggregate and --cpu-sample: their window's progress line
    (the time left; the samples seen so far for --cpu-sample), erased
    before the table; none with --non-interactive."""
    with service() as fx:
        cases = (
            (["--syscall-aggregate"],
             r"syscall aggregate armed on pid %d \| \d+\.\ds left of 1\.5s" % fx.pid),
            (["--cpu-sample", "--frequency-hz", 199],
             r"sampling pid %d at 199 Hz \| \d+\.\ds left of 1\.5s \| \d+ samples" % fx.pid),
        )
        for mode, line in cases:
            run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *mode, "--duration-ms", 1500],
                         cols=160)
            assert run.rc == 0, (run.stdout, run.tty)
            draws = run.drawn()
            assert 5 <= len(draws) <= 10 * run.elapsed + 1, (mode, len(draws), run.elapsed)
            for text in draws:
                assert re.fullmatch(line, text), (mode, text)
            assert run.tty.endswith("\r") and set(run.lines[-2][1:]) == {" "}, run.lines[-2:]
            assert run.stdout and "\r" not in run.stdout
            run = TtyRun(xprobe, ["measure", "--pid", fx.pid, *mode, "--duration-ms", 300,
                                  "--non-interactive"])
            assert run.rc == 0 and run.tty == "", (mode, run.tty)
    # the samples grow
    counts = [int(t.rsplit("| ", 1)[1].split()[0]) for t in draws if "samples" in t]
    assert counts == sorted(counts)


def test_aggregate_window_progress(xprobe):
    """measure --aggregate (the Agent's group table, the CUPTI test double):
    the same line; no counts, the groups stay in the target until STOP."""
    from cuda_helpers import CuptiFixture
    with CuptiFixture("preload") as fx:
        run = TtyRun(xprobe, ["measure", "--pid", fx.pid, "--from", "cuda:kernel_start",
                              "--to", "cuda:kernel_end", "--match", "exact", "--aggregate",
                              "--duration-ms", 1500],
                     cols=160)
        assert run.rc == 0, (run.stdout, run.tty)
        draws = run.drawn()
        assert 5 <= len(draws) <= 10 * run.elapsed + 1, (len(draws), run.elapsed)
        for text in draws:
            assert re.fullmatch(r"aggregate armed in the Agent of pid %d \| \d+\.\ds left of "
                                r"1\.5s" % fx.pid, text), text
        assert run.tty.endswith("\r") and set(run.lines[-2][1:]) == {" "}, run.lines[-2:]
        fx.quit()
