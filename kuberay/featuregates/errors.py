"""The single exception type of the feature gate package.

Feature gates are set from command-line flags, so every failure is a user input
error and should be reported with one message naming the offending gate.
"""

__all__ = ["FeatureGateError"]


class FeatureGateError(ValueError):
    """Raised for unknown gates, malformed values, locked gates and conflicting specs."""
