"""Job plugins (``spec.plugins``): ``env``, ``svc`` and ``ssh``, producing what Volcano's produce.

A plugin has three hooks, called by ``sync.py`` the way Volcano's job controller calls them:

- ``on_pod_create(pod, job)``: change a pod before it is created (pure);
- ``on_job_add(job, writer)``: create what the job needs (a Service, a ConfigMap, a Secret)
  while it is being initiated; the controller then records ``plugin-<name>: <name>`` in
  ``status.controlledResources`` so it happens once;
- ``on_job_delete(job, writer)``: delete it again when the whole job is killed (restart,
  abort, finish); a restarted job adds it afresh.

Everything created carries a controller owner reference to the Job, so deleting the Job
removes it too (the garbage collector). **A plugin owns only what it created**: when an object
of the name it would use already exists and is not controlled by this Job (same uid), the
plugin step fails with a ``PluginError`` (a Warning Event on the Job) instead of adopting it
— otherwise anyone who may create Jobs could have a Service, ConfigMap, NetworkPolicy or
Secret of that name mounted into their pods and deleted with the Job. ``on_job_delete``
deletes an object only while it is controlled by this Job, with its uid as a precondition.
Volcano's plugins:

- **env**: ``VK_TASK_INDEX`` and ``VC_TASK_INDEX`` = the pod's index, in every container.
- **svc**: the pod's ``hostname`` (its name) and ``subdomain`` (the job name); a headless
  Service named after the job selecting its pods; a ConfigMap ``<job>-svc`` with
  ``<task>.host`` (hosts one per line), ``VC_<TASK>_HOSTS`` (comma-separated) and
  ``VC_<TASK>_NUM``, mounted at ``/etc/volcano`` and (unless ``--inject-hosts-env=false``)
  given to containers as env vars; a NetworkPolicy letting only the job's pods in
  (``--disable-network-policy`` turns it off); ``--publish-not-ready-addresses``.
- **ssh**: a Secret ``<job>-ssh`` (the controller may create and delete Secrets but not
  read them, so any existing Secret of that name is a clash, and the uid of the one created
  is recorded in ``status.controlledResources`` as ``plugin-ssh.secret-uid`` for its delete)
  with a fresh 2048-bit RSA key (``id_rsa``,
  ``id_rsa.pub``, ``authorized_keys``) and an ssh ``config`` naming every pod, mounted at
  ``/root/.ssh`` (``--ssh-key-file-path``; mode 0600, 0644 elsewhere); ``--ssh-port``,
  ``--ssh-private-key``/``--ssh-public-key`` for a key of the user's.

Arguments are Volcano's flags (``--name=value``, ``--flag`` for true). Unknown plugin names
are reported by the controller, not here.

Host lists are bounded: an object the API server stores (a ConfigMap, a Secret, a pod with
its env) holds at most ``MAX_HOST_LIST_BYTES`` (1 MiB, etcd's request limit rounded down), so
a task whose host list would be larger fails the plugin step with a ``PluginError`` naming
``spec.tasks[i].replicas`` before any list is built; a huge ``replicas`` never costs memory.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import controller_ref, uid_of
from volcano_py.api.vcjob import (
    JOB_NAME_KEY,
    JOB_NAMESPACE_KEY,
    TASK_INDEX,
    JobView,
    TaskSpec,
    job_owner_reference,
)
from volcano_py.controllers.job.interfaces import JobClient
from volcano_py.kube.errors import AlreadyExists, Conflict, NotFound

CONFIGMAP_MOUNT_PATH = "/etc/volcano"
SSH_ABSOLUTE_PATH = "/root/.ssh"
SSH_RELATIVE_PATH = ".ssh"
SSH_FILES = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")
MAX_HOST_LIST_BYTES = 1 << 20


class PluginError(Exception):
    """A plugin step that cannot succeed for this Job as written (the message names why)."""


def check_host_list(view: JobView, task: TaskSpec, count: int, per_host: int = 0) -> None:
    """Raise ``PluginError`` when ``count`` hosts of ``task`` would pass the size bound.

    ``per_host`` is what each entry adds beyond ``<job>-<task>-<index>.<subdomain>`` (a
    port, a separator); the estimate takes the longest index, so it never undercounts.
    """
    subdomain = (task.template.get("spec") or {}).get("subdomain") or view.name
    entry = len(view.name) + len(task.name) + len(str(count)) + len(subdomain) + 4 + per_host
    if count * entry > MAX_HOST_LIST_BYTES:
        index = next((i for i, t in enumerate(view.tasks) if t.name == task.name), 0)
        raise PluginError(
            f"spec.tasks[{index}].replicas: {count} hosts of task {task.name!r} take about "
            f"{count * entry} bytes, more than the {MAX_HOST_LIST_BYTES} bytes one object "
            "may hold"
        )


Writer = JobClient  # the client verbs plugins use (get, create, delete)


def flags(arguments: Sequence[str]) -> dict[str, str]:
    """Volcano's plugin flags: ``--name=value`` -> name: value, ``--name`` -> name: "true"."""
    out: dict[str, str] = {}
    for arg in arguments:
        key, _, value = arg.lstrip("-").partition("=")
        out[key] = value if "=" in arg else "true"
    return out


def _containers(pod: JSON) -> Iterator[JSON]:
    spec = pod.setdefault("spec", {})
    yield from spec.get("containers") or []
    yield from spec.get("initContainers") or []


def _owned(job: Mapping[str, Any], view: JobView, name: str) -> JSON:
    return {
        "name": name,
        "namespace": view.namespace,
        "ownerReferences": [job_owner_reference(job)],
    }


def _controlled_by(obj: Mapping[str, Any], view: JobView) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == view.uid and ref.get("kind") == "Job"


def create_owned(
    writer: Writer, resource: R.APIResource, body: JSON, view: JobView, *, readable: bool = True
) -> JSON | None:
    """Create ``body``; an existing object of its name must be this Job's, never adopted.

    The object created, or None when this Job's own was already there. ``readable=False``
    (Secrets: the controller may not read them) treats any existing object as a clash.
    """
    name = body["metadata"]["name"]
    try:
        return writer.create(resource, body, view.namespace)
    except AlreadyExists:
        if not readable:
            raise PluginError(
                f"{resource.kind} {view.namespace}/{name} already exists; it is not adopted "
                "(rename the Job or remove it)"
            ) from None
    try:
        existing = writer.get(resource, name, view.namespace)
    except NotFound:  # deleted since: the next sync creates it
        raise PluginError(
            f"{resource.kind} {view.namespace}/{name} vanished while created"
        ) from None
    if not _controlled_by(existing, view):
        raise PluginError(
            f"{resource.kind} {view.namespace}/{name} already exists and is not owned by Job "
            f"{view.namespace}/{view.name}; it is not adopted (rename the Job or remove it)"
        )
    return None


def delete_owned(writer: Writer, resource: R.APIResource, name: str, view: JobView) -> None:
    """Delete the object ``name`` only while this Job controls it (its uid a precondition)."""
    try:
        existing = writer.get(resource, name, view.namespace)
    except NotFound:
        return
    if not _controlled_by(existing, view):
        return
    with contextlib.suppress(NotFound, Conflict):
        writer.delete(resource, name, view.namespace, preconditions={"uid": uid_of(existing)})


def hosts_signature(view: JobView) -> str:
    """What ``hosts(view)`` depends on, short: each task's name, replicas and fixed names."""
    parts = []
    for task in view.tasks:
        spec = task.template.get("spec") or {}
        fixed = "/".join(str(spec.get(k) or "") for k in ("hostname", "subdomain")).strip("/")
        parts.append(f"{task.name}={task.replicas}" + (f"@{fixed}" if fixed else ""))
    return ",".join(parts)


def hosts_data(view: JobView) -> dict[str, str]:
    """The hosts ConfigMap's data: ``<task>.host``, ``VC_<TASK>_HOSTS``, ``VC_<TASK>_NUM``."""
    data: dict[str, str] = {}
    for task, names in hosts(view).items():
        key = _env_key(task)
        data[f"{key}.host"] = "\n".join(names)
        data[f"VC_{key.upper()}_HOSTS"] = ",".join(names)
        data[f"VC_{key.upper()}_NUM"] = str(len(names))
    return data


def hosts(view: JobView) -> dict[str, list[str]]:
    """Per task, the ``hostname.subdomain`` of each pod (one when the template fixes it)."""
    out: dict[str, list[str]] = {}
    for task in view.tasks:
        spec = task.template.get("spec") or {}
        fixed, subdomain = spec.get("hostname") or "", spec.get("subdomain") or view.name
        if fixed:  # every pod has the same hostname: one entry (none without pods)
            names = [fixed] if task.replicas > 0 else []
        else:
            check_host_list(view, task, task.replicas, per_host=1)
            names = [f"{view.name}-{task.name}-{i}" for i in range(task.replicas)]
        out[task.name] = [f"{n}.{subdomain}" for n in names]
    return out


class NoJobHooks:
    """Job hooks for a plugin that only changes pods: nothing to create, update or delete.

    Plugins that do have objects override the hooks they need.
    """

    def on_job_add(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Nothing to create."""
        return None

    def on_job_update(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Nothing follows the spec (pods read their env when they start)."""
        return None

    def on_job_delete(self, job: Mapping[str, Any], view: JobView, writer: Writer) -> None:
        """Nothing to delete."""


@dataclass
class EnvPlugin(NoJobHooks):
    """``env``: the pod's index as ``VK_TASK_INDEX`` and ``VC_TASK_INDEX``."""

    name: str = "env"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Add the index variables to every container."""
        index = (pod.get("metadata") or {}).get("labels", {}).get(TASK_INDEX, "")
        for container in _containers(pod):
            env = container.setdefault("env", [])
            env += [
                {"name": "VK_TASK_INDEX", "value": index},
                {"name": "VC_TASK_INDEX", "value": index},
            ]


def _env_key(task: str) -> str:
    return task.replace("-", "_")


@dataclass
class SvcPlugin:
    """``svc``: headless Service, hosts ConfigMap and env, NetworkPolicy."""

    arguments: Sequence[str] = ()
    name: str = "svc"

    def _flag(self, key: str, default: bool) -> bool:
        value = flags(self.arguments).get(key)
        return default if value is None else value.lower() == "true"

    def configmap_name(self, view: JobView) -> str:
        """``<job>-svc``."""
        return f"{view.name}-{self.name}"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Hostname, subdomain, hosts env vars and the hosts ConfigMap mounted."""
        spec = pod.setdefault("spec", {})
        spec["hostname"] = spec.get("hostname") or pod["metadata"]["name"]
        spec["subdomain"] = spec.get("subdomain") or view.name
        cm = self.configmap_name(view)
        if self._flag("inject-hosts-env", True):
            names = []
            for task in view.tasks:
                key = _env_key(task.name).upper()
                names += [f"VC_{key}_HOSTS", f"VC_{key}_NUM"]
            env = [
                {"name": n, "valueFrom": {"configMapKeyRef": {"name": cm, "key": n}}} for n in names
            ]
            for container in _containers(pod):
                container.setdefault("env", []).extend(env)
        spec.setdefault("volumes", []).append({"name": cm, "configMap": {"name": cm}})
        for container in _containers(pod):
            container.setdefault("volumeMounts", []).append(
                {"name": cm, "mountPath": CONFIGMAP_MOUNT_PATH}
            )

    def on_job_add(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Create the hosts ConfigMap, the headless Service and the NetworkPolicy."""
        ns = view.namespace
        meta = _owned(job, view, self.configmap_name(view))
        create_owned(
            writer,
            R.CONFIGMAPS,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": hosts_data(view)},
            view,
        )
        selector = {JOB_NAME_KEY: view.name, JOB_NAMESPACE_KEY: ns}
        service: JSON = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _owned(job, view, view.name),
            "spec": {
                "clusterIP": "None",
                "selector": selector,
                "publishNotReadyAddresses": self._flag("publish-not-ready-addresses", False),
            },
        }
        create_owned(writer, R.SERVICES, service, view)
        if not self._flag("disable-network-policy", False):
            policy: JSON = {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": _owned(job, view, view.name),
                "spec": {
                    "podSelector": {"matchLabels": selector},
                    "ingress": [{"from": [{"podSelector": {"matchLabels": selector}}]}],
                    "policyTypes": ["Ingress"],
                },
            }
            create_owned(writer, R.NETWORKPOLICIES, policy, view)
        return {self.hosts_key(): hosts_signature(view)}

    def hosts_key(self) -> str:
        """The ``status.controlledResources`` key recording the hosts the ConfigMap lists."""
        return f"plugin-{self.name}.hosts"

    def on_job_update(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Rewrite the hosts ConfigMap when a task was scaled (elastic jobs read their peers).

        Compared with the signature recorded at the last write, so a sync that changes
        nothing costs no request. Only the Job's own ConfigMap is rewritten.
        """
        signature = hosts_signature(view)
        controlled = (job.get("status") or {}).get("controlledResources") or {}
        if controlled.get(self.hosts_key()) == signature:
            return None
        name = self.configmap_name(view)
        try:
            current = writer.get(R.CONFIGMAPS, name, view.namespace)
        except NotFound:
            self.on_job_add(job, view, writer)  # deleted by hand: made again
            return {self.hosts_key(): signature}
        if not _controlled_by(current, view):
            raise PluginError(
                f"ConfigMap {view.namespace}/{name} is not owned by Job "
                f"{view.namespace}/{view.name}; its hosts are not rewritten"
            )
        writer.update(R.CONFIGMAPS, {**current, "data": hosts_data(view)})
        return {self.hosts_key(): signature}

    def on_job_delete(self, job: Mapping[str, Any], view: JobView, writer: Writer) -> None:
        """Delete the ConfigMap, the Service and the NetworkPolicy."""
        delete_owned(writer, R.CONFIGMAPS, self.configmap_name(view), view)
        delete_owned(writer, R.SERVICES, view.name, view)
        if not self._flag("disable-network-policy", False):
            delete_owned(writer, R.NETWORKPOLICIES, view.name, view)


def ssh_config(view: JobView, port: int) -> str:
    """The ssh ``config``: every pod by its hostname, at ``hostname.subdomain``."""
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for names in hosts(view).values():
        for full in names:
            host = full.split(".", 1)[0]
            lines += [f"Host {host}", f"  HostName {full}", f"  Port {port}"]
    return "\n".join(lines) + "\n"


def generate_key() -> tuple[bytes, bytes]:
    """A fresh 2048-bit RSA key: PKCS#1 PEM private key, OpenSSH public key line."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private, public + b"\n"


@dataclass
class SshPlugin(NoJobHooks):
    """``ssh``: a key pair and ssh config in a Secret, mounted into every container.

    Its ssh config keeps the creation-time hosts (as Volcano's): no ``on_job_update``.
    """

    arguments: Sequence[str] = ()
    key_source: Callable[[], tuple[bytes, bytes]] = generate_key
    name: str = "ssh"

    def _flags(self) -> dict[str, str]:
        return flags(self.arguments)

    def secret_name(self, view: JobView) -> str:
        """``<job>-ssh``."""
        return f"{view.name}-{self.name}"

    def key_path(self) -> str:
        """Where the keys are mounted."""
        return self._flags().get("ssh-key-file-path") or SSH_ABSOLUTE_PATH

    def port(self) -> int:
        """``--ssh-port`` (22 when absent or out of range, as Volcano falls back)."""
        try:
            port = int(self._flags().get("ssh-port", "22"))
        except ValueError:
            return 22
        return port if 0 < port <= 65535 else 22

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Mount the Secret's four files at the key path."""
        name = self.secret_name(view)
        mode = 0o600 if self.key_path() == SSH_ABSOLUTE_PATH else 0o644
        items = [{"key": f, "path": f"{SSH_RELATIVE_PATH}/{f}"} for f in SSH_FILES]
        volume = {"name": name, "secret": {"secretName": name, "items": items, "defaultMode": mode}}
        pod.setdefault("spec", {}).setdefault("volumes", []).append(volume)
        for container in _containers(pod):
            container.setdefault("volumeMounts", []).append(
                {"name": name, "mountPath": self.key_path(), "subPath": SSH_RELATIVE_PATH}
            )

    def on_job_add(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Create the Secret (the user's key when given, else a fresh one)."""
        given = self._flags()
        if given.get("ssh-private-key"):
            private = given["ssh-private-key"].encode()
            public = given.get("ssh-public-key", "").encode()
        else:
            private, public = self.key_source()
        files = {
            "id_rsa": private,
            "id_rsa.pub": public,
            "authorized_keys": public,
            "config": ssh_config(view, self.port()).encode(),
        }
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _owned(job, view, self.secret_name(view)),
            "data": {k: base64.b64encode(v).decode() for k, v in files.items()},
        }
        created = create_owned(writer, R.SECRETS, secret, view, readable=False)
        return {self.uid_key(): uid_of(created)} if created is not None else None

    def uid_key(self) -> str:
        """The ``status.controlledResources`` key recording the Secret's uid."""
        return f"plugin-{self.name}.secret-uid"

    def on_job_delete(self, job: Mapping[str, Any], view: JobView, writer: Writer) -> None:
        """Delete the Secret this Job created (its recorded uid a precondition)."""
        controlled = (job.get("status") or {}).get("controlledResources") or {}
        uid = controlled.get(self.uid_key())
        if not uid:
            return  # not recorded: not provably ours; the garbage collector has it if it is
        with contextlib.suppress(NotFound, Conflict):
            writer.delete(
                R.SECRETS, self.secret_name(view), view.namespace, preconditions={"uid": uid}
            )


class JobPlugin(Protocol):
    """The role every job plugin plays; see the module docstring."""

    name: str

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Change a pod before it is created."""
        ...

    def on_job_add(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Create what the job needs."""
        ...

    def on_job_update(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Bring what it created in line with a changed spec (scaling)."""
        ...

    def on_job_delete(self, job: Mapping[str, Any], view: JobView, writer: Writer) -> None:
        """Delete it again."""
        ...
