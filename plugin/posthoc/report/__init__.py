"""HTML reports: one self-contained file with figures embedded as PNG data URIs."""
