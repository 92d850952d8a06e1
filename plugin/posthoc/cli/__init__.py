"""The ``posthoc`` command line: function first, CLI second (each command calls a library function)."""
