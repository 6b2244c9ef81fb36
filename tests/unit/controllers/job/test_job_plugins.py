"""Job plugins env, svc and ssh: what they add to pods and what they create and delete."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from tests.unit.controllers.job.jobfakes import (
    RecordingClient,
    harness,
    job_pod,
    load_job,
    podgroup_for,
    with_phase,
)
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.builder import build_pod
from volcano_py.controllers.job.plugins import (
    EnvPlugin,
    PluginError,
    SshPlugin,
    SvcPlugin,
    flags,
    generate_key,
    ssh_config,
)

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  minAvailable: 3
  plugins: {env: [], svc: ["--disable-network-policy"], ssh: []}
  tasks:
    - name: mpi-master
      replicas: 1
      template: {spec: {containers: [{name: m, image: x}]}}
    - name: worker
      replicas: 2
      template: {spec: {containers: [{name: w, image: x}], initContainers: [{name: i}]}}
""")
VIEW = JobView.from_dict(JOB)


def pod(task: int, ix: int) -> dict[str, Any]:
    return build_pod(JOB, VIEW, VIEW.tasks[task], ix)


def test_flags_read_volcanos_plugin_arguments() -> None:
    assert flags(["--ssh-port=2222", "--disable-network-policy"]) == {
        "ssh-port": "2222", "disable-network-policy": "true",
    }  # fmt: skip


def test_env_plugin_adds_the_task_index_to_every_container() -> None:
    p = pod(1, 1)
    EnvPlugin().on_pod_create(p, VIEW)
    for container in (*p["spec"]["containers"], *p["spec"]["initContainers"]):
        assert container["env"] == [
            {"name": "VK_TASK_INDEX", "value": "1"}, {"name": "VC_TASK_INDEX", "value": "1"},
        ]  # fmt: skip


def test_svc_plugin_gives_pods_a_hostname_subdomain_hosts_env_and_mount() -> None:
    p = pod(1, 0)
    SvcPlugin(()).on_pod_create(p, VIEW)
    spec = p["spec"]
    assert (spec["hostname"], spec["subdomain"]) == ("mpi-worker-0", "mpi")
    names = [e["name"] for e in spec["containers"][0]["env"]]
    assert names == ["VC_MPI_MASTER_HOSTS", "VC_MPI_MASTER_NUM", "VC_WORKER_HOSTS", "VC_WORKER_NUM"]
    assert spec["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]["name"] == "mpi-svc"
    assert spec["volumes"] == [{"name": "mpi-svc", "configMap": {"name": "mpi-svc"}}]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "mpi-svc", "mountPath": "/etc/volcano"}
    ]


def test_svc_plugin_creates_the_hosts_configmap_service_and_network_policy() -> None:
    client = RecordingClient()
    SvcPlugin(()).on_job_add(JOB, VIEW, client)
    assert client.verbs() == [
        ("create", "configmaps", "mpi-svc"),
        ("create", "services", "mpi"),
        ("create", "networkpolicies", "mpi"),
    ]
    data = client.calls[0].body["data"]
    assert data == {
        "mpi_master.host": "mpi-mpi-master-0.mpi", "VC_MPI_MASTER_HOSTS": "mpi-mpi-master-0.mpi",
        "VC_MPI_MASTER_NUM": "1",
        "worker.host": "mpi-worker-0.mpi\nmpi-worker-1.mpi",
        "VC_WORKER_HOSTS": "mpi-worker-0.mpi,mpi-worker-1.mpi", "VC_WORKER_NUM": "2",
    }  # fmt: skip
    service = client.calls[1].body
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {"volcano.sh/job-name": "mpi",
                                           "volcano.sh/job-namespace": "ns"}  # fmt: skip
    assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_ssh_plugin_secret_holds_a_key_pair_and_a_config_naming_every_pod() -> None:
    client = RecordingClient()
    SshPlugin((), key_source=lambda: (b"PRIVATE", b"ssh-rsa AAA\n")).on_job_add(JOB, VIEW, client)
    ((verb, plural, name),) = client.verbs()
    assert (verb, plural, name) == ("create", "secrets", "mpi-ssh")
    data = {k: base64.b64decode(v).decode() for k, v in client.calls[0].body["data"].items()}
    assert data["id_rsa"] == "PRIVATE"
    assert data["authorized_keys"] == data["id_rsa.pub"] == "ssh-rsa AAA\n"
    assert data["config"] == ssh_config(VIEW, 22)
    assert "Host mpi-worker-1\n  HostName mpi-worker-1.mpi\n  Port 22\n" in data["config"]


def test_ssh_plugin_mounts_the_keys_and_honours_its_flags() -> None:
    p = pod(0, 0)
    plugin = SshPlugin(("--ssh-key-file-path=/home/u/.ssh", "--ssh-port=99999"))
    plugin.on_pod_create(p, VIEW)
    (volume,) = p["spec"]["volumes"]
    assert volume["secret"]["defaultMode"] == 0o644
    assert [i["path"] for i in volume["secret"]["items"]] == [
        ".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/authorized_keys", ".ssh/config",
    ]  # fmt: skip
    assert p["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "mpi-ssh", "mountPath": "/home/u/.ssh", "subPath": ".ssh"}
    ]
    assert plugin.port() == 22  # out of range: Volcano falls back to 22


def test_generated_key_is_pem_and_openssh() -> None:
    private, public = generate_key()
    assert private.startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    assert public.startswith(b"ssh-rsa ")
    assert public.endswith(b"\n")


def test_sync_runs_plugins_once_and_pods_carry_their_changes() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.run("ns/mpi")
    made = [(v, p) for v, p, _ in h.client.verbs() if v == "create"]
    assert ("create", "configmaps") in made
    assert ("create", "secrets") in made
    assert ("create", "networkpolicies") not in made  # --disable-network-policy
    controlled = h.status_writes()[0]["controlledResources"]
    assert controlled == {"plugin-env": "env", "plugin-ssh": "ssh", "plugin-svc": "svc",
                          "plugin-ssh.secret-uid": "uid-mpi-ssh",
                          "plugin-svc.hosts": "mpi-master=1,worker=2"}  # fmt: skip
    assert h.client.of("update", "configmaps") == []  # nothing scaled: no rewrite
    created = h.client.of("create", "pods")[0].body
    env = [e["name"] for e in created["spec"]["containers"][0]["env"]]
    assert env[:2] == ["VK_TASK_INDEX", "VC_TASK_INDEX"]
    assert {v["name"] for v in created["spec"]["volumes"]} == {"mpi-svc", "mpi-ssh"}


def test_whole_job_kill_deletes_what_plugins_made() -> None:
    job = with_phase(JOB, "Running", minAvailable=3,
                     controlledResources={"plugin-svc": "svc", "plugin-ssh": "ssh",
                                          "plugin-env": "env",
                                          "plugin-ssh.secret-uid": "obj-mpi-ssh"})  # fmt: skip
    pods = (job_pod(job, "worker", 0, "Running"),)
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    for plural, name in (("secrets", "mpi-ssh"), ("configmaps", "mpi-svc"), ("services", "mpi")):
        h.client.objects[(plural, name)] = _object(name, owner_uid="uid-1")
    h.run("ns/mpi", action="AbortJob")
    deleted = [(p, n) for v, p, n in h.client.verbs() if v == "delete"]
    assert ("secrets", "mpi-ssh") in deleted
    assert ("configmaps", "mpi-svc") in deleted
    assert ("services", "mpi") in deleted
    assert h.status_writes()[-1].get("controlledResources") == {}


def _object(name: str, *, owner_uid: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"obj-{name}"}
    if owner_uid is not None:
        ref = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "mpi"}
        meta["ownerReferences"] = [{**ref, "uid": owner_uid, "controller": True}]
    return {"metadata": meta}


def test_an_existing_object_of_the_plugins_name_is_never_adopted() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.client.objects[("secrets", "mpi-ssh")] = _object("mpi-ssh", owner_uid=None)
    with pytest.raises(PluginError, match="already exists; it is not adopted"):
        h.run("ns/mpi")
    warnings = [m for t, r, m in h.recorder.events if r == "PluginError" and t == "Warning"]
    assert len(warnings) == 1
    assert h.client.of("delete", "secrets") == []
    assert h.client.of("create", "pods") == []  # the plugin step failed: no pod mounts it
    controlled = h.status_writes()[-1].get("controlledResources") or {}
    assert "plugin-ssh" not in controlled  # env's progress is kept, ssh is not recorded


def test_a_configmap_of_another_owner_is_a_clash_and_this_jobs_own_is_accepted() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.client.objects[("configmaps", "mpi-svc")] = _object("mpi-svc", owner_uid="other-job")
    with pytest.raises(PluginError, match="is not owned by Job ns/mpi"):
        h.run("ns/mpi")
    h.client.objects[("configmaps", "mpi-svc")] = _object("mpi-svc", owner_uid="uid-1")
    h.run("ns/mpi")  # a retry after a partial failure: this Job's own ConfigMap is fine
    assert len(h.client.of("create", "pods")) == 3


def test_kill_deletes_only_objects_this_job_controls_with_their_uid() -> None:
    job = with_phase(JOB, "Running", minAvailable=3,
                     controlledResources={"plugin-svc": "svc", "plugin-ssh": "ssh"})  # fmt: skip
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Running"),))
    h.client.objects[("services", "mpi")] = _object("mpi", owner_uid="someone-else")
    h.client.objects[("configmaps", "mpi-svc")] = _object("mpi-svc", owner_uid="uid-1")
    h.run("ns/mpi", action="AbortJob")
    deletes = {c.name: c.body for c in h.client.of("delete", "configmaps")}
    assert deletes == {"mpi-svc": {"uid": "obj-mpi-svc"}}
    assert h.client.of("delete", "services") == []
    assert ("services", "mpi") in h.client.objects
    assert h.client.of("delete", "secrets") == []  # no uid recorded: not provably ours


def test_the_hosts_configmap_follows_a_scale_up_and_down() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.run("ns/mpi")
    written = h.sync.job("ns/mpi")
    assert written is not None
    for replicas, hosts_text in ((4, "mpi-worker-3.mpi"), (1, "mpi-worker-0.mpi")):
        scaled = copy.deepcopy(written)
        scaled["spec"]["tasks"][1]["replicas"] = replicas
        # the informer's copy of our last write, with the user's scale applied on top
        h.caches.jobs.put("ns/mpi", scaled)
        h.client.calls.clear()
        h.run("ns/mpi")
        (update,) = h.client.of("update", "configmaps")
        data = update.body["data"]
        assert data["VC_WORKER_NUM"] == str(replicas)
        assert data["worker.host"].split("\n")[-1] == hosts_text
        assert h.status_writes()[0]["controlledResources"]["plugin-svc.hosts"] == (
            f"mpi-master=1,worker={replicas}"
        )
        written = h.sync.job("ns/mpi")
        assert written is not None
        h.client.calls.clear()
        h.run("ns/mpi")
        assert h.client.of("update", "configmaps") == []  # recorded: no second rewrite
