"""posthoc-review: posthoc verification of annotations in Label Studio."""

__version__ = "0.1.0"
