"""A run killed with SIGKILL at 6 to 21 random moments, resumed each time, ends as if never killed.

Some of the moments fall in the middle of a checkpoint's or the log's write. The run ends with the
weights and the metrics log of a run never interrupted."""

import json
import random
import time
import torch
from conftest import ttc_start
from ttc_nb.train.files import load_checkpoint, previous

# At least KILLS kills: the fresh run's, then one of each kind below in the resumed runs; and more,
# up to 1 + MOST, until a kill has caught a checkpoint half written with the one before it moved
# aside (no checkpoint.pt, only checkpoint.prev.pt): on a loaded machine a kill lands in a
# process's start more often. Long enough that 1 + MOST short stretches of training never reach the
# end (on a loaded machine a stretch trains a few updates, alone on a fast one a few dozen).
KINDS = ['any moment', 'checkpoint write', 'checkpoint write', 'log rewrite', 'torn append']
KILLS, MOST, UPDATES = 1 + len(KINDS), 20, 300
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


class Runs:
    "Start `ttc` commands one at a time (tests/forks.py); each is a process that a test can kill."

    def __init__(self):
        self.outputs, self.running = [], None  # the run started last, until it is seen to end

    def start(self, *argv):
        self.running = ttc_start(*argv)
        return self.running

    def wait(self, timeout=300):
        "Wait until the run started last has ended; keep what it printed."
        out, err = self.running.communicate(timeout)
        self.outputs.append(out + err)
        self.running = None

    def kill(self):
        self.running.kill()
        self.wait()

    def close(self):
        if self.running and self.running.poll() is None:
            self.kill()  # left running by a failed test


def wait_for(p, seen, timeout):
    "Wait until `seen()` or `timeout` seconds; False if the process `p` ended first."
    deadline = time.time() + timeout
    while not seen() and time.time() < deadline:
        if p.poll() is not None:
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


def test_killed_again_and_again_then_resumed_ends_as_an_uninterrupted_run(tmp_path):
    rng, ref, out = random.Random(0), tmp_path / 'ref', tmp_path / 'killed'
    runs = Runs()
    try:
        # the reference checkpoints only at its end: checkpoints change nothing a run computes
        runs.start('run', *RUN, '--set', f'ckpt_every={UPDATES}', '--out', ref)
        runs.wait()
        assert json.loads((ref / 'summary.json').read_text())['finished'], runs.outputs
        # after the first, every kind in each len(KINDS) kills, in random order
        kinds = ['any moment']
        kinds += [k for _ in range(MOST // len(KINDS)) for k in rng.sample(KINDS, len(KINDS))]
        hits = dict.fromkeys(
            ['checkpoint write', 'log rewrite', 'checkpoint missing', 'torn append'], 0
        )
        caught = lambda: hits['checkpoint write'] >= 1 and hits['checkpoint missing'] >= 1
        kills = 0
        for kind in kinds:
            if kills >= KILLS and caught():
                break
            resume = (out / 'config.json').exists()
            p = runs.start('run', *(['--resume', '--out', out] if resume else [*RUN, '--out', out]))
            # after a random delay, at the next write of a checkpoint that replaces one: the
            # previous is kept and the new one half written (on a loaded machine a stint killed
            # at random may never finish its first checkpoint, so wait for one that does)
            if kind == 'checkpoint write':
                time.sleep(rng.uniform(0, 0.2))
                mid_write = lambda: (
                    tmp_files(out, 'checkpoint.pt', p.pid)
                    and (previous(out / 'checkpoint.pt').exists())
                )
                ran = wait_for(p, mid_write, 60)
            # while a resumed run rewrites the log without the records after its checkpoint
            elif kind == 'log rewrite':
                ran = wait_for(p, lambda: tmp_files(out, 'metrics.jsonl', p.pid), 0.5)
            else:
                ran = wait_for(p, lambda: False, rng.uniform(0, 0.4))
            assert ran, f'the run ended before its kill ({kind}): make it longer'
            runs.kill()
            kills += 1
            # what a writer killed mid-write leaves
            hits['checkpoint write'] += bool(tmp_files(out, 'checkpoint.pt', p.pid))
            hits['log rewrite'] += bool(tmp_files(out, 'metrics.jsonl', p.pid))
            hits['checkpoint missing'] += (
                previous(out / 'checkpoint.pt').exists() and not (out / 'checkpoint.pt').exists()
            )
            if kind == 'torn append' and (out / 'metrics.jsonl').exists():
                with open(out / 'metrics.jsonl', 'a') as f:  # what a kill mid-append leaves
                    f.write('{"update": 99999, "loss": 0.5')
                hits['torn append'] += 1
        runs.start('run', '--resume', '--out', out)
        runs.wait()
    finally:
        runs.close()
    print(f'{kills} kills; killed in the middle of: {hits}')
    log = ''.join(runs.outputs)
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
