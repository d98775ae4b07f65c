"""ampere.report.references: published figures as references, the reference table."""

from ampere.report import comparison, references


def test_published_figures_are_references_of_the_same_quantity():
    figs = references.published_figures(["A100-SXM4-80GB", "A100-SXM4-40GB"])
    keys = {f["key"] for f in figs}
    assert "hbm/read" in keys and "matmul/fp16/n8192" in keys
    assert all(f["provenance"].startswith("published: ") for f in figs)
    # the zeros-input run is not a reference (a benchmark with other data is another benchmark)
    mm = [f for f in figs if f["key"] == "matmul/fp16/n8192"]
    assert [f["value"] for f in mm] == [257.0]
    # a reader's figure is judged against the published one when nothing is recorded
    mine = [{"probe": "matmul", "key": "matmul/fp16/n8192", "label": "FP16", "value": 200.0, "unit": "TFLOP/s",
             "model": 312.0}]
    comp = comparison.compare(mine, "A100-SXM4-40GB", figs)[0]
    assert comp["reference"] == 257.0 and comp["flag"] and comp["reference_from"][0].startswith("published: He 2024")


def test_reference_table_groups_sources_and_gives_the_spread():
    refs = references.reference_table()
    assert refs and all(r.gpu in references.REFERENCE_GPUS for r in refs)
    mamf = [r for r in refs if r.gpu == "A100-SXM4-80GB" and r.quantity == "BF16 matmul, MAMF shape search"]
    assert mamf and len(mamf[0].values) >= 2 and 0 < mamf[0].spread < 0.05
    rows = references.reference_rows(mamf)
    assert "–" in rows[0]["value"] and rows[0]["source"] == "Bekman 2024"


def test_reference_tables_fit_a_printed_page():
    """Split by benchmark, four narrow columns: every Markdown line of the chapter's tables within 100
    characters (the old single table overflowed a PDF page by hundreds of points)."""
    from ampere import tables

    refs = references.reference_table(benchmarks=("matmul", "stream", "all-reduce", "training-throughput"))
    for bench in {r.benchmark for r in refs}:
        text = tables.markdown_table(references.reference_rows([r for r in refs if r.benchmark == bench]))
        assert max(len(line) for line in text.splitlines()) <= 100, bench
    units = {r.quantity: r.unit for r in refs if r.benchmark == "training-throughput"}
    # the aggregate of Megatron's 1T run is PFLOP/s (it printed "502 s" when "_s" matched first)
    assert units["GPT 1T, 3072 GPUs: aggregate"] == "PFLOP/s" and units["GPT 1T, 3072 GPUs: fp16"] == "TFLOP/s/GPU"
