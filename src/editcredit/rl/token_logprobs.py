"""Log-probs and entropies of the tokens an update trains on, with logits only where needed.

A causal LM's logits are vocabulary-wide at every position: an agent trajectory of 16k tokens
with a 150k vocabulary holds about 10 GB of fp32 logits (twice that with their log-softmax),
although only the positions that predict a generated token enter the loss. For architectures
whose causal-LM head is exactly ``lm_head(decoder(...).last_hidden_state)``, the final hidden
states are gathered at those positions and only they go through the head and the softmax. Any
other architecture (a logit soft-cap, a logit scale, ...) takes the full forward.
"""

from __future__ import annotations

from typing import cast

import torch

__all__ = ["HEAD_ONLY_TYPES", "selected_logprobs"]

#: model types whose CausalLM forward is the decoder's last hidden state through ``lm_head``
HEAD_ONLY_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3"})


def _hidden_then_head(model: torch.nn.Module) -> bool:
    return (
        getattr(model.config, "model_type", None) in HEAD_ONLY_TYPES
        and isinstance(getattr(model, "model", None), torch.nn.Module)
        and isinstance(getattr(model, "lm_head", None), torch.nn.Module)
    )


def selected_logprobs(
    model: torch.nn.Module,
    ids: torch.Tensor,
    attention_mask: torch.Tensor | None,
    rows: torch.Tensor,
    cols: torch.Tensor,
    temperature: float,
    autocast: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``log p(ids[r, c] | ids[r, :c])`` at each (``rows``, ``cols``) pair (``cols`` >= 1), with
    ``p = softmax(logits / temperature)``: a differentiable [n] tensor, and the entropies of the
    same n distributions (detached). ``autocast``: run the model under bf16 CUDA autocast."""
    if bool((cols < 1).any()):
        raise ValueError("token 0 has no prediction: selected columns must be >= 1")
    with torch.autocast("cuda", torch.bfloat16, enabled=autocast):
        if _hidden_then_head(model):
            # _hidden_then_head: both attributes are modules
            decoder = cast(torch.nn.Module, model.model)
            out = decoder(input_ids=ids, attention_mask=attention_mask, use_cache=False)
            hidden = out.last_hidden_state
            logits = cast(torch.nn.Module, model.lm_head)(hidden[rows, cols - 1])
        else:
            out = model(input_ids=ids, attention_mask=attention_mask, use_cache=False)
            logits = out.logits[rows, cols - 1]
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    chosen = logp.gather(-1, ids[rows, cols][:, None]).squeeze(-1)
    with torch.no_grad():
        entropy = -(logp.exp() * logp).sum(-1)
    return chosen, entropy
