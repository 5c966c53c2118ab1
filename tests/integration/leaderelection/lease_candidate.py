"""A leader-election candidate in its own process, for tests that freeze it.

``python -m tests.integration.leaderelection.lease_candidate KUBECONFIG NAMESPACE
NAME IDENTITY LEASE RENEW RETRY`` prints ``campaigning``, campaigns for the Lease,
prints ``leading`` once it holds it, then leads until killed. Freezing it with SIGSTOP is
a process that truly stops renewing.
"""

from __future__ import annotations

import asyncio
import sys

from kuberay.kube import Client
from kuberay.reconcile import LeaderElector


async def main(argv: list[str]) -> None:
    """Campaign, announce leadership on stdout, lead forever."""
    kubeconfig, namespace, name, identity, lease, renew, retry = argv
    client = await Client.from_kubeconfig(kubeconfig, qps=0)
    elector = LeaderElector(
        client,
        namespace,
        name,
        identity=identity,
        lease_duration=float(lease),
        renew_deadline=float(renew),
        retry_period=float(retry),
    )

    async def lead() -> None:
        print("leading", flush=True)
        await asyncio.Event().wait()

    print("campaigning", flush=True)
    try:
        await elector.run(lead)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
