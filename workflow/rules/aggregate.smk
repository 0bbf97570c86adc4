# aggregate: the runs of an experiment + the references of its problems
#   -> results/<paper>/<experiment>.parquet (traces, p_star, subopt = primal - p_star).


rule aggregate:
    input:
        runs=lambda wc: [r.path for r in PLANS[wc.paper].runs_of(wc.experiment)],
        references=lambda wc: [
            reference_file(tag) for tag in PLANS[wc.paper].experiments[wc.experiment]
        ],
    output:
        "results/{paper}/{experiment}.parquet",
    log:
        "logs/aggregate/{paper}/{experiment}.log",
    wildcard_constraints:
        paper=_alternatives(PLANS),
        experiment=_alternatives({key[1] for key in RUNS}),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=2000),
        runtime=minutes(15),
    shell:
        "pdsparse aggregate --runs {input.runs} --references {input.references}"
        " --out {output} 2> {log}"
