# prepare: the one path for real and synthetic data, by recipe
#   registry data set: data/raw/<file> -> data/processed/<name>__<recipe>.npz
#     (with a recipe test_file also its raw file: data/raw/<test file>)
#   generator:                         -> data/processed/<name>__<recipe>.npz
# (parse, check shape and labels, binarize / generate; then normalize as the recipe says).


rule prepare:
    input:
        lambda wc: [raw_file(name) for name in DATASETS[wc.data].raw_names],
    output:
        f"{PROCESSED_DIR}/{{data}}.npz",
    log:
        "logs/prepare/{data}.log",
    wildcard_constraints:
        data=_alternatives(DATASETS),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(250),
        runtime=minutes(30),
    params:
        spec=lambda wc: job_spec("prepare", wc.data),
    shell:
        "pdsparse job prepare {wildcards.data:q} --out {output:q} 2> {log:q}"
