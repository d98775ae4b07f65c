"""Properties of ampere.plots, ampere.book, ampere.device, ampere.benchcli and ampere.cli."""

import argparse
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import benchcli, book, cli, device, plots, specs

from .harness import (answers, any_case, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings,
                      catalogue_names, covers, not_lists, rejects, rejects_any, words)


@covers(plots.gpu_color)
@given(catalogue_names(), st.data())
def test_gpu_colours_match_names_in_any_case(name, data):
    canonical = specs.get(name).name
    colour = answers(plots.gpu_color, name, type_=str)
    assert colour == plots.gpu_color(canonical) and colour.startswith("#") and len(colour) == 7
    assert plots.gpu_color(data.draw(any_case("NVIDIA " + canonical))) == plots.gpu_color("NVIDIA " + canonical)
    assert plots.gpu_color(None) == plots.gpu_color("") == plots.gpu_color("a CPU")
    rejects(plots.gpu_color, "name", data.draw(st.one_of(st.integers(), st.just(["A100"]), st.floats())))


def test_a_saved_figure_is_a_png(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plots.figure("half")
    try:
        ax.plot([0, 1], [0, 1])
        path = answers(plots.save, fig, tmp_path / "sub" / "f.png", type_=Path)
        assert path.read_bytes()[:4] == b"\x89PNG"
    finally:
        plt.close(fig)


@covers(plots.figure, plots.style, plots.provenance_note, plots.legend_outside, plots.save, plots.axes)
@settings(max_examples=10)  # each example builds a matplotlib figure
@given(st.sampled_from(sorted(plots.SIZES)), st.integers(1, 2), st.integers(1, 2), st.data())
def test_figures_in_house_sizes(size, nrows, ncols, data):
    import tempfile
    from pathlib import Path

    import matplotlib.pyplot as plt

    fig, axes = answers(plots.figure, size, nrows, ncols, type_=tuple)
    try:
        assert tuple(fig.get_size_inches()) == plots.SIZES[size]
        ax = fig.axes[0]
        ax.plot([0, 1], [0, 1], label="line")
        assert answers(plots.provenance_note, ax, "model of A100", type_=type(None)) is None
        assert answers(plots.legend_outside, ax, type_=type(None)) is None
        assert plots.axes("ax", ax) is ax
        with plots.style():
            pass
        with tempfile.TemporaryDirectory() as tmp:
            rejects(plots.save, "path", fig, data.draw(st.one_of(st.just(""), st.integers(), st.none())))
            rejects(plots.save, "path", fig, tmp)
        bad_ax = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3)))
        rejects(plots.provenance_note, "ax", bad_ax, "t")
        rejects(plots.provenance_note, "text", ax, data.draw(bad_strings()))
        rejects(plots.legend_outside, "ax", bad_ax)
        rejects(plots.save, "fig", bad_ax, "f.png")
        rejects(plots.axes, "ax", "ax", bad_ax)
    finally:
        plt.close("all")
    rejects_any(data, plots.figure, {"size": size}, {
        "size": bad_names(plots.SIZES), "nrows": bad_ints(1, plots.MAX_PANELS), "ncols": bad_ints(1, plots.MAX_PANELS)})


@covers(book.show_table, book.device_note, book.setup)
@given(st.lists(st.fixed_dictionaries({"a": st.integers(), "b": words()}), min_size=1, max_size=4), words(),
       st.data())
def test_the_notebook_facade(rows, measures, data):
    assert answers(book.show_table, rows, type_=type(None)) is None
    info = device.DeviceInfo("cpu", "a CPU")
    note = answers(book.device_note, info, measures, type_=str)
    assert note.startswith('<details class="ampere-device">') and "built without a GPU" in note
    rejects(book.show_table, "rows", data.draw(st.one_of(not_lists(), st.just([]), st.just([1]))))
    rejects(book.device_note, "measures", info, data.draw(bad_strings()))
    rejects(book.setup, "measures", data.draw(bad_strings()))
    assert book.records is not None and book.specs is specs  # the façade re-exports the core
    with pytest.raises(AttributeError):
        book.no_such_module  # noqa: B018


def test_book_setup_answers_a_device_info(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert answers(book.setup, "this chapter times matmuls", type_=device.DeviceInfo).backend == "cpu"


@covers(device.DeviceInfo)
@given(st.data())
def test_device_info_fields_are_typed(data):
    valid = {"backend": "cuda", "name": "NVIDIA A100-SXM4-80GB", "compute_capability": (8, 0),
             "memory_bytes": 80 * 2 ** 30, "sm_count": 108, "gpu_count": 1, "spec_name": "A100-SXM4-80GB"}
    info = answers(device.DeviceInfo, **valid, type_=device.DeviceInfo)
    assert device.DeviceInfo.from_dict(info.to_dict()) == info and info.label() == "NVIDIA A100-SXM4-80GB (sm80)"
    assert answers(device.DeviceInfo, **{**valid, "spec_name": data.draw(any_case("A100-SXM4-80GB"))},
                   type_=device.DeviceInfo).spec_name == "A100-SXM4-80GB"
    assert "A100" in info.summary()
    rejects_any(data, device.DeviceInfo, valid, {
        "backend": bad_names(device.BACKENDS), "name": bad_strings(),
        "compute_capability": st.one_of(st.just((8,)), st.just("80"), st.just((8, -1)), st.just((8.0, 0))),
        "memory_bytes": bad_ints(1, 2 ** 44).filter(lambda v: v is not None), "sm_count": bad_ints(1, 10_000)
        .filter(lambda v: v is not None), "gpu_count": bad_ints(0, 1024), "tf32": bad_booleans(),
        "spec_name": bad_names(specs.names()).filter(lambda v: v is not None),
        "sparse_2to4_backends": st.one_of(st.just("cutlass"), st.just(["nope"])),
        "notes": st.one_of(st.text(min_size=1, max_size=3), st.just([1])),
        "power_limit_w": bad_floats(0.0, 1e5).filter(lambda v: v is not None)})
    rejects(device.DeviceInfo.from_dict, "d", data.draw(st.one_of(st.integers(), st.none(), st.just([]))))


@covers(device.probe, device.torch_device, device.tf32_state, device.tf32_enabled, device.nvml, device.nvml_handle,
        device.pci_bus_id, device.sparse_2to4_backends)
@given(st.data())
def test_device_functions(data):
    info = answers(device.probe, force="cpu", type_=device.DeviceInfo)
    assert info.backend == "cpu" and info.forced_cpu
    assert str(answers(device.torch_device, info)) == "cpu"
    state = answers(device.tf32_state, type_=dict)
    with device.tf32_enabled(state["matmul"] in (True, "tf32")):
        pass
    assert device.tf32_state() == state
    module, reason = device.nvml()
    assert (module is None) == (reason is not None)
    props = types.SimpleNamespace(pci_domain_id=0, pci_bus_id=data.draw(st.integers(0, 255)), pci_device_id=0)
    assert answers(device.pci_bus_id, props, type_=str).endswith(":00.0")
    assert device.pci_bus_id(object()) is None
    cc = data.draw(st.tuples(st.integers(6, 9), st.integers(0, 9)))
    backends = answers(device.sparse_2to4_backends, types.SimpleNamespace(), cc, type_=tuple)
    assert backends == ()  # a torch without to_sparse_semi_structured has no 2:4 backend
    rejects(device.probe, "index", data.draw(bad_ints(0, 1023)))
    rejects(device.probe, "force", force=data.draw(bad_names(["cpu"]).filter(lambda v: v is not None)))
    rejects(device.torch_device, "info", data.draw(st.one_of(st.integers(), st.text(min_size=1, max_size=3))))
    rejects(device.tf32_enabled, "enabled", data.draw(bad_booleans()))
    rejects(device.tf32_enabled, "conv", True, conv=data.draw(bad_booleans().filter(lambda v: v is not None)))
    rejects(device.nvml_handle, "index", data.draw(bad_ints(0, 1023)))
    rejects(device.sparse_2to4_backends, "compute_capability", types.SimpleNamespace(),
            data.draw(st.one_of(st.just((8,)), st.just("80"), st.just((8, -1)))))


def _args(**kw):
    return argparse.Namespace(**{"out": "./", "no_save": True, "device": "cpu", "quick": True, **kw})


@covers(benchcli.bench_parser, benchcli.BenchParser, benchcli.check_out, benchcli.fail)
@given(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), st.data())
def test_bench_options_and_out(name, data):
    import tempfile
    from pathlib import Path

    p = answers(benchcli.bench_parser, name, "d", type_=benchcli.BenchParser)
    with tempfile.TemporaryDirectory() as tmp:
        ns = p.parse_args(["--out", tmp, "--device", "cpu"])
        assert ns.out == tmp + "/" and ns.device == "cpu" and not ns.no_save
        assert answers(benchcli.check_out, Path(tmp) / "r.json", name, type_=str).endswith("r.json")
        (Path(tmp) / "other.json").write_text('{"benchmark": "zzz-other"}')
        rejects(benchcli.check_out, "out", Path(tmp) / "other.json", name)
        rejects(benchcli.check_out, "out", Path(tmp) / "r.txt", name)
        blocker = Path(tmp) / "file"
        blocker.write_text("x")
        rejects(benchcli.check_out, "out", f"{blocker}/sub/", name)
    rejects(benchcli.check_out, "out", data.draw(st.one_of(st.just(""), st.integers(), st.none())), name)
    rejects(benchcli.check_out, "benchmark", "./", data.draw(st.one_of(bad_strings(), st.just("Bad Name"))))
    rejects(benchcli.bench_parser, "name", data.draw(st.one_of(bad_strings(), st.just("Bad Name"))), "d")
    rejects(benchcli.bench_parser, "description", name, data.draw(bad_strings(allow_empty=True)))
    assert answers(benchcli.fail, "no GPU", type_=int) == 2
    rejects(benchcli.fail, "message", data.draw(bad_strings()))


@covers(benchcli.probe, benchcli.finish_bench, benchcli.Progress)
@given(data=st.data())
def test_bench_probe_finish_and_progress(data, capsys):
    import io

    from ampere import results

    info = answers(benchcli.probe, _args(), type_=device.DeviceInfo)
    assert info.backend == "cpu"
    result = results.make_result("matmul", info, {}, [], created_utc="2026-01-01T00:00:00Z")
    assert answers(benchcli.finish_bench, result, _args(), "summary", type_=int) == 0
    capsys.readouterr()
    bad_ns = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just({"no_save": True})))
    rejects(benchcli.probe, "args", bad_ns)
    rejects(benchcli.probe, "device", _args(device=data.draw(bad_names(benchcli.DEVICES))))
    rejects(benchcli.finish_bench, "args", result, bad_ns, "s")
    rejects(benchcli.finish_bench, "result", data.draw(st.one_of(st.none(), st.integers(), st.just({}))), _args(), "s")
    rejects(benchcli.finish_bench, "summary", result, _args(), data.draw(bad_strings(allow_empty=True)))
    stream = io.StringIO()
    with answers(benchcli.Progress, "step", after_s=10.0, stream=stream, type_=benchcli.Progress):
        pass
    assert stream.getvalue() == ""
    rejects_any(data, benchcli.Progress, {"label": "step"}, {
        "label": bad_strings(), "after_s": bad_floats(0.0, 3600.0, strict=False),
        "every_s": bad_floats(0.1, 3600.0, strict=False)})


@covers(cli.main)
@given(argv=st.lists(st.sampled_from(["--frobnicate", "nope", "bench", "validate", "-x", "", "info"]), min_size=1,
                     max_size=3), data=st.data())
def test_the_command_line_never_raises_for_bad_words(argv, data, capsys, monkeypatch):
    """Any list of words gives an exit code (0, 1 or 2), never a traceback; a non-list is a TypeError."""
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    monkeypatch.setattr(cli, "VALIDATIONS", {"specs": cli.VALIDATIONS["specs"]})
    if argv[0] == "bench" and len(argv) > 1 and argv[1] in cli.BENCHES:
        argv = argv[:1]
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own exit for a bad option, after its usage line on stderr
        code = exc.code
    assert code in (0, 1, 2), (argv, code)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    if code == 2:
        assert captured.err, f"{argv}: exit code 2 without a message on stderr"
    rejects(cli.main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=5), st.integers(),
                                                   st.just([1]), st.just([None]))))
