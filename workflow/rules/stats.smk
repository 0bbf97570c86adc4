# stats: data/processed/<dataset>.npz -> results/stats/<dataset>.parquet
# (n, d, nnz, density, C_P, C_D, T_P, T_D, T_P/T_D: Face-Off eqs. (12)-(16), Table 1).


rule stats:
    input:
        lambda wc: processed_file(wc.dataset),
    output:
        "results/stats/{dataset}.parquet",
    params:
        l2=FO["l2"],
        beta=FO["beta"],
    log:
        "logs/stats/{dataset}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(100),
        runtime=15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse stats --data {input} --dataset {wildcards.dataset} --l2 {params.l2}"
        " --beta {params.beta} --out {output} 2> {log}"


# The same statistics under another normalization / beta (faceoff.table1.variants), shown in
# the "Variants" part of Table 1: the paper does not say under which setting it computed them.
rule stats_variant:
    input:
        lambda wc: processed_file(wc.dataset),
    output:
        "results/stats/variants/{dataset}__{normalization}__beta-{beta}.parquet",
    wildcard_constraints:
        normalization=r"avg_example_norm|unit_rows|none",
        beta=r"[0-9][0-9.eE+-]*",
    params:
        l2=FO["l2"],
    log:
        "logs/stats/variants/{dataset}__{normalization}__beta-{beta}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(100),
        runtime=15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse stats --data {input} --dataset {wildcards.dataset} --l2 {params.l2}"
        " --beta {wildcards.beta} --normalization {wildcards.normalization}"
        " --out {output} 2> {log}"
