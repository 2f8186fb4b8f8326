"""GPU generation and training throughput of Qwen2 configs, side by side in one run.

Generation: new tokens/s at batch 64 for (a) transformers' default ``generate`` (sampling,
top_k=0, log-probs from its scores), (b) this project's KV-cached ``TransformersGenerator``,
(c) ``FastGenerator`` eager-kernel graph (static cache + one CUDA graph per token) and (d)
``FastGenerator(compile=True)`` (the step fused by torch.compile, then captured); bf16 weights.
The log-probs each fast path records are compared with a teacher-forced HF forward of the same
sequences.
Training: one ``policy_update`` step (bf16 autocast, fp32 weights) on 64 sequences; tokens/s and
model FLOPs utilisation (6 x parameters x tokens) against the H200's bf16 peak, beside the same
step through transformers' own LM loss (same tokens, micro-batches, clipping and AdamW).

    python benchmarks/bench_gpu_generation.py [--configs 57M,210M,646M] [--out DIR]
        [--skip-training] [--profile]

One evaluation job (``--eval-job``): the GPU box's evaluation of the larger tiny policy
(``config/presets/tiny-large.yaml``, bf16, the fast backend without compile) inside the budget
its rule declares (``editcredit.policy.gpu_memory``; the allocator capped there, as
``editcredit.policy.devices.bind_gpus`` does): ``--episodes`` episodes in batches of the
evaluation's 128, turns whose prompts grow by a reply and an observation until the agent's
context of 2,048 tokens. Per turn: the call's seconds as the job meets it (``job_call_s``, a new
shape's graph captured inside it; their sum is ``generation_s``), then the same call warm
(``call_s``) and warm prefill (a call of one new token, its shape captured by a call before),
and the decode steps (the warm call less its prefill) against the bandwidth bound of the model
at its batch (the bytes a step must read, weights and the whole KV cache of the call's bucket,
over the card's HBM bandwidth); ``first_call_overhead_s`` is what the job's calls spent beyond
the warm ones (captures, first launches). Before, the prefill was timed cold and the decode
cold less it, so a turn whose one-token call captured a graph showed a negative decode step.
The peak memory against the budget. And one policy update of the training job's micro-batch
(8 sequences of 2,048 tokens, fp32 weights under bf16 autocast) against its estimate.

    python benchmarks/bench_gpu_generation.py --eval-job [--episodes 512] [--out DIR]
        [--phases] [--max-graphs N] [--no-graph] [--stream-per-capture]

``--phases`` records the process's whole device memory at each phase of that job (CUDA context
created, model loaded, first prefill, each CUDA graph captured, steady decode, end): the card's
used memory from ``torch.cuda.mem_get_info`` less what the card used before this process made
its context (the process is alone on the card), and the process's own line of ``nvidia-smi
--query-compute-apps``, beside the allocator's reserved and peak allocated bytes; what lies
outside the allocator is their difference. ``--max-graphs`` bounds the captured sizes the
generator keeps (``FastGenerator.max_cached``), ``--no-graph`` decodes eagerly, so the cost of
the graphs shows, ``--stream-per-capture`` captures each graph from a new side stream (the
generator's earlier behaviour, for comparison); the environment (``CUDA_MODULE_LOADING``,
``CUBLAS_WORKSPACE_CONFIG``) is recorded with the phases, and the policy update's phase after
the generation's. The marks of each capture fall inside the timed calls (an ``nvidia-smi``
call each): take the seconds from a run without ``--phases``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import torch
from synthetic import update_sequences
from transformers import Qwen2Config, Qwen2ForCausalLM

from editcredit.policy import gpu_memory
from editcredit.policy.fast_decode import FastGenerator
from editcredit.policy.generation import TransformersGenerator
from editcredit.rl.update import policy_update

PEAK_BF16 = 790e12
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
VOCAB = 32000
CONFIGS = {  # hidden, layers, heads, kv heads, intermediate
    "smoke": (64, 2, 4, 2, 128),
    "57M": (512, 8, 8, 2, 2048),
    "210M": (1024, 12, 16, 4, 4096),
    "646M": (1536, 18, 16, 4, 6144),
    "tiny-large": (512, 8, 8, 2, 2048),  # config/presets/tiny-large.yaml (vocab 2,048 there)
}
HBM_BYTES_PER_S = {"H100": 3.35e12, "H200": 4.8e12}  # the vendors' datasheets (SXM)


def build(name: str, vocab: int = VOCAB) -> Qwen2ForCausalLM:
    h, layers, heads, kv, inter = CONFIGS[name]
    cfg = Qwen2Config(
        vocab_size=vocab,
        hidden_size=h,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
    )
    torch.manual_seed(0)
    return Qwen2ForCausalLM(cfg)


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn):
    _sync()
    t = time.perf_counter()
    out = fn()
    _sync()
    return out, time.perf_counter() - t


def logprob_error(model, plist: list[list[int]], outs) -> dict:
    """Recorded log-probs against a teacher-forced forward of the same sequences."""
    dev = model.device
    prompt_len = len(plist[0])
    seq = torch.tensor([p + o.token_ids for p, o in zip(plist, outs, strict=True)], device=dev)
    with torch.no_grad():
        ref = torch.log_softmax(model(input_ids=seq).logits.float(), -1)
    rec = torch.tensor([o.logprobs for o in outs], device=dev)
    idx = seq[:, prompt_len:]
    tf = ref[:, prompt_len - 1 : -1].gather(-1, idx[..., None]).squeeze(-1)
    return {
        "logprob_max_abs_diff_vs_teacher_forced": float((rec - tf).abs().max()),
        "logprob_mean_abs_diff_vs_teacher_forced": float((rec - tf).abs().mean()),
    }


def bench_generation(model, batch: int, prompt_len: int, new: int) -> dict:
    g = torch.Generator().manual_seed(1)
    prompts = torch.randint(2, VOCAB, (batch, prompt_len), generator=g)
    plist = prompts.tolist()
    dev = model.device
    never = -1  # no eos: every row makes exactly `new` tokens

    def hf():
        return model.generate(
            prompts.to(dev),
            attention_mask=torch.ones_like(prompts, device=dev),
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=new,
            min_new_tokens=new,
            output_scores=True,
            return_dict_in_generate=True,
            pad_token_id=0,
            eos_token_id=None,
        )

    ours = TransformersGenerator(model, never, 0)
    res = {}
    hf()  # warm-up
    out, res["hf_generate_s"] = timed(hf)
    ours.generate(plist, 8, 1.0, 0)
    _, res["kv_loop_s"] = timed(lambda: ours.generate(plist, new, 1.0, 5))
    tokens = batch * new
    for k in ("hf_generate", "kv_loop"):
        res[f"{k}_tokens_per_s"] = tokens / res[f"{k}_s"]
    for key, compiled in (("fast", False), ("fast_compiled", True)):
        try:
            fast = FastGenerator(model, never, 0, compile=compiled)
            _, res[f"{key}_first_call_s"] = timed(lambda f=fast: f.generate(plist, new, 1.0, 0))
            fast_out, res[f"{key}_s"] = timed(lambda f=fast: f.generate(plist, new, 1.0, 5))
        except Exception as exc:  # a failed variant is reported, the others still run
            res[f"{key}_error"] = f"{type(exc).__name__}: {exc}"[:2000]
            continue
        res[f"{key}_tokens_per_s"] = tokens / res[f"{key}_s"]
        res[f"speedup_{key}_vs_hf_generate"] = res["hf_generate_s"] / res[f"{key}_s"]
        res.update({f"{key}_{k}": v for k, v in logprob_error(model, plist, fast_out).items()})
        del fast
    del out
    return res


def bench_training(name: str, batch: int, seq_len: int) -> dict:
    model = build(name).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    valid = np.zeros(seq_len, dtype=bool)
    valid[seq_len // 4 :] = True
    seqs = update_sequences([valid] * batch, VOCAB, groups=8)
    kwargs = dict(
        policy_loss="dppo_binary_tv",
        loss_aggregation="prompt_mean",
        ppo_clip=0.2,
        dppo_delta=0.15,
        temperature=1.0,
        micro_batch_size=16,
        micro_batch_tokens=0,
        max_grad_norm=1.0,
    )
    ids = torch.tensor([s.token_ids for s in seqs], device=DEVICE)

    def plain_step() -> None:
        """The baseline: transformers' own LM loss on the same tokens and micro-batches."""
        model.train()
        opt.zero_grad(set_to_none=True)
        for start in range(0, batch, kwargs["micro_batch_size"]):
            mb = ids[start : start + kwargs["micro_batch_size"]]
            with torch.autocast("cuda", torch.bfloat16, enabled=DEVICE == "cuda"):
                loss = model(input_ids=mb, labels=mb).loss
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), kwargs["max_grad_norm"])
        opt.step()

    def peak_gib(fn) -> float:
        if DEVICE != "cuda":
            return float("nan")
        torch.cuda.reset_peak_memory_stats()
        fn()
        return torch.cuda.max_memory_allocated() / 2**30

    policy_update(model, opt, seqs, **kwargs)  # warm-up
    _, seconds = timed(lambda: policy_update(model, opt, seqs, **kwargs))
    peak = peak_gib(lambda: policy_update(model, opt, seqs, **kwargs))
    plain_step()
    _, plain_seconds = timed(plain_step)
    plain_peak = peak_gib(plain_step)
    params = sum(p.numel() for p in model.parameters())
    tokens = batch * seq_len
    flops = 6 * params * tokens
    return {
        "train_step_s": seconds,
        "train_tokens_per_s": tokens / seconds,
        "mfu": flops / seconds / PEAK_BF16,
        "plain_lm_step_s": plain_seconds,
        "plain_lm_mfu": flops / plain_seconds / PEAK_BF16,
        "train_step_vs_plain_lm": seconds / plain_seconds,
        "train_peak_gib": peak,
        "plain_lm_peak_gib": plain_peak,
        "parameters": params,
    }


def profile_decode_step(model, batch: int, prompt_len: int, steps: int = 32) -> str:
    """Where a decode step's time goes: the compiled step run eagerly (no graph, so every kernel
    is visible to the profiler) over ``steps`` tokens, kernels sorted by their device time."""
    from torch.profiler import ProfilerActivity, profile

    g = torch.Generator().manual_seed(2)
    plist = torch.randint(2, VOCAB, (batch, prompt_len), generator=g).tolist()
    fast = FastGenerator(model, -1, 0, use_graph=False, compile=True)
    fast.generate(plist, steps, 1.0, 0)  # compile outside the profile
    activities = [ProfilerActivity.CPU]
    if DEVICE == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        fast.generate(plist, steps, 1.0, 1)
        _sync()
    key = "self_cuda_time_total" if DEVICE == "cuda" else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=40)


def hbm_bandwidth() -> float:
    name = torch.cuda.get_device_name() if DEVICE == "cuda" else ""
    return next((bw for key, bw in HBM_BYTES_PER_S.items() if key in name), float("nan"))


MIB = 2**20
_PHASES: PhaseLog | None = None  # --phases: the record the update's phase joins


def _smi(*args: str) -> list[str]:
    """``nvidia-smi`` lines of a CSV query without header or units ([] without the tool)."""
    try:
        cmd = ["nvidia-smi", *args, "--format=csv,noheader,nounits"]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return []


class PhaseLog:
    """The process's whole device memory at each phase of a job (see ``--phases``)."""

    def __init__(self) -> None:
        self.before_mib = float("nan")  # the card's used memory before this process's context
        lines = _smi("--query-gpu=memory.used", "-i", "0")
        if lines:
            self.before_mib = float(lines[0])
        self.rows: list[dict] = []

    def mark(self, phase: str, **extra) -> None:
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        process = (total - free) / MIB - self.before_mib
        smi = float("nan")
        for line in _smi("--query-compute-apps=pid,used_memory"):
            pid, used = (x.strip() for x in line.split(","))
            if pid == str(os.getpid()):
                smi = float(used)
        reserved = torch.cuda.memory_reserved() / MIB
        row = {
            "phase": phase,
            "process_mib": round(process, 1),
            "nvidia_smi_mib": smi,
            "reserved_mib": round(reserved, 1),
            "allocated_mib": round(torch.cuda.memory_allocated() / MIB, 1),
            "max_allocated_mib": round(torch.cuda.max_memory_allocated() / MIB, 1),
            "max_reserved_mib": round(torch.cuda.max_memory_reserved() / MIB, 1),
            "outside_allocator_mib": round(process - reserved, 1),
            **extra,
        }
        self.rows.append(row)
        print(json.dumps(row), flush=True)


def eval_turns(episodes: int, seed: int = 0) -> list[list[list[int]]]:
    """Each turn's prompts of ``episodes`` episodes: a first prompt of 300-600 tokens, then
    the reply (64) and an observation (40-160) a turn, an episode ending at random (a third
    stop after each turn) or when its next turn would pass the context (2,048)."""
    rng = np.random.default_rng(seed)
    prompts = [rng.integers(2, 2048, rng.integers(300, 601)).tolist() for _ in range(episodes)]
    turns = []
    while prompts:
        turns.append(prompts)
        grown = []
        for p in prompts:
            nxt = p + rng.integers(2, 2048, 64 + rng.integers(40, 161)).tolist()
            if len(nxt) + 64 <= 2048 and rng.random() > 1 / 3:
                grown.append(nxt)
        prompts = grown
    return turns


def bench_eval_job(
    episodes: int,
    batch: int = 128,
    new: int = 64,
    phases: bool = False,
    max_graphs: int | None = None,
    use_graph: bool | None = None,
    stream_per_capture: bool = False,
) -> dict:
    """One evaluation job's generation inside its declared budget (see the module doc)."""
    global _PHASES
    log = _PHASES = PhaseLog() if phases and DEVICE == "cuda" else None
    if log is not None:
        torch.cuda.init()
        torch.zeros(1, device=DEVICE)
        log.mark("cuda context")
        capture = FastGenerator._capture

        def logged_capture(self: FastGenerator, slot) -> None:
            if stream_per_capture:
                self._capture_stream = None
            capture(self, slot)
            d = slot.decoder
            log.mark(
                f"graph captured {d.batch}x{d.max_len}",
                graphs_kept=len(self._slots) + 1,
            )

        FastGenerator._capture = logged_capture
    model = build("tiny-large", vocab=2048).to(DEVICE, DTYPE).eval()
    shape = gpu_memory.ModelShape.from_hf_config(model.config.to_dict())
    declared = gpu_memory.job_mb(shape, gpu_memory.GpuJob(batch, 2048, new, "fast"))
    budget = gpu_memory.allocator_budget_bytes(declared)
    if DEVICE == "cuda":
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(budget / total, 0)
        torch.cuda.reset_peak_memory_stats()
    if log is not None:
        log.mark("model loaded")
    fast = FastGenerator(model, -1, 0, use_graph, compile=False, memory_budget=budget)
    if max_graphs is not None:
        fast.max_cached = max_graphs
    bandwidth = hbm_bandwidth()
    weights = shape.parameters * 2  # bf16, each read once a step (q/k/v and gate/up fused)
    rows_out, t_all, t_cold, t_decode, t_bound, new_tokens = [], 0.0, 0.0, 0.0, 0.0, 0
    for start in range(0, episodes, batch):
        for turn, prompts in enumerate(eval_turns(min(batch, episodes - start), seed=start)):
            seed = 1000 * start + turn
            # the call as the job meets it (a new shape's graph captured inside it), then the
            # same call and a one-token call again, warm: their difference is the decode steps
            outs, t_job = timed(lambda p=prompts, s=seed: fast.generate(p, new, 1.0, s))
            if log is not None and start == 0 and turn == 0:
                log.mark("first prefill")
            timed(lambda p=prompts, s=seed: fast.generate(p, 1, 1.0, s))  # its shape captured
            _, t_one = timed(lambda p=prompts, s=seed: fast.generate(p, 1, 1.0, s))
            _, t = timed(lambda p=prompts, s=seed: fast.generate(p, new, 1.0, s))
            width = max(map(len, prompts))
            rows = gpu_memory.bucket_rows(len(prompts))
            length = gpu_memory.bucket_length(width, new)
            step_bytes = weights + gpu_memory.kv_bytes(shape, rows, length, 2)
            step_s = (t - t_one) / (new - 1)
            bound_s = step_bytes / bandwidth
            t_all += t_job
            t_cold += t_job - t
            t_decode += t - t_one
            t_bound += bound_s * (new - 1)
            new_tokens += sum(len(o.token_ids) for o in outs)
            rows_out.append(
                {
                    "batch": start // batch,
                    "turn": turn,
                    "rows": len(prompts),
                    "width": width,
                    "job_call_s": round(t_job, 4),
                    "call_s": round(t, 4),
                    "prefill_s": round(t_one, 4),
                    "decode_step_ms": round(step_s * 1e3, 4),
                    "bandwidth_bound_step_ms": round(bound_s * 1e3, 5),
                    "step_vs_bound": round(step_s / bound_s, 1),
                }
            )
        if log is not None and start == 0:
            log.mark("steady decode (first batch done)")
    if log is not None:
        log.mark("end")
        FastGenerator._capture = capture
    res = {
        "parameters": shape.parameters,
        "episodes": episodes,
        "calls": len(rows_out),
        "declared_gpu_mem_mb": declared,
        "allocator_budget_mib": budget / 2**20,
        "generation_s": t_all,
        "first_call_overhead_s": t_cold,
        "decode_s": t_decode,
        "decode_bandwidth_bound_s": t_bound,
        "decode_vs_bound": t_decode / t_bound,
        "new_tokens": new_tokens,
        "new_tokens_per_s": new_tokens / t_all,
        "hbm_bytes_per_s": bandwidth,
        "turns": rows_out,
    }
    if DEVICE == "cuda":
        res["peak_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
        res["peak_reserved_mib"] = torch.cuda.max_memory_reserved() / 2**20
        res["kept_buckets"] = [list(k) for k in fast._slots]
    if log is not None:
        del fast
        gc.collect()
        torch.cuda.empty_cache()
        log.mark("generator freed, cache emptied")
        env = ("CUDA_MODULE_LOADING", "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF")
        res["environment"] = {k: os.environ.get(k) for k in env}
        res["max_graphs"] = max_graphs
        res["use_graph"] = use_graph
        res["card_used_before_mib"] = log.before_mib
        res["phases"] = log.rows
        res["peak_process_mib"] = max(r["process_mib"] for r in log.rows)
    return res


def bench_update_memory(shape) -> dict:
    """Peak memory of one policy update of the training job's micro-batch (8 x 2,048 tokens, a
    quarter generated; fp32 weights and AdamW, bf16 autocast) against ``update_bytes``."""
    if DEVICE != "cuda":
        return {}
    torch.cuda.set_per_process_memory_fraction(1.0, 0)
    gc.collect()  # the evaluation's generator (its captured graphs hold it in a cycle)
    torch.cuda.empty_cache()
    model = build("tiny-large", vocab=2048).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    valid = np.zeros(2048, dtype=bool)
    valid[1536:] = True
    seqs = update_sequences([valid] * 8, 2048, groups=1)
    kwargs = dict(
        policy_loss="dppo_binary_tv",
        loss_aggregation="prompt_mean",
        ppo_clip=0.2,
        dppo_delta=0.15,
        temperature=1.0,
        micro_batch_size=8,
        micro_batch_tokens=0,
        max_grad_norm=1.0,
    )
    policy_update(model, opt, seqs, **kwargs)  # AdamW's moments exist from here on
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    _, seconds = timed(lambda: policy_update(model, opt, seqs, **kwargs))
    peak = torch.cuda.max_memory_allocated()
    if _PHASES is not None:
        _PHASES.mark("policy update (allocator uncapped)")
    return {
        "update_s": seconds,
        "held_before_mib": before / 2**20,
        "peak_allocated_mib": peak / 2**20,
        "estimate_mib": gpu_memory.update_bytes(shape, 8, 2048) / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="57M,210M,646M")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--out", default="benchmarks/out")
    ap.add_argument("--skip-training", action="store_true", help="generation only")
    ap.add_argument(
        "--profile", action="store_true", help="also write a kernel table of the decode step"
    )
    ap.add_argument("--eval-job", action="store_true", help="one evaluation job, see above")
    ap.add_argument("--episodes", type=int, default=512)
    ap.add_argument("--phases", action="store_true", help="the process's memory at each phase")
    ap.add_argument("--max-graphs", type=int, default=None, help="captured sizes kept")
    ap.add_argument("--no-graph", action="store_true", help="decode eagerly, no CUDA graphs")
    ap.add_argument(
        "--stream-per-capture", action="store_true", help="a new side stream for every graph"
    )
    ap.add_argument("--skip-update", action="store_true", help="--eval-job without the update")
    ap.add_argument("--name", default="gpu_eval_job", help="--eval-job's output file name")
    args = ap.parse_args()
    if args.eval_job:
        res = {"device": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"}
        use_graph = False if args.no_graph else None
        res.update(
            bench_eval_job(
                args.episodes,
                128,
                64,
                args.phases,
                args.max_graphs,
                use_graph,
                args.stream_per_capture,
            )
        )
        if not args.skip_update:
            res["update"] = bench_update_memory(
                gpu_memory.ModelShape.from_hf_config(build("tiny-large", 2048).config.to_dict())
            )
            if _PHASES is not None:
                res["phases"] = _PHASES.rows
        summary = {k: v for k, v in res.items() if k not in ("turns", "phases")}
        print(json.dumps(summary, indent=1), flush=True)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{args.name}.json").write_text(json.dumps(res, indent=2) + "\n")
        return
    name_of = torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"
    results = {
        "device": name_of,
        "batch": args.batch,
        "prompt_tokens": args.prompt,
        "new_tokens": args.new,
        "configs": {},
    }
    for name in args.configs.split(","):
        model = build(name).to(DEVICE, DTYPE).eval()
        row = {"parameters": sum(p.numel() for p in model.parameters())}
        row.update(bench_generation(model, args.batch, args.prompt, args.new))
        if args.profile:
            table = profile_decode_step(model, args.batch, args.prompt)
            Path(args.out).mkdir(parents=True, exist_ok=True)
            (Path(args.out) / f"decode_profile_{name}.txt").write_text(table + "\n")
        del model
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
        if not args.skip_training:
            row.update(
                {k: v for k, v in bench_training(name, 64, 512).items() if k != "parameters"}
            )
        results["configs"][name] = row
        print(name, json.dumps(row, indent=1), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_generation.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
