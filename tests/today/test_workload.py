"""ampere.today.workload: nonsense in, ValueError/TypeError out."""

import pytest

from ampere.today import Workload


@pytest.mark.parametrize("kwargs,field", [
    (dict(model="7B", task="dance"), "task"), (dict(model="7B", task="inference", weights="fp4"), "weights"),
    (dict(model="7B", task="inference", context=-1), "context"), (dict(model="7B", task="inference", batch=0), "batch"),
    (dict(model="7B", task="lora", tokens=-1e6), "tokens"), (dict(model="7B", task="lora", mfu=1.5), "mfu"),
    (dict(model="7B", task="lora", mfu=0), "mfu"), (dict(model=-7e9, task="pretrain"), "model"),
    (dict(model=7e9, task="inference"), "parameter count"), (dict(model="8B", task="inference"), "model"),
    (dict(model=True, task="pretrain"), "model"), (dict(model="7B", task="pretrain", precision="fp4"), "precision"),
    (dict(model="7B", task="pretrain", recompute="some"), "recompute"),
    (dict(model="7B", task="pretrain", max_cards=0), "max_cards"),
    (dict(model="7B", task="pretrain", seq_len=2.5), "seq_len"),
    (dict(model="7B", task="pretrain", tokens=float("inf")), "tokens"),
    (dict(model="7B", task="pretrain", tokens=float("nan")), "tokens"),
    (dict(model=float("nan"), task="pretrain"), "model"), (dict(model=0, task="pretrain"), "model"),
    (dict(model="7B", task="lora", mfu=float("nan")), "mfu"), (dict(model="7B", task="lora", lora_rank=0), "lora_rank"),
    (dict(model="7B", task="pretrain", micro_batch=-1), "micro_batch"),
    (dict(model="7B", task="inference", context=2.5), "context"), (dict(model="", task="inference"), "model"),
    (dict(model="7B", task="pretrain", min_cards=9), "min_cards"),
    (dict(model="7B", task="pretrain", global_batch=0), "global_batch"),
    (dict(model="7B", task="pretrain", tokens="1e9"), "tokens"),
])
def test_workload_rejects_nonsense(kwargs, field):
    with pytest.raises((ValueError, TypeError), match=field):
        Workload(**kwargs)
