"""Rule freeze_protocol: the protocol's hash receipt (refused once its sealed labels were read
under another version of the file)."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.protocol.seal import FreezeReceipt, freeze_protocol


def _call(sm: Any, _settings: None, _ctx: JobContext) -> FreezeReceipt:
    record = freeze_protocol(sm.input[0], sm.output[0], sm.params.seal_dir)
    print(f"{record['study']}: protocol {record['protocol_sha256']} frozen")
    return record


JOB = Job("freeze_protocol", inputs=rule_files, call=_call)
