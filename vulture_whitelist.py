"""Names vulture reports as unused that are used, for the dead-code check in ``make lint``.

vulture reads ``volcano_py``, ``webhooks``, ``tests``, ``bench`` (and ``devcluster``) and this
file; a name listed here counts as used. Add a name only with the reason it is a false
positive, grouped below; anything else vulture reports is dead code to delete.
"""

# ruff: noqa
# fmt: off

# called by a framework through its protocol: http.server, Flask routes and app class,
# gunicorn's worker and SSL hooks, re2 options, __exit__ signatures
_.do_GET
_.log_message
_.daemon_threads
_.close_connection
protocol_version
url_map_class
healthz
readyz
http_error
default_factory
_.nr_conns
_.on_client_socket_readable
_.initialized
_.data_ready
_.log_errors
_.never_capture
_.binary_location
exc

# pytest runs autouse fixtures by themselves
_drop_parsed_crds

# Volcano's wire values kept whole in their closed sets, and API fields a typed view keeps
# (volcano_py/api/vcjob.py)
JOB_UPDATED
TASK_FAILED
_.total_partitions

# prometheus_client's collector protocol (volcano_py/metrics.py's exact-name counter)
_.describe

# reprlib.Repr's limits, read by reprlib itself (volcano_py/api/safeload.py's brief())
_.maxlevel
_.maxdict
_.maxlist
_.maxtuple
_.maxset
_.maxstring
_.maxother
_.maxlong

# pytest: hooks, markers and fixtures (requested by parameter name)
pytest_collection_modifyitems
pytestmark
_restore_logging
_own_environment
restore_interpreter
fast_thread_switching
collector_off
clean_hypernodes
webhook_server
bypassed

# wire names and typed views of API objects kept with the others of their kind
# (Volcano's constants, TypedDict fields of raw JSON, enum members)
VOLCANO_QUEUE_NAME_KEY
VOLCANO_JOB_NAME_LABEL
KUBERNETES_HOSTNAME_LABEL
HYPERNODE_VALIDATE_WEBHOOK_NAME
POD_FAILED_REASON
POD_DELETED_REASON
POD_GROUP_READY_MESSAGE
POD_GROUP_NOT_READY_MESSAGE
apiVersion
blockOwnerDeletion
ObjectMeta
generateName
resourceVersion
creationTimestamp
deletionTimestamp
ownerReferences
finalizers
lastTransitionTime
observedGeneration
transitionID
CLOSED
CLOSING

# metrics Volcano exposes, registered so /metrics carries their names
PLUGIN_SCHEDULING_LATENCY
UNSCHEDULE_TASK_COUNT

# counters read in a debugger or by tests through the class
dropped_slow
_.dropped_slow
_.list_calls
_.cycles
cycles

# documented example API (docs/discovery.md: the static discovery source's registry factory)
new_static_discoverer

# test helpers in areas under other changes, left for their owners
_.stop_kwok
current_rs
MODES
