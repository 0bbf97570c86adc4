# reference: data/processed/<data>.npz -> results/reference/<problem>.parquet
# P* of the problem, certified by a relative duality gap <= <paper>.reference.rtol; the
# suboptimality axes of the figures are P(w) - P*.


rule reference:
    input:
        lambda wc: processed_file(PROBLEMS[wc.problem].data),
    output:
        "results/reference/{problem}.parquet",
    log:
        "logs/reference/{problem}.log",
    wildcard_constraints:
        problem=_alternatives(PROBLEMS),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(150),
        runtime=minutes(lambda wc: int(REFERENCE[wc.problem]["max_seconds"] / 60) + 15),
    params:
        spec=lambda wc: job_spec("reference", wc.problem),
    shell:
        "pdsparse job reference {wildcards.problem:q} --data {input:q} --out {output:q} 2> {log:q}"
