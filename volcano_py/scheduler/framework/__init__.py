"""Volcano's scheduler framework: interface, statement, extension points, session, registries.

``interface`` < ``statement`` < ``extension_points`` < ``session`` < ``registry`` <
``framework`` (``open_session`` / ``close_session``); ``conf``, ``arguments`` and
``volcano_names`` read the configuration. The package docstring of ``volcano_py.scheduler``
has the tour.
"""
