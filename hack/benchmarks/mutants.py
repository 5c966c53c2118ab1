#!/usr/bin/env python3
"""Offline mutation harness: validator-accepted mutants must build without a crash.

    python hack/benchmarks/mutants.py                 # 3000 mutants, seed 0
    python hack/benchmarks/mutants.py -n 500 --seed 7 --show 20

Mutates KubeRay's sample RayClusters (see ``tests/mutants.py``), runs ``validate_raycluster``
and, when it accepts, every builder the RayCluster controller runs. Prints the counts and the
distinct crashes; exits 1 when any builder (or the validator itself) crashed.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(REPO)

from kuberay.api.v1.validation import validate_raycluster  # noqa: E402
from tests.mutants import mutate, run_builders, sample_clusters  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=3000, help="number of mutants")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=15, help="distinct crashes to print")
    args = parser.parse_args(argv)
    samples = sample_clusters()
    if not samples:
        print("no samples found", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    passed = crashed = validator_crashes = 0
    kinds: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for _ in range(args.n):
        name, base = rng.choice(samples)
        mutant, edits = mutate(base, rng)
        try:
            errors = validate_raycluster(mutant, gates=None)
        except Exception as exc:
            validator_crashes += 1
            key = f"validate_raycluster: {type(exc).__name__}"
            kinds[key] += 1
            examples.setdefault(key, f"{name} {edits}: {exc}"[:300])
            continue
        if [e for e in errors if e.source != "webhook"]:
            continue
        passed += 1
        crashes = run_builders(mutant)
        if crashes:
            crashed += 1
            for crash in crashes:
                key = f"{crash.builder.split('[')[0]}: {crash.error.split(':')[0]} @ {crash.where}"
                kinds[key] += 1
                examples.setdefault(key, f"{name} {edits}: {crash.error}"[:300])
    print(
        f"mutants={args.n} seed={args.seed} accepted={passed} "
        f"crashed={crashed} validator_crashes={validator_crashes}"
    )
    for key, count in kinds.most_common(args.show):
        print(f"{count:6d}  {key}\n        e.g. {examples[key]}")
    return 1 if crashed or validator_crashes else 0


if __name__ == "__main__":
    sys.exit(main())
