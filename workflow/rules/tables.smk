# tables: statistics -> results/tables/<paper>/<name>.{csv,md} (ours beside the paper's
# printed values), as each paper's plan describes them.


rule table:
    input:
        lambda wc: OUTPUTS[(wc.paper, wc.name)].inputs,
    output:
        csv=report(
            "results/tables/{paper}/{name}.csv",
            caption="../report/caption.rst",
            category=report_category,
            subcategory=report_subcategory,
            labels=report_labels,
        ),
        md="results/tables/{paper}/{name}.md",
    log:
        "logs/tables/{paper}/{name}.log",
    wildcard_constraints:
        paper=_alternatives(PLANS),
        name=_alternatives({n for (_, n), o in OUTPUTS.items() if o.kind == "table"}),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=1000),
        runtime=minutes(10),
    params:
        spec=lambda wc: job_spec("output", f"{wc.paper}/{wc.name}"),
        caption=report_caption,  # read by the report only (workflow/rules/report.smk)
    shell:
        "pdsparse job output {wildcards.paper}/{wildcards.name} --out {output.csv:q} {output.md:q}"
        " 2> {log:q}"
