"""Pure builders for the objects more than one Ray kind creates (pods, Services, Ingress,
RBAC, auth, mTLS, probes, GCS FT, names, hashes, the RayJob submitter).

Everything here takes the RayCluster as the plain dict the API server returns (camelCase keys),
never mutates it, performs no I/O and returns plain dicts ready to be sent to the API server.
Operator switches arrive as :class:`~kuberay.controllers.common.BuildOptions`, feature gates
as ``Mapping[str, bool]``. Builders used by one kind only live in that kind's controller
package. Import each builder from its module (``kuberay.controllers.builders.pod``, ...):
the package itself exports nothing, so importing one builder loads no other.
"""
