"""Realistic synthetic Pod and Node JSON, shaped like what a kubelet-backed cluster serves."""

from __future__ import annotations

import uuid
from typing import Any

JSON = dict[str, Any]


def managed_fields(manager: str) -> list[JSON]:
    return [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-11-21T04:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                    "f:ownerReferences": {".": {}},
                },
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"main"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:resources": {
                                ".": {},
                                "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}},
                            },
                        }
                    }
                },
            },
        }
    ]


def pod(i: int, namespace: str = "bench", node: str | None = None) -> JSON:
    """A Deployment-owned, running pod (~3 KB of JSON without managedFields)."""
    name = f"train-{i // 64:05d}-7d9f8c6b5-{i:06d}"
    spec: JSON = {
        "containers": [
            {
                "name": "main",
                "image": "registry.example.com/ml/trainer:v1.4.2",
                "command": ["python", "-m", "trainer"],
                "args": ["--epochs", "10"],
                "env": [
                    {"name": "RANK", "value": str(i % 64)},
                    {"name": "WORLD_SIZE", "value": "64"},
                ],
                "resources": {
                    "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                    "limits": {"nvidia.com/gpu": "1"},
                },
                "volumeMounts": [
                    {
                        "name": "kube-api-access-abcde",
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "readOnly": True,
                    }
                ],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "schedulerName": "volcano",
        "securityContext": {},
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            {
                "name": "kube-api-access-abcde",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                    ],
                },
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "generateName": name[:-6],
            "namespace": namespace,
            "uid": str(uuid.UUID(int=i)),
            "resourceVersion": str(1000 + i),
            "creationTimestamp": "2026-11-21T04:00:00Z",
            "labels": {"app": f"train-{i // 64:05d}", "pod-template-hash": "7d9f8c6b5"},
            "annotations": {
                "scheduling.k8s.io/group-name": f"podgroup-{i // 64:05d}",
                "volcano.sh/network-topology-mode": "hard",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"train-{i // 64:05d}-7d9f8c6b5",
                    "uid": str(uuid.UUID(int=10**9 + i // 64)),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": managed_fields("kube-controller-manager"),
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "qosClass": "Burstable",
            "hostIP": "10.1.0.1",
            "podIP": f"10.2.{i // 250 % 250}.{i % 250}",
            "startTime": "2026-11-21T04:00:05Z",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-21T04:00:05Z"}
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/ml/trainer:v1.4.2",
                    "imageID": "registry.example.com/ml/trainer@sha256:" + "0" * 64,
                    "containerID": "containerd://" + "a" * 64,
                    "started": True,
                    "state": {"running": {"startedAt": "2026-11-21T04:00:06Z"}},
                }
            ],
        },
    }


def node(i: int, images: int = 50) -> JSON:
    """A GPU node as a kubelet reports it (``images`` entries in status.images)."""
    name = f"node-{i:05d}"
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": str(uuid.UUID(int=2 * 10**9 + i)),
            "resourceVersion": str(5000 + i),
            "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "gpu.8x",
                "topology.kubernetes.io/zone": f"zone-{i % 3}",
                "network.example.com/spine": f"spine-{i // 512}",
                "network.example.com/leaf": f"leaf-{i // 32}",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": managed_fields("kubelet"),
        },
        "spec": {"podCIDR": f"10.2.{i % 250}.0/24", "providerID": f"example://{name}"},
        "status": {
            "capacity": {
                "cpu": "96",
                "memory": "1056Gi",
                "nvidia.com/gpu": "8",
                "pods": "110",
                "ephemeral-storage": "1Ti",
            },
            "allocatable": {
                "cpu": "95500m",
                "memory": "1050Gi",
                "nvidia.com/gpu": "8",
                "pods": "110",
                "ephemeral-storage": "900Gi",
            },
            "conditions": [
                {
                    "type": t,
                    "status": "True" if t == "Ready" else "False",
                    "lastHeartbeatTime": "2026-11-21T04:00:00Z",
                    "lastTransitionTime": "2026-11-01T00:00:00Z",
                    "reason": f"Kubelet{t}",
                    "message": f"kubelet reports {t}",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.1.{i // 250}.{i % 250}"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "f" * 32,
                "systemUUID": str(uuid.UUID(int=i)),
                "bootID": str(uuid.UUID(int=3 * 10**9 + i)),
                "kernelVersion": "6.1.0-27-amd64",
                "osImage": "Debian GNU/Linux 12",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": "v1.37.1",
                "kubeProxyVersion": "v1.37.1",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [
                {
                    "names": [
                        f"registry.example.com/img-{k}@sha256:{k:064x}",
                        f"registry.example.com/img-{k}:v{k}",
                    ],
                    "sizeBytes": 100_000_000 + k,
                }
                for k in range(images)
            ],
        },
    }
