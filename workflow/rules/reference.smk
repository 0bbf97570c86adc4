# reference: data/processed/<dataset>.npz -> results/reference/<dataset>__<loss>__l2-<tag>.parquet
# P* of the problem, certified by a relative duality gap <= faceoff.reference.rtol; the
# suboptimality axis of Figures 1 and 2 is P(w) - P*.


rule reference:
    input:
        lambda wc: processed_file(wc.dataset),
    output:
        "results/reference/{dataset}__{loss}__l2-{l2tag}.parquet",
    wildcard_constraints:
        loss=re.escape(FO["loss"]),
        l2tag=re.escape(L2TAG),
    params:
        l2=FO["l2"],
        rtol=FO["reference"]["rtol"],
        max_epochs=FO["reference"]["max_epochs"],
        max_seconds=FO["reference"]["max_seconds"],
    log:
        "logs/reference/{dataset}__{loss}__l2-{l2tag}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(150),
        runtime=lambda wc: int(FO["reference"]["max_seconds"] / 60) + 15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse reference --data {input} --dataset {wildcards.dataset}"
        " --loss {wildcards.loss} --l2 {params.l2} --rtol {params.rtol}"
        " --max-epochs {params.max_epochs} --max-seconds {params.max_seconds}"
        " --out {output} 2> {log}"
