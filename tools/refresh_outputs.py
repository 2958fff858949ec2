"""Refresh the saved outputs of chosen cells of a notebook, after the runs they show have changed.

    python tools/refresh_outputs.py nbs/X.ipynb --ids ID[,ID ...]
    python tools/refresh_outputs.py nbs/X.ipynb --grep 'TEXT[|TEXT ...]'

The notebook runs from its folder with CI=true, as nbdev_test runs it, but without its `#| cuda` and
`#| eval: false` cells and without the cell that exports the library. Then the cells named by id, or
whose source holds one of the texts, take their new outputs, keeping the MIME types they had. A cell
that fails is reported and the run goes on: a check of the old outputs fails until they are
refreshed. An output that is an error is never saved. Other cells, and the library, are untouched.
"""

import argparse
import json
import os
import re
from pathlib import Path
from execnb.nbio import read_nb
from execnb.shell import CaptureShell

SKIP = re.compile(r'^#\|\s*(cuda|eval:\s*false)\s*$', re.M)


def run(path: Path):
    "The notebook at `path`, run from its folder: its cells with their new outputs."
    nb, shell = read_nb(path), CaptureShell(path)
    for c in nb.cells:
        if c.cell_type != 'code' or SKIP.search(c.source) or 'nbdev_export()' in c.source:
            continue
        shell.cell(c)
        if shell.exc:
            print(
                f'cell {c.get("id")} failed (a check of the old outputs?): {str(shell.exc)[:200]}'
            )
    return {c.get('id'): c for c in nb.cells}


def fresh(cell: dict, new: list):
    "The outputs `new` as `cell` saves them: its MIME types, no execution count; None for an error."
    kept = [set(o.get('data', {})) for o in cell['outputs']]
    outs = json.loads(json.dumps(new))
    for i, o in enumerate(outs):
        if 'execution_count' in o:
            o['execution_count'] = None
        if i < len(kept) and kept[i] and 'data' in o:
            o['data'] = {k: v for k, v in o['data'].items() if k in kept[i]}
    return None if any(o.get('output_type') == 'error' for o in outs) else outs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebook')
    p.add_argument('--ids', default='', help='comma-separated cell ids')
    p.add_argument('--grep', default='', help="texts separated by '|'")
    a = p.parse_args()
    path = Path(a.notebook).resolve()
    ids = set(filter(None, a.ids.split(',')))
    texts = [t.strip() for t in a.grep.split('|') if t.strip()]
    os.environ.setdefault('CI', 'true')
    here = os.getcwd()
    os.chdir(path.parent)
    new = run(path)
    os.chdir(here)
    saved = json.loads(path.read_text())
    changed = []
    for c in saved['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or not (c.get('id') in ids or any(t in src for t in texts)):
            continue
        outs = fresh(c, new[c['id']].get('outputs', []))
        if outs is None:
            print(f'cell {c["id"]}: an error output, not saved')
        elif outs != c['outputs']:
            c['outputs'] = outs
            changed.append(c['id'])
    path.write_text(json.dumps(saved, indent=1, ensure_ascii=False) + '\n')
    print('refreshed:', ', '.join(changed) or 'nothing')


if __name__ == '__main__':
    main()
