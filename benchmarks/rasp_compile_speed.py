"""The compiled `sort_bos` against the interpreter, on 1,000 inputs of length 64, in one run.

Each input is the BOS token and 63 letters. The compiled transformer's batched forward pass and
decoding run against the interpreter's loop over the inputs; writes
nbs/results/rasp/compile/speed.json.

    OMP_NUM_THREADS=1 python benchmarks/rasp_compile_speed.py [--device cuda]
"""

import argparse
import json
import random
import time
from pathlib import Path
import torch
import ttc_nb.rasp.ops as R
from ttc_nb.rasp.interpreter import library
from ttc_nb.rasp.compiler.assemble import compile_rasp, library_vocab
from ttc_nb.runs.provenance import cpu_name


def main(device: str, n: int = 1000, length: int = 64):
    p, rng = library('sort_bos'), random.Random(0)
    xs = ['§' + ''.join(rng.choice('abcd') for _ in range(length - 1)) for _ in range(n)]
    t = time.perf_counter()
    m = compile_rasp(p, library_vocab('sort_bos'), length).to(device)
    t_compile = time.perf_counter() - t
    ids, mask = m.encode(xs)
    with torch.no_grad():
        t = time.perf_counter()
        x, attns = m(ids.to(device), mask.to(device))
        got = m.decode(x, attns, [len(s) for s in xs])
        t_model = time.perf_counter() - t
    t = time.perf_counter()
    want = [R.evaluate(p.output, s) for s in xs]
    t_interp = time.perf_counter() - t
    return dict(
        program='sort_bos',
        inputs=n,
        length=length,
        device=device,
        cpu=cpu_name(),
        threads=torch.get_num_threads(),
        compile_s=round(t_compile, 2),
        compiled_s=round(t_model, 3),
        interpreter_s=round(t_interp, 3),
        exact=sum(g.tolist() == w.tolist() for g, w in zip(got, want)),
        d_model=m.d_model,
        heads=m.heads,
        params=sum(q.numel() for q in m.parameters()),
    )


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--device', default='cpu')
    out = main(ap.parse_args().device)
    Path('nbs/results/rasp/compile').mkdir(parents=True, exist_ok=True)
    Path('nbs/results/rasp/compile/speed.json').write_text(json.dumps(out, indent=1) + '\n')
    print(json.dumps(out))
