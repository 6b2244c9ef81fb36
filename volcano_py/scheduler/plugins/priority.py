"""``priority``: jobs with a higher priority (their pods' ``spec.priority``) go first."""

from __future__ import annotations

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session


class PriorityPlugin:
    """Job order by priority."""

    name = "priority"

    def __init__(self, args: Arguments) -> None:
        """No arguments."""
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        """Register the job order function."""
        ssn.add_job_order_fn(self.name, job_order)

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Higher priority first (negative: left first)."""
    if left.priority == right.priority:
        return 0
    return -1 if left.priority > right.priority else 1
