"""Helpers the plugins share that are not plugins themselves.

``node_affinity`` (selector, affinity and taint matching), ``queue_attr`` and ``quota_hooks``
(the per-queue view and checks of ``proportion`` and ``capacity``), ``hypernode_resources``
and ``hypernode_gradient`` (the resource cache and gradients of ``network-topology-aware``).
Nothing here registers in the ``PluginRegistry``; actions never import it.
"""
