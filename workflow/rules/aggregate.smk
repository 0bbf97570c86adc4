# aggregate: all runs of an experiment + the references of its data sets
#   -> results/faceoff/<experiment>.parquet (traces, p_star, subopt = primal - p_star).


rule aggregate:
    input:
        runs=lambda wc: [run.path for run in PLAN.runs_of(wc.experiment)],
        references=lambda wc: [reference_file(n) for n in PLAN.experiments[wc.experiment]],
    output:
        "results/faceoff/{experiment}.parquet",
    wildcard_constraints:
        experiment=_alternatives(PLAN.experiments),
    log:
        "logs/aggregate/faceoff/{experiment}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse aggregate --runs {input.runs} --references {input.references}"
        " --out {output} 2> {log}"
