# fetch: registry data set -> data/raw/<name>.<ext>, copied from the offline mirror or
# downloaded (data.download: true); verified against the registry checksums and shape.
# A local rule: compute nodes of a cluster often have no network.


rule fetch:
    output:
        f"{RAW_DIR}/{{rawfile}}",
    wildcard_constraints:
        rawfile=_alternatives(RAW_NAMES),
    params:
        registry=DATA["registry"],
        dataset=lambda wc: RAW_NAMES[wc.rawfile],
        mirror=lambda wc: f"--mirror {shlex.quote(str(MIRROR))}" if MIRROR else "",
        download="" if DATA["download"] else "--no-download",
    log:
        "logs/fetch/{rawfile}.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=60,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse fetch --registry {params.registry} --dataset {params.dataset}"
        " --out {output} {params.mirror} {params.download} 2> {log}"
