"""Development scripts (not shipped in the wheel), a package so every script has one name.

Run a script by its path (``python hack/build/build.py``; each one that imports another puts
the checkout's root first on ``sys.path``, as ``python -m hack.build.build`` from the root
would) and import it by its dotted name (``from hack.build import build``): tests, other
scripts and :func:`kuberay.testing.checkout.import_hack` all reach the same module object.
"""
