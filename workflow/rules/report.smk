# The report (issue 11): the scorecard (results/SCORECARD.md, .csv, .html), every table as an
# HTML page (the report shows CSV only as a download), and what the report needs to group and
# caption the figures and tables. After a run:
#
#   snakemake --report results/report.html      one self-contained HTML file
#
# Category = paper, subcategory = item (Figure 1, Table 2, ...), labels = the item and its
# scorecard verdicts. A caption is the item's template (the setting, the paper's claim: the
# paper's captions/<name>.rst in src/pdsparse/repro/papers/<paper>/) followed by its scorecard
# rows (what we measured, whether it agrees). The helpers (captions, labels, targets) are in
# common.smk, section "report".


rule effective_config:
    output:
        "results/config.json",
    log:
        "logs/effective_config.log",  # nothing to say: the rule cannot fail but for the disk
    params:
        # a change of the config reruns the job; the hash keeps Snakemake's "params have
        # changed" line short (the whole config in it printed 10 KB)
        sha256=lambda wc: pdcfg.config_digest(config),
    run:
        with atomic_path(output[0]) as tmp:
            tmp.write_text(json.dumps(config))  # in the config's order (data sets, panels)


rule scorecard:
    input:
        scorecard_inputs,
        config="results/config.json",
    output:
        md="results/SCORECARD.md",
        csv=SCORECARD_CSV,
        html=report(
            "results/scorecard.html",
            caption="../report/scorecard.rst",
            category="Scorecard",
            subcategory="All papers",
            labels=scorecard_labels,
        ),
    log:
        "logs/scorecard.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=2000),
        runtime=minutes(10),
    params:
        schema=str(SCHEMA),
        # the files the verdicts are computed from: the scorecard states their provenance
        parquet=lambda wc, input: " ".join(shlex.quote(f) for f in input if f.endswith("parquet")),
        skipped=lambda wc: " ".join(
            shlex.quote(f"{item}={name}") for plan in PLANS.values() for item, name in plan.skipped
        ),
    shell:
        "pdsparse scorecard --config {input.config:q} --schema {params.schema:q}"
        " --skipped {params.skipped} --results results"
        " --provenance-from {params.parquet}"
        " --out-md {output.md} --out-csv {output.csv} --out-html {output.html} 2> {log}"


rule table_page:
    input:
        "results/tables/{paper}/{name}.md",
    output:
        report(
            "results/report/{paper}/{name}.html",
            caption="../report/caption.rst",
            category=report_category,
            subcategory=report_subcategory,
            labels=report_labels,
        ),
    log:
        "logs/report/{paper}/{name}.log",
    wildcard_constraints:
        paper=_alternatives(PLANS),
        name=_alternatives({n for (_, n), o in OUTPUTS.items() if o.kind == "table"}),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=1000),
        runtime=minutes(5),
    params:
        title=lambda wc: f"{report_category(wc)} {report_subcategory(wc)}",
        caption=report_caption,
    shell:
        "pdsparse html --md {input} --title {params.title:q} --out {output} 2> {log}"
