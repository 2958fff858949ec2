"""Test one notebook as `nbdev_test --path` does, timing every cell it runs.

    tools/nbtest.py nbs/43_sudoku.deq.ipynb --timings _build/nbtest/43_sudoku.deq.json
                    [--flags "slow"]
    tools/nbtest.py --jobs 2 --timings _build/nbtest [--flags "slow"] nbs/*.ipynb
    tools/nbtest.py --slowest 10 _build/nbtest/*.json

The first form runs the notebook with nbdev's own `test_nb` (same skipped cells: `tst_flags` from
settings.ini unless given in `--flags`, `#| eval: false`, `nbdev_export()` calls; same error
report), in this process, and writes one record per cell it ran -- notebook, cell index (as in the
.ipynb), first line, seconds -- as JSON. It exits 1 if a cell fails, after writing the timings of
the cells up to the failing one.

The second form tests many notebooks, `--jobs` at a time, each in a process of its own: a process
forked from this one once it has imported torch, matplotlib and IPython, which every notebook
imports (seconds of a 2-core machine's time each). A forked process starts from this process's
state, never from another notebook's. Its timings go to `--timings`/PATH.json. The largest notebooks
start first, so that none is left running alone at the end.

The third form prints the slowest cells of many such files.
"""

import argparse
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path

import nbdev.test
from execnb.shell import CaptureShell
from fastcore.xtras import working_directory
from nbdev.config import get_config

TIMES = []  # {cell, first_line, seconds, cpu_seconds} of each code cell this process has run


# A figure a cell shows is not drawn: it displays as text (`<Figure size ...>`), and the tests
# check what the figures plot, not their pixels. execnb would draw each one as a retina PNG, which
# took about a quarter of the notebooks' CPU time on a 2-core AMD EPYC. Figures that code saves
# (`savefig`) are drawn as before, and a page's figures are drawn when its outputs are saved.
class TimedShell(CaptureShell):
    "A `CaptureShell` that times each code cell it runs (in `TIMES`) and draws no shown figure."

    def __init__(self, path=None, **kw):
        super().__init__(path, **kw)
        self._run('set_matplotlib_formats()')  # no image format for figures: text only

    def cell(self, cell, **kw):
        if cell.cell_type != 'code':
            return super().cell(cell, **kw)
        start = time.perf_counter()
        cpu = cpu_seconds()
        try:
            return super().cell(cell, **kw)
        finally:
            TIMES.append(
                dict(
                    cell=cell.idx_,
                    first_line=first_line(cell.source),
                    seconds=round(time.perf_counter() - start, 3),
                    cpu_seconds=round(cpu_seconds() - cpu, 3),
                )
            )


# A cell's CPU time does not grow when other work shares the cores, as its wall time does; the
# processes it started and waited for count too.
def cpu_seconds():
    "CPU seconds this process and its waited-for children have used, user and system."
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# If all lines are directives, its first line.
def first_line(src):
    "The first line of a cell's source that is not a `#|` directive nor blank."
    lines = [line.strip() for line in src.splitlines() if line.strip()]
    return next((line for line in lines if not line.startswith('#|')), lines[0] if lines else '')


# Its cells' timings are written to `timings`.
def test(path, flags='', timings=None):
    "Run notebook `path` like `nbdev_test --path path --flags flags`; True if it passed."
    cfg = get_config()
    files = [
        f.absolute()
        for f in nbdev.test.nbglob(path, as_path=True)
        if nbdev.test._keep_file(f, '.notest')
    ]
    if not files:
        print('No files were eligible for testing')
        return True
    nbdev.test.CaptureShell = TimedShell  # `test_nb` builds its shell from this name
    with working_directory(cfg.nbs_path if cfg.nbs_path.exists() else os.getcwd()):
        passed, _ = nbdev.test.test_nb(
            files[0],
            skip_flags=cfg.tst_flags.split(),
            force_flags=flags.split(),
            basepath=cfg.config_path,
        )
    if timings:
        Path(timings).parent.mkdir(parents=True, exist_ok=True)
        Path(timings).write_text(
            json.dumps([dict(notebook=str(path), **t) for t in TIMES], indent=1) + '\n'
        )
    return passed


def test_many(paths, jobs, flags='', timings=None):
    "Test each of `paths` in a forked process, `jobs` at a time; the names of the notebooks failed."
    import IPython  # noqa: F401  (imported here once, as are torch and pyplot, for every notebook)
    import matplotlib.pyplot  # noqa: F401
    import torch  # noqa: F401

    running, failed = {}, []

    def reap():
        pid, status = os.wait()
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(Path(running[pid]).name)
        del running[pid]

    for path in sorted(paths, key=lambda p: Path(p).stat().st_size, reverse=True):
        while len(running) >= jobs:
            reap()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = 0 if test(path, flags, timings and Path(timings) / f'{path}.json') else 1
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        running[pid] = path
    while running:
        reap()
    return sorted(failed)


def slowest(files, n=10):
    "Print the `n` slowest cells recorded in the timing `files`."
    files = [f for f in files if Path(f).exists()]  # a notebook that crashed its process wrote none
    recs = [r for f in files for r in json.loads(Path(f).read_text())]
    recs.sort(key=lambda r: r['seconds'], reverse=True)
    total = sum(r['seconds'] for r in recs)
    cpu = sum(r.get('cpu_seconds', 0) for r in recs)
    print(
        f'nbtest: {len(recs)} cells in {len(files)} notebooks, {total:.0f} s of cell time '
        f'({cpu:.0f} s of CPU time); the {min(n, len(recs))} slowest (wall, CPU):'
    )
    for r in recs[:n]:
        where = f'{r["notebook"]} cell {r["cell"]}: {r["first_line"][:70]}'
        print(f'{r["seconds"]:8.1f} s {r.get("cpu_seconds", 0):7.1f} s  {where}')


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        'paths', nargs='+', help='the notebook to test, or with --slowest the timing files'
    )
    p.add_argument(
        '--flags', default='', help='space separated test flags to run that are normally skipped'
    )
    p.add_argument(
        '--timings', help='where to write the cell timings (JSON; with --jobs, a folder for them)'
    )
    p.add_argument('--jobs', type=int, metavar='N', help='test the notebooks given, N at a time')
    p.add_argument(
        '--slowest',
        type=int,
        metavar='N',
        help='print the N slowest cells of the timing files given',
    )
    a = p.parse_args()
    if a.slowest is not None:
        sys.exit(slowest(a.paths, a.slowest))
    if a.jobs is None and len(a.paths) != 1:
        p.error('test one notebook at a time, or give --jobs')
    if a.jobs is not None:
        failed = test_many(a.paths, a.jobs, a.flags, a.timings)
    else:
        failed = [] if test(a.paths[0], a.flags, a.timings) else [Path(a.paths[0]).name]
    if not failed:
        print('Success.')
    else:
        sys.stderr.write(
            '\nnbdev Tests Failed On The Following Notebooks:\n'
            f'{"=" * 50}\n' + ''.join(f'\t{name}\n' for name in failed)
        )
        sys.exit(1)
