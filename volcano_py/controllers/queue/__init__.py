"""The ``queue-controller``: Volcano's queue states, its Commands and the built-in queues.

``state.py`` is the pure state machine (Open / Closing / Closed / Unknown under the
``SyncQueue``, ``OpenQueue`` and ``CloseQueue`` actions); ``controller.py`` wires it to the
shared Queue, PodGroup and Command informers and writes ``status.state``.
"""
