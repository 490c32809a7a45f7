# How the sandbox's host-side install runs pip (`sandbox::prepare::pypi_tree`):
# `/usr/bin/python3 -I -c <this file> install ...`. An audit hook refuses every process pip would
# start: a build backend or `setup.py` (pip builds a dependency named by a direct URL to an sdist
# even under --only-binary=:all:) and a version-control checkout. The only processes allowed are
# the two pip's user agent asks the system about (its vendored `distro`: `lsb_release -a`,
# `uname -rs`, found on PATH=/usr/bin:/bin). A refused start raises in pip: the install fails
# (`install-failed`) and no code of the package has run on the host.
import runpy
import sys

ALLOWED = (["lsb_release", "-a"], ["uname", "-rs"])
STARTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
)


def refuse(event, args):
    if event == "subprocess.Popen" and isinstance(args[1], list) and args[1] in ALLOWED:
        return
    if event in STARTS:
        raise RuntimeError(
            f"toolmark: pip may not start a process ({event}): a build or a checkout would run package code"
        )


sys.addaudithook(refuse)
runpy.run_module("pip", run_name="__main__", alter_sys=True)
