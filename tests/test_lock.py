"""One writer per run directory.

Of two `ttc run` or two `ttc run --resume` into one directory started together, one trains and the
other is refused in one line that names it; a run killed with SIGKILL leaves a lock that blocks no
resume. Under `--nproc 2`, the launch that comes second is refused before torchrun starts."""

import json
import socket
from conftest import kill_after_checkpoint, ttc, ttc_start

UPDATES = 100
# Long enough that a run started beside another still trains when the other asks for the lock; one
# checkpoint, at the end, so that the other is refused by the lock and not by the checkpoint.
RUN = ['prefix-parity', '--preset', 'ci', '--set', f'updates={UPDATES}']
ONE_CKPT = ['--set', f'ckpt_every={UPDATES}']


def one_trained(procs, out):
    "Of `procs`, started together, one exits 0 and the others exit 2 in one line that names it."
    errs = [p.communicate(timeout=600)[1] for p in procs]
    assert sorted(p.returncode for p in procs) == [0] + [2] * (len(procs) - 1), errs
    winner = next(p for p in procs if p.returncode == 0)
    refusal = (
        f'ttc: error: {out} is in use by process {winner.pid} on host {socket.gethostname()}: '
        'wait for it to finish, or choose another --out\n'
    )
    assert [e for p, e in zip(procs, errs) if p is not winner] == [refusal] * (len(procs) - 1)
    logged = [json.loads(line) for line in (out / 'metrics.jsonl').read_text().splitlines()]
    assert [r['update'] for r in logged if 'loss' in r] == list(range(10, UPDATES + 1, 10))
    assert json.loads((out / 'summary.json').read_text())['finished']
    assert not (out / '.lock').exists()


def test_two_new_runs_into_one_directory(tmp_path):
    out = tmp_path / 'run'
    one_trained([ttc_start('run', *RUN, *ONE_CKPT, '--out', out) for _ in range(2)], out)


def test_two_resumes_of_one_run(tmp_path):
    out = tmp_path / 'run'
    r = ttc('run', *RUN, *ONE_CKPT, '--out', out, '--time-limit', '0s')  # stops at update 1
    assert r.returncode == 0 and 'time limit reached' in r.stderr, r.stderr
    one_trained([ttc_start('run', '--resume', '--out', out) for _ in range(2)], out)


def test_a_killed_run_leaves_a_lock_that_blocks_no_resume(tmp_path):
    out = tmp_path / 'run'
    p = ttc_start('run', 'prefix-parity', '--preset', 'ci', '--set', 'updates=100', '--out', out)
    kill_after_checkpoint(p, out)
    assert json.loads((out / '.lock').read_text())['pid'] == p.pid  # the killed run's
    r = ttc('run', '--resume', '--out', out)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / 'summary.json').read_text())['finished']
    assert not (out / '.lock').exists()


def test_two_launches_of_two_processes_into_one_directory(tmp_path):
    "`ttc run --nproc 2` takes the lock before torchrun starts: the second launch is refused."
    out = tmp_path / 'run'
    launches = [ttc_start('run', *RUN, *ONE_CKPT, '--nproc', '2', '--out', out) for _ in range(2)]
    one_trained(launches, out)
