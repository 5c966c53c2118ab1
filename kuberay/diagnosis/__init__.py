"""The diagnosis ``kubectl ray why`` prints and the dashboard's "Why" section shows: one
implementation, pure (objects in, findings out; no API call, no I/O).

:mod:`.findings` holds the :class:`~.findings.Snapshot` (what the API showed about one
resource), the :class:`~.findings.Finding` and the :class:`~.findings.Diagnosis`;
:mod:`.rules` the rules per kind and :func:`~.rules.diagnose`; :mod:`.cluster_changes`
the operator's own rules about a changed spec. The callers gather a snapshot their own way
(the plugin with its client, the API server as its caller) and render the verdict. Both
``kuberay.kubectl_ray`` and ``kuberay.apiserver`` import this package; it imports neither
(``make lint``'s contracts). It applies the operator's pure rules (names, hashes, template
and group checks from ``kuberay.controllers``) rather than restating them.
"""
