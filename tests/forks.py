"""`ttc` commands forked from a server that imported torch and every experiment once.

A `ttc` process spends seconds importing before it does anything: about 4 of a 2-core machine's
seconds per command, for over a hundred commands in the tests. multiprocessing's fork server imports
torch, the command line and the experiments once; each command is a process forked from it, with
its own environment, directory, standard streams and exit code, which a test can signal or kill as
any other process."""

import atexit
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from ttc_nb.cli import main
from ttc_nb.runs.catalogue import EXPERIMENT_MODULES

SERVER = multiprocessing.get_context('forkserver')
STREAMS = []  # the folder of the commands' stdin, stdout and stderr, made by the first command


def streams_folder():
    "A new folder for one command's standard streams, removed with the others when tests end."
    if not STREAMS:  # here, not on import: each forked process imports this module again
        STREAMS.append(Path(tempfile.mkdtemp(prefix='ttc-streams-')))
        atexit.register(shutil.rmtree, STREAMS[0], True)
    return Path(tempfile.mkdtemp(dir=STREAMS[0]))


# The server imports these before it forks anything (it cannot import this module, outside the
# import path): the plots' and the optimiser's imports on first use, the command line, and every
# experiment's module.
SERVER.set_forkserver_preload(
    ['matplotlib.pyplot', 'torch._dynamo', 'ttc_nb.cli', *sorted(set(EXPERIMENT_MODULES.values()))]
)


def command(argv, env, cwd, streams, code_file):
    "The forked process: `ttc argv` with `env` in `cwd`; stdin, stdout and stderr are files."
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    for fd, (path, mode) in enumerate(streams):
        f = os.open(path, mode)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(0, closefd=False)
    try:
        code = main(argv) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1 if e.code else 0
        if e.code and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    Path(code_file).write_text(str(code))  # the server's report of it can be lost under load
    os._exit(code)


class Forked:
    "A `ttc` command forked from the server; it answers as much of `subprocess.Popen` as tests use."

    def __init__(self, argv, env, cwd=None, input=None, stdout=None, stderr=None):
        self.args = ['ttc', *argv]
        self.dir = streams_folder()
        self.keep = {'stdout': stdout != subprocess.DEVNULL, 'stderr': stderr != subprocess.DEVNULL}
        (self.dir / 'stdin').write_text(input or '')
        streams = [(str(self.dir / 'stdin'), os.O_RDONLY)]
        for name in ('stdout', 'stderr'):
            path = self.dir / name if self.keep[name] else Path(os.devnull)
            if self.keep[name]:
                path.touch()  # empty, as a pipe is, when the process is killed before it writes
            streams.append((str(path), os.O_WRONLY))
        self.process = SERVER.Process(
            target=command, args=(argv, dict(env), cwd, streams, str(self.dir / 'code'))
        )
        self.process.start()
        self.pid, self.returncode = self.process.pid, None

    # The exit code the command wrote as it ended: the fork server's report of it reads 255 when its
    # pipe closed first. A command killed before it wrote one has the server's (minus the signal).
    def poll(self):
        code = self.process.exitcode
        written = self.dir / 'code'
        text = written.read_text() if code is not None and written.exists() else ''
        self.returncode = int(text) if text.lstrip('-').isdigit() else code
        return self.returncode

    def wait(self, timeout=None):
        self.process.join(timeout)
        if self.poll() is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig):
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self):
        self.send_signal(9)

    def output(self, name):
        return (self.dir / name).read_text() if self.keep[name] else None

    def communicate(self, timeout=None):
        "Wait for the command to end; its (stdout, stderr)."
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait()
            raise
        return self.output('stdout'), self.output('stderr')


def run(argv, env, cwd=None, input=None, timeout=None):
    "Run `ttc argv` forked from the server to its end; its CompletedProcess."
    p = Forked(argv, env, cwd, input)
    out, err = p.communicate(timeout)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
