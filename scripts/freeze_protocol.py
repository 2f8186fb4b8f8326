"""Rule freeze_protocol: the protocol's hash receipt (refused once its sealed labels were read
under another version of the file)."""

from editcredit.protocol.seal import freeze_protocol
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    record = freeze_protocol(sm.input[0], sm.output[0], sm.params.seal_dir)
    print(f"{record['study']}: protocol {record['protocol_sha256']} frozen")
