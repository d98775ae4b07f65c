"""Accuracy: the ASP recipe (train dense, prune 2:4, retrain with the mask fixed) on scikit-learn's digits.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Accuracy".

:class:`ASPConfig` is the small experiment; :func:`asp_experiment` runs it once (with a random 2:4 mask,
unstructured 50 % pruning and continued dense training as controls), :func:`asp_runs` once per seed;
:func:`asp_summary` and :func:`asp_conclusions` turn the runs into the chapter's statistics and checks.

HEAVY: torch (and scikit-learn) are imported only inside the functions that train and evaluate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from .. import check
from .pattern import is_2to4, mask_2to4, random_mask_2to4, unstructured_mask


@dataclass(frozen=True)
class ASPConfig:
    """The small experiment of the chapter: an MLP on the 8x8 digits bundled with scikit-learn."""

    hidden: tuple[int, ...] = (64, 32)  # hidden widths (multiples of 4: every layer's input is 2:4-groupable)
    epochs: int = 40  # dense training epochs
    finetune_epochs: int = 20  # ASP retraining epochs, mask fixed
    lr: float = 3e-3  # Adam learning rate, the same for training and retraining (the ASP recipe)
    batch_size: int = 64
    test_fraction: float = 0.3  # held-out share of the 1797 images, stratified
    seed: int = 0  # data split, initialisation, shuffling and the random mask

    def __post_init__(self) -> None:
        if isinstance(self.hidden, (str, bytes)) or not isinstance(self.hidden, Sequence) or not self.hidden:
            raise TypeError(f"hidden must be a non-empty tuple of widths, got {self.hidden!r}")
        widths = tuple(check.integer("hidden", h, minimum=4) for h in self.hidden)
        if any(h % 4 for h in widths):
            raise ValueError(f"hidden={widths}: every width must be a multiple of 4 (2:4 groups of the next layer)")
        object.__setattr__(self, "hidden", widths)
        for f, hi in (("epochs", 1000), ("finetune_epochs", 1000), ("batch_size", 1797)):
            object.__setattr__(self, f, check.bounded_int(f, getattr(self, f), 1, hi,
                                                          why="a CPU experiment on 1797 images"))
        object.__setattr__(self, "seed", check.bounded_int("seed", self.seed, 0, 2**32 - 1, why="a NumPy seed"))
        tf = check.fraction("test_fraction", self.test_fraction, allow_zero=False)
        if tf >= 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {tf:g}")
        object.__setattr__(self, "test_fraction", tf)
        object.__setattr__(self, "lr", check.bounded("lr", self.lr, 1e-6, 1.0, why="an Adam learning rate"))
        if len(widths) > 8 or max(widths) > 4096:
            raise ValueError(f"hidden={widths}: at most 8 layers of at most 4096 (a CPU experiment)")


def _digits(cfg: ASPConfig):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)  # pixel intensities 0..16
    return train_test_split(x, y.astype(np.int64), test_size=cfg.test_fraction, random_state=cfg.seed, stratify=y)


def _train(model: Any, x: Any, y: Any, epochs: int, cfg: ASPConfig, masks: dict[str, Any] | None,
           seed: int) -> None:
    import torch

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = x.shape[0]
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            opt.zero_grad()
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()
            if masks:
                with torch.no_grad():  # the mask stays fixed: pruned weights stay exactly zero
                    for name, p in model.named_parameters():
                        if name in masks:
                            p.mul_(masks[name])


def _evaluate(model: Any, x: Any, y: Any) -> tuple[float, float, int]:
    import torch

    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = float(torch.nn.functional.cross_entropy(logits, y))
        correct = int((logits.argmax(dim=1) == y).sum())
    return correct / y.shape[0], loss, correct


def asp_experiment(cfg: ASPConfig | None = None) -> dict[str, Any]:
    """Train dense, prune (2:4 magnitude, 2:4 random, unstructured 50 % magnitude), retrain, evaluate.

    The ASP recipe [mishra2021asp]: train dense; prune every Linear weight once, by magnitude, 2:4 along
    its input dimension; retrain with the mask fixed and the same optimiser settings. The controls: a
    random 2:4 mask (structure without information), unstructured 50 % magnitude pruning (information
    without structure), and the dense model trained for the same extra epochs (so "recovery" is not just
    more training). Runs on the CPU with fixed seeds; a few seconds. Returns the rows of the result table.
    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    import torch

    if cfg is not None and not isinstance(cfg, ASPConfig):
        raise TypeError(f"cfg must be an ASPConfig or None, got {type(cfg).__name__}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matmuls: extra threads only add contention (100x slower on a busy 2-core box)
    try:
        return _asp_experiment(cfg or ASPConfig())
    finally:
        torch.set_num_threads(threads)


def _asp_experiment(cfg: ASPConfig) -> dict[str, Any]:
    import torch

    x_tr, x_te, y_tr, y_te = _digits(cfg)
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    xe, ye = torch.from_numpy(x_te), torch.from_numpy(y_te)
    widths = (64, *cfg.hidden, 10)

    def build() -> Any:
        layers: list[Any] = []
        for i in range(len(widths) - 1):
            layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
            if i < len(widths) - 2:
                layers.append(torch.nn.ReLU())
        return torch.nn.Sequential(*layers)

    torch.manual_seed(cfg.seed)
    dense = build()
    _train(dense, xt, yt, cfg.epochs, cfg, None, cfg.seed)
    acc, loss, correct = _evaluate(dense, xe, ye)
    dense_state = {k: v.clone() for k, v in dense.state_dict().items()}
    weights = [name for name, p in dense.named_parameters() if name.endswith("weight")]

    continued = build()
    continued.load_state_dict(dense_state)
    _train(continued, xt, yt, cfg.finetune_epochs, cfg, None, cfg.seed + 100)
    acc_c, loss_c, correct_c = _evaluate(continued, xe, ye)
    rows = [{"method": "dense", "zeros": 0.0, "is_2to4": False, "acc_pruned": acc, "loss_pruned": loss,
             "correct_pruned": correct, "acc_retrained": acc_c, "loss_retrained": loss_c,
             "correct_retrained": correct_c}]

    def masks_for(method: str) -> dict[str, Any]:
        out = {}
        for j, name in enumerate(weights):
            w = dense_state[name].numpy()
            if method == "2:4 magnitude":
                keep = mask_2to4(w)
            elif method == "2:4 random":
                keep = random_mask_2to4(w.shape, seed=cfg.seed + 1 + j)
            else:
                keep = unstructured_mask(w, 0.5)
            out[name] = torch.from_numpy(np.asarray(keep, dtype=np.float32))
        return out

    for method in ("2:4 magnitude", "2:4 random", "unstructured 50% magnitude"):
        masks = masks_for(method)
        model = build()
        model.load_state_dict(dense_state)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name in masks:
                    p.mul_(masks[name])
        acc_p, loss_p, correct_p = _evaluate(model, xe, ye)
        _train(model, xt, yt, cfg.finetune_epochs, cfg, masks, cfg.seed + 100)
        acc_r, loss_r, correct_r = _evaluate(model, xe, ye)
        params = dict(model.named_parameters())
        total = sum(int(params[n].numel()) for n in weights)
        zeros = sum(int((params[n] == 0).sum()) for n in weights) / total
        two_four = all(is_2to4(params[n].detach().numpy()) for n in weights)
        rows.append({"method": method, "zeros": zeros, "is_2to4": two_four, "acc_pruned": acc_p,
                     "loss_pruned": loss_p, "correct_pruned": correct_p, "acc_retrained": acc_r,
                     "loss_retrained": loss_r, "correct_retrained": correct_r})
    return {"config": asdict(cfg), "test_size": int(ye.shape[0]), "train_size": int(yt.shape[0]), "rows": rows}


def asp_runs(seeds: Sequence[int] = (0, 1, 2), **config: Any) -> list[dict[str, Any]]:
    """:func:`asp_experiment` once per seed (data split, initialisation, shuffling and random mask change).

    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    seeds = check.sequence("seeds", seeds, lambda n, s: check.bounded_int(n, s, 0, 2**32 - 1, why="a NumPy seed"),
                           max_len=32)
    return [asp_experiment(ASPConfig(seed=s, **config)) for s in seeds]


def _run_item(name: str, run: Any) -> dict[str, Any]:
    run = check.mapping(name, run, allow_empty=False)
    missing = {"rows", "config", "test_size"} - set(run)
    if missing:
        raise ValueError(f"{name} must be a run of asp_experiment (keys rows, config, test_size); "
                         f"missing {sorted(missing)}")
    return run


def asp_summary(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean, min and max over seeds of every metric of every method, plus per-seed drops from dense.

    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    runs = check.sequence("runs", runs, _run_item, max_len=32)
    methods = [r["method"] for r in runs[0]["rows"]]
    out: dict[str, Any] = {"methods": methods, "seeds": [r["config"]["seed"] for r in runs],
                           "test_size": runs[0]["test_size"], "per_method": {}}
    for m in methods:
        rows = [next(x for x in run["rows"] if x["method"] == m) for run in runs]
        dense = [run["rows"][0] for run in runs]
        stats: dict[str, Any] = {}
        for key in ("acc_pruned", "acc_retrained", "loss_pruned", "loss_retrained", "zeros"):
            vals = [float(r[key]) for r in rows]
            stats[key] = {"mean": float(np.mean(vals)), "min": min(vals), "max": max(vals), "values": vals}
        stats["drop_pruned"] = [d["acc_pruned"] - r["acc_pruned"] for d, r in zip(dense, rows)]
        stats["drop_retrained"] = [d["acc_pruned"] - r["acc_retrained"] for d, r in zip(dense, rows)]
        stats["is_2to4"] = all(bool(r.get("is_2to4")) for r in rows)
        out["per_method"][m] = stats
    return out


def asp_conclusions(summary: dict[str, Any], tolerance: float = 0.02) -> dict[str, bool]:
    """The chapter's checked statements about the experiment, as booleans with margins (robust to noise).

    ``tolerance`` is the accuracy (fraction) a retrained 2:4 model may lose against its dense model.
    """
    tolerance = check.fraction("tolerance", tolerance)
    summary = check.mapping("summary", summary, allow_empty=False)
    if not {"per_method", "methods"} <= set(summary):
        raise ValueError("summary must be what asp_summary returns (keys methods, per_method)")
    pm = summary["per_method"]
    mag, rnd, uns = pm["2:4 magnitude"], pm["2:4 random"], pm["unstructured 50% magnitude"]
    return {
        "every 2:4 model is 2:4": mag["is_2to4"] and rnd["is_2to4"],
        "pruning alone costs accuracy (2:4 magnitude, every seed)": min(mag["drop_pruned"]) > tolerance,
        "magnitude beats random right after pruning (every seed)":
            all(a > b for a, b in zip(mag["acc_pruned"]["values"], rnd["acc_pruned"]["values"])),
        "unstructured loses less than 2:4 right after pruning (mean)":
            uns["acc_pruned"]["mean"] > mag["acc_pruned"]["mean"],
        f"retrained 2:4 magnitude within {100 * tolerance:.0f} points of dense (every seed)":
            max(mag["drop_retrained"]) <= tolerance,
    }
