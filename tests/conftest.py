import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
TTC = [str(Path(sys.executable).parent / 'ttc')]  # the installed console script

# The tests train tiny networks, in this process and in the subprocesses it starts: one thread each,
# as `make nbtest` runs the notebooks. Several threads per process only contend for the cores (a run
# on 2 busy cores took 17 times as long). Set before anything imports torch.
os.environ.setdefault('OMP_NUM_THREADS', '1')


# The console script in a process of its own: for the few tests of what a fresh process does.
def ttc_process(*args, **kw):
    "Run the installed `ttc` script in a new process, on CPU; returns the CompletedProcess."
    env = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true'}
    return subprocess.run([*TTC, *map(str, args)], capture_output=True, text=True, env=env, **kw)


# Forked from a server that imported torch and every experiment once (tests/forks.py): seconds each.
def ttc(*args, cwd=None, input=None, timeout=None):
    "Run the `ttc` command line in a process of its own, on CPU; returns the CompletedProcess."
    import forks

    env = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true'}
    return forks.run([*map(str, args)], env, cwd, input, timeout)


def ttc_start(*args, stdout=None, stderr=None):
    "Start the `ttc` command line in a process of its own, on CPU; a Popen-like `forks.Forked`."
    import forks

    env = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true'}
    return forks.Forked([*map(str, args)], env, stdout=stdout, stderr=stderr)


# A bound on a hang, not a speed test: CI's six streams share two cores, and a run that writes its
# first checkpoint in seconds alone has taken over two minutes there.
FIRST_CHECKPOINT_S = 600


def wait_for_checkpoint(p, out):
    "Wait until `p`, a `ttc run --out out`, has written its first checkpoint in `out`."
    deadline = time.time() + FIRST_CHECKPOINT_S
    while not (out / 'checkpoint.pt').exists():
        assert p.poll() is None, 'run ended before its first checkpoint'
        assert time.time() < deadline, f'no checkpoint after {FIRST_CHECKPOINT_S} s'
        time.sleep(0.01)


def kill_after_checkpoint(p, out, delay=0.0, sig=signal.SIGKILL):
    "Send `sig` to `p`, a `ttc run --out out`, `delay` seconds after its first checkpoint in `out`."
    wait_for_checkpoint(p, out)
    time.sleep(delay)
    assert p.poll() is None, 'run finished before it could be killed: make it longer'
    p.send_signal(sig)
    p.wait()


# `r`: a CompletedProcess, or the (exit code, stdout, stderr) of a command run in this process. With
# `line`, stderr is that line exactly and stdout is empty.
def one_line_error(r, *needles, line=None):
    "Assert that `r` exited with 2 and one line on stderr, no traceback, holding each of `needles`."
    code, out, err = (r.returncode, r.stdout, r.stderr) if hasattr(r, 'returncode') else r
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in err, err
    for n in needles:
        assert str(n) in lines[0], (n, lines[0])
    assert line is None or (err, out) == (f'{line}\n', ''), (out, err)


# Meant for `f`s that wait on a subprocess.
def concurrently(f, items):
    "`f(item)` for each of `items`, as many at a time as there are cores; the results, in order."
    with ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        return list(ex.map(f, items))


# Runs as many at a time as there are cores.
def ttc_many(*calls):
    "The CompletedProcesses of `ttc(*args)` for each `args` of `calls`, in order."
    return concurrently(lambda args: ttc(*args), calls)


# The run is trained once a session; only read it.
@pytest.fixture(scope='session')
def uninterrupted(tmp_path_factory):
    "`uninterrupted(*args)`: the run directory of `ttc *args --out DIR`, trained to its end."
    runs = {}

    def run(*args):
        key = tuple(map(str, args))
        if key not in runs:
            out = tmp_path_factory.mktemp('uninterrupted') / 'run'
            r = ttc(*args, '--out', out)
            assert r.returncode == 0, r.stderr
            runs[key] = out
        return runs[key]

    return run


def pytest_collection_modifyitems(items):
    "The documentation build and its browser check run last, as `make test` promises."
    items.sort(key=lambda i: i.path.name == 'test_docs_site.py')
