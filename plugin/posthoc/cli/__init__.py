"""The ``posthoc`` command line: function first, CLI second (each command calls a library function).

One module an area (``setup``, ``score``, ``plan``, ``estimate``, ``ls``, ``backend``, ``predict``, ``flags``,
``crowdtruth``, ``sequence``, ``status``, ``demo``), each a thin click command registered in ``COMMANDS`` of
:mod:`~posthoc.cli.main` and imported only when used. Errors are one line: exit 2 for bad input, 3 for a service.
"""
