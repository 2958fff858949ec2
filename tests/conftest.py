import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TTC = [str(Path(sys.executable).parent/'ttc')]   # the installed console script

def ttc(*args, cwd=None, **kw):
    "Run the `ttc` command line in a subprocess, on CPU; returns the CompletedProcess."
    env = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true'}
    return subprocess.run([*TTC, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, **kw)

def pytest_collection_modifyitems(items):
    "The documentation build and its browser check run last, as `make test` promises."
    items.sort(key=lambda i: i.path.name == 'test_docs_site.py')
