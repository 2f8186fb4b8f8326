"""Rule prune_segment: remove a segment's model and optimiser files, recording what went."""

from editcredit.storage.retention import prune_segment
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    record = prune_segment(
        sm.input.segment,
        sm.output[0],
        {
            "run": sm.wildcards.run,
            "step": int(sm.wildcards.step),
            # from the config, not params: a new k reruns no earlier prune (it keeps its record)
            "keep_checkpoints": int(sm.config["training"]["keep_checkpoints"]),
            "next_segment": sm.input.next,
        },
    )
    removed, freed = len(record["removed"]), record["bytes_freed"]
    print(f"{sm.input.segment}: removed {removed} file(s), {freed} bytes")
