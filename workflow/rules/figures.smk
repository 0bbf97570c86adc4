# figures: aggregates -> results/figures/<paper>/<name>.{png,pdf}, as each paper's plan
# describes them (the `pdsparse output` builder, its arguments, the files they read);
# the caption is the paper's captions/<name>.rst in src/pdsparse/repro/papers/<paper>/.


rule figure:
    input:
        lambda wc: OUTPUTS[(wc.paper, wc.name)].inputs,
    output:
        png=report(
            "results/figures/{paper}/{name}.png",
            caption="../report/caption.rst",
            category=report_category,
            subcategory=report_subcategory,
            labels=report_labels,
        ),
        pdf="results/figures/{paper}/{name}.pdf",
    log:
        "logs/figures/{paper}/{name}.log",
    wildcard_constraints:
        paper=_alternatives(PLANS),
        name=_alternatives({n for (_, n), o in OUTPUTS.items() if o.kind == "figure"}),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=2000),
        runtime=minutes(10),
    params:
        spec=lambda wc: job_spec("output", f"{wc.paper}/{wc.name}"),
        caption=report_caption,  # read by the report only (workflow/rules/report.smk)
    shell:
        "pdsparse job output {wildcards.paper}/{wildcards.name} --out {output.png:q} {output.pdf:q}"
        " 2> {log:q}"
