"""The vLLM backend behind the generation interface, and the backend factory.

The adapter logic (sampling parameters, per-prompt seeds, mapping vLLM results to
GenerationOutput, eos handling, weight pushes) is tested with fakes shaped like vLLM's objects;
the engine itself only where vLLM and a GPU exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
import yaml
from taskfactory import REPO

from editcredit.policy.chat import ChatTemplate
from editcredit.policy.generation import GenerationOutput, TransformersGenerator
from editcredit.policy.generator_factory import (
    GenerationSettings,
    load_generator,
    make_generator,
)
from editcredit.policy.model import new_model, tiny_config
from editcredit.policy.tokenizer import train_tokenizer
from editcredit.policy.vllm_backend import (
    VLLMGenerator,
    VLLMOutputError,
    VLLMSettings,
    _check_version,
    _load_weights_on_worker,
    engine_kwargs,
    request_seed,
    sampling_kwargs,
    to_output,
    vllm_settings,
)

EOS, PAD = 2, 0

# --- fakes shaped like vLLM's objects ----------------------------------------------------------


@dataclass
class Logprob:
    logprob: float
    rank: int = 1


@dataclass
class Completion:
    token_ids: list[int]
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    outputs: list[Completion]


@dataclass
class FakeParams:
    kwargs: dict

    def __init__(self, **kwargs):
        self.kwargs = kwargs


@dataclass
class FakePrompt:
    prompt_token_ids: list[int]


def _completion(prompt: list[int], params: FakeParams) -> Completion:
    """A deterministic 'engine': emits prompt-derived tokens and stops at the stop token."""
    kw = params.kwargs
    ids, lps = [], []
    for k in range(kw["max_tokens"]):
        token = (sum(prompt) + kw["seed"] + k) % 7 + 3
        if k == len(prompt):  # prompts of length < max_tokens end with the stop token
            token = kw["stop_token_ids"][0]
        ids.append(token)
        lps.append({token: Logprob(-0.1 * (k + 1))})
        if token in kw["stop_token_ids"]:
            return Completion(ids, lps, "stop", token)
    return Completion(ids, lps, "length", None)


@dataclass
class FakeLLM:
    calls: list = field(default_factory=list)
    rpc: list = field(default_factory=list)
    cache_resets: int = 0

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append((prompts, params, use_tqdm))
        return [
            RequestOutput([_completion(p.prompt_token_ids, sp)])
            for p, sp in zip(prompts, params, strict=True)
        ]

    def collective_rpc(self, method, args=()):
        self.rpc.append((method, args))
        return [None]

    def reset_prefix_cache(self):
        self.cache_resets += 1


def _generator(llm=None) -> VLLMGenerator:
    return VLLMGenerator(
        llm or FakeLLM(), EOS, PAD, sampling_params=FakeParams, tokens_prompt=FakePrompt
    )


# --- sampling parameters and seeds --------------------------------------------------------------


def test_sampling_is_pure_temperature_with_the_sampled_logprob_and_a_chat_eos_stop():
    kw = sampling_kwargs(max_new_tokens=16, temperature=0.7, seed=5, stop_ids=EOS)
    assert kw["temperature"] == 0.7 and kw["max_tokens"] == 16 and kw["seed"] == 5
    assert kw["top_p"] == 1.0 and kw["min_p"] == 0.0 and "top_k" not in kw
    assert kw["logprobs"] == 0  # the sampled token's log-prob
    assert kw["ignore_eos"] is True and kw["stop_token_ids"] == [EOS]
    assert kw["n"] == 1 and kw["detokenize"] is False


@pytest.mark.parametrize("temperature, max_new", [(0.0, 8), (-1.0, 8), (1.0, 0)])
def test_sampling_rejects_greedy_or_empty_requests(temperature, max_new):
    with pytest.raises(ValueError):
        sampling_kwargs(max_new, temperature, 0, EOS)


def test_each_prompt_draws_with_its_own_stable_seed():
    seeds = [request_seed(11, i) for i in range(64)]
    assert len(set(seeds)) == 64
    assert all(0 <= s < 2**63 for s in seeds)
    assert seeds == [request_seed(11, i) for i in range(64)]  # stable across calls
    assert request_seed(12, 0) != request_seed(11, 0)


def test_generate_seeds_every_request_and_sends_token_prompts():
    llm = FakeLLM()
    prompts = [[5, 6, 7], [8], [9, 9]]
    _generator(llm).generate(prompts, max_new_tokens=8, temperature=1.0, seed=3)
    sent, params, use_tqdm = llm.calls[0]
    assert [p.prompt_token_ids for p in sent] == prompts
    assert [p.kwargs["seed"] for p in params] == [request_seed(3, i) for i in range(3)]
    assert use_tqdm is False


def test_a_completion_does_not_depend_on_the_rest_of_its_batch():
    gen = _generator()
    alone = gen.generate([[4, 4]], 8, 1.0, seed=9)
    batch = gen.generate([[4, 4], [1, 2, 3], [7]], 8, 1.0, seed=9)
    assert batch[0] == alone[0]


def test_no_prompts_no_engine_call():
    llm = FakeLLM()
    assert _generator(llm).generate([], 8, 1.0, 0) == []
    assert llm.calls == []


# --- mapping vLLM results ------------------------------------------------------------------------


def test_finished_completion_ends_with_eos_and_keeps_its_logprob():
    out = to_output(
        RequestOutput(
            [
                Completion(
                    [5, 6, EOS],
                    [{5: Logprob(-1.0)}, {6: Logprob(-2.0)}, {EOS: Logprob(-0.5)}],
                    "stop",
                    EOS,
                )
            ]
        ),
        EOS,
    )
    assert out == GenerationOutput([5, 6, EOS], [-1.0, -2.0, -0.5], True)


def test_length_cut_completion_is_unfinished():
    out = to_output(
        RequestOutput([Completion([5, 6], [{5: Logprob(-1.0)}, {6: Logprob(-2.0)}], "length")]),
        EOS,
    )
    assert out == GenerationOutput([5, 6], [-1.0, -2.0], False)


def test_tokens_after_the_first_eos_are_dropped():
    entries = [{t: Logprob(-float(i + 1))} for i, t in enumerate([5, EOS, 7])]
    out = to_output(RequestOutput([Completion([5, EOS, 7], entries, "length")]), EOS)
    assert out == GenerationOutput([5, EOS], [-1.0, -2.0], True)


def test_logprob_entries_may_hold_the_top_alternatives_too():
    entry = {9: Logprob(-0.2, rank=1), 5: Logprob(-1.7, rank=2)}
    out = to_output(RequestOutput([Completion([5], [entry], "length")]), EOS)
    assert out.logprobs == [-1.7]


@pytest.mark.parametrize(
    "completion, message",
    [
        (Completion([5], None, "length"), "no log-probs"),
        (Completion([5, 6], [{5: Logprob(-1.0)}], "length"), "2 tokens but 1"),
        (Completion([5], [{6: Logprob(-1.0)}], "length"), "no log-prob for sampled token 5"),
        (Completion([5], [{5: Logprob(-1.0)}], "stop", "</s>"), "without a stop id"),
    ],
)
def test_unmappable_results_fail_naming_the_prompt(completion, message):
    with pytest.raises(VLLMOutputError, match=message) as err:
        to_output(RequestOutput([completion]), EOS, index=4)
    assert "prompt 4" in str(err.value)


def test_generate_maps_every_result_in_prompt_order():
    outs = _generator().generate([[1], [1, 1, 1, 1, 1, 1, 1, 1, 1]], 4, 1.0, seed=0)
    assert outs[0].finished and outs[0].token_ids[-1] == EOS and len(outs[0].token_ids) == 2
    assert not outs[1].finished and len(outs[1].token_ids) == 4
    assert all(len(o.token_ids) == len(o.logprobs) for o in outs)


def test_a_missing_result_is_an_error():
    class Short(FakeLLM):
        def generate(self, prompts, params, use_tqdm=True):
            return super().generate(prompts, params, use_tqdm)[:-1]

    with pytest.raises(VLLMOutputError, match="2 prompts but 1"):
        _generator(Short()).generate([[1], [2]], 4, 1.0, 0)


# --- weights and engine settings -----------------------------------------------------------------


def test_load_weights_pushes_cpu_tensors_to_every_worker_and_drops_the_prefix_cache():
    llm = FakeLLM()
    state = {"model.embed_tokens.weight": torch.ones(2, 3, requires_grad=True)}
    _generator(llm).load_weights(state)
    ((method, args),) = llm.rpc
    assert method is _load_weights_on_worker
    (weights,) = args
    assert [name for name, _ in weights] == ["model.embed_tokens.weight"]
    assert weights[0][1].device.type == "cpu" and not weights[0][1].requires_grad
    assert llm.cache_resets == 1

    received = []

    class Model:
        def load_weights(self, weights):
            received.extend(weights)

    class Runner:
        def get_model(self):
            return Model()

    class Worker:
        model_runner = Runner()

    assert _load_weights_on_worker(Worker(), weights) == 1
    assert received == weights


def test_engine_logs_the_tempered_distribution_and_ignores_the_models_generation_config():
    kw = engine_kwargs("/m", vllm_settings(None))
    assert kw["logprobs_mode"] == "processed_logprobs"
    assert kw["generation_config"] == "vllm"
    assert kw["model"] == kw["tokenizer"] == "/m"
    assert "max_model_len" not in kw  # 0 = the model's own
    assert engine_kwargs("/m", vllm_settings({"max_model_len": 4096}))["max_model_len"] == 4096


def test_settings_come_from_config_and_unknown_keys_are_named():
    with pytest.raises(ValueError, match="unknown keys \\['gpu_mem'\\]"):
        vllm_settings({"gpu_mem": 0.5})
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        vllm_settings({"gpu_memory_utilization": 1.5})
    assert vllm_settings(None) == vllm_settings({})


def test_config_yaml_generation_block_matches_the_settings():
    cfg = yaml.safe_load(Path(REPO, "config/config.yaml").read_text())["generation"]
    settings = GenerationSettings.from_config(cfg)
    assert settings.backend == "static"
    assert settings.vllm == vllm_settings(None)  # the embedded default spells out the defaults
    schema = yaml.safe_load(Path(REPO, "config/schema.yaml").read_text())
    props = schema["properties"]["generation"]["properties"]["vllm"]["properties"]
    assert set(props) == set(cfg["vllm"]) == set(VLLMSettings.__dataclass_fields__)
    assert {k: v["default"] for k, v in props.items()} == cfg["vllm"]


def test_real_study_preset_asks_for_vllm():
    preset = yaml.safe_load(Path(REPO, "config/presets/real-study.yaml").read_text())
    assert GenerationSettings.from_config(preset["generation"]).backend == "vllm"


@pytest.mark.parametrize("version, ok", [("0.10.2", True), ("0.11.0rc1", True), ("0.9.2", False)])
def test_old_vllm_is_refused(version, ok):
    if ok:
        _check_version(version)
    else:
        with pytest.raises(ImportError, match="processed_logprobs"):
            _check_version(version)


# --- the factory ---------------------------------------------------------------------------------

ARCH = {
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_layers": 1,
    "num_heads": 2,
    "num_kv_heads": 1,
    "max_positions": 512,
}


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    tok = train_tokenizer(["def add(a, b):\n    return a + b\n", "run", "submit"] * 10, 300)
    chat = ChatTemplate(tok)
    model = new_model(tiny_config(len(tok), ARCH, chat.pad, chat.bos, chat.end_of_turn), seed=0)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


def test_factory_defaults_to_transformers(policy_dir):
    gen, chat = load_generator(policy_dir, "cpu", None)
    assert isinstance(gen, TransformersGenerator) and gen.stop_ids == chat.stop_ids
    out = gen.generate([chat.conversation().start("hello")], 5, 1.0, seed=1)
    assert len(out) == 1 and len(out[0].token_ids) == len(out[0].logprobs) <= 5


def test_factory_wraps_a_loaded_model(policy_dir):
    model = torch.nn.Linear(1, 1)
    gen = make_generator("transformers", policy_dir, "cpu", stop_ids=EOS, pad_id=PAD, model=model)
    assert isinstance(gen, TransformersGenerator) and gen.model is model


def test_vllm_needs_a_gpu(policy_dir):
    with pytest.raises(ValueError, match="needs a CUDA device"):
        make_generator("vllm", policy_dir, "cpu", stop_ids=EOS, pad_id=PAD)


def test_unknown_backend_is_named(policy_dir):
    with pytest.raises(ValueError, match="'tgi' is not one of"):
        make_generator("tgi", policy_dir, "cpu", stop_ids=EOS, pad_id=PAD)
    with pytest.raises(ValueError, match="generation.backend"):
        GenerationSettings.from_config({"backend": "tgi"})
    with pytest.raises(ValueError, match="unknown keys \\['engine'\\]"):
        GenerationSettings.from_config({"engine": "vllm"})


# --- the engine itself (a CUDA machine with vLLM) ------------------------------------------------


def test_vllm_engine_matches_the_interface(policy_dir):
    pytest.importorskip(
        "vllm", reason="vLLM is the GPU backend, an optional extra: pip install 'editcredit[vllm]'"
    )
    if not torch.cuda.is_available():
        pytest.skip("the vLLM backend needs a CUDA device")
    from transformers import AutoModelForCausalLM

    gen, chat = load_generator(
        policy_dir,
        "cuda",
        {
            "backend": "vllm",
            "vllm": {"dtype": "float32", "gpu_memory_utilization": 0.2, "enforce_eager": True},
        },
    )
    try:
        prompts = [chat.conversation().start(t) for t in ("add", "run the tests", "x")]
        temperature = 0.7
        first = gen.generate(prompts, 12, temperature, seed=5)
        again = gen.generate(prompts, 12, temperature, seed=5)
        alone = gen.generate(prompts[:1], 12, temperature, seed=5)
        assert first == again  # seeded per request
        assert len(first) == 3 and all(len(o.token_ids) == len(o.logprobs) for o in first)
        assert all(o.finished == (o.token_ids[-1] in chat.stop_ids) for o in first)
        assert alone[0].token_ids == first[0].token_ids  # the rest of the batch changes nothing
        # the recorded log-probs are those of log_softmax(logits / T) of the same weights
        hf = AutoModelForCausalLM.from_pretrained(str(policy_dir), dtype=torch.float32).cuda()
        for prompt, out in zip(prompts, first, strict=True):
            ids = torch.tensor([prompt + out.token_ids], device="cuda")
            with torch.no_grad():
                logits = hf(ids).logits[0, len(prompt) - 1 : -1].float()
            ref = torch.log_softmax(logits / temperature, -1)
            ref = ref.gather(-1, ids[0, len(prompt) :, None]).squeeze(-1).cpu()
            assert torch.allclose(torch.tensor(out.logprobs), ref, atol=2e-3)
    finally:
        gen.close()
