"""The five live calculators: inputs -> one public call of a chapter package -> an :class:`Answer`.

Chapter: *Try the models* (book/try-the-models.md); each calculator names the chapter and section that
explains its model. Keep every entry thin: the chapters own the models and their APIs change; an entry
only maps the form's inputs onto the public call and prints what it returns. Each factory imports its
chapter when it is first used, so the browser imports only what the page runs.
"""

from __future__ import annotations

from .registry import Answer, Calculator, Field, Table, register

GB = 1e9
#: the GPU every calculator starts from
DEFAULT_GPU = "A100-SXM4-80GB"


def _gb(x: float) -> str:
    return f"{x / GB:,.1f}"


# =======================================================================================================
# HBM: what fits on one GPU (ampere.memory.model_memory)
# =======================================================================================================

_TASKS = ("inference", "full training", "LoRA", "QLoRA")
_TRAINING = ("full training", "LoRA", "QLoRA")


@register("hbm-fits")
def hbm_fits() -> Calculator:
    """What one GPU must hold to serve or train a model, and whether it fits (``ampere.memory``)."""
    from .. import memory, specs, transformer

    def compute(model: str, task: str, weights: str, context: int, batch: int, seq_len: int,
                data_parallel: int, zero_stage: int, gpu: str) -> Answer:
        if task == "inference":
            est = memory.model_memory(model, mode="inference", weights=weights, context=context, batch=batch)
        else:
            finetune = {"full training": "full", "LoRA": "lora", "QLoRA": "qlora"}[task]
            est = memory.model_memory(model, mode="training", finetune=finetune, weights=weights, seq_len=seq_len,
                                      data_parallel=data_parallel, zero_stage=zero_stage)
        spec = specs.get(gpu)
        usable = memory.usable_bytes(spec)
        fits = est.fits(spec)
        verdict = ("fits, with {} GB to spare".format(_gb(est.headroom_bytes(spec))) if fits else
                   f"does not fit: {est.gpus_needed(spec)} of them hold it split evenly (ideal model parallelism)")
        per = " per GPU" if est.data_parallel > 1 else ""
        summary = (f"{model}, {task}: {_gb(est.total_bytes)} GB{per}.",
                   f"One {spec.name} may use {_gb(usable)} GB (what CUDA exposes, "
                   f"{_gb(memory.cuda_visible_bytes(spec))} GB, less {memory.RESERVE_FRACTION:.0%} kept for the "
                   f"runtime): it {verdict}.")
        rows = [{"component": name.replace("_", " "), "GB": _gb(value)} for name, value in est.breakdown.items()]
        rows.append({"component": "total", "GB": _gb(est.total_bytes)})
        return Answer(summary, (Table(("component", "GB"), tuple(rows)),), est.assumptions)

    return Calculator(
        name="hbm-fits", title="What fits on one GPU", call="ampere.memory.model_memory", chapter="hbm",
        section="What fits: capacity arithmetic",
        description="Bytes of weights, KV cache, training state and activations of a model, against what one "
                    "GPU may use.",
        fields=(
            Field("model", "model", "choice", "llama2-70b", tuple(transformer.PRESETS)),
            Field("task", "task", "choice", "inference", _TASKS),
            Field("weights", "weight format", "choice", "bf16", tuple(memory.FORMAT_BITS),
                  help="the stored weights (QLoRA keeps them in NF4, full training 16 bytes per parameter)",
                  only_for=("task", ("inference", "LoRA"))),
            Field("context", "context", "int", 4096, minimum=0, maximum=1_048_576, unit="tokens",
                  only_for=("task", ("inference",))),
            Field("batch", "sequences", "int", 1, minimum=1, maximum=4096, only_for=("task", ("inference",))),
            Field("seq_len", "sequence length", "int", 2048, minimum=0, maximum=1_048_576, unit="tokens",
                  help="activations of one sequence with full recomputation; 0 leaves them out",
                  only_for=("task", _TRAINING)),
            Field("data_parallel", "data-parallel GPUs", "int", 1, minimum=1, maximum=100_000,
                  only_for=("task", _TRAINING)),
            Field("zero_stage", "ZeRO stage", "choice", 0, (0, 1, 2, 3), only_for=("task", _TRAINING)),
            Field("gpu", "GPU", "choice", DEFAULT_GPU, tuple(specs.names())),
        ),
        compute=compute)


# =======================================================================================================
# Megatron-LM: the fastest layouts and the training time (ampere.megatron.search_layouts)
# =======================================================================================================

_GPT3 = "GPT-3 175B"


@register("megatron-layouts")
def megatron_layouts() -> Calculator:
    """The fastest (t, p, d, b, v) layouts of a GPT on n GPUs, and the days to train it (``ampere.megatron``)."""
    from .. import megatron

    models = (_GPT3, *(row["name"] for row in megatron.TABLE1))

    def compute(model: str, gpus: int, batch: int, tokens_b: float, calibrated: bool, top: int) -> Answer:
        cfg = (megatron.GPTConfig(layers=96, hidden=12288, heads=96) if model == _GPT3
               else megatron.table1_config(model))
        best = megatron.search_layouts(cfg, gpus, batch, top=top, calibrated=calibrated)
        kind = "calibrated on the 2021 runs" if calibrated else "no fitted constant"
        if not best:
            return Answer((f"{model} on {gpus} A100 80GB with a batch of {batch}: no layout divides the model "
                           "and the batch and fits in memory. Try a batch that is a multiple of the data-parallel "
                           "size, or more GPUs.",))
        params = megatron.params(cfg)
        days = megatron.training_days(params, tokens_b * 1e9, gpus, best[0].tflops_per_gpu)
        lay = best[0].layout
        summary = (f"{model} ({params / 1e9:,.1f} B parameters) on {gpus} A100 80GB, batch {batch}: the fastest "
                   f"layout is t={lay.tensor}, p={lay.pipeline}, d={lay.data}, b={lay.microbatch}, "
                   f"v={lay.interleave}, at {best[0].tflops_per_gpu:.1f} TFLOP/s per GPU ({kind}).",
                   f"{tokens_b:,.0f} B tokens take {days:,.1f} days at that rate (8TP/(nX), the paper's eq. 4).")
        rows = tuple({"t": e.layout.tensor, "p": e.layout.pipeline, "d": e.layout.data, "b": e.layout.microbatch,
                      "v": e.layout.interleave, "TFLOP/s per GPU": f"{e.tflops_per_gpu:.1f}",
                      "% of peak": f"{e.percent_of_peak:.0f}", "s per iteration": f"{e.time_per_iteration_s:.2f}",
                      "GB per GPU": f"{e.memory_bytes_per_gpu / GB:.0f}", "bubble": f"{e.bubble_fraction:.1%}"}
                     for e in best)
        table = Table(("t", "p", "d", "b", "v", "TFLOP/s per GPU", "% of peak", "s per iteration", "GB per GPU",
                       "bubble"), rows, caption=f"The {len(best)} fastest layouts that fit in memory")
        return Answer(summary, (table,), best[0].notes)

    return Calculator(
        name="megatron-layouts", title="Layouts and training time of a GPT", call="ampere.megatron.search_layouts",
        chapter="megatron",
        section="Choosing a layout",
        description="Every tensor x pipeline x data layout of a GPT on n GPUs, ranked by the chapter's "
                    "throughput model, and the end-to-end training time of the best one.",
        fields=(
            Field("model", "model", "choice", _GPT3, models, help="GPT-3, or a row of the paper's Table 1"),
            Field("gpus", "GPUs", "int", 1024, minimum=1, maximum=16_384),
            Field("batch", "global batch", "int", 1536, minimum=1, maximum=65_536, unit="sequences"),
            Field("tokens_b", "training tokens", "float", 300.0, minimum=0.001, maximum=1e6, unit="billion"),
            Field("calibrated", "calibrated on 2021 runs", "bool", False),
            Field("top", "layouts shown", "int", 5, minimum=1, maximum=20),
        ),
        compute=compute)


# =======================================================================================================
# MIG: place instances on one GPU (ampere.mig.place)
# =======================================================================================================


@register("mig-planner")
def mig_planner() -> Calculator:
    """Where a set of MIG instances goes on one GPU, and which slices it strands (``ampere.mig``)."""
    from .. import mig

    def compute(gpu: str, instances: str) -> Answer:
        names = [n.strip() for n in instances.replace(";", ",").split(",") if n.strip()]
        if not names:
            raise ValueError("instances is empty: list profiles such as 3g.40gb, 2g.20gb")
        layout = mig.place(gpu, names)
        use = mig.usage(gpu, layout)
        memory_map, compute_map = mig.layout_maps(gpu, layout)
        rows = []
        for i, (name, start) in enumerate(layout):
            p = mig.profile(gpu, name)
            rows.append({"instance": "ABCDEFGH"[i], "profile": name, "start slot": start,
                         "memory slices": p.memory_slices, "compute slices": p.compute_slices,
                         "SMs": p.sm_count if p.sm_count is not None else "not published"})
        sms = f"{use.sms_used} of {use.total_sms} SMs in use" if use.sms_used is not None else "SM counts unknown"
        more = sorted({n for n, _ in mig.addable(gpu, layout)})
        summary = (f"{mig.format_layout(layout)} on the {gpu}: {sms}.",
                   f"Memory slices {memory_map}, compute slices {compute_map} (letters: instances; _ free and "
                   f"usable; . stranded: free, but no profile can use it).",
                   "Nothing more fits: the layout is maximal." if not more
                   else f"Still addable: {', '.join(more)}.")
        table = Table(("instance", "profile", "start slot", "memory slices", "compute slices", "SMs"), tuple(rows))
        return Answer(summary, (table,))

    gpus = tuple(mig.mig_gpus())
    return Calculator(
        name="mig-planner", title="MIG placement", call="ampere.mig.place", chapter="mig",
        section="Every way to cut an A100",
        description="The start slot of every instance (what nvidia-smi mig -cgi must find), the SMs in use and the "
                    "slices left stranded.",
        fields=(
            Field("gpu", "GPU", "choice", DEFAULT_GPU if DEFAULT_GPU in gpus else gpus[0], gpus),
            Field("instances", "instances", "text", "3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb",
                  help="profile names separated by commas, e.g. 4g.40gb, 3g.40gb"),
        ),
        compute=compute)


# =======================================================================================================
# DGX SuperPOD: nodes -> fabric, peak, power (ampere.cluster.superpod)
# =======================================================================================================


@register("superpod-sizer")
def superpod_sizer() -> Calculator:
    """A DGX A100 SuperPOD of n nodes: its fat tree, cables, peak and power (``ampere.cluster``)."""
    from .. import cluster

    def compute(nodes: int, gpu: str, switch_ports: int) -> Answer:
        pod = cluster.superpod(nodes, gpu=gpu, switch_ports=switch_ports)
        f = pod.fabric
        units = f"{pod.scalable_units} scalable unit" + ("s" if pod.scalable_units != 1 else "")
        summary = (f"{pod.nodes:,} DGX A100 = {pod.gpus:,} GPUs in {units}: a compute fabric of "
                   f"{pod.switches} {switch_ports}-port HDR switches in a {f.levels}-level fat tree, "
                   f"{f.cables_total:,} cables.",
                   f"Peak {pod.peak_flops('fp16') / 1e15:,.1f} PFLOP/s FP16 dense "
                   f"({pod.peak_flops('fp16', sparse=True) / 1e15:,.1f} sparse); bisection "
                   f"{pod.bisection_bytes_per_s / 1e12:,.1f} TB/s per direction; maximum power "
                   f"{pod.power_w / 1e3:,.0f} kW (nodes and compute fabric).")
        rows = ({"quantity": "leaf / spine / core switches",
                 "value": f"{pod.leaf_switches} / {pod.spine_switches} / {pod.core_switches}"},
                {"quantity": "cables node-leaf / leaf-spine / spine-core",
                 "value": " / ".join(f"{pod.cables.get(t, 0):,}" for t in cluster.TIERS)},
                {"quantity": "optical transceivers", "value": f"{pod.transceivers:,}"},
                {"quantity": "GPU memory", "value": f"{pod.gpu_memory_bytes / 1e12:,.1f} TB"},
                {"quantity": "power: nodes / switches", "value": f"{pod.node_power_w / 1e3:,.0f} kW / "
                                                                 f"{pod.fabric_power_w / 1e3:,.1f} kW"})
        return Answer(summary, (Table(("quantity", "value"), rows),),
                      (f"switch power is an assumption ({pod.switch_power_w:.0f} W per switch); storage and "
                       "management networks and cooling are not included",))

    return Calculator(
        name="superpod-sizer", title="SuperPOD sizer", call="ampere.cluster.superpod", chapter="dgx-superpod",
        section="From 20 to 2,000 nodes",
        description="The rail-optimised, non-blocking fat tree for n DGX A100 nodes: switches, cables, "
                    "bisection, peak and power.",
        fields=(
            Field("nodes", "DGX A100 nodes", "int", 140, minimum=1, maximum=10_000),
            Field("gpu", "GPU", "choice", DEFAULT_GPU, ("A100-SXM4-80GB", "A100-SXM4-40GB")),
            Field("switch_ports", "switch ports", "choice", cluster.QM8790_PORTS, (cluster.QM8790_PORTS, 64),
                  help="40: the QM8790 HDR switch of the reference design"),
        ),
        compute=compute)


# =======================================================================================================
# The A100 today: a workload on every GPU (ampere.today.plans)
# =======================================================================================================


@register("today-plan")
def today_plan() -> Calculator:
    """A workload planned on every GPU of the chapter: cards, speed and cost (``ampere.today``)."""
    from .. import today, transformer

    def compute(model: str, task: str, weights: str, context: int, batch: int, tokens_b: float,
                max_cards: int) -> Answer:
        tokens = tokens_b * 1e9 if task != "inference" else None
        w = today.Workload(model, task, weights=weights, context=context, batch=batch, tokens=tokens,
                           max_cards=max_cards)
        plans = today.plans(w)
        if task == "inference":
            columns = ("GPU", "fits", "cards", "GB per card", "tokens/s", "bound", "$/h", "$/M tokens", "note")
        else:
            columns = ("GPU", "fits", "cards", "GB per card", "tokens/s", "MFU", "run time", "$/run", "note")
        rows = tuple(p.row() for p in plans)
        fitting = [p for p in plans if p.feasible]
        what = f"{model}, {task}" + (f" in {weights}, {batch} x {context} tokens" if task == "inference"
                                     else f", {tokens_b:,.3g} B tokens")
        summary = (f"{what}: fits on {len(fitting)} of {len(plans)} GPUs with at most {max_cards} cards each.",)
        notes = ("prices: the 2026 rental ranges the chapter cites (low-high, per GPU-hour); '-' where none is "
                 "cited",
                 "speed: the decoding bound of the HBM chapter" if task == "inference"
                 else "speed and memory: one layout of the Megatron chapter's search, timed and sized on each "
                      "card's own network (NVSwitch, or PCIe for the PCIe cards); QLoRA at a published "
                      "QLoRA/LoRA ratio")
        return Answer(summary, (Table(columns, rows),), notes)

    models = (*transformer.SIZE_CLASSES, *today.MODELS)
    return Calculator(
        name="today-plan", title="Workload planner", call="ampere.today.plans", chapter="a100-today",
        section="A workload calculator",
        description="Does a workload fit on each GPU, on how many cards, how fast, and what does it cost?",
        fields=(
            Field("model", "model", "choice", "70B", models),
            Field("task", "task", "choice", "inference", tuple(today.TASKS)),
            Field("weights", "weight format", "choice", "int4", tuple(today.INFERENCE_FORMATS),
                  only_for=("task", ("inference",))),
            Field("context", "context", "int", 4096, minimum=0, maximum=1_048_576, unit="tokens",
                  only_for=("task", ("inference",))),
            Field("batch", "sequences", "int", 1, minimum=1, maximum=4096, only_for=("task", ("inference",))),
            Field("tokens_b", "training tokens", "float", 1.0, minimum=0.001, maximum=1e6, unit="billion",
                  only_for=("task", tuple(t for t in today.TASKS if t != "inference"))),
            Field("max_cards", "most cards", "int", 8, minimum=1, maximum=4096),
        ),
        compute=compute)
