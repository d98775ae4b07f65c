"""The training experiment: an MLP on scikit-learn's bundled digits (:func:`train_digits_mlp`) with FP32,
emulated TF32, BF16 or FP16 matmuls (a custom autograd function that rounds its operands), or the real
switches on a GPU; each run is a :class:`TrainingRun`.

torch (and scikit-learn) are imported inside the functions. Chapter: *TF32 and the precision formats*
(book/tf32.ipynb), section "Training is unaffected".
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .. import check
from ..device import tf32_enabled
from .rounding import ROUNDING_MODES, _check_mode
from .torch_rounding import round_tensor


@dataclass
class TrainingRun:
    """Loss curve and accuracies of one :func:`train_digits_mlp` run."""

    precision: str
    backend: str  # "emulated" (custom autograd rounding) or "native" (real TF32 switch / autocast, GPU)
    device: str
    epoch_losses: list[float]
    train_accuracy: float
    test_accuracy: float
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.precision = check.one_of("TrainingRun.precision", self.precision, _TRAIN_PRECISIONS)
        self.backend = check.one_of("TrainingRun.backend", self.backend, _BACKENDS)
        self.device = check.string("TrainingRun.device", self.device, max_len=64)
        self.epoch_losses = check.sequence("TrainingRun.epoch_losses", self.epoch_losses, check.nonneg,
                                           max_len=_MAX_EPOCHS)
        self.train_accuracy = check.fraction("TrainingRun.train_accuracy", self.train_accuracy)
        self.test_accuracy = check.fraction("TrainingRun.test_accuracy", self.test_accuracy)
        self.seconds = check.nonneg("TrainingRun.seconds", self.seconds)
        self.params = check.mapping("TrainingRun.params", self.params)


_TRAIN_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
_BACKENDS = ("emulated", "native")
#: Bounds of the experiment (each epoch is 22 batches of 64 on 1,347 training images).
_MAX_EPOCHS, _MAX_HIDDEN = 1000, 4096


def _emulated_matmul_function():
    import torch

    class EmulatedMatmul(torch.autograd.Function):
        """x @ w with both operands rounded to ``fmt`` in the forward and in both backward matmuls."""

        @staticmethod
        def forward(ctx, x, w, fmt, mode):  # noqa: D401
            ctx.save_for_backward(x, w)
            ctx.fmt, ctx.mode = fmt, mode
            return round_tensor(x, fmt, mode) @ round_tensor(w, fmt, mode)

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            g = round_tensor(grad, ctx.fmt, ctx.mode)
            grad_x = g @ round_tensor(w, ctx.fmt, ctx.mode).t()
            grad_w = round_tensor(x, ctx.fmt, ctx.mode).t() @ g
            return grad_x, grad_w, None, None

    return EmulatedMatmul


def _digits_split(seed: int = 0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()  # bundled with scikit-learn: nothing is downloaded
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def train_digits_mlp(precision: str = "fp32", *, epochs: int = 30, hidden: int = 128, batch_size: int = 64,
                     lr: float = 0.05, seed: int = 0, device: Any = "cpu", backend: str = "emulated",
                     mode: str = "nearest") -> TrainingRun:
    """Train a 64-``hidden``-10 MLP on scikit-learn's digits (1797 8x8 images, bundled) and report its curve.

    ``backend="emulated"`` runs every matmul (forward and both backward ones) through a custom autograd
    function that rounds its operands to ``precision`` and accumulates in FP32: the tensor-core arithmetic,
    on any device. ``backend="native"`` (CUDA only) uses plain ``nn.Linear`` under the real switches:
    TF32 off for "fp32", on for "tf32", ``torch.autocast`` for "bf16"/"fp16". Seeds fix the initial
    weights and the batch order. SGD with momentum 0.9. Chapter *TF32 and the precision formats*, section
    "Training is unaffected".
    """
    import torch

    check.one_of("precision", precision, _TRAIN_PRECISIONS)
    check.one_of("backend", backend, _BACKENDS)
    if precision in ROUNDING_MODES:
        _check_mode(precision, mode)
    else:
        check.one_of("mode", mode, ("nearest",))
    epochs = check.positive_int("epochs", epochs, maximum=_MAX_EPOCHS)
    hidden = check.positive_int("hidden", hidden, maximum=_MAX_HIDDEN)
    batch_size = check.positive_int("batch_size", batch_size, maximum=2048)
    lr = check.positive("lr", lr, maximum=10.0)
    seed = check.nonneg_int("seed", seed, maximum=2**32 - 1)  # scikit-learn's random_state limit
    dev = torch.device(check.device("device", device))
    if backend == "native" and dev.type != "cuda":
        raise ValueError(f"backend='native' needs a CUDA device, got device={str(dev)!r}; use backend='emulated'")
    x_tr, x_te, y_tr, y_te = _digits_split(seed)
    x_tr, x_te = torch.from_numpy(x_tr).to(dev), torch.from_numpy(x_te).to(dev)
    y_tr, y_te = torch.from_numpy(y_tr).to(dev), torch.from_numpy(y_te).to(dev)
    torch.manual_seed(seed)
    layers = torch.nn.ModuleList([torch.nn.Linear(64, hidden), torch.nn.Linear(hidden, 10)]).to(dev)
    matmul = _emulated_matmul_function()
    fmt = "fp32" if precision == "fp32" else precision

    def forward(x):
        if backend == "emulated":
            h = torch.relu(matmul.apply(x, layers[0].weight.t(), fmt, mode) + layers[0].bias)
            return matmul.apply(h, layers[1].weight.t(), fmt, mode) + layers[1].bias
        if precision in ("bf16", "fp16"):
            with torch.autocast("cuda", dtype=torch.bfloat16 if precision == "bf16" else torch.float16):
                return layers[1](torch.relu(layers[0](x))).float()
        return layers[1](torch.relu(layers[0](x)))

    opt = torch.optim.SGD(layers.parameters(), lr=lr, momentum=0.9)
    gen = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    t0 = time.perf_counter()
    # 64 x 128 matmuls: on a CPU more threads only add synchronisation (and oversubscription on busy hosts)
    with _torch_threads(1 if dev.type == "cpu" else None), tf32_enabled(backend == "native" and precision == "tf32"):
        for _ in range(epochs):
            order = torch.randperm(x_tr.shape[0], generator=gen).to(dev)
            total, count = 0.0, 0
            for start in range(0, x_tr.shape[0], batch_size):
                idx = order[start:start + batch_size]
                loss = torch.nn.functional.cross_entropy(forward(x_tr[idx]), y_tr[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += float(loss.detach()) * idx.numel()
                count += idx.numel()
            losses.append(total / count)
        with torch.no_grad():
            train_acc = float((forward(x_tr).argmax(1) == y_tr).float().mean())
            test_acc = float((forward(x_te).argmax(1) == y_te).float().mean())
    return TrainingRun(precision=precision, backend=backend, device=str(dev), epoch_losses=losses,
                       train_accuracy=train_acc, test_accuracy=test_acc, seconds=time.perf_counter() - t0,
                       params={"epochs": epochs, "hidden": hidden, "batch_size": batch_size, "lr": lr,
                               "seed": seed, "mode": mode})


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch intra-op threads (None: unchanged), restoring the previous count."""
    import torch

    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
