# run: one solver configuration on one data set, every seed in one job (the data set is read
# and the problem built once; on a cluster, one queued job instead of one per seed)
#   -> results/runs/faceoff/<experiment>/<dataset>/<solver>/<sampling>-<dual_step>-seed<seed>.parquet
# The grid (experiments x data sets x faceoff.solvers x faceoff.seeds) is PLAN.runs.


rule run:
    input:
        data=lambda wc: processed_file(wc.dataset),
        reference=lambda wc: reference_file(wc.dataset),
    output:
        expand(
            "results/runs/faceoff/{{experiment}}/{{dataset}}/{{method}}/"
            "{{sampling}}-{{dual_step}}-seed{seed}.parquet",
            seed=SEEDS,
        ),
    wildcard_constraints:
        experiment=_alternatives(PLAN.experiments),
    params:
        loss=FO["loss"],
        l2=FO["l2"],
        seeds=" ".join(str(s) for s in SEEDS),
        max_epochs=run_max_epochs,
        max_seconds=FO["max_seconds"],
        tol=FO["tol"],
        eval_every=FO["eval_every"],
    log:
        "logs/run/faceoff/{experiment}/{dataset}/{method}/{sampling}-{dual_step}.log",
    threads: 1
    resources:
        mem_mb=mem_mb(150),
        runtime=lambda wc: len(SEEDS) * int(FO["max_seconds"] / 60) + 15,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse run --data {input.data} --reference {input.reference}"
        " --experiment {wildcards.experiment} --dataset {wildcards.dataset}"
        " --method {wildcards.method} --sampling {wildcards.sampling}"
        " --dual-step {wildcards.dual_step} --seed {params.seeds}"
        " --loss {params.loss} --l2 {params.l2} --max-epochs {params.max_epochs}"
        " --max-seconds {params.max_seconds} --tol {params.tol}"
        " --eval-every {params.eval_every} --out {output} 2> {log}"
