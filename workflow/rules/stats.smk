# stats: data/processed/<data>.npz -> results/stats/<data>__l2-<l2>__beta-<beta>[__as-<norm>].parquet
# (n, d, nnz, density, C_P, C_D, T_P, T_D, T_P/T_D: Face-Off eqs. (12)-(16)); "__as-<norm>"
# recomputes them under another normalization (Table 1's variants).


rule stats:
    input:
        lambda wc: processed_file(STATS[wc.stats].data),
    output:
        "results/stats/{stats}.parquet",
    log:
        "logs/stats/{stats}.log",
    wildcard_constraints:
        stats=_alternatives(STATS),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(100),
        runtime=minutes(15),
    params:
        spec=lambda wc: job_spec("stats", wc.stats),
    shell:
        "pdsparse job stats {wildcards.stats:q} --data {input:q} --out {output:q} > {log:q} 2>&1"
