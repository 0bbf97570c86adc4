# fetch: registry data set -> data/raw/<name>.<ext>, copied from the offline mirror or
# downloaded (data.download: true); verified against the registry checksums and shape.
# A local rule: compute nodes of a cluster often have no network.
# The source (data.mirror, data.download) reaches the job through the environment
# (_export_data_source), so changing it never re-runs, and so never deletes, a fetched file;
# a re-run forced otherwise restores the file from its link in data/raw/.verified/.


rule fetch:
    output:
        f"{RAW_DIR}/{{rawfile}}",
    log:
        "logs/fetch/{rawfile}.log",
    wildcard_constraints:
        rawfile=_alternatives(RAW_NAMES),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(0, base=500),
        runtime=minutes(60),
    params:
        registry=DATA["registry"],
        dataset=lambda wc: RAW_NAMES[wc.rawfile],
    shell:
        "pdsparse fetch --registry {params.registry} --dataset {params.dataset}"
        " --out {output} 2> {log}"
