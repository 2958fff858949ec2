"""A run killed with SIGKILL at 30 random moments and resumed after each ends as if uninterrupted.

Some of the moments fall in the middle of a checkpoint's or the log's write. The run ends with the
weights and the metrics log of a run never interrupted."""

import json
import os
import random
import signal
import subprocess
import sys
import time
import torch
from conftest import ROOT
from ttc_nb.train.files import load_checkpoint, previous

KILLS, UPDATES = 30, 1000  # long enough that 30 short stretches of training never reach the end
# A checkpoint at every update, so that a good share of the
# run is spent writing them; evaluations every 25 updates.
RUN = [
    'prefix-parity',
    '--preset',
    'ci',
    '--set',
    f'updates={UPDATES}',
    '--set',
    'ckpt_every=1',
    '--set',
    'eval_every=25',
    '--device',
    'cpu',
]

# A `ttc` process spends seconds importing before it trains. The server imports once, then forks a
# `ttc` process for each line it reads, ready at once, and prints its id: 31 runs cost seconds, not
# minutes. The kernel reaps the forked processes.
SERVER = """
import os, sys, json, signal, traceback
# imported by the optimiser and the plots on first use: once, here
import torch._dynamo, matplotlib.pyplot
from ttc_nb.cli import main
from ttc_nb.runs.registry import all_experiments
all_experiments()  # every experiment's module, imported once, here, not in each fork
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for line in sys.stdin:
    argv, log = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(fd, 1); os.dup2(fd, 2)
        try: main(argv); code = 0
        except SystemExit as e: code = e.code or 0
        except BaseException: traceback.print_exc(); code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    print(pid, flush=True)
"""


class Runs:
    "Start `ttc` commands through the server; each is a process that a test can kill."

    def __init__(self, log):
        env = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true', 'OMP_NUM_THREADS': '1'}
        self.log, self.server = (
            log,
            subprocess.Popen(
                [sys.executable, '-c', SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            ),
        )
        self.running = None  # the run started last, until it is seen to end

    def start(self, *argv):
        self.server.stdin.write(json.dumps([[str(a) for a in argv], str(self.log)]) + '\n')
        self.server.stdin.flush()
        self.running = int(self.server.stdout.readline())
        return self.running

    def wait(self, timeout=300):
        "Wait until the run started last has ended."
        deadline = time.time() + timeout
        while alive(self.running):
            assert time.time() < deadline, f'process {self.running} did not end'
            time.sleep(0.005)
        self.running = None

    def kill(self):
        os.kill(self.running, signal.SIGKILL)
        self.wait()

    def close(self):
        if self.running and alive(self.running):
            self.kill()  # left running by a failed test
        self.server.stdin.close()
        self.server.wait(timeout=30)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(pid, seen, timeout):
    "Wait until `seen()` or `timeout` seconds; False if the process ended first."
    deadline = time.time() + timeout
    while not seen() and time.time() < deadline:
        if not alive(pid):
            return False
        time.sleep(0.0002)
    return True


def records(run):
    "The run's metric records without their wall-clock times, which no two runs share."
    return [
        {k: v for k, v in json.loads(line).items() if k != 'time'}
        for line in (run / 'metrics.jsonl').read_text().splitlines()
    ]


def tmp_files(run, name, pid='*'):
    return list(run.glob(f'.{name}.{pid}.tmp'))


def test_killed_30_times_then_resumed_ends_as_an_uninterrupted_run(tmp_path):
    rng, ref, out = random.Random(0), tmp_path / 'ref', tmp_path / 'killed'
    runs = Runs(tmp_path / 'ttc.log')
    try:
        runs.start('run', *RUN, '--out', ref)
        runs.wait()
        assert json.loads((ref / 'summary.json').read_text())['finished'], (
            tmp_path / 'ttc.log'
        ).read_text()
        kinds = [
            'any moment',
            'checkpoint write',
            'checkpoint write',
            'log rewrite',
            'torn append',
        ] * (KILLS // 5)
        rng.shuffle(kinds)
        hits = dict.fromkeys(
            ['checkpoint write', 'log rewrite', 'checkpoint missing', 'torn append'], 0
        )
        for kind in kinds:
            resume = (out / 'config.json').exists()
            pid = runs.start(
                'run', *(['--resume', '--out', out] if resume else [*RUN, '--out', out])
            )
            if (
                kind == 'checkpoint write'
            ):  # after a random delay, at the next write of a checkpoint
                time.sleep(rng.uniform(0, 0.2))
                ran = wait_for(pid, lambda: tmp_files(out, 'checkpoint.pt', pid), 5)
            elif (
                kind == 'log rewrite'
            ):  # while a resumed run rewrites the log without the records after its checkpoint
                ran = wait_for(pid, lambda: tmp_files(out, 'metrics.jsonl', pid), 0.5)
            else:
                ran = wait_for(pid, lambda: False, rng.uniform(0, 0.4))
            assert ran, f'the run ended before its kill ({kind}): make it longer'
            runs.kill()
            hits['checkpoint write'] += bool(
                tmp_files(out, 'checkpoint.pt', pid)
            )  # what a writer killed mid-write leaves
            hits['log rewrite'] += bool(tmp_files(out, 'metrics.jsonl', pid))
            hits['checkpoint missing'] += (
                previous(out / 'checkpoint.pt').exists() and not (out / 'checkpoint.pt').exists()
            )
            if kind == 'torn append' and (out / 'metrics.jsonl').exists():
                with open(out / 'metrics.jsonl', 'a') as f:
                    f.write(
                        '{"update": 99999, "loss": 0.5'
                    )  # what a kill in the middle of an append leaves
                hits['torn append'] += 1
        runs.start('run', '--resume', '--out', out)
        runs.wait()
    finally:
        runs.close()
    print(f'{KILLS} kills; killed in the middle of: {hits}')
    log = (tmp_path / 'ttc.log').read_text()
    assert 'Traceback' not in log and 'error' not in log, log
    assert json.loads((out / 'summary.json').read_text())['finished'], log
    assert records(out) == records(ref)
    final, expected = load_checkpoint(out / 'checkpoint.pt'), load_checkpoint(ref / 'checkpoint.pt')
    assert final['update'] == UPDATES and final['model'].keys() == expected['model'].keys()
    assert all(torch.equal(final['model'][k], expected['model'][k]) for k in expected['model'])
    assert sorted(
        p.name for p in out.iterdir() if 'checkpoint' in p.name or p.suffix == '.tmp'
    ) == ['checkpoint.pt']
    assert hits['checkpoint write'] >= 1 and hits['checkpoint missing'] >= 1, hits
