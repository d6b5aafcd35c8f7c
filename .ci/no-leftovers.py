#!/usr/bin/env python3
"""Runs a command as a child subreaper and fails if any process it started outlives it.

Every descendant of the command, including daemons that detach (a tmux server forks twice and
is reparented), is reparented to this process instead of init, so after the command exits its
leftovers are exactly our remaining children: listed, ended with SIGKILL, and reported with a
non-zero exit. Usage: no-leftovers.py COMMAND [ARGUMENT...]
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def children(pid):
    """Pids whose parent is `pid`, from /proc/PID/task/*/children."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(child) for child in listing.read().split()]
        except OSError:
            pass
    return found


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip() or "?"
    except OSError:
        return "?"


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("no-leftovers: cannot become a child subreaper")
    status = subprocess.call(sys.argv[1:])
    time.sleep(1)  # let exiting processes finish
    reap()
    leftovers = children(os.getpid())
    if leftovers:
        print(f"no-leftovers: {len(leftovers)} process(es) started by the tests are still running:", file=sys.stderr)
        for pid in leftovers:
            print(f"  {pid}: {describe(pid)}", file=sys.stderr)
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap()
        sys.exit(status or 1)
    print("no-leftovers: no process outlived the tests")
    sys.exit(status)


if __name__ == "__main__":
    main()
