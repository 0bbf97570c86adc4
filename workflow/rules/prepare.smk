# prepare: data/raw/<file> -> data/processed/<dataset>.npz (parse, check shape and labels,
# binarize, normalize with faceoff.normalization).
# synth: seeded generator -> data/processed/<dataset>.npz (same normalization), for the
# Theorem 3 worst cases of Figure 1 and the Theorem 9 binary worst cases of Figure 2.


rule prepare:
    input:
        lambda wc: raw_file(wc.dataset),
    output:
        f"{PROCESSED_DIR}/{{dataset}}.npz",
    wildcard_constraints:
        dataset=_alternatives(REGISTRY),
    params:
        registry=DATA["registry"],
        normalization=FO["normalization"],
    log:
        "logs/prepare/{dataset}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(250),
        runtime=30,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse prepare --registry {params.registry} --dataset {wildcards.dataset}"
        " --raw {input} --normalization {params.normalization} --out {output} 2> {log}"


rule synth:
    output:
        f"{PROCESSED_DIR}/{{dataset}}.npz",
    wildcard_constraints:
        dataset=_alternatives(PLAN.synthetic),
    params:
        kind=lambda wc: PLAN.synthetic[wc.dataset].kind,
        params=lambda wc: " ".join(
            f"--param {shlex.quote(f'{k}={v}')}"
            for k, v in PLAN.synthetic[wc.dataset].params.items()
        ),
        seed=lambda wc: PLAN.synthetic[wc.dataset].seed,
        normalization=FO["normalization"],
    log:
        "logs/synth/{dataset}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(100),
        runtime=15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse synth --name {wildcards.dataset} --kind {params.kind} {params.params}"
        " --seed {params.seed} --normalization {params.normalization} --out {output} 2> {log}"
