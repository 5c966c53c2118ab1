"""Test doubles that ship with the package so other projects' tests can use them too
(:class:`~kuberay.testing.fake_dashboard.FakeDashboard`, a fake Ray dashboard)."""

from kuberay.testing.fake_dashboard import FakeDashboard

__all__ = ["FakeDashboard"]
