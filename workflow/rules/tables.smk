# tables: results/stats/<dataset>.parquet of the Table 1 data sets
#   -> results/tables/faceoff/table1.{csv,md} (ours beside the paper's printed values; both
#   hold every row: the configured setting and the faceoff.table1.variants).


rule table1:
    input:
        stats=lambda wc: [stats_file(name) for name in PLAN.table1],
        variants=lambda wc: [stats_variant_file(*v) for v in PLAN.table1_variants],
    output:
        csv=report(f"{TABLES}/table1.csv", caption="../report/table1.rst", category="Face-Off"),
        md=f"{TABLES}/table1.md",
    params:
        variants=lambda wc, input: (
            f"--variant {' '.join(input.variants)}" if input.variants else ""
        ),
        caption=lambda wc: shlex.quote(
            f"Our values: {FO['normalization']} normalization, l2 = {FO['l2']}, "
            f"beta = {FO['beta']} (T_P/T_D with importance sampling, eq. (15)). "
            "The paper's X is d x n; our A = X^T. The paper does not say under which scaling "
            "and beta it computed Table 1: for leu its printed C_P and C_D match the unscaled "
            "data and its T_P/T_D the scaled data with beta = 1 (see Variants)."
        ),
    log:
        "logs/tables/faceoff/table1.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse table faceoff1 --stats {input.stats} {params.variants}"
        " --caption {params.caption}"
        " --out-csv {output.csv} --out-md {output.md} 2> {log}"
