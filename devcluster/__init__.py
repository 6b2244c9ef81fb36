"""The local cluster behind ``make run``, ``make demo``, the tests and the benches.

A real control plane on loopback, written as an importable package in the spirit of
controller-runtime's ``envtest`` (not as test fixtures), so the product's front door does not
live in the test tree. A tour, in the order a cluster comes up:

- ``provision`` — finds or builds etcd, kube-apiserver, kube-controller-manager, kubectl and
  kwok from the Go module proxy (helper modules under ``gomod/``) into a cache outside the
  clone (``~/.cache/volcano-py/testbin``), keyed by versions and the modules' ``go.mod``.
- ``pki`` — the cluster's CA, serving and client certificates.
- ``harness.ControlPlane`` — etcd + kube-apiserver + kube-controller-manager + kwok on random
  free ports in a temporary folder; ``admin_config()`` and a kubeconfig for clients.
- ``kwok`` / ``kwok-stages.yaml`` — kwok plays the kubelets: heartbeats, Leases, pods Running,
  deletions completing. ``nodes`` builds Node bodies it manages and waits until they are up.
- ``crds`` — installs ``manifests/crds`` and waits until each CRD is Established.
- ``fleet`` — the default fleet of ``make run`` (GPU nodes in spines and racks).
- ``manager`` — starts and stops a whole ``volcano-py manager`` process against a plane and
  registers its webhook with the API server.
- ``devrun`` / ``devstate`` — ``make run`` and ``make demo``: a plane (or ``$KUBECONFIG``), the
  fleet, the manager in the foreground, and the state file that lets a second run find the
  first.

Never imported by ``volcano_py`` or ``webhooks`` and never shipped in the product's wheel
(both enforced: an import-linter contract and ``setup.cfg``'s package list). It imports the
product, not the other way round, and imports nothing from ``tests``.
"""
